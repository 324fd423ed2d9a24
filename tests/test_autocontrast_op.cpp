// The auto-contrast op against a plain reference written here from
// autocontrast.hpp's rules (histograms, clipped levels, smoothing, the
// stretch table), on every format and both RGB modes at odd sizes with
// padded rows (every byte compared); what it is for (a dull frame spread
// to 0..255); clipping on a known histogram; flat frames kept; the errors;
// and CUDA against CPU byte for byte over frame sequences.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cudafx/autocontrast.hpp"
#include "cudafx/rgb_luma.hpp"
#include "support/all_formats.hpp"
#include "support/gpu.hpp"
#include "support/host_image.hpp"

using namespace cudafx;
using testing_support::HostImage;
using testing_support::kAllFormats;

namespace {

std::string name(PixelFormat f) { return format_info(f).name; }

// Random bytes squeezed into [lo, lo + span) (a dull frame), all planes.
void fill_dull(HostImage& img, uint32_t seed, int lo = 60, int span = 110) {
  std::mt19937 rng(seed);
  const FormatInfo& fi = format_info(img.desc().format);
  for (int p = 0; p < fi.n_planes; p++) {
    const PlaneView v = img.view().plane(p);
    for (int y = 0; y < v.height; y++)
      for (int x = 0; x < v.width * fi.planes[p].channels; x++)
        v.data[static_cast<size_t>(y) * v.pitch + x] =
            static_cast<uint8_t>(lo + (x % 3) * 7 + rng() % span);
  }
}

// Byte positions the reference reads: R, G, B of packed RGB (rgb_bytes is
// checked against the format names by the Harris tests), else byte 0.
struct Lanes {
  int channels, r, g, b;
};
Lanes lanes_of(PixelFormat f) {
  RgbBytes rgb;
  if (rgb_bytes(f, &rgb))
    return {rgb.channels, rgb.r, rgb.g, rgb.b};
  return {1, 0, -1, -1};
}

struct Levels {
  double s[3][2];
};

// The reference: src stretched with kept levels `kept` (updated here).
HostImage reference(const HostImage& src, const AutoContrastParams& prm, double weight,
                    bool fresh, Levels* kept) {
  const Lanes L = lanes_of(src.desc().format);
  const PlaneView p = src.view().plane(0);
  const bool rgb = L.g >= 0;
  const int nh = rgb && !prm.luma ? 3 : 1;
  std::vector<std::vector<uint64_t>> h(nh, std::vector<uint64_t>(256, 0));
  for (int y = 0; y < p.height; y++)
    for (int x = 0; x < p.width; x++) {
      const uint8_t* px = p.data + static_cast<size_t>(y) * p.pitch + static_cast<size_t>(x) * L.channels;
      if (!rgb)
        h[0][px[0]]++;
      else if (prm.luma)
        h[0][(px[L.r] * 9798 + px[L.g] * 19235 + px[L.b] * 3735 + 16384) >> 15]++;
      else
        h[0][px[L.r]]++, h[1][px[L.g]]++, h[2][px[L.b]]++;
    }
  const double n = static_cast<double>(p.width) * p.height;
  uint8_t table[3][256];
  for (int i = 0; i < nh; i++) {
    const uint64_t k_lo = static_cast<uint64_t>(std::floor(n * prm.clip_low / 100.0));
    const uint64_t k_hi = static_cast<uint64_t>(std::floor(n * prm.clip_high / 100.0));
    int lo = 0, hi = 255;
    uint64_t c = 0;
    while (lo < 255 && (c += h[i][lo]) <= k_lo)
      lo++;
    c = 0;
    while (hi > 0 && (c += h[i][hi]) <= k_hi)
      hi--;
    double* s = kept->s[i];
    if (fresh || weight >= 1.0)
      s[0] = lo, s[1] = hi;
    else
      s[0] = s[0] + weight * (lo - s[0]), s[1] = s[1] + weight * (hi - s[1]);
    for (int v = 0; v < 256; v++) {
      const double span = s[1] - s[0];
      const double r = span >= 1.0 ? std::floor((v - s[0]) * 255.0 / span + 0.5) : v;
      table[i][v] = static_cast<uint8_t>(std::min(255.0, std::max(0.0, r)));
    }
  }
  HostImage out(src.desc(), 3);
  out.copy_from(src.view());
  const PlaneView o = out.view().plane(0);
  for (int y = 0; y < o.height; y++)
    for (int x = 0; x < o.width; x++) {
      uint8_t* px = o.data + static_cast<size_t>(y) * o.pitch + static_cast<size_t>(x) * L.channels;
      if (!rgb) {
        px[0] = table[0][px[0]];
      } else {
        px[L.r] = table[0][px[L.r]];
        px[L.g] = table[nh == 3 ? 1 : 0][px[L.g]];
        px[L.b] = table[nh == 3 ? 2 : 0][px[L.b]];
      }
    }
  return out;
}

std::unique_ptr<AutoContrastOp> make(Backend b, const ImageDesc& d) {
  std::unique_ptr<AutoContrastOp> op;
  const Status s = AutoContrastOp::create(b, d, &op);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return op;
}

HostImage run_cpu(AutoContrastOp& op, const HostImage& src, const AutoContrastParams& prm,
                  double weight) {
  HostImage img(src.desc(), 3);
  img.copy_from(src.view());
  const Status s = op.submit(nullptr, img.view(), prm, weight);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return img;
}

}  // namespace

TEST(AutoContrast, EveryFormatAndModeAgainstTheReference) {
  uint32_t seed = 1;
  for (PixelFormat f : kAllFormats) {
    for (bool luma : {false, true}) {
      for (const auto& sz : {std::pair<int, int>{37, 23}, {1, 1}, {64, 2}}) {
        HostImage src({f, sz.first, sz.second}, 5);
        fill_dull(src, seed++);
        auto op = make(Backend::Cpu, src.desc());
        ASSERT_TRUE(op);
        AutoContrastParams prm;
        prm.luma = luma;
        prm.clip_low = 1.0;
        prm.clip_high = 2.0;
        Levels kept{};
        const HostImage want = reference(src, prm, 1.0, true, &kept);
        const HostImage got = run_cpu(*op, src, prm, 1.0);
        EXPECT_TRUE(testing_support::bytes_equal(got.view(), want.view()))
            << name(f) << (luma ? " luma " : " per channel ") << sz.first << "x" << sz.second
            << " max diff " << testing_support::max_abs_diff(got.view(), want.view());
      }
    }
  }
}

// What it is for: with no clipping, a dull frame's darkest byte becomes 0
// and its brightest 255 in every stretched channel.
TEST(AutoContrast, SpreadsADullFrame) {
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::GRAY8, PixelFormat::NV12}) {
    HostImage src({f, 120, 80});
    fill_dull(src, 5);
    auto op = make(Backend::Cpu, src.desc());
    AutoContrastParams prm;
    prm.clip_low = prm.clip_high = 0.0;
    const HostImage got = run_cpu(*op, src, prm, 1.0);
    const Lanes L = lanes_of(f);
    for (int lane : {L.r, L.g, L.b}) {
      if (lane < 0)
        continue;
      int lo = 255, hi = 0;
      const PlaneView p = got.view().plane(0);
      for (int y = 0; y < p.height; y++)
        for (int x = 0; x < p.width; x++) {
          const int v = p.data[static_cast<size_t>(y) * p.pitch + static_cast<size_t>(x) * L.channels + lane];
          lo = std::min(lo, v), hi = std::max(hi, v);
        }
      EXPECT_EQ(lo, 0) << name(f) << " lane " << lane;
      EXPECT_EQ(hi, 255) << name(f) << " lane " << lane;
    }
  }
}

// 1000 pixels, 10 of them 0 (1 %) and the rest 50..200: clip-low 1 %
// ignores the ten (low level 50: they saturate to 0), 0.9 % does not.
TEST(AutoContrast, ClippedShareOfAKnownHistogram) {
  HostImage src({PixelFormat::GRAY8, 100, 10});
  const PlaneView p = src.view().plane(0);
  for (int y = 0; y < 10; y++)
    for (int x = 0; x < 100; x++)
      p.data[y * p.pitch + x] =
          static_cast<uint8_t>(y == 0 && x < 10 ? 0 : 50 + (y * 100 + x) % 151);
  ASSERT_EQ(p.data[p.pitch + 51], 50);  // (51, 1): 50 + 151 % 151
  auto at50 = [](const HostImage& img) {
    const PlaneView v = img.view().plane(0);
    return static_cast<int>(v.data[v.pitch + 51]);
  };
  auto op = make(Backend::Cpu, src.desc());
  AutoContrastParams prm;
  prm.clip_high = 0.0;
  prm.clip_low = 1.0;
  HostImage got = run_cpu(*op, src, prm, 1.0);
  EXPECT_EQ(at50(got), 0) << "a byte at the low level 50 goes to 0";
  EXPECT_EQ(got.view().plane(0).data[0], 0);
  prm.clip_low = 0.9;
  got = run_cpu(*op, src, prm, 1.0);
  EXPECT_EQ(at50(got), static_cast<int>(std::floor(50.0 * 255.0 / 200.0 + 0.5)))
      << "low level 0, high 200";
}

TEST(AutoContrast, FlatFrameIsKept) {
  HostImage src({PixelFormat::BGRx, 31, 17});
  const PlaneView p = src.view().plane(0);
  for (int y = 0; y < 17; y++)
    std::fill(p.data + y * p.pitch, p.data + y * p.pitch + 31 * 4, uint8_t{77});
  auto op = make(Backend::Cpu, src.desc());
  for (bool luma : {false, true}) {
    AutoContrastParams prm;
    prm.luma = luma;
    EXPECT_TRUE(testing_support::bytes_equal(run_cpu(*op, src, prm, 1.0).view(), src.view()));
  }
}

// Smoothing moves the kept levels by `weight`; reset() and a change of mode
// start afresh.
TEST(AutoContrast, SmoothedLevelsAndRestarts) {
  const ImageDesc d{PixelFormat::RGB, 48, 30};
  HostImage a(d), b(d);
  fill_dull(a, 21, 10, 60);
  fill_dull(b, 22, 120, 100);
  auto op = make(Backend::Cpu, d);
  AutoContrastParams prm;
  Levels kept{};
  EXPECT_TRUE(testing_support::bytes_equal(run_cpu(*op, a, prm, 0.2).view(),
                                           reference(a, prm, 0.2, true, &kept).view()));
  for (double w : {0.2, 0.5}) {
    EXPECT_TRUE(testing_support::bytes_equal(run_cpu(*op, b, prm, w).view(),
                                             reference(b, prm, w, false, &kept).view()))
        << w;
  }
  op->reset();
  EXPECT_TRUE(testing_support::bytes_equal(run_cpu(*op, a, prm, 0.2).view(),
                                           reference(a, prm, 0.2, true, &kept).view()));
  prm.luma = true;
  EXPECT_TRUE(testing_support::bytes_equal(run_cpu(*op, b, prm, 0.2).view(),
                                           reference(b, prm, 0.2, true, &kept).view()))
      << "a new mode starts afresh";
}

TEST(AutoContrast, Errors) {
  std::unique_ptr<AutoContrastOp> op;
  EXPECT_FALSE(AutoContrastOp::create(Backend::Cpu, {PixelFormat::RGBA, 0, 8}, &op).is_ok());
  ASSERT_TRUE(AutoContrastOp::create(Backend::Cpu, {PixelFormat::RGBA, 8, 8}, &op).is_ok());
  HostImage img({PixelFormat::RGBA, 8, 8});
  AutoContrastParams prm;
  prm.clip_low = 60;
  prm.clip_high = 40;
  EXPECT_EQ(op->submit(nullptr, img.view(), prm, 1.0).message(),
            "auto contrast: clip-low and clip-high must be >= 0 and sum below 100");
  prm.clip_low = -1;
  EXPECT_FALSE(op->submit(nullptr, img.view(), prm, 1.0).is_ok());
  prm = AutoContrastParams{};
  EXPECT_EQ(op->submit(nullptr, img.view(), prm, 0.0).message(),
            "auto contrast: weight must be in (0, 1]");
  HostImage other({PixelFormat::RGBA, 8, 9});
  EXPECT_FALSE(op->submit(nullptr, other.view(), prm, 1.0).is_ok());
}

// CUDA equals CPU byte for byte over a sequence (kept levels on the
// device), both RGB modes, rows aligned and not, and at 2160p.
TEST(AutoContrastCuda, EqualsCpuOverASequence) {
  SKIP_WITHOUT_GPU();
  uint32_t seed = 100;
  for (PixelFormat f : kAllFormats) {
    for (size_t align : {size_t{256}, size_t{1}}) {
      const ImageDesc d{f, 173, 97};
      auto cpu = make(Backend::Cpu, d);
      auto gpu = make(Backend::Cuda, d);
      ASSERT_TRUE(cpu && gpu);
      CudaStream stream;
      ASSERT_TRUE(stream.create().is_ok());
      testing_support::DeviceImage dev(d, align);
      ASSERT_TRUE(dev.status().is_ok());
      const double weights[] = {1.0, 0.3, 0.3, 0.5};
      for (int i = 0; i < 4; i++) {
        AutoContrastParams prm;
        prm.luma = i == 3;
        prm.clip_low = 0.5 * i;
        HostImage src(d);
        fill_dull(src, seed++, 20 + 10 * i, 150);
        const HostImage want = run_cpu(*cpu, src, prm, weights[i]);
        ASSERT_TRUE(dev.upload(src.view(), stream.get()).is_ok());
        ASSERT_TRUE(gpu->submit(stream.get(), dev.view(), prm, weights[i]).is_ok());
        HostImage got(d);
        ASSERT_TRUE(dev.download(got.view(), stream.get()).is_ok());
        ASSERT_TRUE(stream.synchronize().is_ok());
        EXPECT_TRUE(testing_support::bytes_equal(got.view(), want.view()))
            << name(f) << " align " << align << " frame " << i;
      }
    }
  }
}

TEST(AutoContrastCuda, EqualsCpuAt2160p) {
  SKIP_WITHOUT_GPU();
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::NV12}) {
    for (bool luma : {false, true}) {
      const ImageDesc d{f, 3840, 2160};
      auto cpu = make(Backend::Cpu, d);
      auto gpu = make(Backend::Cuda, d);
      HostImage src(d);
      fill_dull(src, 900);
      AutoContrastParams prm;
      prm.luma = luma;
      const HostImage want = run_cpu(*cpu, src, prm, 1.0);
      CudaStream stream;
      ASSERT_TRUE(stream.create().is_ok());
      testing_support::DeviceImage dev(d);
      ASSERT_TRUE(dev.upload(src.view(), stream.get()).is_ok());
      ASSERT_TRUE(gpu->submit(stream.get(), dev.view(), prm, 1.0).is_ok());
      HostImage got(d);
      ASSERT_TRUE(dev.download(got.view(), stream.get()).is_ok());
      ASSERT_TRUE(stream.synchronize().is_ok());
      EXPECT_TRUE(testing_support::bytes_equal(got.view(), want.view())) << name(f) << luma;
    }
  }
}
