// CPU backend of the resize op: per plane, output rows split into bands, one
// task a band. A band keeps a ring of `taps` horizontally filtered source
// rows (int32, one per output column and channel), so that each source row is
// filtered horizontally once per band however many output rows use it.
#include <algorithm>
#include <cstring>

#include "cudafx/parallel.hpp"
#include "cudafx/resize.hpp"
#include "cudafx/resize_math.hpp"

namespace cudafx {
namespace {

constexpr int kRowsPerBand = 32;

struct PlaneWork {
  const ResizePlanePlan& p;
  PlaneView src, dst;
};

int band_count(const ResizePlanePlan& p) {
  return (p.dst_height + kRowsPerBand - 1) / kRowsPerBand;
}

size_t ring_ints(const ResizePlanePlan& p) {
  return static_cast<size_t>(p.y.taps) * p.dst_width * p.layout.channels;
}

template <int C>
void nearest_band(const PlaneWork& w, int y0, int y1) {
  const ResizeTap* xt = w.p.x.tap.data();
  const int W = w.p.dst_width;
  for (int y = y0; y < y1; y++) {
    const uint8_t* s = w.src.data + static_cast<size_t>(w.p.y.tap[y].base) * w.src.pitch;
    uint8_t* d = w.dst.data + static_cast<size_t>(y) * w.dst.pitch;
    if (y > y0 && w.p.y.tap[y].base == w.p.y.tap[y - 1].base) {
      std::memcpy(d, d - w.dst.pitch, static_cast<size_t>(W) * C);
      continue;
    }
    for (int x = 0; x < W; x++) {
      const uint8_t* px = s + static_cast<size_t>(xt[x].base) * C;
      for (int c = 0; c < C; c++)
        d[x * C + c] = px[c];
    }
  }
}

// Horizontal pass of source row `sy` (already clamped) into `out`.
template <int C, int T>
void filter_row(const PlaneWork& w, int sy, int32_t* out) {
  const uint8_t* s = w.src.data + static_cast<size_t>(sy) * w.src.pitch;
  const ResizeTap* xt = w.p.x.tap.data();
  const int W = w.p.dst_width, SW = w.p.src_width;
  for (int x = 0; x < W; x++) {
    const ResizeTap& t = xt[x];
    int32_t acc[C] = {};
    if (t.base >= 0 && t.base + T <= SW) {
      const uint8_t* px = s + static_cast<size_t>(t.base) * C;
      for (int k = 0; k < T; k++)
        for (int c = 0; c < C; c++)
          acc[c] += t.w[k] * px[k * C + c];
    } else {
      for (int k = 0; k < T; k++) {
        const uint8_t* px = s + static_cast<size_t>(resize_clamp(t.base + k, SW)) * C;
        for (int c = 0; c < C; c++)
          acc[c] += t.w[k] * px[c];
      }
    }
    for (int c = 0; c < C; c++)
      out[x * C + c] = acc[c];
  }
}

template <int C, int T>
void filter_band(const PlaneWork& w, int y0, int y1, int32_t* ring) {
  const size_t row_ints = static_cast<size_t>(w.p.dst_width) * C;
  const int SH = w.p.src_height;
  // ring slot j holds source row key[j] (unclamped), or nothing yet.
  long key[T];
  for (int j = 0; j < T; j++)
    key[j] = -(1L << 40);
  for (int y = y0; y < y1; y++) {
    const ResizeTap& ty = w.p.y.tap[y];
    const int32_t* rows[T];
    for (int k = 0; k < T; k++) {
      const long r = static_cast<long>(ty.base) + k;
      const int slot = static_cast<int>(((r % T) + T) % T);
      int32_t* row = ring + slot * row_ints;
      if (key[slot] != r) {
        filter_row<C, T>(w, resize_clamp(static_cast<int>(r), SH), row);
        key[slot] = r;
      }
      rows[k] = row;
    }
    uint8_t* d = w.dst.data + static_cast<size_t>(y) * w.dst.pitch;
    for (size_t i = 0; i < row_ints; i++) {
      int32_t v = 0;
      for (int k = 0; k < T; k++)
        v += ty.w[k] * rows[k][i];
      d[i] = resize_finish(v);
    }
  }
}

template <int C>
void run_band(const PlaneWork& w, int y0, int y1, int32_t* ring) {
  switch (w.p.y.taps) {
    case 1: nearest_band<C>(w, y0, y1); break;
    case 2: filter_band<C, 2>(w, y0, y1, ring); break;
    default: filter_band<C, 4>(w, y0, y1, ring); break;
  }
}

}  // namespace

size_t resize_cpu_scratch_ints(const ResizePlan& plan) {
  size_t most = 0;
  for (int i = 0; i < plan.n_planes; i++)
    most = std::max(most, ring_ints(plan.planes[i]));
  return most * cpu_worker_count();
}

Status resize_cpu(const ResizePlan& plan, const ImageView& src, const ImageView& dst,
                  std::vector<int32_t>& scratch) {
  CUDAFX_TRY(validate_view(src, plan.src, "resize source"));
  CUDAFX_TRY(validate_view(dst, plan.dst, "resize destination"));
  const size_t need = resize_cpu_scratch_ints(plan);
  if (scratch.size() < need)
    return Status::invalid("resize: CPU scratch smaller than the plan needs");
  for (int i = 0; i < plan.n_planes; i++) {
    const PlaneWork w{plan.planes[i], src.plane(i), dst.plane(i)};
    const size_t ring = ring_ints(w.p);
    parallel_for(band_count(w.p), [&](int band, int worker) {
      const int y0 = band * kRowsPerBand;
      const int y1 = std::min(y0 + kRowsPerBand, w.p.dst_height);
      int32_t* r = scratch.data() + ring * worker;
      switch (w.p.layout.channels) {
        case 1: run_band<1>(w, y0, y1, r); break;
        case 2: run_band<2>(w, y0, y1, r); break;
        case 3: run_band<3>(w, y0, y1, r); break;
        default: run_band<4>(w, y0, y1, r); break;
      }
    });
  }
  return Status::ok();
}

}  // namespace cudafx
