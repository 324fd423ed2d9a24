// The overlay blend op: every format, matrix and range against a plain
// double-precision reference written here (within the bound
// overlay_blend.hpp states: |out - exact| <= 0.5 + 2^-13), every byte the
// rectangle does not cover (row padding included) unchanged, clipping on
// every side, 1x1 frames and odd chroma edges, transparent and opaque
// overlays, the division rule for every value, CUDA against CPU byte for
// byte, and the errors. blend_overlay_list: equal to the sequence of single
// blends (overlapping placements, 4:2:0 chroma samples shared without shared
// pixels), its errors, CUDA against CPU and the host's cost a call.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "cudafx/cuda_resources.hpp"
#include "cudafx/overlay_blend.hpp"
#include "cudafx/overlay_blend_math.hpp"
#include "support/all_formats.hpp"
#include "support/gpu.hpp"
#include "support/host_image.hpp"

using namespace cudafx;
using testing_support::HostImage;
using testing_support::kAllFormats;

namespace {

// overlay_blend.hpp's guarantee against the exact value.
constexpr double kBound = 0.5 + 1.0 / 8192;

const OverlayColorimetry kColorimetries[] = {
    {ColorMatrix::BT601, ColorRange::Limited},  {ColorMatrix::BT601, ColorRange::Full},
    {ColorMatrix::BT709, ColorRange::Limited},  {ColorMatrix::BT709, ColorRange::Full},
    {ColorMatrix::BT2020, ColorRange::Limited}, {ColorMatrix::BT2020, ColorRange::Full}};

std::string colorimetry_name(const OverlayColorimetry& c) {
  const char* m[] = {"BT601", "BT709", "BT2020"};
  return std::string(m[static_cast<int>(c.matrix)]) +
         (c.range == ColorRange::Full ? " full" : " limited");
}

bool is_packed_rgb(PixelFormat f) {
  return f != PixelFormat::GRAY8 && format_info(f).n_planes == 1;
}

// How the overlay's alpha and colour are drawn.
enum class Alpha {
  Mixed,            // a 0, 255 or anything between; colour <= a
  Zero,             // a = 0, colour 0
  Opaque,           // a = 255, any colour
  Unpremultiplied,  // any bytes: colour may exceed a (the op clamps)
};

// A premultiplied BGRA overlay in host memory; rows 6 bytes longer than the
// pixels (random too), so the pitch is not a multiple of 4.
struct HostOverlay {
  std::vector<uint8_t> bytes;
  OverlayImage img;
};

HostOverlay make_overlay(int w, int h, uint32_t seed, Alpha mode) {
  std::mt19937 rng(seed);
  HostOverlay o;
  const size_t pitch = static_cast<size_t>(w) * 4 + 6;
  o.bytes.resize(pitch * h);
  for (uint8_t& b : o.bytes)
    b = static_cast<uint8_t>(rng());
  for (int j = 0; j < h; j++) {
    for (int i = 0; i < w; i++) {
      uint8_t* p = o.bytes.data() + j * pitch + i * 4;
      int a = 0;
      switch (mode) {
        case Alpha::Mixed: {
          const int pick = static_cast<int>(rng() % 4);
          a = pick == 0 ? 0 : pick == 1 ? 255 : static_cast<int>(rng() % 256);
          break;
        }
        case Alpha::Zero: a = 0; break;
        case Alpha::Opaque: a = 255; break;
        case Alpha::Unpremultiplied: a = static_cast<int>(rng() % 256); break;
      }
      for (int c = 0; c < 3; c++)
        p[c] = static_cast<uint8_t>(mode == Alpha::Unpremultiplied ? rng() % 256 : rng() % (a + 1));
      p[3] = static_cast<uint8_t>(a);
    }
  }
  o.img = {o.bytes.data(), pitch, w, h};
  return o;
}

// Random pixels (HostImage::fill_random) and random row padding, so that a
// stray write anywhere shows.
void fill_frame(HostImage& img, uint32_t seed) {
  img.fill_random(seed);
  std::mt19937 rng(seed ^ 0x5eed);
  const FormatInfo& fi = format_info(img.desc().format);
  for (int i = 0; i < fi.n_planes; i++) {
    const PlaneView p = img.view().plane(i);
    for (int y = 0; y < p.height; y++)
      for (size_t x = p.row_bytes(); x < p.pitch; x++)
        p.data[y * p.pitch + x] = static_cast<uint8_t>(rng());
  }
}

// Every byte of every plane, padding included (pitch x height).
using Planes = std::vector<std::vector<uint8_t>>;

Planes snapshot(const ImageView& v) {
  Planes s;
  const FormatInfo& fi = format_info(v.desc.format);
  for (int i = 0; i < fi.n_planes; i++) {
    const PlaneView p = v.plane(i);
    s.emplace_back(p.data, p.data + p.pitch * p.height);
  }
  return s;
}

// ---- the reference: the header's rules in doubles, written from its comment

struct Conversion {
  double kr, kb, off_y, s_y, s_c;
};

Conversion conversion_of(const OverlayColorimetry& c) {
  Conversion v{0.299, 0.114, 16, 219, 224};
  if (c.matrix == ColorMatrix::BT709)
    v.kr = 0.2126, v.kb = 0.0722;
  if (c.matrix == ColorMatrix::BT2020)
    v.kr = 0.2627, v.kb = 0.0593;
  if (c.range == ColorRange::Full)
    v.off_y = 0, v.s_y = 255, v.s_c = 255;
  return v;
}

// A premultiplied overlay pixel converted: Y_p, Cb_p, Cr_p and a.
struct Premul {
  double y, cb, cr, a;
};

Premul convert(const Conversion& k, double b, double g, double r, double a) {
  const double yp = k.kr * r + (1 - k.kr - k.kb) * g + k.kb * b;
  return {k.off_y * a / 255 + k.s_y * yp / 255,
          128 * a / 255 + k.s_c * (b - yp) / (255 * 2 * (1 - k.kb)),
          128 * a / 255 + k.s_c * (r - yp) / (255 * 2 * (1 - k.kr)), a};
}

double over(double premul, double a, double d) {
  return std::min(255.0, std::max(0.0, premul + (255 - a) * d / 255));
}

// What every byte of the frame should be, indexed as Planes; NaN where the
// byte must keep its value.
using Expected = std::vector<std::vector<double>>;

Expected reference(const ImageView& frame, const Planes& before, const HostOverlay& ov, int x,
                   int y, const OverlayColorimetry& color) {
  const FormatInfo& fi = format_info(frame.desc.format);
  const int W = frame.desc.width, H = frame.desc.height;
  const long long ox1 = static_cast<long long>(x) + ov.img.width;
  const long long oy1 = static_cast<long long>(y) + ov.img.height;
  auto covered = [&](int fx, int fy) { return fx >= x && fx < ox1 && fy >= y && fy < oy1; };
  auto pixel = [&](int fx, int fy) {
    const uint8_t* p = ov.bytes.data() + static_cast<size_t>(fy - y) * ov.img.pitch +
                       static_cast<size_t>(fx - x) * 4;
    return std::array<double, 4>{double(p[0]), double(p[1]), double(p[2]), double(p[3])};
  };
  Expected e;
  for (const auto& plane : before)
    e.emplace_back(plane.size(), std::nan(""));
  if (is_packed_rgb(frame.desc.format)) {
    const std::string order = fi.name;  // "RGBA", "BGRx", "RGB", ...: bytes in memory order
    for (int fy = 0; fy < H; fy++)
      for (int fx = 0; fx < W; fx++) {
        if (!covered(fx, fy))
          continue;
        const auto o = pixel(fx, fy);  // b, g, r, a
        for (size_t c = 0; c < order.size(); c++) {
          const size_t at = fy * frame.pitch[0] + fx * order.size() + c;
          const double d = before[0][at];
          switch (order[c]) {
            case 'B': e[0][at] = over(o[0], o[3], d); break;
            case 'G': e[0][at] = over(o[1], o[3], d); break;
            case 'R': e[0][at] = over(o[2], o[3], d); break;
            case 'A': e[0][at] = over(o[3], o[3], d); break;
            default: break;  // 'x': padding stays
          }
        }
      }
    return e;
  }
  const Conversion k = conversion_of(color);
  for (int fy = 0; fy < H; fy++)
    for (int fx = 0; fx < W; fx++) {
      if (!covered(fx, fy))
        continue;
      const auto o = pixel(fx, fy);
      const size_t at = fy * frame.pitch[0] + fx;
      e[0][at] = over(convert(k, o[0], o[1], o[2], o[3]).y, o[3], before[0][at]);
    }
  if (fi.n_planes == 1)
    return e;
  const int xs = fi.planes[1].x_shift, ys = fi.planes[1].y_shift;
  const bool nv12 = frame.desc.format == PixelFormat::NV12;
  const PlaneView cp = frame.plane(1);
  for (int cy = 0; cy < cp.height; cy++)
    for (int cx = 0; cx < cp.width; cx++) {
      // The frame pixels the sample covers; those outside the rectangle are
      // transparent black.
      Premul sum{0, 0, 0, 0};
      int n = 0, inside = 0;
      for (int fy = cy << ys; fy < std::min(H, (cy + 1) << ys); fy++)
        for (int fx = cx << xs; fx < std::min(W, (cx + 1) << xs); fx++) {
          n++;
          if (!covered(fx, fy))
            continue;
          inside++;
          const auto o = pixel(fx, fy);
          const Premul p = convert(k, o[0], o[1], o[2], o[3]);
          sum.cb += p.cb;
          sum.cr += p.cr;
          sum.a += p.a;
        }
      if (inside == 0)
        continue;
      const size_t u_at = cy * frame.pitch[1] + (nv12 ? 2 * cx : cx);
      const size_t v_at = nv12 ? u_at + 1 : cy * frame.pitch[2] + cx;
      const int v_plane = nv12 ? 1 : 2;
      e[1][u_at] = over(sum.cb / n, sum.a / n, before[1][u_at]);
      e[v_plane][v_at] = over(sum.cr / n, sum.a / n, before[v_plane][v_at]);
    }
  return e;
}

// Every byte: NaN-expected ones unchanged, the others within `bound` of the
// expected value; the largest difference seen goes to *max_err.
::testing::AssertionResult matches(const ImageView& out, const Planes& before, const Expected& e,
                                   double bound, double* max_err) {
  const Planes now = snapshot(out);
  for (size_t i = 0; i < now.size(); i++)
    for (size_t at = 0; at < now[i].size(); at++) {
      const size_t row = at / out.pitch[i], col = at % out.pitch[i];
      if (std::isnan(e[i][at])) {
        if (now[i][at] != before[i][at])
          return ::testing::AssertionFailure()
                 << "plane " << i << " byte " << col << " of row " << row << " changed from "
                 << int(before[i][at]) << " to " << int(now[i][at]) << " outside the overlay";
        continue;
      }
      const double err = std::abs(now[i][at] - e[i][at]);
      *max_err = std::max(*max_err, err);
      if (err > bound)
        return ::testing::AssertionFailure()
               << "plane " << i << " byte " << col << " of row " << row << ": " << int(now[i][at])
               << ", exact " << e[i][at] << " (was " << int(before[i][at]) << ")";
    }
  return ::testing::AssertionSuccess();
}

struct Case {
  PixelFormat format;
  OverlayColorimetry color;
  int W, H;        // frame
  int w, h, x, y;  // overlay and where
  Alpha alpha = Alpha::Mixed;
  uint32_t seed = 1;
};

std::string describe(const Case& c) {
  return std::string(format_info(c.format).name) + " " + colorimetry_name(c.color) + " frame " +
         std::to_string(c.W) + "x" + std::to_string(c.H) + ", overlay " + std::to_string(c.w) +
         "x" + std::to_string(c.h) + " at (" + std::to_string(c.x) + ", " + std::to_string(c.y) +
         ")";
}

// Blends on the CPU backend and checks the whole frame against the reference.
::testing::AssertionResult cpu_matches_reference(const Case& c, double* max_err) {
  HostImage frame({c.format, c.W, c.H}, 3);
  fill_frame(frame, c.seed);
  const Planes before = snapshot(frame.view());
  const HostOverlay ov = make_overlay(c.w, c.h, c.seed * 7 + 3, c.alpha);
  const Status s = blend_overlay(Backend::Cpu, nullptr, frame.view(), ov.img, c.x, c.y, c.color);
  if (!s.is_ok())
    return ::testing::AssertionFailure() << s.message();
  return matches(frame.view(), before, reference(frame.view(), before, ov, c.x, c.y, c.color),
                 kBound, max_err);
}

// The placements of a w x h overlay on a W x H frame that cross each side
// and corner, cover the frame, or sit inside at odd and even positions.
std::vector<std::array<int, 4>> placements(int W, int H) {
  return {{13, 11, 5, 7},          {10, 8, 4, 6},          {9, 7, -4, H / 3},
          {9, 7, W - 5, H / 3},    {9, 7, W / 3, -4},      {9, 7, W / 3, H - 3},
          {8, 6, -3, -3},          {8, 6, W - 5, -2},      {8, 6, -5, H - 4},
          {8, 6, W - 3, H - 5},    {W + 5, H + 4, -3, -2}, {1, 1, W - 1, H - 1}};
}

}  // namespace

// The rounding rule itself: div255 is v / 255 to nearest for every v it is
// used on, and the packed rule is the exact value rounded for every byte
// triple (premultiplied or not).
TEST(OverlayMath, Div255AndPackedOverAreExactlyRounded) {
  for (int v = 0; v <= 255 * 255; v++)
    ASSERT_EQ(div255(v), static_cast<int>(std::floor(v / 255.0 + 0.5))) << v;
  for (int a = 0; a < 256; a++)
    for (int c = 0; c < 256; c++)
      for (int d = 0; d < 256; d++) {
        const double exact = std::min(255.0, c + (255 - a) * d / 255.0);
        ASSERT_EQ(over_u8(c, a, d), static_cast<int>(std::lround(exact)))
            << "c " << c << " a " << a << " d " << d;
      }
}

// The YUV rule against the exact value for sums over 1, 2 and 4 pixels
// (random premultiplied pixels and frame values), and its exact cases.
TEST(OverlayMath, YuvValueWithinBoundOfExact) {
  std::mt19937 rng(11);
  double worst = 0;
  for (const OverlayColorimetry& color : kColorimetries) {
    const OverlayYuvCoeffs k = overlay_yuv_coeffs(color);
    const Conversion conv = conversion_of(color);
    // Each row sums exactly: white stays at the top of the range, grey on 128.
    const int one = 1 << kOverlayCoeffBits;
    EXPECT_EQ(k.y.b + k.y.g + k.y.r, one * static_cast<int>(conv.s_y));
    EXPECT_EQ(k.u.b + k.u.g + k.u.r, 0);
    EXPECT_EQ(k.v.b + k.v.g + k.v.r, 0);
    for (int it = 0; it < 60000; it++) {
      const int s = it % 3, n = 1 << s;
      int sum[4] = {0, 0, 0, 0};  // b, g, r, a
      Premul p{0, 0, 0, 0};
      for (int i = 0; i < n; i++) {
        const int a = it % 7 == 0 ? 255 : static_cast<int>(rng() % 256);
        const int b = rng() % (a + 1), g = rng() % (a + 1), r = rng() % (a + 1);
        const Premul q = convert(conv, b, g, r, a);
        p.y += q.y, p.cb += q.cb, p.cr += q.cr, p.a += q.a;
        sum[0] += b, sum[1] += g, sum[2] += r, sum[3] += a;
      }
      const int d = static_cast<int>(rng() % 256);
      const double want[3] = {over(p.y / n, p.a / n, d), over(p.cb / n, p.a / n, d),
                              over(p.cr / n, p.a / n, d)};
      const OverlayYuvRow* rows[3] = {&k.y, &k.u, &k.v};
      for (int c = 0; c < 3; c++) {
        const int got = over_yuv(*rows[c], sum[3], sum[0], sum[1], sum[2], d, s);
        worst = std::max(worst, std::abs(got - want[c]));
        ASSERT_LE(std::abs(got - want[c]), kBound)
            << colorimetry_name(color) << " row " << c << " n " << n << ": " << got << " vs "
            << want[c];
      }
    }
    // Transparent leaves every value; opaque white and black land exactly.
    for (int d = 0; d < 256; d++)
      for (int s = 0; s < 3; s++)
        ASSERT_EQ(over_yuv(k.u, 0, 0, 0, 0, d, s), d);
    const int n4 = 4 * 255;
    EXPECT_EQ(over_yuv(k.y, n4, n4, n4, n4, 77, 2), static_cast<int>(conv.off_y + conv.s_y));
    EXPECT_EQ(over_yuv(k.y, n4, 0, 0, 0, 77, 2), static_cast<int>(conv.off_y));
    EXPECT_EQ(over_yuv(k.u, n4, n4, n4, n4, 77, 2), 128);
    EXPECT_EQ(over_yuv(k.v, n4, 0, 0, 0, 77, 2), 128);
  }
  std::printf("overlay YUV rule: max |out - exact| over the samples = %.9f (bound %.9f)\n", worst,
              kBound);
}

// Every format, matrix and range, overlays inside and across every side,
// against the reference; the largest error is printed.
TEST(OverlayBlend, EveryFormatAndColorimetryMatchesReference) {
  double worst_packed = 0, worst_yuv = 0;
  uint32_t seed = 1;
  for (PixelFormat f : kAllFormats)
    for (const OverlayColorimetry& color : kColorimetries) {
      // Colorimetry means nothing to packed RGB: one pass is enough there.
      if (is_packed_rgb(f) && color.matrix != ColorMatrix::BT601)
        continue;
      for (const auto& p : placements(37, 29)) {
        const Case c{f, color, 37, 29, p[0], p[1], p[2], p[3], Alpha::Mixed, seed++};
        double* worst = is_packed_rgb(f) ? &worst_packed : &worst_yuv;
        EXPECT_TRUE(cpu_matches_reference(c, worst)) << describe(c);
      }
    }
  EXPECT_LE(worst_packed, 0.5);
  std::printf("overlay blend: max |out - exact| packed RGB %.9f, GRAY8/YUV %.9f\n", worst_packed,
              worst_yuv);
}

// 1x1 frames and the odd sizes where the last chroma sample of I420 and NV12
// covers one column, one row or one pixel.
TEST(OverlayBlend, TinyFramesAndOddChromaEdges) {
  // Frame W, H; overlay w, h, x, y.
  const std::array<int, 6> kTiny[] = {
      {1, 1, 1, 1, 0, 0}, {1, 1, 3, 3, -1, -1}, {1, 1, 2, 2, 0, -1}, {1, 1, 2, 1, -1, 0}};
  double worst = 0;
  uint32_t seed = 100;
  for (PixelFormat f : kAllFormats)
    for (const std::array<int, 6>& c : kTiny)
      EXPECT_TRUE(cpu_matches_reference({f, kColorimetries[2], c[0], c[1], c[2], c[3], c[4], c[5],
                                         Alpha::Mixed, seed++},
                                        &worst))
          << format_info(f).name << " 1x1 frame, overlay " << c[2] << "x" << c[3] << " at "
          << c[4] << "," << c[5];
  const PixelFormat yuv[] = {PixelFormat::I420, PixelFormat::NV12, PixelFormat::Y444};
  const int sizes[][2] = {{7, 5}, {1, 3}, {3, 1}, {5, 6}, {6, 5}, {2, 2}};
  for (PixelFormat f : yuv)
    for (const auto& sz : sizes)
      for (const OverlayColorimetry& color : {kColorimetries[0], kColorimetries[5]}) {
        const int W = sz[0], H = sz[1];
        const std::array<int, 4> at[] = {
            {1, 1, W - 1, H - 1}, {4, 4, W - 2, H - 3}, {W + 2, H + 2, -1, -1}, {1, 2, 0, H - 1}};
        for (const auto& p : at) {
          const Case c{f, color, W, H, p[0], p[1], p[2], p[3], Alpha::Mixed, seed++};
          EXPECT_TRUE(cpu_matches_reference(c, &worst)) << describe(c);
        }
      }
}

// Bands of rows on the CPU pool (areas above the inline limit).
TEST(OverlayBlend, LargeOverlayMatchesReference) {
  double worst = 0;
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::I420, PixelFormat::NV12}) {
    const Case c{f, kColorimetries[3], 301, 203, 300, 200, -7, 5, Alpha::Mixed, 77};
    EXPECT_TRUE(cpu_matches_reference(c, &worst)) << describe(c);
  }
}

// Colour above alpha (not premultiplied): the same rules, clamped; the
// extremes stay within 32 bits (overlay 255 everywhere but a = 0, frame 255).
TEST(OverlayBlend, UnpremultipliedOverlayClamps) {
  double worst = 0;
  uint32_t seed = 300;
  for (PixelFormat f : kAllFormats)
    for (const OverlayColorimetry& color : {kColorimetries[1], kColorimetries[4]}) {
      const Case c{f, color, 19, 14, 11, 9, 3, 2, Alpha::Unpremultiplied, seed++};
      EXPECT_TRUE(cpu_matches_reference(c, &worst)) << describe(c);
    }
  for (PixelFormat f : kAllFormats) {
    HostImage frame({f, 4, 4}, 1);
    const FormatInfo& fi = format_info(f);
    for (int i = 0; i < fi.n_planes; i++)
      std::memset(frame.view().data[i], 255, frame.view().pitch[i] * frame.view().plane(i).height);
    std::vector<uint8_t> px(4 * 4 * 4, 255);
    for (size_t i = 3; i < px.size(); i += 4)
      px[i] = 0;
    const Planes before = snapshot(frame.view());
    HostOverlay ov;
    ov.bytes = px;
    ov.img = {ov.bytes.data(), 16, 4, 4};
    for (const OverlayColorimetry& color : kColorimetries) {
      ASSERT_TRUE(blend_overlay(Backend::Cpu, nullptr, frame.view(), ov.img, 0, 0, color).is_ok());
      EXPECT_TRUE(matches(frame.view(), before, reference(frame.view(), before, ov, 0, 0, color),
                          kBound, &worst))
          << fi.name << " " << colorimetry_name(color);
      for (size_t i = 0; i < before.size(); i++)
        std::memcpy(frame.view().data[i], before[i].data(), before[i].size());
    }
  }
}

// A transparent overlay (a = 0, colour 0) leaves every byte as it was.
TEST(OverlayBlend, TransparentOverlayChangesNothing) {
  uint32_t seed = 500;
  for (PixelFormat f : kAllFormats)
    for (const OverlayColorimetry& color : kColorimetries) {
      HostImage frame({f, 23, 17}, 5);
      fill_frame(frame, seed++);
      const Planes before = snapshot(frame.view());
      const HostOverlay ov = make_overlay(30, 20, seed++, Alpha::Zero);
      ASSERT_TRUE(
          blend_overlay(Backend::Cpu, nullptr, frame.view(), ov.img, -3, -1, color).is_ok());
      EXPECT_TRUE(snapshot(frame.view()) == before) << format_info(f).name << " "
                                                    << colorimetry_name(color);
    }
}

// An opaque overlay writes its colours exactly on packed RGB (alpha 255,
// padding kept); on GRAY8/YUV the result does not depend on the frame.
TEST(OverlayBlend, OpaqueOverlayReplaces) {
  uint32_t seed = 700;
  for (PixelFormat f : kAllFormats) {
    const HostOverlay ov = make_overlay(9, 8, seed++, Alpha::Opaque);
    const int ox = 4, oy = 2;  // even: the chroma samples it touches are whole
    HostImage one({f, 20, 14}, 3), two({f, 20, 14}, 3);
    fill_frame(one, seed++);
    fill_frame(two, seed++);
    const Planes before = snapshot(one.view());
    for (const HostImage* img : {&one, &two})
      ASSERT_TRUE(blend_overlay(Backend::Cpu, nullptr, img->view(), ov.img, ox, oy,
                                kColorimetries[2])
                      .is_ok());
    const FormatInfo& fi = format_info(f);
    if (is_packed_rgb(f)) {
      const std::string order = fi.name;
      for (int j = 0; j < 8; j++)
        for (int i = 0; i < 9; i++) {
          const uint8_t* o = ov.bytes.data() + j * ov.img.pitch + i * 4;
          const size_t at = (oy + j) * one.view().pitch[0] + (ox + i) * order.size();
          for (size_t c = 0; c < order.size(); c++) {
            const char ch = order[c];
            const int want = ch == 'B'   ? o[0]
                             : ch == 'G' ? o[1]
                             : ch == 'R' ? o[2]
                             : ch == 'A' ? 255
                                         : before[0][at + c];
            ASSERT_EQ(one.view().data[0][at + c], want)
                << fi.name << " pixel " << i << "," << j << " byte " << c;
          }
        }
      continue;
    }
    for (int i = 0; i < fi.n_planes; i++) {
      const PlaneView a = one.view().plane(i), b = two.view().plane(i);
      const int xs = fi.planes[i].x_shift, ys = fi.planes[i].y_shift;
      for (int y = oy >> ys; y < (oy + 8) >> ys; y++)
        for (int x = ox >> xs; x < (ox + 9) >> xs; x++)
          for (int c = 0; c < a.channels; c++)
            ASSERT_EQ(a.data[y * a.pitch + x * a.channels + c],
                      b.data[y * b.pitch + x * b.channels + c])
                << fi.name << " plane " << i << " at " << x << "," << y;
    }
  }
}

// Overlays wholly outside the frame, including where x + width passes
// INT_MAX: OK, and nothing written.
TEST(OverlayBlend, WhollyOutsideIsNothing) {
  const HostOverlay ov = make_overlay(10, 6, 9, Alpha::Opaque);
  const int W = 17, H = 11;
  const std::array<int, 2> at[] = {{W, 0},       {-10, 0},          {0, H},
                                   {0, -6},      {-10, -6},         {W, H},
                                   {INT_MAX, 0}, {0, INT_MAX - 3},  {INT_MIN, INT_MIN},
                                   {INT_MAX - 5, INT_MAX - 2}};
  for (PixelFormat f : kAllFormats) {
    HostImage frame({f, W, H}, 3);
    fill_frame(frame, 21);
    const Planes before = snapshot(frame.view());
    for (const auto& p : at) {
      const Status s = blend_overlay(Backend::Cpu, nullptr, frame.view(), ov.img, p[0], p[1],
                                     kColorimetries[0]);
      EXPECT_TRUE(s.is_ok()) << s.message();
      EXPECT_TRUE(snapshot(frame.view()) == before)
          << format_info(f).name << " at " << p[0] << "," << p[1];
    }
  }
}

namespace {

// `s` is InvalidArgument with exactly `text`, and the frame is as it was.
::testing::AssertionResult refused(const Status& s, const std::string& text,
                                   const ImageView& frame, const Planes& before) {
  if (s.code() != StatusCode::InvalidArgument || s.message() != text)
    return ::testing::AssertionFailure() << "got \"" << s.message() << "\", wanted \"" << text
                                         << "\" (InvalidArgument)";
  if (snapshot(frame) != before)
    return ::testing::AssertionFailure() << "the frame changed: " << text;
  return ::testing::AssertionSuccess();
}

}  // namespace

// Bad arguments: InvalidArgument with the documented text, the frame untouched.
TEST(OverlayBlend, BadArgumentsAreRefused) {
  HostImage frame({PixelFormat::I420, 8, 6}, 0);
  fill_frame(frame, 5);
  const Planes before = snapshot(frame.view());
  const HostOverlay ov = make_overlay(4, 4, 6, Alpha::Mixed);
  const OverlayColorimetry good;
  auto expect_error = [&](const ImageView& v, const OverlayImage& o, const OverlayColorimetry& c,
                          const std::string& text) {
    EXPECT_TRUE(refused(blend_overlay(Backend::Cpu, nullptr, v, o, 1, 1, c), text, frame.view(),
                        before));
  };
  OverlayImage o = ov.img;
  o.data = nullptr;
  expect_error(frame.view(), o, good, "overlay: the overlay image has no data");
  o = ov.img;
  o.width = 0;
  expect_error(frame.view(), o, good, "overlay: empty overlay image (0x4)");
  o = ov.img;
  o.height = -2;
  expect_error(frame.view(), o, good, "overlay: empty overlay image (4x-2)");
  o = ov.img;
  o.pitch = 15;
  expect_error(frame.view(), o, good,
               "overlay: overlay pitch 15 is smaller than its row of 16 bytes");
  OverlayColorimetry c = good;
  c.matrix = static_cast<ColorMatrix>(7);
  expect_error(frame.view(), ov.img, c, "overlay: unknown colour matrix 7");
  c = good;
  c.range = static_cast<ColorRange>(-1);
  expect_error(frame.view(), ov.img, c, "overlay: unknown colour range -1");
  ImageView v = frame.view();
  v.desc.width = 0;
  expect_error(v, ov.img, good, "overlay: empty frame");
  v = frame.view();
  v.data[2] = nullptr;
  expect_error(v, ov.img, good, "overlay frame: plane 2 has no data");
  v = frame.view();
  v.pitch[0] = 7;
  expect_error(v, ov.img, good,
               "overlay frame: plane 0 pitch 7 is smaller than its row of 8 bytes");
  EXPECT_TRUE(check_overlay(frame.desc(), ov.img, good).is_ok());
  EXPECT_EQ(check_overlay({PixelFormat::RGBA, 0, 5}, ov.img, good).message(),
            "overlay: empty frame");
  if (!cuda_built()) {
    const Status s = blend_overlay(Backend::Cuda, nullptr, frame.view(), ov.img, 100, 100, good);
    EXPECT_EQ(s.code(), StatusCode::Unsupported);
    EXPECT_EQ(s.message(), "this build of cudafx has no CUDA support");
  }
}

// ---- blend_overlay_list

namespace {

constexpr int kAtlasW = 48, kAtlasH = 20;

// The atlas's sub-image that placement p names, as blend_overlay takes it.
OverlayImage sub_image(const OverlayImage& atlas, const OverlayPlacement& p) {
  const size_t at = static_cast<size_t>(p.src_y) * atlas.pitch + static_cast<size_t>(p.src_x) * 4;
  return {atlas.data + at, atlas.pitch, p.width, p.height};
}

// `count` random sub-images of a kAtlasW x kAtlasH atlas, 1..12 x 1..10, at
// random places on a W x H frame, some partly or wholly off it; at 64 on
// the frames used here many overlap.
std::vector<OverlayPlacement> random_placements(uint32_t seed, int count, int W, int H) {
  std::mt19937 rng(seed);
  std::vector<OverlayPlacement> list(count);
  for (OverlayPlacement& p : list) {
    p.width = 1 + static_cast<int>(rng() % 12);
    p.height = 1 + static_cast<int>(rng() % 10);
    p.src_x = static_cast<int>(rng() % (kAtlasW - p.width + 1));
    p.src_y = static_cast<int>(rng() % (kAtlasH - p.height + 1));
    p.x = static_cast<int>(rng() % (W + p.width + 4)) - p.width - 2;
    p.y = static_cast<int>(rng() % (H + p.height + 4)) - p.height - 2;
  }
  return list;
}

// Glyphs that share no frame pixel but do share 4:2:0 chroma samples: A's
// last column (6) and B's first (7) lie in chroma column 3, A's last row (8)
// and C's first (9) in chroma row 4, and sample (3, 4) holds a pixel of each
// of A, B, C and D; E lies on the odd last column and row of a 37 x 29
// frame (a chroma sample of one column and row) and partly off it.
std::vector<OverlayPlacement> shared_chroma_placements() {
  return {{0, 0, 4, 5, 3, 4}, {5, 2, 4, 5, 7, 4}, {10, 10, 4, 5, 3, 9}, {20, 3, 4, 5, 7, 9},
          {40, 12, 5, 5, 36, 28}};
}

bool overlap(const OverlayPlacement& p, const OverlayPlacement& q) {
  return p.x < q.x + q.width && q.x < p.x + p.width && p.y < q.y + q.height &&
         q.y < p.y + p.height;
}

// The placements blended one blend_overlay call at a time.
Status blend_sequence(Backend backend, StreamHandle stream, const ImageView& frame,
                      const OverlayImage& atlas, const std::vector<OverlayPlacement>& list,
                      const OverlayColorimetry& color) {
  for (const OverlayPlacement& p : list)
    CUDAFX_TRY(blend_overlay(backend, stream, frame, sub_image(atlas, p), p.x, p.y, color));
  return Status::ok();
}

// The lists every format is tried with: none, one, 64 random ones, the
// shared-chroma glyphs alone and with A again (exact overlap) and a glyph
// across A and D, and shorter random ones.
std::vector<std::vector<OverlayPlacement>> placement_lists(int W, int H, uint32_t seed) {
  std::vector<OverlayPlacement> shared = shared_chroma_placements();
  std::vector<OverlayPlacement> overlapping = shared;
  overlapping.push_back(shared[0]);
  overlapping.push_back({30, 5, 6, 6, 5, 6});
  std::vector<std::vector<OverlayPlacement>> lists = {{}, random_placements(seed, 1, W, H)};
  lists.push_back(random_placements(seed + 1, kMaxOverlayPlacements, W, H));
  lists.push_back(shared);
  lists.push_back(overlapping);
  for (int i = 0; i < 4; i++)
    lists.push_back(random_placements(seed + 2 + i, 3 + 5 * i, W, H));
  return lists;
}

std::vector<OverlayColorimetry> colorimetries_for(PixelFormat f) {
  if (is_packed_rgb(f))
    return {kColorimetries[0]};  // ignored there
  return {kColorimetries[1], kColorimetries[4]};
}

}  // namespace

// The list equals the single blends one after the other, byte for byte
// (padding included), on every format; count 0 changes nothing.
TEST(OverlayList, EqualsSequentialBlendsForEveryFormat) {
  const int W = 37, H = 29;
  const std::vector<OverlayPlacement> shared = shared_chroma_placements();
  for (size_t i = 0; i < shared.size(); i++)
    for (size_t j = 0; j < i; j++)
      ASSERT_FALSE(overlap(shared[i], shared[j])) << i << " and " << j;
  uint32_t seed = 1000;
  int lists_tried = 0;
  for (PixelFormat f : kAllFormats)
    for (const OverlayColorimetry& color : colorimetries_for(f))
      for (Alpha alpha : {Alpha::Mixed, Alpha::Unpremultiplied}) {
        const HostOverlay atlas = make_overlay(kAtlasW, kAtlasH, seed++, alpha);
        for (const auto& list : placement_lists(W, H, seed += 10)) {
          HostImage got({f, W, H}, 3), want({f, W, H}, 3);
          fill_frame(got, seed);
          fill_frame(want, seed);
          const Planes before = snapshot(got.view());
          const std::string what = std::string(format_info(f).name) + " " +
                                   colorimetry_name(color) + ", " + std::to_string(list.size()) +
                                   " placements";
          ASSERT_TRUE(blend_overlay_list(Backend::Cpu, nullptr, got.view(), atlas.img,
                                         list.data(), static_cast<int>(list.size()), color)
                          .is_ok())
              << what;
          ASSERT_TRUE(blend_sequence(Backend::Cpu, nullptr, want.view(), atlas.img, list, color)
                          .is_ok())
              << what;
          EXPECT_TRUE(snapshot(got.view()) == snapshot(want.view())) << what;
          // Shorter random lists may lie off the frame or be transparent.
          const bool unchanged = snapshot(got.view()) == before;
          if (list.empty()) {
            EXPECT_TRUE(unchanged) << what;
          } else if (list.size() >= 5) {
            EXPECT_FALSE(unchanged) << what;
          }
          lists_tried++;
        }
      }
  EXPECT_EQ(lists_tried, (8 * 1 + 4 * 2) * 2 * 9);
}

// Placements over the CPU pool's row bands (a frame above the inline limit).
TEST(OverlayList, LargeFrameEqualsSequentialBlends) {
  const int W = 301, H = 203;
  const HostOverlay atlas = make_overlay(kAtlasW, kAtlasH, 41, Alpha::Mixed);
  std::vector<OverlayPlacement> list = random_placements(42, kMaxOverlayPlacements - 1, W, H);
  list.push_back({0, 0, kAtlasW, kAtlasH, 150, 100});
  for (PixelFormat f : {PixelFormat::BGRx, PixelFormat::I420, PixelFormat::NV12}) {
    HostImage got({f, W, H}, 1), want({f, W, H}, 1);
    fill_frame(got, 43);
    fill_frame(want, 43);
    ASSERT_TRUE(blend_overlay_list(Backend::Cpu, nullptr, got.view(), atlas.img, list.data(),
                                   static_cast<int>(list.size()), kColorimetries[2])
                    .is_ok());
    ASSERT_TRUE(
        blend_sequence(Backend::Cpu, nullptr, want.view(), atlas.img, list, kColorimetries[2])
            .is_ok());
    EXPECT_TRUE(snapshot(got.view()) == snapshot(want.view())) << format_info(f).name;
  }
}

// Bad counts, lists and sub-images: InvalidArgument with the documented
// text, checked before anything is written.
TEST(OverlayList, BadArgumentsAreRefused) {
  HostImage frame({PixelFormat::NV12, 12, 10}, 2);
  fill_frame(frame, 8);
  const Planes before = snapshot(frame.view());
  const HostOverlay atlas = make_overlay(16, 8, 9, Alpha::Opaque);
  const OverlayColorimetry good;
  auto expect_error = [&](const OverlayImage& a, const OverlayPlacement* list, int count,
                          const std::string& text) {
    EXPECT_TRUE(refused(blend_overlay_list(Backend::Cpu, nullptr, frame.view(), a, list, count,
                                           good),
                        text, frame.view(), before));
  };
  const OverlayPlacement ok{0, 0, 16, 8, 0, 0};
  std::vector<OverlayPlacement> many(kMaxOverlayPlacements + 1, ok);
  expect_error(atlas.img, many.data(), -1, "overlay list: -1 placements, not in 0..64");
  expect_error(atlas.img, many.data(), 65, "overlay list: 65 placements, not in 0..64");
  expect_error(atlas.img, nullptr, 3, "overlay list: no placements array for a count of 3");
  // The good first placement is not blended either.
  const std::pair<OverlayPlacement, std::string> bad[] = {
      {{-1, 0, 2, 2, 0, 0}, "(2x2 at -1,0 of the atlas) is not inside the 16x8 atlas"},
      {{0, -3, 2, 2, 0, 0}, "(2x2 at 0,-3 of the atlas) is not inside the 16x8 atlas"},
      {{10, 5, 7, 3, 0, 0}, "(7x3 at 10,5 of the atlas) is not inside the 16x8 atlas"},
      {{10, 5, 6, 4, 0, 0}, "(6x4 at 10,5 of the atlas) is not inside the 16x8 atlas"},
      {{1, 1, INT_MAX, 1, 0, 0}, "(2147483647x1 at 1,1 of the atlas) is not inside the 16x8 atlas"},
      {{3, 2, 0, 2, 0, 0}, "(0x2 at 3,2 of the atlas) is empty"},
      {{3, 2, 2, -1, 0, 0}, "(2x-1 at 3,2 of the atlas) is empty"},
  };
  for (const auto& b : bad) {
    const OverlayPlacement list[2] = {ok, b.first};
    expect_error(atlas.img, list, 2, "overlay list: placement 1 " + b.second);
  }
  OverlayImage a = atlas.img;
  a.data = nullptr;
  expect_error(a, &ok, 1, "overlay: the overlay image has no data");
  // No list and nothing to do is fine; so is the whole atlas.
  EXPECT_TRUE(blend_overlay_list(Backend::Cpu, nullptr, frame.view(), atlas.img, nullptr, 0, good)
                  .is_ok());
  EXPECT_TRUE(snapshot(frame.view()) == before);
  EXPECT_TRUE(
      blend_overlay_list(Backend::Cpu, nullptr, frame.view(), atlas.img, &ok, 1, good).is_ok());
  if (!cuda_built()) {
    const Status s =
        blend_overlay_list(Backend::Cuda, nullptr, frame.view(), atlas.img, nullptr, 0, good);
    EXPECT_EQ(s.code(), StatusCode::Unsupported);
    EXPECT_EQ(s.message(), "this build of cudafx has no CUDA support");
  }
}

// ---- CUDA against CPU

namespace {

// What a test blends: the same call on either backend, with the overlay (or
// atlas) in that backend's memory.
using BlendFn = std::function<Status(Backend, StreamHandle, const ImageView&, const OverlayImage&)>;

// Blends with `blend` on the GPU (frame rows aligned to 256 bytes, `ov`
// copied to the device as it is in host memory) and on the CPU: the pixels
// byte for byte, and the device frame's row padding unchanged.
::testing::AssertionResult cuda_equals_cpu(const ImageDesc& desc, uint32_t seed,
                                           const HostOverlay& ov, const BlendFn& blend,
                                           StreamHandle stream) {
  HostImage cpu(desc, 3), got(desc, 0);
  fill_frame(cpu, seed);
  testing_support::DeviceImage dev(desc, 256);
  if (!dev.status().is_ok())
    return ::testing::AssertionFailure() << dev.status().message();
  const size_t dev_bytes = packed_size(desc, 256);
  // Random device padding first, then the frame over it.
  std::vector<uint8_t> raw_before(dev_bytes);
  std::mt19937 rng(seed);
  for (uint8_t& b : raw_before)
    b = static_cast<uint8_t>(rng());
  DeviceBuffer dov;
  Status s = dov.allocate(ov.bytes.size());
  if (s.is_ok())
    s = copy_bytes_async(dov.get(), ov.bytes.data(), ov.bytes.size(), stream);
  if (s.is_ok())
    s = copy_bytes_async(dev.view().data[0], raw_before.data(), dev_bytes, stream);
  if (s.is_ok())
    s = dev.upload(cpu.view(), stream);
  if (s.is_ok())
    s = copy_bytes_async(raw_before.data(), dev.view().data[0], dev_bytes, stream);
  OverlayImage dimg = ov.img;
  dimg.data = dov.bytes();
  if (s.is_ok())
    s = blend(Backend::Cuda, stream, dev.view(), dimg);
  std::vector<uint8_t> raw_after(dev_bytes);
  if (s.is_ok())
    s = dev.download(got.view(), stream);
  if (s.is_ok())
    s = copy_bytes_async(raw_after.data(), dev.view().data[0], dev_bytes, stream);
  if (s.is_ok())
    s = synchronize_stream(stream);
  if (!s.is_ok())
    return ::testing::AssertionFailure() << "CUDA: " << s.message();
  s = blend(Backend::Cpu, nullptr, cpu.view(), ov.img);
  if (!s.is_ok())
    return ::testing::AssertionFailure() << "CPU: " << s.message();
  if (!testing_support::bytes_equal(cpu.view(), got.view()))
    return ::testing::AssertionFailure()
           << "CUDA differs from CPU, by up to "
           << testing_support::max_abs_diff(cpu.view(), got.view());
  // Padding: every device byte outside the planes' rows.
  const ImageView& dv = dev.view();
  const FormatInfo& fi = format_info(desc.format);
  for (int i = 0; i < fi.n_planes; i++) {
    const PlaneView p = dv.plane(i);
    const size_t base = p.data - dv.data[0];
    for (int y = 0; y < p.height; y++)
      for (size_t x = p.row_bytes(); x < p.pitch; x++)
        if (raw_after[base + y * p.pitch + x] != raw_before[base + y * p.pitch + x])
          return ::testing::AssertionFailure() << "plane " << i << " padding byte " << x
                                               << " of row " << y << " changed";
  }
  return ::testing::AssertionSuccess();
}

// One overlay as `c` says.
::testing::AssertionResult cuda_equals_cpu(const Case& c, StreamHandle stream) {
  const HostOverlay ov = make_overlay(c.w, c.h, c.seed * 5 + 1, c.alpha);
  return cuda_equals_cpu(
      {c.format, c.W, c.H}, c.seed, ov,
      [&c](Backend b, StreamHandle s, const ImageView& frame, const OverlayImage& o) {
        return blend_overlay(b, s, frame, o, c.x, c.y, c.color);
      },
      stream);
}

// A list of sub-images of `atlas` on a frame of `desc`.
::testing::AssertionResult list_cuda_equals_cpu(const ImageDesc& desc, uint32_t seed,
                                                const HostOverlay& atlas,
                                                const std::vector<OverlayPlacement>& list,
                                                const OverlayColorimetry& color,
                                                StreamHandle stream) {
  return cuda_equals_cpu(
      desc, seed, atlas,
      [&](Backend b, StreamHandle s, const ImageView& frame, const OverlayImage& a) {
        return blend_overlay_list(b, s, frame, a, list.data(), static_cast<int>(list.size()),
                                  color);
      },
      stream);
}

}  // namespace

TEST(OverlayBlendCuda, EqualsCpuForEveryFormat) {
  SKIP_WITHOUT_GPU();
  CudaStream stream;
  ASSERT_TRUE(stream.create().is_ok());
  uint32_t seed = 900;
  for (PixelFormat f : kAllFormats)
    for (const OverlayColorimetry& color :
         {kColorimetries[0], kColorimetries[3], kColorimetries[5]}) {
      for (const auto& p : placements(37, 29))
        for (Alpha alpha : {Alpha::Mixed, Alpha::Unpremultiplied}) {
          const Case c{f, color, 37, 29, p[0], p[1], p[2], p[3], alpha, seed++};
          EXPECT_TRUE(cuda_equals_cpu(c, stream.get())) << describe(c);
        }
      for (const auto& c : {Case{f, color, 1, 1, 3, 3, -1, -1}, Case{f, color, 7, 5, 4, 4, 4, 2},
                            Case{f, color, 17, 11, 10, 6, 17, 0},
                            Case{f, color, 17, 11, 10, 6, INT_MIN, INT_MAX}})
        EXPECT_TRUE(cuda_equals_cpu(c, stream.get())) << describe(c);
    }
}

// Grids of many blocks, and taller than the grid's rows (the kernels loop).
TEST(OverlayBlendCuda, EqualsCpuOnLargeAndTallFrames) {
  SKIP_WITHOUT_GPU();
  CudaStream stream;
  ASSERT_TRUE(stream.create().is_ok());
  const Case cases[] = {
      {PixelFormat::BGRA, kColorimetries[2], 1920, 1080, 1000, 700, 1100, 500, Alpha::Mixed, 1},
      {PixelFormat::NV12, kColorimetries[2], 1920, 1080, 1001, 701, 1101, 501, Alpha::Mixed, 2},
      {PixelFormat::GRAY8, kColorimetries[1], 7, 40001, 6, 40003, 1, -1, Alpha::Mixed, 3},
      {PixelFormat::I420, kColorimetries[4], 6, 40001, 5, 40000, 1, 1, Alpha::Mixed, 4},
  };
  for (const Case& c : cases)
    EXPECT_TRUE(cuda_equals_cpu(c, stream.get())) << describe(c);
}

// ---- blend_overlay_list on the GPU

// Every format and list of the CPU test (none, one, 64 random, the
// shared-chroma glyphs with and without overlaps, shorter random ones),
// premultiplied or not.
TEST(OverlayListCuda, EqualsCpuForEveryFormat) {
  SKIP_WITHOUT_GPU();
  CudaStream stream;
  ASSERT_TRUE(stream.create().is_ok());
  const int W = 37, H = 29;
  uint32_t seed = 2000;
  for (PixelFormat f : kAllFormats)
    for (const OverlayColorimetry& color : colorimetries_for(f))
      for (Alpha alpha : {Alpha::Mixed, Alpha::Unpremultiplied}) {
        const HostOverlay atlas = make_overlay(kAtlasW, kAtlasH, seed++, alpha);
        for (const auto& list : placement_lists(W, H, seed += 10))
          EXPECT_TRUE(list_cuda_equals_cpu({f, W, H}, seed, atlas, list, color, stream.get()))
              << format_info(f).name << " " << colorimetry_name(color) << ", " << list.size()
              << " placements";
      }
}

// A line of 64 glyphs across a 1080p frame and placements scattered over
// it (grids of many blocks, most of the union uncovered), and frames taller
// than the grid's rows with placements at the top and the bottom (the
// kernel's row loop).
TEST(OverlayListCuda, EqualsCpuOnLargeAndTallFrames) {
  SKIP_WITHOUT_GPU();
  CudaStream stream;
  ASSERT_TRUE(stream.create().is_ok());
  const HostOverlay atlas = make_overlay(kAtlasW, kAtlasH, 3000, Alpha::Mixed);
  std::vector<OverlayPlacement> line;
  for (int i = 0; i < kMaxOverlayPlacements; i++)
    line.push_back({(i % 4) * 12, (i % 2) * 10, 12, 10, 101 + 11 * i, 1001});
  for (PixelFormat f :
       {PixelFormat::BGRA, PixelFormat::RGB, PixelFormat::NV12, PixelFormat::I420}) {
    const ImageDesc d{f, 1920, 1080};
    EXPECT_TRUE(list_cuda_equals_cpu(d, 3001, atlas, line, kColorimetries[2], stream.get()))
        << format_info(f).name << " line";
    EXPECT_TRUE(list_cuda_equals_cpu(d, 3002, atlas, random_placements(3003, 64, 1920, 1080),
                                     kColorimetries[3], stream.get()))
        << format_info(f).name << " scattered";
  }
  const int H = 40001;
  for (PixelFormat f : {PixelFormat::GRAY8, PixelFormat::I420, PixelFormat::Y444}) {
    const std::vector<OverlayPlacement> ends = {{0, 0, 7, 9, 0, -3},
                                                {5, 5, 9, 11, -2, H - 6},
                                                {1, 2, 3, 3, 2, H / 2},
                                                {0, 0, 6, 20, 1, -2}};
    EXPECT_TRUE(list_cuda_equals_cpu({f, 7, H}, 3004, atlas, ends, kColorimetries[4], stream.get()))
        << format_info(f).name << " tall";
  }
}
