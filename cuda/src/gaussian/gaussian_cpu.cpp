// CPU backend of the Gaussian op: per plane, rows split into one band per
// worker; each band keeps a ring of 2*ry+1 horizontally filtered rows so every
// source row is filtered horizontally once per band. The arithmetic per value
// is gaussian_symmetric_sum's, with the loops interchanged to vectorise.
#include <algorithm>
#include <cstring>

#include "common/cpu_clones.hpp"
#include "cudafx/gaussian.hpp"
#include "cudafx/parallel.hpp"
#include "gaussian/gaussian_fixed.hpp"

namespace cudafx {
namespace {

struct PlaneWork {
  const GaussianPlanePlan& p;
  BorderMode border;
  PlaneView src, dst;
};

size_t worker_floats(const GaussianPlanePlan& p) {
  const size_t wc = static_cast<size_t>(p.width) * p.layout.channels;
  const size_t padded = static_cast<size_t>(p.width + 2 * p.x.radius) * p.layout.channels;
  return (2 * p.y.radius + 1) * wc + padded + wc;
}

// Horizontal pass of one source row (or a zero row for a Constant border)
// into `out` (width * channels floats). `padded` is scratch.
CUDAFX_CPU_CLONES void filter_row(const PlaneWork& w, int y, float* padded, float* out) {
  const int C = w.p.layout.channels, W = w.p.width, rx = w.p.x.radius;
  const size_t wc = static_cast<size_t>(W) * C;
  const int ys = border_index(y, w.p.height, w.border);
  if (ys < 0) {
    std::fill(out, out + wc, 0.0f);
    return;
  }
  const uint8_t* row = w.src.data + static_cast<size_t>(ys) * w.src.pitch;
  // The row as floats with its left and right borders materialised: the
  // interior in one vectorisable loop, the 2*rx border pixels one by one.
  float* centre = padded + static_cast<size_t>(rx) * C;
  for (size_t j = 0; j < wc; j++)
    centre[j] = static_cast<float>(row[j]);
  for (int i = 1; i <= rx; i++) {
    for (int x : {-i, W - 1 + i}) {
      const int xs = border_index(x, W, w.border);
      float* d = centre + static_cast<ptrdiff_t>(x) * C;
      for (int c = 0; c < C; c++)
        d[c] = xs < 0 ? 0.0f : static_cast<float>(row[static_cast<size_t>(xs) * C + c]);
    }
  }
  const float* wx = w.p.x.w.data();
  const float w0 = wx[0];
  for (size_t j = 0; j < wc; j++)
    out[j] = mul_rn(w0, centre[j]);
  for (int k = 1; k <= rx; k++) {
    const float wk = wx[k];
    const float* l = centre - static_cast<ptrdiff_t>(k) * C;
    const float* r = centre + static_cast<ptrdiff_t>(k) * C;
    for (size_t j = 0; j < wc; j++)
      out[j] = fma_rn(wk, add_rn(l[j], r[j]), out[j]);
  }
}

CUDAFX_CPU_CLONES void filter_band(const PlaneWork& w, int y0, int y1, float* scratch) {
  const int C = w.p.layout.channels, ry = w.p.y.radius;
  const size_t wc = static_cast<size_t>(w.p.width) * C;
  const int ring = 2 * ry + 1;
  float* rows = scratch;                            // ring of filtered rows
  float* padded = rows + static_cast<size_t>(ring) * wc;
  float* acc = padded + static_cast<size_t>(w.p.width + 2 * w.p.x.radius) * C;
  auto slot = [&](int y) { return rows + static_cast<size_t>((y - (y0 - ry)) % ring) * wc; };

  for (int y = y0 - ry; y < y0 + ry; y++)
    filter_row(w, y, padded, slot(y));
  const float* wy = w.p.y.w.data();
  for (int y = y0; y < y1; y++) {
    filter_row(w, y + ry, padded, slot(y + ry));
    const float* centre = slot(y);
    for (size_t j = 0; j < wc; j++)
      acc[j] = mul_rn(wy[0], centre[j]);
    for (int k = 1; k <= ry; k++) {
      const float wk = wy[k];
      const float* up = slot(y - k);
      const float* down = slot(y + k);
      for (size_t j = 0; j < wc; j++)
        acc[j] = fma_rn(wk, add_rn(up[j], down[j]), acc[j]);
    }
    uint8_t* out = w.dst.data + static_cast<size_t>(y) * w.dst.pitch;
    for (size_t j = 0; j < wc; j++)
      out[j] = round_to_u8(acc[j]);
  }
}

// Floats a worker needs for a plane: the float path's rows, or the fixed
// path's bytes in float-sized slots.
size_t plane_worker_floats(const GaussianPlanePlan& p) {
  return p.fixed ? (gaussian_fixed_cpu_scratch_bytes(p) + sizeof(float) - 1) / sizeof(float)
                 : worker_floats(p);
}

}  // namespace

size_t gaussian_cpu_scratch_floats(const GaussianPlan& plan) {
  size_t most = 0;
  for (int i = 0; i < plan.n_planes; i++)
    most = std::max(most, plane_worker_floats(plan.planes[i]));
  return most * static_cast<size_t>(cpu_worker_count());
}

Status gaussian_cpu(const GaussianPlan& plan, const ImageView& src, const ImageView& dst,
                    std::vector<float>& scratch) {
  CUDAFX_TRY(validate_view(src, plan.desc, "gaussian source"));
  CUDAFX_TRY(validate_view(dst, plan.desc, "gaussian destination"));
  const size_t need = gaussian_cpu_scratch_floats(plan);
  if (scratch.size() < need)
    scratch.resize(need);  // only when called without an op that sized it
  for (int i = 0; i < plan.n_planes; i++) {
    const PlaneWork w{plan.planes[i], plan.border, src.plane(i), dst.plane(i)};
    const size_t per_worker = plane_worker_floats(w.p);
    const int H = w.p.height;
    const int bands = std::min(H, cpu_worker_count());
    parallel_for(bands, [&](int band, int worker) {
      const int y0 = static_cast<int>(static_cast<long>(H) * band / bands);
      const int y1 = static_cast<int>(static_cast<long>(H) * (band + 1) / bands);
      float* own = scratch.data() + per_worker * worker;
      if (w.p.fixed)
        gaussian_fixed_cpu_band(w.p, w.border, w.src, w.dst, y0, y1, own);
      else
        filter_band(w, y0, y1, own);
    });
  }
  return Status::ok();
}

}  // namespace cudafx
