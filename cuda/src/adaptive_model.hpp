// Adaptive frequency tables for rANS: per context, the counts of the byte
// values coded so far become a table of frequencies summing to kRansScale.
// Values never seen in a context have no frequency; they are coded as an
// escape followed by the value itself at a flat 1/256.
//
// Encoder and decoder update the counts after every symbol and rebuild a
// context's table after 16, 32, 64, ... (at most kAdaptiveMaxInterval)
// symbols of that context, so both sides hold the same tables at every
// symbol without sending any. Everything is integer arithmetic with a total
// order for ties, hence the same on every machine. A reset costs nothing
// up front: a context starts afresh when it is first used after one, and
// is allocated when first used at all (most contexts of a short stream
// never are).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "rans.hpp"

namespace cudafx {

constexpr int kAdaptiveEscape = 256;
constexpr uint32_t kAdaptiveMaxInterval = 4096;  // symbols between rebuilds, at most
constexpr uint32_t kAdaptiveMaxTotal = 1u << 16;  // counts halve above this

class AdaptiveModel {
 public:
  explicit AdaptiveModel(int contexts);
  // Forgets everything: each context codes by escapes until it has learnt.
  void reset();

  // Encoder: the range of `value` in context `c` as start | freq << 16,
  // freq 0 when it must be escaped (kAdaptiveEscape's range then).
  uint32_t range(int c, int value) { return current(c).range[value]; }
  // Decoder: the value (or kAdaptiveEscape) whose range holds `slot`, with
  // its range. Entries are in falling frequency, so the search is short.
  int find(int c, uint32_t slot, uint32_t* start, uint32_t* freq) {
    const Context& x = current(c);
    int i = 0;
    while (slot >= x.order_end[i]) i++;  // order_end of the last entry is kRansScale
    const int v = x.order_value[i];
    *start = x.range[v] & 0xffff;
    *freq = x.range[v] >> 16;
    return v;
  }
  // After coding `value` (escaped or not) in context `c`, which range() or
  // find() has just been asked about.
  void update(int c, int value) {
    Context& x = *ctx_[c];
    x.counts[value]++;
    if (--x.until_rebuild == 0)
      rebuild(&x);
  }

 private:
  struct Context {
    uint32_t range[257];  // by value, kAdaptiveEscape last: start | freq << 16
    uint32_t counts[256];
    uint32_t until_rebuild, interval;
    uint32_t epoch;                  // the model's epoch when it last started afresh
    uint16_t order_value[257];       // values with a frequency, most frequent first
    uint16_t order_end[257];         // cumulative frequency after each of them
  };
  Context& current(int c) {
    Context* x = ctx_[c].get();
    if (!x || x->epoch != epoch_)
      x = start_afresh(c);
    return *x;
  }
  Context* start_afresh(int c);
  static void rebuild(Context* x);

  std::vector<std::unique_ptr<Context>> ctx_;
  uint32_t epoch_ = 1;
};

}  // namespace cudafx
