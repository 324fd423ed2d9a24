// Rebuilding the frequency tables of AdaptiveModel (see adaptive_model.hpp).
#include "delta/adaptive_model.hpp"

#include <algorithm>
#include <cstring>

namespace cudafx {

namespace {
constexpr uint32_t kFirstInterval = 16;
}

AdaptiveModel::AdaptiveModel(int contexts)
    : ctx_(contexts), fresh_(contexts, 0), until_rebuild_(contexts, 0) {}

void AdaptiveModel::reset() { std::fill(fresh_.begin(), fresh_.end(), 0); }

void AdaptiveModel::start_afresh(int c) {
  if (!ctx_[c])
    ctx_[c].reset(new Context);
  Context* x = ctx_[c].get();
  std::memset(x->entry, 0, sizeof(x->entry));
  x->entry[kAdaptiveEscape].range = kRansScale << 16;  // escape only
  x->order_value[0] = kAdaptiveEscape;
  x->order_end[0] = static_cast<uint16_t>(kRansScale);
  std::memset(x->first_entry, 0, sizeof(x->first_entry));
  until_rebuild_[c] = kFirstInterval;
  x->interval = 2 * kFirstInterval;
  fresh_[c] = 1;
}

uint32_t AdaptiveModel::rebuild(Context* x) {
  uint32_t counted = 0;
  for (int v = 0; v < 256; v++) counted += x->entry[v].count;
  if (counted > kAdaptiveMaxTotal) {  // forget slowly: recent statistics weigh more
    counted = 0;
    for (int v = 0; v < 256; v++) {
      uint32_t& n = x->entry[v].count;
      n = (n + 1) / 2;
      counted += n;
    }
  }
  // Present values and the escape, whose count is the number of distinct
  // values seen (PPM's method C): likely while a context is young, rare later.
  uint16_t values[257];
  int n = 0;
  for (int v = 0; v < 256; v++)
    if (x->entry[v].count)
      values[n++] = static_cast<uint16_t>(v);
  const uint32_t escape_count = std::max(1, n);
  values[n++] = kAdaptiveEscape;
  auto count = [&](int v) { return v == kAdaptiveEscape ? escape_count : x->entry[v].count; };
  // Σn <= kAdaptiveMaxTotal + kAdaptiveMaxInterval before halving, so
  // count * kRansScale < 2^31 and one exact reciprocal of the total
  // replaces a division per entry.
  const ExactReciprocal total(counted + escape_count);

  // Scale to kRansScale, every present value at least 1; the rounding
  // difference goes to (or comes from) the most frequent entries. The
  // order (falling frequency, then value) sorts as one integer key each.
  uint32_t f[257], key[257];
  f[0] = 0;  // as order[0] below: for GCC, which cannot see that n >= 1
  int32_t sum = 0;
  for (int i = 0; i < n; i++) {
    f[i] = std::max<uint32_t>(1, total.divide(count(values[i]) * kRansScale));
    sum += static_cast<int32_t>(f[i]);
    key[i] = (kRansScale - f[i]) << 9 | static_cast<uint32_t>(i);  // values[] is ascending
  }
  std::sort(key, key + n);
  int order[257];
  order[0] = 0;
  for (int k = 0; k < n; k++) order[k] = static_cast<int>(key[k] & 511);
  // A surplus goes to the first entry; a deficit is taken in turns, each
  // entry kept >= 1 (n <= 257 entries of 1 fit in the scale).
  for (int32_t diff = static_cast<int32_t>(kRansScale) - sum, k = 0; diff != 0; k = (k + 1) % n) {
    uint32_t& fk = f[order[k]];
    if (diff > 0) {
      fk += static_cast<uint32_t>(diff);
      break;
    }
    const int32_t take = std::min<int32_t>(-diff, static_cast<int32_t>(fk) - 1);
    fk -= static_cast<uint32_t>(take);
    diff += take;
  }

  for (auto& e : x->entry) e.range = 0;
  uint32_t cum = 0;
  for (int k = 0; k < n; k++) {
    const int i = order[k];
    const int v = values[i];
    x->entry[v].range = cum | f[i] << 16;
    cum += f[i];
    x->order_value[k] = static_cast<uint16_t>(v);
    x->order_end[k] = static_cast<uint16_t>(cum);
  }
  int k = 0;
  for (uint32_t b = 0; b < (kRansScale >> kBucketShift); b++) {
    while (x->order_end[k] <= b << kBucketShift) k++;
    x->first_entry[b] = static_cast<uint16_t>(k);
  }
  const uint32_t until = x->interval;
  x->interval = std::min(x->interval * 2, kAdaptiveMaxInterval);
  return until;
}

}  // namespace cudafx
