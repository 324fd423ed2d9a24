// CPU backend of the convolution op and the op object. Per output row: the
// source rows the kernel reaches, each materialised with its borders, and
// one pass per tap over the row's values (16- or 32-bit lanes the compiler
// vectorises); the separable paths keep a ring of horizontally filtered rows
// per band instead. Per value the float taps are applied in row-major order
// (separable float kernels: the row factors, then the column factors, each
// in tap order), as the CUDA kernels do; integer sums are exact.
#include <algorithm>
#include <cstring>
#include <vector>

#include "common/cpu_clones.hpp"
#include "cudafx/convolve.hpp"
#include "cudafx/convolve_math.hpp"
#include "cudafx/parallel.hpp"

namespace cudafx {
namespace {

struct PlaneJob {
  const ConvolvePlan& plan;
  PlaneView src, dst;
  int C;
};

// Source row y (border rule) with kw - 1 border pixels around it, from
// pixel -ax: padded[k] is the byte of value k - ax*C.
void padded_row(const PlaneJob& j, int y, uint8_t* padded) {
  const ConvolvePlan& p = j.plan;
  const int C = j.C, W = j.src.width, kw = p.params.width;
  const size_t n = static_cast<size_t>(W + kw - 1) * C;
  const int ys = border_index(y, j.src.height, p.params.border);
  if (ys < 0) {
    std::memset(padded, 0, n);
    return;
  }
  const uint8_t* row = j.src.data + static_cast<size_t>(ys) * j.src.pitch;
  for (int x = -p.ax; x < W + kw - 1 - p.ax; x++) {
    const int xs = border_index(x, W, p.params.border);
    uint8_t* d = padded + static_cast<size_t>(x + p.ax) * C;
    for (int c = 0; c < C; c++)
      d[c] = xs < 0 ? 0 : row[static_cast<size_t>(xs) * C + c];
  }
}

// The output row from its sums, unfiltered lanes copied from the source.
template <class Acc, class Result>
void write_row(const PlaneJob& j, int y, const Acc* acc, unsigned lanes, Result result) {
  const uint8_t* s = j.src.data + static_cast<size_t>(y) * j.src.pitch;
  uint8_t* d = j.dst.data + static_cast<size_t>(y) * j.dst.pitch;
  const size_t n = static_cast<size_t>(j.src.width) * j.C;
  for (size_t k = 0; k < n; k++)
    d[k] = (lanes >> (k % j.C)) & 1 ? result(acc[k]) : s[k];
}

CUDAFX_CPU_CLONES void band_2d(const PlaneJob& j, unsigned lanes, int y0, int y1) {
  const ConvolvePlan& p = j.plan;
  const int kw = p.params.width, kh = p.params.height, C = j.C;
  const size_t n = static_cast<size_t>(j.src.width) * C;
  std::vector<uint8_t> padded(static_cast<size_t>(j.src.width + kw - 1) * C);
  std::vector<int> iacc(p.integer ? n : 0);
  std::vector<float> facc(p.integer ? 0 : n);
  for (int y = y0; y < y1; y++) {
    std::fill(iacc.begin(), iacc.end(), 0);
    std::fill(facc.begin(), facc.end(), 0.0f);
    for (int i = 0; i < kh; i++) {
      padded_row(j, y + i - p.ay, padded.data());
      for (int t = 0; t < kw; t++) {
        const uint8_t* in = padded.data() + static_cast<size_t>(t) * C;
        if (p.integer) {
          const int w = p.itaps[i * kw + t];
          if (w == 0)
            continue;
          for (size_t k = 0; k < n; k++)
            iacc[k] += w * in[k];
        } else {
          const float w = p.ftaps[i * kw + t];
          for (size_t k = 0; k < n; k++)
            facc[k] = fma_rn(w, static_cast<float>(in[k]), facc[k]);
        }
      }
    }
    if (p.integer)
      write_row(j, y, iacc.data(), lanes, [&](int s) {
        return convolve_integer_result(s, p.idivisor, p.ioffset);
      });
    else
      write_row(j, y, facc.data(), lanes, [&](float a) {
        return convolve_float_result(a, p.foffset);
      });
  }
}

// A band of a separable kernel: each source row filtered horizontally into
// a ring of kh rows, then the ring's rows summed vertically. `mac(acc, w,
// v)` is one multiply-add (exact ints, or one fused float rounding a tap, in
// tap order), `result` the output byte of a sum.
template <class Acc, class Mac, class Result>
__attribute__((always_inline)) inline void band_separable_impl(
    const PlaneJob& j, unsigned lanes, int y0, int y1, const Acc* row_taps, const Acc* col_taps,
    Mac mac, Result result) {
  const ConvolvePlan& p = j.plan;
  const int kw = p.params.width, kh = p.params.height, C = j.C;
  const size_t n = static_cast<size_t>(j.src.width) * C;
  std::vector<uint8_t> padded(static_cast<size_t>(j.src.width + kw - 1) * C);
  std::vector<Acc> ring(static_cast<size_t>(kh) * n), acc(n);
  // Ring slot of source row y - ay + i (i = 0..kh-1 for output row y).
  auto slot = [&](int src_row) {
    const int r = (src_row - (y0 - p.ay)) % kh;
    return ring.data() + static_cast<size_t>(r) * n;
  };
  auto filter_row = [&](int src_row) {
    padded_row(j, src_row, padded.data());
    Acc* h = slot(src_row);
    std::fill(h, h + n, Acc(0));
    for (int t = 0; t < kw; t++) {
      const Acc w = row_taps[t];
      const uint8_t* in = padded.data() + static_cast<size_t>(t) * C;
      for (size_t k = 0; k < n; k++)
        h[k] = mac(h[k], w, static_cast<Acc>(in[k]));
    }
  };
  for (int r = y0 - p.ay; r < y0 - p.ay + kh - 1; r++)
    filter_row(r);
  for (int y = y0; y < y1; y++) {
    filter_row(y - p.ay + kh - 1);
    std::fill(acc.begin(), acc.end(), Acc(0));
    for (int i = 0; i < kh; i++) {
      const Acc w = col_taps[i];
      const Acc* h = slot(y - p.ay + i);
      for (size_t k = 0; k < n; k++)
        acc[k] = mac(acc[k], w, h[k]);
    }
    write_row(j, y, acc.data(), lanes, result);
  }
}

CUDAFX_CPU_CLONES void band_separable(const PlaneJob& j, unsigned lanes, int y0, int y1) {
  const ConvolvePlan& p = j.plan;
  band_separable_impl<int>(
      j, lanes, y0, y1, p.row.data(), p.col.data(), [](int a, int w, int v) { return a + w * v; },
      [&](int s) { return convolve_integer_result(s, p.idivisor, p.ioffset); });
}

CUDAFX_CPU_CLONES void band_separable_float(const PlaneJob& j, unsigned lanes, int y0, int y1) {
  const ConvolvePlan& p = j.plan;
  band_separable_impl<float>(
      j, lanes, y0, y1, p.frow.data(), p.fcol.data(),
      [](float a, float w, float v) { return fma_rn(w, v, a); },
      [&](float a) { return convolve_float_result(a, p.foffset); });
}

}  // namespace

Status convolve_cpu(const ConvolvePlan& plan, const ImageView& src, const ImageView& dst) {
  CUDAFX_TRY(validate_view(src, plan.desc, "convolution source"));
  CUDAFX_TRY(validate_view(dst, plan.desc, "convolution destination"));
  const FormatInfo& fi = format_info(plan.desc.format);
  for (int i = 0; i < fi.n_planes; i++) {
    const PlaneJob j{plan, src.plane(i), dst.plane(i), fi.planes[i].channels};
    const int H = j.src.height;
    if (!plan.filtered[i]) {
      copy_plane_host(j.dst, j.src);
      continue;
    }
    const int bands = std::min(H, cpu_worker_count());
    parallel_for(bands, [&](int band, int) {
      const int y0 = static_cast<int>(static_cast<long>(H) * band / bands);
      const int y1 = static_cast<int>(static_cast<long>(H) * (band + 1) / bands);
      if (plan.separable && plan.integer)
        band_separable(j, plan.lanes[i], y0, y1);
      else if (plan.separable)
        band_separable_float(j, plan.lanes[i], y0, y1);
      else
        band_2d(j, plan.lanes[i], y0, y1);
    });
  }
  return Status::ok();
}

Status ConvolveOp::create(Backend backend, const ImageDesc& desc, const ConvolveParams& params,
                          std::unique_ptr<ConvolveOp>* out) {
  out->reset();
  if (backend == Backend::Cuda && !cuda_built())
    return Status::error(StatusCode::Unsupported, "gst-cudafx was built without CUDA support");
  std::unique_ptr<ConvolveOp> op(new ConvolveOp(backend));
  CUDAFX_TRY(plan_convolve(desc, params, &op->plan_));
  CUDAFX_TRY(op->prepare());
  *out = std::move(op);
  return Status::ok();
}

ConvolveOp::~ConvolveOp() = default;

Status ConvolveOp::prepare() {
  if (backend_ == Backend::Cpu)
    return Status::ok();
  const size_t need = convolve_cuda_scratch_bytes(plan_);
  if (device_.size() < need)
    return device_.allocate(need);
  return Status::ok();
}

Status ConvolveOp::set_params(const ConvolveParams& params) {
  ConvolvePlan plan;
  CUDAFX_TRY(plan_convolve(plan_.desc, params, &plan));
  plan_ = std::move(plan);
  return prepare();
}

Status ConvolveOp::submit(StreamHandle stream, const ImageView& src, const ImageView& dst) {
  CUDAFX_TRY(check_distinct(src, dst, "convolution"));
  if (backend_ == Backend::Cpu)
    return convolve_cpu(plan_, src, dst);
  return convolve_cuda(plan_, src, dst, device_.get(), device_.size(), stream);
}

}  // namespace cudafx
