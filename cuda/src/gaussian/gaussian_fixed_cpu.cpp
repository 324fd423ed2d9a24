// CPU backend of the fixed-point Gaussian: a band of rows keeps a ring of
// 2*ry+1 horizontally filtered rows (16-bit: q * byte sums stay below 2^16),
// so every source row is filtered once a band; the vertical sum is 32-bit.
// The loops are over the values of a row, in 16- and 32-bit lanes, so that
// the compiler vectorises them; integer sums are exact in any order, which
// is what makes the CUDA kernel's bytes the same.
#include <algorithm>
#include <cstring>

#include "common/cpu_clones.hpp"
#include "gaussian/gaussian_fixed.hpp"

namespace cudafx {
namespace {

struct FixedLayout {
  size_t wc, ring_bytes, padded_bytes, acc_offset, total;
};

FixedLayout fixed_layout(const GaussianPlanePlan& p) {
  FixedLayout l;
  const int C = p.layout.channels;
  l.wc = static_cast<size_t>(p.width) * C;
  l.ring_bytes = (2 * p.y.q_radius + 1) * l.wc * sizeof(uint16_t);
  l.padded_bytes = static_cast<size_t>(p.width + 2 * p.x.q_radius) * C;
  l.acc_offset = (l.ring_bytes + l.padded_bytes + 3) / 4 * 4;
  l.total = l.acc_offset + l.wc * sizeof(uint32_t);
  return l;
}

// Horizontal pass of source row y (zeros for a Constant border row) into
// `out`; `padded` is the row with its borders materialised.
CUDAFX_CPU_CLONES void filter_row(const GaussianPlanePlan& p, BorderMode border,
                                  const PlaneView& src, int y, uint8_t* padded, uint16_t* out) {
  const int C = p.layout.channels, W = p.width, rx = p.x.q_radius;
  const size_t wc = static_cast<size_t>(W) * C;
  const int ys = border_index(y, p.height, border);
  if (ys < 0) {
    std::fill(out, out + wc, uint16_t{0});
    return;
  }
  const uint8_t* row = src.data + static_cast<size_t>(ys) * src.pitch;
  uint8_t* centre = padded + static_cast<size_t>(rx) * C;
  std::memcpy(centre, row, wc);
  for (int i = 1; i <= rx; i++) {
    for (int x : {-i, W - 1 + i}) {
      const int xs = border_index(x, W, border);
      uint8_t* d = centre + static_cast<ptrdiff_t>(x) * C;
      for (int c = 0; c < C; c++)
        d[c] = xs < 0 ? 0 : row[static_cast<size_t>(xs) * C + c];
    }
  }
  const uint16_t* q = p.x.q.data();
  const uint16_t q0 = q[0];
  for (size_t j = 0; j < wc; j++)
    out[j] = static_cast<uint16_t>(q0 * centre[j]);
  for (int k = 1; k <= rx; k++) {
    const uint16_t qk = q[k];
    const uint8_t* l = centre - static_cast<ptrdiff_t>(k) * C;
    const uint8_t* r = centre + static_cast<ptrdiff_t>(k) * C;
    for (size_t j = 0; j < wc; j++)
      out[j] = static_cast<uint16_t>(out[j] + qk * static_cast<uint16_t>(l[j] + r[j]));
  }
}

}  // namespace

size_t gaussian_fixed_cpu_scratch_bytes(const GaussianPlanePlan& p) { return fixed_layout(p).total; }

CUDAFX_CPU_CLONES void gaussian_fixed_cpu_band(const GaussianPlanePlan& p, BorderMode border,
                                               const PlaneView& src, const PlaneView& dst, int y0,
                                               int y1, void* scratch) {
  const FixedLayout l = fixed_layout(p);
  const int ry = p.y.q_radius;
  const int ring = 2 * ry + 1;
  auto* base = static_cast<uint8_t*>(scratch);
  auto* rows = reinterpret_cast<uint16_t*>(base);
  uint8_t* padded = base + l.ring_bytes;
  auto* acc = reinterpret_cast<uint32_t*>(base + l.acc_offset);
  auto slot = [&](int y) { return rows + static_cast<size_t>((y - (y0 - ry)) % ring) * l.wc; };

  for (int y = y0 - ry; y < y0 + ry; y++)
    filter_row(p, border, src, y, padded, slot(y));
  const uint16_t* q = p.y.q.data();
  for (int y = y0; y < y1; y++) {
    filter_row(p, border, src, y + ry, padded, slot(y + ry));
    const uint16_t* centre = slot(y);
    const uint32_t q0 = q[0];
    for (size_t j = 0; j < l.wc; j++)
      acc[j] = q0 * centre[j];
    for (int k = 1; k <= ry; k++) {
      const uint32_t qk = q[k];
      const uint16_t* up = slot(y - k);
      const uint16_t* down = slot(y + k);
      for (size_t j = 0; j < l.wc; j++)
        acc[j] += qk * (static_cast<uint32_t>(up[j]) + down[j]);
    }
    uint8_t* out = dst.data + static_cast<size_t>(y) * dst.pitch;
    for (size_t j = 0; j < l.wc; j++)
      out[j] = gaussian_fixed_round(acc[j]);
  }
}

}  // namespace cudafx
