// Canny op: thresholds, the op object and the CPU backend (grey, gradients
// and magnitudes a row band each on the pool, then the classification, then
// the hysteresis as a flood fill from the strong pixels).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "cudafx/canny.hpp"
#include "cudafx/canny_math.hpp"
#include "cudafx/parallel.hpp"
#include "cudafx/rgb_luma.hpp"

namespace cudafx {

void canny_thresholds(const CannyParams& p, int* low, int* high) {
  double lo = p.low, hi = p.high;
  if (lo > hi)
    std::swap(lo, hi);
  if (p.aperture == 7) {  // the gradients are scaled by 1/16 too
    lo /= 16.0;
    hi /= 16.0;
  }
  if (p.l2) {
    lo = std::min(32767.0, lo);
    hi = std::min(32767.0, hi);
    if (lo > 0)
      lo *= lo;
    if (hi > 0)
      hi *= hi;
  }
  *low = static_cast<int>(std::floor(std::max(lo, -2147483648.0)));
  *high = static_cast<int>(std::floor(std::max(hi, -2147483648.0)));
}

namespace {

Status check_params(const CannyParams& p) {
  if (p.aperture != 3 && p.aperture != 5 && p.aperture != 7)
    return Status::invalid("canny: aperture must be 3, 5 or 7, got " + std::to_string(p.aperture));
  if (!std::isfinite(p.low) || !std::isfinite(p.high) || p.low > 1e9 || p.high > 1e9)
    return Status::invalid("canny: thresholds must be finite numbers up to 1e9");
  return Status::ok();
}

// Splits [0, h) into bands on the pool.
template <class F>
void for_bands(int h, F fn) {
  const int n = std::min(h, cpu_worker_count());
  parallel_for(n, [&](int band, int) {
    fn(static_cast<int>(static_cast<long>(h) * band / n),
       static_cast<int>(static_cast<long>(h) * (band + 1) / n));
  });
}

}  // namespace

Status CannyOp::create(Backend backend, const ImageDesc& desc, const CannyParams& params,
                       std::unique_ptr<CannyOp>* out) {
  out->reset();
  if (backend == Backend::Cuda && !cuda_built())
    return Status::error(StatusCode::Unsupported, "gst-cudafx was built without CUDA support");
  if (desc.width <= 0 || desc.height <= 0)
    return Status::invalid("canny: image size must be positive");
  CUDAFX_TRY(check_params(params));
  std::unique_ptr<CannyOp> op(new CannyOp(backend));
  op->desc_ = desc;
  op->params_ = params;
  canny_thresholds(params, &op->low_, &op->high_);
  if (backend == Backend::Cuda)
    CUDAFX_TRY(op->prepare_cuda());
  *out = std::move(op);
  return Status::ok();
}

CannyOp::~CannyOp() = default;

Status CannyOp::set_params(const CannyParams& params) {
  CUDAFX_TRY(check_params(params));
  params_ = params;
  canny_thresholds(params, &low_, &high_);
  return Status::ok();
}

Status CannyOp::submit(StreamHandle stream, const ImageView& src, const PlaneView& edges) {
  return run(stream, src, edges, nullptr);
}

Status CannyOp::submit_overlay(StreamHandle stream, const ImageView& src,
                               const PlaneView& overlay, uint32_t argb) {
  // Premultiplied B, G, R, A, each colour byte rounded (c * a + 127) / 255.
  const unsigned a = argb >> 24;
  auto pm = [&](int shift) {
    return static_cast<uint8_t>((((argb >> shift) & 0xff) * a + 127) / 255);
  };
  const uint8_t colour[4] = {pm(0), pm(8), pm(16), static_cast<uint8_t>(a)};
  return run(stream, src, overlay, colour);
}

Status CannyOp::run(StreamHandle stream, const ImageView& src, const PlaneView& out,
                    const uint8_t* colour) {
  CUDAFX_TRY(validate_view(src, desc_, "canny source"));
  const int bpp = colour ? 4 : 1;
  if (!out.data || out.width != desc_.width || out.height != desc_.height ||
      out.pitch < static_cast<size_t>(desc_.width) * bpp)
    return Status::invalid("canny: the " + std::string(colour ? "overlay" : "edge") +
                           " plane must be " + std::to_string(desc_.width) + "x" +
                           std::to_string(desc_.height) + (colour ? " 4-byte pixels" : " bytes"));
  return backend_ == Backend::Cpu ? submit_cpu(src, out, colour)
                                  : submit_cuda(stream, src, out, colour);
}

Status CannyOp::submit_cpu(const ImageView& src, const PlaneView& edges, const uint8_t* colour) {
  const int w = desc_.width, h = desc_.height;
  const size_t n = static_cast<size_t>(w) * h;
  // Scratch: grey bytes, dx and dy (16-bit), magnitudes (32-bit), the map.
  host_scratch_.resize(n * (1 + 2 + 2 + 4 + 1));
  uint8_t* grey = host_scratch_.data();
  auto* gdx = reinterpret_cast<int16_t*>(grey + n);
  auto* gdy = gdx + n;
  auto* mag = reinterpret_cast<int32_t*>(gdy + n);
  uint8_t* map = reinterpret_cast<uint8_t*>(mag + n);

  const PlaneView p = src.plane(0);
  RgbBytes rgb;
  const bool is_rgb = rgb_bytes(desc_.format, &rgb);
  for_bands(h, [&](int y0, int y1) {
    for (int y = y0; y < y1; y++) {
      const uint8_t* row = p.data + static_cast<size_t>(y) * p.pitch;
      for (int x = 0; x < w; x++)
        grey[static_cast<size_t>(y) * w + x] =
            is_rgb ? static_cast<uint8_t>(luma_bt601(row[x * rgb.channels + rgb.r],
                                                     row[x * rgb.channels + rgb.g],
                                                     row[x * rgb.channels + rgb.b]))
                   : row[x * p.channels];
    }
  });
  const int r = params_.aperture / 2;
  const bool l2 = params_.l2;
  for_bands(h, [&](int y0, int y1) {
    auto g = [&](int xs, int ys) { return static_cast<int>(grey[static_cast<size_t>(ys) * w + xs]); };
    for (int y = y0; y < y1; y++)
      for (int x = 0; x < w; x++) {
        int dx, dy;
        canny_gradient(g, x, y, w, h, r, &dx, &dy);
        const size_t i = static_cast<size_t>(y) * w + x;
        gdx[i] = static_cast<int16_t>(dx);
        gdy[i] = static_cast<int16_t>(dy);
        mag[i] = canny_magnitude(dx, dy, l2);
      }
  });
  auto m = [&](int x, int y) {
    return x < 0 || y < 0 || x >= w || y >= h ? 0 : mag[static_cast<size_t>(y) * w + x];
  };
  for_bands(h, [&](int y0, int y1) {
    for (int y = y0; y < y1; y++)
      for (int x = 0; x < w; x++) {
        const size_t i = static_cast<size_t>(y) * w + x;
        map[i] = canny_classify(m, x, y, gdx[i], gdy[i], low_, high_);
      }
  });
  // Hysteresis: strong pixels spread to every 8-connected candidate.
  std::vector<int> stack;
  for (size_t i = 0; i < n; i++)
    if (map[i] == 2)
      stack.push_back(static_cast<int>(i));
  while (!stack.empty()) {
    const int i = stack.back();
    stack.pop_back();
    const int x = i % w, y = i / w;
    for (int dy = -1; dy <= 1; dy++)
      for (int dx = -1; dx <= 1; dx++) {
        const int xn = x + dx, yn = y + dy;
        if (xn < 0 || yn < 0 || xn >= w || yn >= h)
          continue;
        uint8_t& v = map[static_cast<size_t>(yn) * w + xn];
        if (v == 1) {
          v = 2;
          stack.push_back(yn * w + xn);
        }
      }
  }
  for_bands(h, [&](int y0, int y1) {
    for (int y = y0; y < y1; y++)
      for (int x = 0; x < w; x++) {
        const bool edge = map[static_cast<size_t>(y) * w + x] == 2;
        uint8_t* o = edges.data + static_cast<size_t>(y) * edges.pitch;
        if (!colour)
          o[x] = edge ? 255 : 0;
        else
          for (int c = 0; c < 4; c++)
            o[4 * x + c] = edge ? colour[c] : 0;
      }
  });
  return Status::ok();
}

}  // namespace cudafx
