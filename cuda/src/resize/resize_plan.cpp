// Validation and planning of the resize op: every output sample's source
// taps, computed once per pair of sizes in double/float exactly as cv::resize
// computes them, so that the kernels only gather and multiply-add integers.
#include <cmath>
#include <numeric>
#include <string>

#include "cudafx/resize.hpp"
#include "cudafx/resize_math.hpp"

namespace cudafx {
namespace {

constexpr int kOne = 1 << kResizeCoefBits;

int16_t quantise(float w) {
  const long q = std::lrint(static_cast<double>(w) * kOne);
  return static_cast<int16_t>(q < -32768 ? -32768 : (q > 32767 ? 32767 : q));
}

// Keys' cubic convolution weights for fractional offset f in [0, 1), a = -0.75,
// in float and in the order OpenCV evaluates them.
void cubic_weights(float f, float c[4]) {
  const float A = -0.75f;
  c[0] = ((A * (f + 1) - 5 * A) * (f + 1) + 8 * A) * (f + 1) - 4 * A;
  c[1] = ((A + 2) * f - (A + 3)) * f * f + 1;
  c[2] = ((A + 2) * (1 - f) - (A + 3)) * (1 - f) * (1 - f) + 1;
  c[3] = 1.f - c[0] - c[1] - c[2];
}

// Moves a tap window that reaches outside [0, src) inside it, folding the
// weight of each clamped tap into the edge sample it repeats: the sums are
// the same integers, and a kernel can then read `taps` consecutive samples
// from `base` without clamping each one (when src >= taps).
void fit_window(int taps, int src, ResizeTap* t) {
  if (src < taps || (t->base >= 0 && t->base + taps <= src))
    return;
  const int lo = t->base < 0 ? 0 : src - taps;
  int16_t w[kResizeMaxTaps] = {0, 0, 0, 0};
  for (int k = 0; k < taps; k++) {
    const int s = t->base + k < 0 ? 0 : (t->base + k >= src ? src - 1 : t->base + k);
    w[s - lo] = static_cast<int16_t>(w[s - lo] + t->w[k]);
  }
  t->base = lo;
  for (int k = 0; k < kResizeMaxTaps; k++)
    t->w[k] = w[k];
}

// Taps of one axis of one plane.
//  full_src, full_dst: the image's size on this axis (luma samples);
//  src, dst: the plane's; shift: the plane's subsampling; cosited: siting of
//  its samples when subsampled.
void plan_axis(ResizeMethod method, int full_src, int full_dst, int src, int dst, int shift,
               bool cosited, ResizeAxis* axis) {
  axis->src_size = src;
  axis->tap.assign(dst, ResizeTap{0, {0, 0, 0, 0}});
  if (method == ResizeMethod::Nearest) {
    axis->taps = 1;
    // cv::resize: ifx = 1 / (dst / src), sx = floor(x * ifx).
    const double ifx = 1.0 / (static_cast<double>(dst) / src);
    for (int i = 0; i < dst; i++) {
      const int s = static_cast<int>(std::floor(i * ifx));
      axis->tap[i].base = s < src - 1 ? s : src - 1;
      axis->tap[i].w[0] = static_cast<int16_t>(kOne);
    }
    return;
  }
  axis->taps = method == ResizeMethod::Bilinear ? 2 : 4;
  axis->steps_by_one = true;
  // Luma scale, computed as cv::resize does (1 / (dst / src)).
  const double scale = 1.0 / (static_cast<double>(full_dst) / full_src);
  const double sub = static_cast<double>(1 << shift);
  // Where sample i of this plane sits, in luma units: sub * i + offset.
  const double offset = (shift == 0 || cosited) ? 0.0 : (sub - 1.0) / 2.0;
  for (int i = 0; i < dst; i++) {
    const double luma = (sub * i + offset + 0.5) * scale - 0.5;
    float f = static_cast<float>((luma - offset) / sub);
    int s = static_cast<int>(std::floor(f));
    f -= static_cast<float>(s);
    ResizeTap& t = axis->tap[i];
    if (method == ResizeMethod::Bilinear) {
      // As cv::resize: before the first or past the last sample, the edge.
      if (s < 0) {
        s = 0;
        f = 0.f;
      }
      if (s >= src - 1) {
        s = src - 1;
        f = 0.f;
      }
      t.base = s;
      t.w[1] = quantise(f);
      t.w[0] = static_cast<int16_t>(kOne - t.w[1]);
    } else {
      float c[4];
      cubic_weights(f, c);
      t.base = s - 1;
      int sum = 0;
      for (int k = 0; k < 3; k++) {
        t.w[k] = quantise(c[k]);
        sum += t.w[k];
      }
      t.w[3] = static_cast<int16_t>(kOne - sum);
    }
    fit_window(axis->taps, src, &t);
    if (i > 0 && (t.base < axis->tap[i - 1].base || t.base > axis->tap[i - 1].base + 1))
      axis->steps_by_one = false;
  }
}

// The axis's exact_up (resize.hpp): the factor N whose formula gives every
// sample's taps. Bilinear taps are compared as the weight each source sample
// gets (the planner folds clamped taps into the edge sample; the formula
// clamps).
int exact_upscale_factor(const ResizeAxis& axis) {
  const int src = axis.src_size, dst = static_cast<int>(axis.tap.size());
  const auto clamp = [src](int s) { return s < 0 ? 0 : (s >= src ? src - 1 : s); };
  for (int n : {2, 4}) {
    if (dst != n * src)
      continue;
    bool equal = axis.taps == 1 || axis.taps == 2;
    for (int i = 0; i < dst && equal; i++) {
      const ResizeTap& t = axis.tap[i];
      if (axis.taps == 1) {
        equal = t.base == i / n;
        continue;
      }
      const int unit = kOne / (2 * n);
      const int r = (i + n / 2) / n, j = (i + n / 2) % n;
      const int want_s[2] = {clamp(r - 1), clamp(r)};
      const int want_w[2] = {(2 * n - 2 * j - 1) * unit, (2 * j + 1) * unit};
      const int probes[4] = {want_s[0], want_s[1], clamp(t.base), clamp(t.base + 1)};
      for (int s : probes) {
        int got = 0, want = 0;
        for (int k = 0; k < 2; k++) {
          got += clamp(t.base + k) == s ? t.w[k] : 0;
          want += want_s[k] == s ? want_w[k] : 0;
        }
        equal = equal && got == want;
      }
    }
    if (equal)
      return n;
  }
  return 0;
}

// The weight that taps (base, w) give source sample s, every tap clamped
// into [0, src) first.
int weight_on(int taps, int base, const int16_t* w, int src, int s) {
  int sum = 0;
  for (int k = 0; k < taps; k++)
    sum += resize_clamp(base + k, src) == s ? w[k] : 0;
  return sum;
}

// Whether two tap windows give every source sample the same weight.
bool same_weights(int taps, int src, int base_a, const int16_t* wa, int base_b,
                  const int16_t* wb) {
  for (int k = 0; k < taps; k++)
    for (int s : {resize_clamp(base_a + k, src), resize_clamp(base_b + k, src)})
      if (weight_on(taps, base_a, wa, src, s) != weight_on(taps, base_b, wb, src, s))
        return false;
  return true;
}

// Sets the axis's period (resize.hpp) when its tap windows have one: every
// sample's taps are re-expressed on the period's window (each source sample's
// weight on the first tap that reaches it after clamping) and checked to
// give every source sample the weight the plan gives it.
void find_period(ResizeAxis* axis) {
  const int src = axis->src_size, dst = static_cast<int>(axis->tap.size()), T = axis->taps;
  const int g = std::gcd(src, dst), q = dst / g, p = src / g;
  if (q > kResizeMaxPeriod || p > kResizeMaxPeriod)
    return;
  std::vector<ResizeTap> period(dst);
  for (int i = 0; i < dst; i++) {
    const ResizeTap& t = axis->tap[i];
    ResizeTap& c = period[i];
    c.base = p * (i / q) + resize_periodic_base(T, q, p, i % q);
    for (int k = 0; k < kResizeMaxTaps; k++) {
      const int s = resize_clamp(c.base + k, src);
      const bool first = k == 0 || resize_clamp(c.base + k - 1, src) != s;
      c.w[k] = static_cast<int16_t>(k < T && first ? weight_on(T, t.base, t.w, src, s) : 0);
    }
    if (!same_weights(T, src, t.base, t.w, c.base, c.w))
      return;
  }
  // Fixed weights: those of a period in the middle (clear of the edges,
  // where clamping moves weights) must serve every sample.
  const int mid = dst / q / 2;
  bool fixed = true;
  for (int i = 0; i < dst && fixed; i++)
    fixed = same_weights(T, src, period[i].base, period[i].w, period[i].base,
                         period[mid * q + i % q].w);
  axis->period = q;
  axis->period_step = p;
  axis->period_fixed = fixed;
  for (int j = 0; j < q; j++)
    for (int k = 0; k < kResizeMaxTaps; k++)
      axis->period_w[j][k] = period[mid * q + j].w[k];
  axis->period_tap = std::move(period);
}

bool size_ok(int v) { return v >= 1 && v <= kResizeMaxSize; }

std::string size_text(const ImageDesc& d) {
  return std::to_string(d.width) + "x" + std::to_string(d.height);
}

}  // namespace

const char* resize_method_name(ResizeMethod m) {
  switch (m) {
    case ResizeMethod::Nearest: return "nearest-neighbour";
    case ResizeMethod::Bilinear: return "bilinear";
    case ResizeMethod::Bicubic: return "bicubic";
  }
  return "?";
}

Status plan_resize(const ImageDesc& src, const ImageDesc& dst, const ResizeParams& params,
                   ResizePlan* out) {
  if (src.format != dst.format)
    return Status::invalid(std::string("resize: source and destination formats differ (") +
                           format_info(src.format).name + " vs " +
                           format_info(dst.format).name + ")");
  if (!size_ok(src.width) || !size_ok(src.height) || !size_ok(dst.width) || !size_ok(dst.height))
    return Status::invalid("resize: sizes must be 1.." + std::to_string(kResizeMaxSize) +
                           " on a side, got " + size_text(src) + " -> " + size_text(dst));
  if (params.method != ResizeMethod::Nearest && params.method != ResizeMethod::Bilinear &&
      params.method != ResizeMethod::Bicubic)
    return Status::invalid("resize: unknown method");
  const FormatInfo& fi = format_info(src.format);
  ResizePlan plan;
  plan.src = src;
  plan.dst = dst;
  plan.params = params;
  plan.n_planes = fi.n_planes;
  for (int i = 0; i < fi.n_planes; i++) {
    ResizePlanePlan& p = plan.planes[i];
    p.layout = fi.planes[i];
    p.src_width = plane_width(fi, i, src.width);
    p.src_height = plane_height(fi, i, src.height);
    p.dst_width = plane_width(fi, i, dst.width);
    p.dst_height = plane_height(fi, i, dst.height);
    plan_axis(params.method, src.width, dst.width, p.src_width, p.dst_width, p.layout.x_shift,
              params.chroma_cosited_h, &p.x);
    plan_axis(params.method, src.height, dst.height, p.src_height, p.dst_height,
              p.layout.y_shift, params.chroma_cosited_v, &p.y);
    p.x.exact_up = exact_upscale_factor(p.x);
    p.y.exact_up = exact_upscale_factor(p.y);
    find_period(&p.x);
    find_period(&p.y);
  }
  *out = std::move(plan);
  return Status::ok();
}

}  // namespace cudafx
