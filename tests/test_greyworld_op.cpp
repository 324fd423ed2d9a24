// The grey-world op against a plain reference written here from
// greyworld.hpp's rules (exact means, the RGB gains with their near-zero
// fallback, the chroma shift, smoothing), on every format at odd sizes with
// padded rows (every byte of every plane compared, so untouched bytes are
// checked too); what it is for (a colour cast removed, neutral chroma); the
// errors; and CUDA against CPU byte for byte over frame sequences.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cudafx/greyworld.hpp"
#include "support/gpu.hpp"
#include "support/host_image.hpp"

using namespace cudafx;
using testing_support::HostImage;

namespace {

const PixelFormat kColourFormats[] = {
    PixelFormat::RGBA, PixelFormat::BGRA, PixelFormat::RGBx, PixelFormat::BGRx,
    PixelFormat::ARGB, PixelFormat::ABGR, PixelFormat::RGB,  PixelFormat::BGR,
    PixelFormat::I420, PixelFormat::NV12, PixelFormat::Y444};

std::string name(PixelFormat f) { return format_info(f).name; }

// Random bytes with a cast: byte b of every pixel of plane p drawn from
// [lo, hi) that depend on (p, b), so the channel means differ.
void fill_cast(HostImage& img, uint32_t seed) {
  std::mt19937 rng(seed);
  const FormatInfo& fi = format_info(img.desc().format);
  for (int p = 0; p < fi.n_planes; p++) {
    const PlaneView v = img.view().plane(p);
    const int C = fi.planes[p].channels;
    for (int y = 0; y < v.height; y++)
      for (int x = 0; x < v.width * C; x++) {
        const int b = x % C, lo = 20 + 30 * ((p + b) % 3), hi = lo + 120 + 20 * b;
        v.data[static_cast<size_t>(y) * v.pitch + x] =
            static_cast<uint8_t>(lo + rng() % (hi - lo));
      }
  }
}

// The channels a format balances, as (plane, bytes a pixel, byte) -- read
// off the format's name for packed RGB ('A' and 'x' bytes are not colour).
struct Ch {
  int plane, channels, offset;
};
std::vector<Ch> channels_of(PixelFormat f) {
  switch (f) {
    case PixelFormat::I420:
    case PixelFormat::Y444: return {{1, 1, 0}, {2, 1, 0}};
    case PixelFormat::NV12: return {{1, 2, 0}, {1, 2, 1}};
    default: break;
  }
  const std::string n = name(f);
  std::vector<Ch> out;
  for (int i = 0; i < static_cast<int>(n.size()); i++)
    if (n[i] == 'R' || n[i] == 'G' || n[i] == 'B')
      out.push_back({0, static_cast<int>(n.size()), i});
  return out;
}

std::vector<double> means_of(const HostImage& img) {
  std::vector<double> m;
  for (const Ch& c : channels_of(img.desc().format)) {
    const PlaneView v = img.view().plane(c.plane);
    uint64_t sum = 0;
    for (int y = 0; y < v.height; y++)
      for (int x = 0; x < v.width; x++)
        sum += v.data[static_cast<size_t>(y) * v.pitch + static_cast<size_t>(x) * c.channels +
                      c.offset];
    m.push_back(static_cast<double>(sum) / (static_cast<double>(v.width) * v.height));
  }
  return m;
}

// The reference: `src` balanced by the smoothed means `s` (updated here).
HostImage reference(const HostImage& src, std::vector<double>* s, double weight, bool fresh) {
  const std::vector<double> m = means_of(src);
  if (fresh || s->empty())
    *s = m;
  else
    for (size_t i = 0; i < m.size(); i++)
      (*s)[i] = (*s)[i] + weight * (m[i] - (*s)[i]);
  const bool rgb = m.size() == 3;
  HostImage out(src.desc(), 3);
  out.copy_from(src.view());
  const std::vector<Ch> chs = channels_of(src.desc().format);
  for (size_t i = 0; i < chs.size(); i++) {
    const Ch& c = chs[i];
    const PlaneView v = out.view().plane(c.plane);
    for (int y = 0; y < v.height; y++)
      for (int x = 0; x < v.width; x++) {
        uint8_t& b = v.data[static_cast<size_t>(y) * v.pitch +
                            static_cast<size_t>(x) * c.channels + c.offset];
        double r;
        if (rgb) {
          const double grey = ((*s)[0] + (*s)[1] + (*s)[2]) / 3.0;
          r = (*s)[i] > 0.05 ? std::floor(b * (grey / (*s)[i]) + 0.5) : b + std::floor(grey + 0.5);
        } else {
          r = b + std::floor(128.0 - (*s)[i] + 0.5);
        }
        b = static_cast<uint8_t>(std::min(255.0, std::max(0.0, r)));
      }
  }
  return out;
}

std::unique_ptr<GreyWorldOp> make(Backend b, const ImageDesc& d) {
  std::unique_ptr<GreyWorldOp> op;
  const Status s = GreyWorldOp::create(b, d, &op);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return op;
}

// Runs `op` on a copy of `src` in host memory (rows padded by 3).
HostImage run_cpu(GreyWorldOp& op, const HostImage& src, double weight) {
  HostImage img(src.desc(), 3);
  img.copy_from(src.view());
  const Status s = op.submit(nullptr, img.view(), weight);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return img;
}

}  // namespace

TEST(GreyWorld, EveryFormatAgainstTheReference) {
  uint32_t seed = 1;
  for (PixelFormat f : kColourFormats) {
    for (const auto& sz : {std::pair<int, int>{37, 23}, {1, 1}, {64, 2}}) {
      HostImage src({f, sz.first, sz.second}, 5);
      fill_cast(src, seed++);
      auto op = make(Backend::Cpu, src.desc());
      ASSERT_TRUE(op);
      std::vector<double> s;
      const HostImage want = reference(src, &s, 1.0, true);
      const HostImage got = run_cpu(*op, src, 1.0);
      EXPECT_TRUE(testing_support::bytes_equal(got.view(), want.view()))
          << name(f) << " " << sz.first << "x" << sz.second << " max diff "
          << testing_support::max_abs_diff(got.view(), want.view());
    }
  }
}

// What it is for: a bluish cast leaves with the three means within a level.
TEST(GreyWorld, RemovesAColourCast) {
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::BGR, PixelFormat::ARGB}) {
    HostImage src({f, 160, 90});
    fill_cast(src, 7);
    const std::vector<double> before = means_of(src);
    ASSERT_GT(std::max({before[0], before[1], before[2]}) -
                  std::min({before[0], before[1], before[2]}), 20.0);
    auto op = make(Backend::Cpu, src.desc());
    const std::vector<double> after = means_of(run_cpu(*op, src, 1.0));
    EXPECT_NEAR(after[0], after[1], 1.0) << name(f);
    EXPECT_NEAR(after[1], after[2], 1.0) << name(f);
  }
}

// A channel with no light is lifted by the grey level, not scaled (a gain
// of grey / 0); the others still get gains; alpha is kept.
TEST(GreyWorld, DarkChannelIsLiftedNotScaled) {
  HostImage src({PixelFormat::RGBA, 20, 10});
  fill_cast(src, 3);
  const PlaneView v = src.view().plane(0);
  for (int y = 0; y < v.height; y++)
    for (int x = 0; x < v.width; x++)
      v.data[static_cast<size_t>(y) * v.pitch + 4 * x + 2] = 0;  // B = 0
  const std::vector<double> m = means_of(src);
  const int lift = static_cast<int>(std::floor((m[0] + m[1] + m[2]) / 3.0 + 0.5));
  auto op = make(Backend::Cpu, src.desc());
  const HostImage got = run_cpu(*op, src, 1.0);
  const PlaneView g = got.view().plane(0);
  for (int y = 0; y < g.height; y++)
    for (int x = 0; x < g.width; x++) {
      const uint8_t* p = g.data + static_cast<size_t>(y) * g.pitch + 4 * x;
      const uint8_t* q = v.data + static_cast<size_t>(y) * v.pitch + 4 * x;
      ASSERT_EQ(p[2], lift);
      ASSERT_EQ(p[3], q[3]);
    }
}

// YUV: U and V averaged to 128 (within rounding), luma untouched.
TEST(GreyWorld, ChromaBecomesNeutralAndLumaIsKept) {
  for (PixelFormat f : {PixelFormat::I420, PixelFormat::NV12, PixelFormat::Y444}) {
    HostImage src({f, 63, 41});
    fill_cast(src, 11);
    auto op = make(Backend::Cpu, src.desc());
    const HostImage got = run_cpu(*op, src, 1.0);
    for (double m : means_of(got))
      EXPECT_NEAR(m, 128.0, 0.5 + 1e-9) << name(f);
    const PlaneView a = src.view().plane(0), b = got.view().plane(0);
    for (int y = 0; y < a.height; y++)
      ASSERT_EQ(0, std::memcmp(a.data + y * a.pitch, b.data + y * b.pitch, a.width)) << name(f);
  }
}

// Smoothing: the means move by `weight` towards each frame's; reset()
// starts afresh.
TEST(GreyWorld, SmoothedMeansAndReset) {
  const ImageDesc d{PixelFormat::NV12, 48, 30};
  HostImage a(d), b(d);
  fill_cast(a, 21);
  fill_cast(b, 22);
  auto op = make(Backend::Cpu, d);
  std::vector<double> s;
  EXPECT_TRUE(testing_support::bytes_equal(run_cpu(*op, a, 0.3).view(),
                                           reference(a, &s, 0.3, true).view()));
  for (double w : {0.25, 0.5, 1.0}) {
    EXPECT_TRUE(testing_support::bytes_equal(run_cpu(*op, b, w).view(),
                                             reference(b, &s, w, false).view()))
        << w;
  }
  run_cpu(*op, a, 0.01);
  reference(a, &s, 0.01, false);
  op->reset();
  EXPECT_TRUE(testing_support::bytes_equal(run_cpu(*op, b, 0.01).view(),
                                           reference(b, &s, 0.01, true).view()));
}

TEST(GreyWorld, Errors) {
  std::unique_ptr<GreyWorldOp> op;
  EXPECT_EQ(GreyWorldOp::create(Backend::Cpu, {PixelFormat::GRAY8, 8, 8}, &op).message(),
            "grey world: GRAY8 has no colour to balance");
  EXPECT_FALSE(GreyWorldOp::create(Backend::Cpu, {PixelFormat::RGBA, 0, 8}, &op).is_ok());
  ASSERT_TRUE(GreyWorldOp::create(Backend::Cpu, {PixelFormat::RGBA, 8, 8}, &op).is_ok());
  HostImage img({PixelFormat::RGBA, 8, 8});
  EXPECT_EQ(op->submit(nullptr, img.view(), 0.0).message(),
            "grey world: weight must be in (0, 1]");
  EXPECT_FALSE(op->submit(nullptr, img.view(), 1.5).is_ok());
  EXPECT_FALSE(op->submit(nullptr, img.view(), std::nan("")).is_ok());
  HostImage other({PixelFormat::RGBA, 9, 8});
  EXPECT_FALSE(op->submit(nullptr, other.view(), 1.0).is_ok());
}

// CUDA equals CPU byte for byte over a sequence (the smoothed state lives
// on the device), rows aligned and not.
TEST(GreyWorldCuda, EqualsCpuOverASequence) {
  SKIP_WITHOUT_GPU();
  uint32_t seed = 100;
  for (PixelFormat f : kColourFormats) {
    for (size_t align : {size_t{256}, size_t{1}}) {
      const ImageDesc d{f, 173, 97};
      auto cpu = make(Backend::Cpu, d);
      auto gpu = make(Backend::Cuda, d);
      ASSERT_TRUE(cpu && gpu);
      CudaStream stream;
      ASSERT_TRUE(stream.create().is_ok());
      testing_support::DeviceImage dev(d, align);
      ASSERT_TRUE(dev.status().is_ok());
      const double weights[] = {1.0, 0.3, 0.3, 1.0};
      for (int i = 0; i < 4; i++) {
        if (i == 3) {
          cpu->reset();
          gpu->reset();
        }
        HostImage src(d);
        fill_cast(src, seed++);
        const HostImage want = run_cpu(*cpu, src, weights[i]);
        ASSERT_TRUE(dev.upload(src.view(), stream.get()).is_ok());
        ASSERT_TRUE(gpu->submit(stream.get(), dev.view(), weights[i]).is_ok());
        HostImage got(d);
        ASSERT_TRUE(dev.download(got.view(), stream.get()).is_ok());
        ASSERT_TRUE(stream.synchronize().is_ok());
        EXPECT_TRUE(testing_support::bytes_equal(got.view(), want.view()))
            << name(f) << " align " << align << " frame " << i << " max diff "
            << testing_support::max_abs_diff(got.view(), want.view());
      }
    }
  }
}

// 2160p: 2160 blocks (one a row) adding into the same sums, and rows of
// 3840 pixels in the 32-bit per-block sums.
TEST(GreyWorldCuda, EqualsCpuAt2160p) {
  SKIP_WITHOUT_GPU();
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::NV12, PixelFormat::RGB}) {
    const ImageDesc d{f, 3840, 2160};
    auto cpu = make(Backend::Cpu, d);
    auto gpu = make(Backend::Cuda, d);
    HostImage src(d);
    fill_cast(src, 900);
    const HostImage want = run_cpu(*cpu, src, 1.0);
    CudaStream stream;
    ASSERT_TRUE(stream.create().is_ok());
    testing_support::DeviceImage dev(d);
    ASSERT_TRUE(dev.upload(src.view(), stream.get()).is_ok());
    ASSERT_TRUE(gpu->submit(stream.get(), dev.view(), 1.0).is_ok());
    HostImage got(d);
    ASSERT_TRUE(dev.download(got.view(), stream.get()).is_ok());
    ASSERT_TRUE(stream.synchronize().is_ok());
    EXPECT_TRUE(testing_support::bytes_equal(got.view(), want.view())) << name(f);
  }
}
