// Rebuilding the frequency tables of AdaptiveModel (see adaptive_model.hpp).
#include "adaptive_model.hpp"

#include <algorithm>
#include <cstring>

namespace cudafx {

namespace {
constexpr uint32_t kFirstInterval = 16;
}

AdaptiveModel::AdaptiveModel(int contexts) : ctx_(contexts) {}

void AdaptiveModel::reset() {
  if (++epoch_ == 0) {  // wrapped (after 2^32 resets): mark every context stale again
    for (auto& x : ctx_)
      if (x)
        x->epoch = 0;
    epoch_ = 1;
  }
}

AdaptiveModel::Context* AdaptiveModel::start_afresh(int c) {
  if (!ctx_[c])
    ctx_[c].reset(new Context);
  Context* x = ctx_[c].get();
  std::memset(x->counts, 0, sizeof(x->counts));
  std::memset(x->range, 0, sizeof(x->range));
  x->range[kAdaptiveEscape] = kRansScale << 16;  // escape only
  x->order_value[0] = kAdaptiveEscape;
  x->order_end[0] = static_cast<uint16_t>(kRansScale);
  x->until_rebuild = kFirstInterval;
  x->interval = 2 * kFirstInterval;
  x->epoch = epoch_;
  return x;
}

void AdaptiveModel::rebuild(Context* x) {
  uint32_t counted = 0;
  for (uint32_t n : x->counts) counted += n;
  if (counted > kAdaptiveMaxTotal) {  // forget slowly: recent statistics weigh more
    counted = 0;
    for (uint32_t& n : x->counts) {
      n = (n + 1) / 2;
      counted += n;
    }
  }
  // Present values and the escape, whose count is the number of distinct
  // values seen (PPM's method C): likely while a context is young, rare later.
  uint16_t values[257];
  int n = 0;
  for (int v = 0; v < 256; v++)
    if (x->counts[v])
      values[n++] = static_cast<uint16_t>(v);
  const uint32_t escape_count = std::max(1, n);
  values[n++] = kAdaptiveEscape;
  auto count = [&](int v) { return v == kAdaptiveEscape ? escape_count : x->counts[v]; };
  const uint64_t total = uint64_t(counted) + escape_count;

  // Scale to kRansScale, every present value at least 1; the rounding
  // difference goes to (or comes from) the most frequent entries.
  uint32_t f[257];
  int32_t sum = 0;
  for (int i = 0; i < n; i++) {
    const uint32_t v = static_cast<uint32_t>(uint64_t(count(values[i])) * kRansScale / total);
    f[i] = std::max<uint32_t>(1, v);
    sum += static_cast<int32_t>(f[i]);
  }
  int order[257];
  for (int i = 0; i < n; i++) order[i] = i;
  std::sort(order, order + n, [&](int a, int b) {
    return f[a] != f[b] ? f[a] > f[b] : values[a] < values[b];
  });
  int32_t diff = static_cast<int32_t>(kRansScale) - sum;
  if (diff > 0)
    f[order[0]] += static_cast<uint32_t>(diff);
  for (int k = 0; diff < 0; k = (k + 1) % n) {  // n <= 257 entries of >= 1 each fit in the scale
    const int32_t take = std::min<int32_t>(-diff, static_cast<int32_t>(f[order[k]]) - 1);
    f[order[k]] -= static_cast<uint32_t>(take);
    diff += take;
  }

  std::memset(x->range, 0, sizeof(x->range));
  uint32_t cum = 0;
  for (int k = 0; k < n; k++) {
    const int i = order[k];
    const int v = values[i];
    x->range[v] = cum | f[i] << 16;
    cum += f[i];
    x->order_value[k] = static_cast<uint16_t>(v);
    x->order_end[k] = static_cast<uint16_t>(cum);
  }
  x->until_rebuild = x->interval;
  x->interval = std::min(x->interval * 2, kAdaptiveMaxInterval);
}

}  // namespace cudafx
