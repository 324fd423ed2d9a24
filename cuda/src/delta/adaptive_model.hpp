// Adaptive frequency tables for rANS: per context, the counts of the byte
// values coded so far become a table of frequencies summing to kRansScale.
// Values never seen in a context have no frequency; they are coded as an
// escape followed by the value itself at a flat 1/256.
//
// Encoder and decoder update the counts after every symbol and rebuild a
// context's table after 16, 32, 64, ... (at most kAdaptiveMaxInterval)
// symbols of that context, so both sides hold the same tables at every
// symbol without sending any. Everything is integer arithmetic with a total
// order for ties, hence the same on every machine. A reset costs next to
// nothing up front: a context starts afresh when it is first used after
// one, and is allocated when first used at all (most contexts of a short
// stream never are).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "delta/rans.hpp"

namespace cudafx {

constexpr int kAdaptiveEscape = 256;
constexpr uint32_t kAdaptiveMaxInterval = 4096;  // symbols between rebuilds, at most
constexpr uint32_t kAdaptiveMaxTotal = 1u << 16;  // counts halve above this
constexpr uint32_t kEscapedValueFreq = kRansScale / 256;  // an escaped value's flat range

class AdaptiveModel {
 public:
  explicit AdaptiveModel(int contexts);
  // Forgets everything: each context codes by escapes until it has learnt.
  void reset();

  // Encoder: appends the ranges (start | freq << 16) that code `value` in
  // context `c` to `out` (its own, or the escape's and then the value's
  // flat one) and counts the value; returns the new end of `out`.
  uint32_t* encode(int c, int value, uint32_t* out) {
    Context& x = current(c);
    const uint32_t r = x.entry[value].range;
    if (r >> 16) {
      *out++ = r;
    } else {
      *out++ = x.entry[kAdaptiveEscape].range;
      *out++ = static_cast<uint32_t>(value) * kEscapedValueFreq | kEscapedValueFreq << 16;
    }
    count(c, &x, value);
    return out;
  }
  // Decoder: the value coded next in context `c`, taken from `r`, and
  // counted. Entries are in falling frequency and a table by slot says
  // where to start looking, so the search is one or two steps.
  int decode(int c, RansReader* r) {
    Context& x = current(c);
    const uint32_t slot = r->slot();
    int i = x.first_entry[slot >> kBucketShift];
    while (slot >= x.order_end[i]) i++;  // order_end of the last entry is kRansScale
    int v = x.order_value[i];
    r->take(x.entry[v].range & 0xffff, x.entry[v].range >> 16);
    if (v == kAdaptiveEscape) {
      v = static_cast<int>(r->slot() / kEscapedValueFreq);
      r->take(static_cast<uint32_t>(v) * kEscapedValueFreq, kEscapedValueFreq);
    }
    count(c, &x, v);
    return v;
  }

 private:
  static constexpr int kBucketShift = 4;  // slots a first_entry covers: 16
  struct Context {
    // By value, kAdaptiveEscape last: the range (start | freq << 16) and
    // the count (not kept for the escape) side by side, one cache line
    // for both.
    struct {
      uint32_t range, count;
    } entry[257];
    uint32_t interval;               // symbols until the rebuild after next
    uint16_t order_value[257];       // values with a frequency, most frequent first
    uint16_t order_end[257];         // cumulative frequency after each of them
    uint16_t first_entry[kRansScale >> kBucketShift];  // first entry ending past the bucket's start
  };
  // Every symbol looks its context up here, so what it reads first is small
  // and stays in the L1 cache: a flag and a pointer (and a countdown, in
  // count()).
  Context& current(int c) {
    if (!fresh_[c])
      start_afresh(c);
    return *ctx_[c];
  }
  void count(int c, Context* x, int value) {
    x->entry[value].count++;
    if (--until_rebuild_[c] == 0)
      until_rebuild_[c] = rebuild(x);
  }
  void start_afresh(int c);
  // Returns the symbols until the next rebuild.
  static uint32_t rebuild(Context* x);

  std::vector<std::unique_ptr<Context>> ctx_;
  std::vector<uint8_t> fresh_;  // 1: ctx_[c] has started since the last reset
  std::vector<uint32_t> until_rebuild_;
};

}  // namespace cudafx
