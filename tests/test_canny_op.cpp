// The Canny op against cv::Canny: the same edge map, byte for byte, for
// every aperture, both norms and several thresholds on structured frames
// and photographs, through the grey conversion of RGB and the luma plane of
// YUV; a long weak chain reached from one strong pixel (connectivity over
// the whole frame); the errors; CUDA against CPU byte for byte.
#include <gtest/gtest.h>
#include <opencv2/imgproc.hpp>

#include <memory>
#include <random>
#include <string>

#include "cudafx/canny.hpp"
#include "support/gpu.hpp"
#include "support/host_image.hpp"
#include "support/testdata.hpp"

using namespace cudafx;
using testing_support::HostImage;

namespace {

// Blocks of random levels, blurred a little, plus noise: edges of every
// direction and weak ones.
HostImage structured(const ImageDesc& d, uint32_t seed) {
  HostImage img(d, 3);
  img.fill_random(seed);
  const FormatInfo& fi = format_info(d.format);
  std::mt19937 rng(seed);
  std::vector<int> levels(64);
  for (int& l : levels)
    l = static_cast<int>(rng() % 200) + 20;
  for (int p = 0; p < fi.n_planes; p++) {
    const PlaneView v = img.view().plane(p);
    const int C = fi.planes[p].channels;
    for (int y = 0; y < v.height; y++)
      for (int x = 0; x < v.width; x++) {
        const int block = ((x + y / 3) / 11 % 8) * 8 + (y + x / 5) / 13 % 8;
        for (int c = 0; c < C; c++)
          v.data[y * v.pitch + x * C + c] = static_cast<uint8_t>(
              std::min(255, levels[(block + c) % 64] + static_cast<int>(rng() % 9)));
      }
  }
  return img;
}

cv::Mat grey_of(const HostImage& img) {
  const ImageDesc d = img.desc();
  if (d.format == PixelFormat::RGBA) {
    cv::Mat g;
    cv::cvtColor(img.plane_mat(0), g, cv::COLOR_RGBA2GRAY);
    return g;
  }
  return img.plane_mat(0).clone();
}

HostImage edges_cpu(const HostImage& src, const CannyParams& p) {
  std::unique_ptr<CannyOp> op;
  EXPECT_TRUE(CannyOp::create(Backend::Cpu, src.desc(), p, &op).is_ok());
  HostImage e({PixelFormat::GRAY8, src.desc().width, src.desc().height}, 2);
  if (op) {
    const Status s = op->submit(nullptr, src.view(), e.view().plane(0));
    EXPECT_TRUE(s.is_ok()) << s.message();
  }
  return e;
}

int differing(const HostImage& a, const cv::Mat& b) {
  int n = 0;
  const PlaneView v = a.view().plane(0);
  for (int y = 0; y < v.height; y++)
    for (int x = 0; x < v.width; x++)
      n += v.data[y * v.pitch + x] != b.at<uint8_t>(y, x);
  return n;
}

}  // namespace

TEST(Canny, EqualsOpenCVOnStructuredFrames) {
  uint32_t seed = 1;
  for (PixelFormat f : {PixelFormat::GRAY8, PixelFormat::RGBA, PixelFormat::NV12}) {
    for (int aperture : {3, 5, 7}) {
      for (bool l2 : {false, true}) {
        const HostImage src = structured({f, 97, 61}, seed++);
        const double scale = aperture == 3 ? 1 : (aperture == 5 ? 8 : 60);
        for (const auto& t : {std::pair<double, double>{30, 90}, {90, 30}, {5, 200}}) {
          CannyParams p;
          p.low = t.first * scale;
          p.high = t.second * scale;
          p.aperture = aperture;
          p.l2 = l2;
          cv::Mat want;
          cv::Canny(grey_of(src), want, p.low, p.high, aperture, l2);
          const HostImage got = edges_cpu(src, p);
          EXPECT_EQ(differing(got, want), 0)
              << format_info(f).name << " aperture " << aperture << (l2 ? " L2" : " L1") << " "
              << p.low << "/" << p.high;
          EXPECT_GT(cv::countNonZero(want), 0) << "a test with no edges proves little";
        }
      }
    }
  }
}

TEST(Canny, EqualsOpenCVOnPhotos) {
  SKIP_WITHOUT_TESTDATA();
  for (const char* name : {"fruits.jpg", "building.jpg", "sudoku.png"}) {
    HostImage img;
    ASSERT_TRUE(testing_support::load_testdata_image(name, PixelFormat::GRAY8, &img));
    for (bool l2 : {false, true}) {
      CannyParams p;
      p.low = 50;
      p.high = 150;
      p.l2 = l2;
      cv::Mat want;
      cv::Canny(img.plane_mat(0), want, p.low, p.high, 3, l2);
      EXPECT_EQ(differing(edges_cpu(img, p), want), 0) << name << (l2 ? " L2" : " L1");
    }
  }
}

// A ring of weak gradient 60 pixels long with one strong step: hysteresis
// follows it all the way (no fixed number of passes).
TEST(Canny, ConnectivitySpansTheFrame) {
  HostImage src({PixelFormat::GRAY8, 200, 40});
  const PlaneView v = src.view().plane(0);
  for (int y = 0; y < 40; y++)
    for (int x = 0; x < 200; x++)
      v.data[y * v.pitch + x] = static_cast<uint8_t>(y < 20 ? 100 : (x < 5 ? 200 : 120));
  CannyParams p;
  p.low = 40;
  p.high = 300;  // only the left end's step (|dy| 4 * 100) is strong
  cv::Mat want;
  cv::Canny(src.plane_mat(0), want, p.low, p.high, 3, false);
  const HostImage got = edges_cpu(src, p);
  EXPECT_EQ(differing(got, want), 0);
  EXPECT_GT(cv::countNonZero(want.row(19)) + cv::countNonZero(want.row(20)), 150)
      << "the weak edge is followed across the frame";
}

TEST(Canny, Errors) {
  std::unique_ptr<CannyOp> op;
  CannyParams p;
  p.aperture = 4;
  EXPECT_EQ(CannyOp::create(Backend::Cpu, {PixelFormat::GRAY8, 8, 8}, p, &op).message(),
            "canny: aperture must be 3, 5 or 7, got 4");
  p = CannyParams{};
  ASSERT_TRUE(CannyOp::create(Backend::Cpu, {PixelFormat::GRAY8, 8, 8}, p, &op).is_ok());
  HostImage src({PixelFormat::GRAY8, 8, 8}), small({PixelFormat::GRAY8, 7, 8});
  EXPECT_EQ(op->submit(nullptr, src.view(), small.view().plane(0)).message(),
            "canny: the edge plane must be 8x8 bytes");
}

namespace {

// The edges of `src` by the CUDA op (host_rounds: the hysteresis a launch
// a round), or its overlay with `argb` when overlay is set.
HostImage edges_cuda(const HostImage& src, const CannyParams& p, bool host_rounds,
                     bool overlay = false, uint32_t argb = 0) {
  const ImageDesc d = src.desc();
  const ImageDesc out_desc{overlay ? PixelFormat::RGBA : PixelFormat::GRAY8, d.width, d.height};
  HostImage got(out_desc);
  std::unique_ptr<CannyOp> op;
  const Status made = CannyOp::create(Backend::Cuda, d, p, &op);
  EXPECT_TRUE(made.is_ok()) << made.message();
  if (!op)
    return got;
  op->force_host_rounds(host_rounds);
  CudaStream stream;
  EXPECT_TRUE(stream.create().is_ok());
  testing_support::DeviceImage din(d), dout(out_desc);
  EXPECT_TRUE(din.upload(src.view(), stream.get()).is_ok());
  const Status s = overlay ? op->submit_overlay(stream.get(), din.view(), dout.view().plane(0), argb)
                           : op->submit(stream.get(), din.view(), dout.view().plane(0));
  EXPECT_TRUE(s.is_ok()) << s.message();
  EXPECT_TRUE(dout.download(got.view(), stream.get()).is_ok());
  EXPECT_TRUE(stream.synchronize().is_ok());
  return got;
}

// A serpentine band (level 120 on 100) whose one closed outline winds
// across the frame through many 32x32 tiles, with a strong patch (200) at
// its start: only the outline reached from the patch, all of it, is edge.
HostImage serpentine(int w, int h) {
  HostImage img({PixelFormat::GRAY8, w, h});
  const PlaneView v = img.view().plane(0);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      const int k = y / 20, r = y % 20, bars = h / 20 - 1;
      const bool bar = r >= 5 && r < 13 && x >= 10 && x < w - 10 && k < bars;
      // the rows between bar g and bar g + 1, joined at the right end
      // after even bars and at the left after odd ones
      const int g = r >= 13 ? k : k - 1;
      const bool link = !bar && g >= 0 && g + 1 < bars &&
                        (g % 2 == 0 ? (x >= w - 18 && x < w - 10) : (x >= 10 && x < 18));
      uint8_t level = bar || link ? 120 : 100;
      if (k == 0 && r >= 5 && r < 13 && x >= 10 && x < 16)
        level = 200;
      v.data[static_cast<size_t>(y) * v.pitch + x] = level;
    }
  return img;
}

}  // namespace

TEST(Canny, SerpentineOutlineIsFollowedToItsEnd) {
  const HostImage src = serpentine(500, 400);
  CannyParams p;
  p.low = 40;
  p.high = 300;
  cv::Mat want;
  cv::Canny(src.plane_mat(0), want, p.low, p.high, 3, false);
  EXPECT_EQ(differing(edges_cpu(src, p), want), 0);
  EXPECT_GT(cv::countNonZero(want), 15000) << "the whole outline, not just the patch";
}

// The same winding outline on the GPU: many hysteresis rounds across tiles,
// in one cooperative launch and a launch a round.
TEST(CannyCuda, SerpentineEqualsCpuBothWaysOfRounds) {
  SKIP_WITHOUT_GPU();
  for (const auto& size : {std::pair<int, int>{500, 400}, {1001, 701}}) {
    const HostImage src = serpentine(size.first, size.second);
    CannyParams p;
    p.low = 40;
    p.high = 300;
    const HostImage cpu = edges_cpu(src, p);
    for (bool host_rounds : {false, true})
      EXPECT_TRUE(testing_support::bytes_equal(cpu.view(), edges_cuda(src, p, host_rounds).view()))
          << size.first << "x" << size.second << (host_rounds ? " host rounds" : " cooperative");
  }
}

TEST(CannyCuda, PhotosEqualCpu) {
  SKIP_WITHOUT_GPU();
  SKIP_WITHOUT_TESTDATA();
  for (const char* name : {"fruits.jpg", "building.jpg", "sudoku.png"}) {
    HostImage img;
    ASSERT_TRUE(testing_support::load_testdata_image(name, PixelFormat::RGBA, &img));
    for (int aperture : {3, 7}) {
      CannyParams p;
      p.aperture = aperture;
      p.low = aperture == 3 ? 50 : 50 * 60;
      p.high = aperture == 3 ? 150 : 150 * 60;
      p.l2 = aperture == 7;
      const HostImage cpu = edges_cpu(img, p);
      EXPECT_TRUE(testing_support::bytes_equal(cpu.view(), edges_cuda(img, p, false).view()))
          << name << " aperture " << aperture;
    }
  }
}

TEST(CannyCuda, EqualsCpu) {
  SKIP_WITHOUT_GPU();
  uint32_t seed = 50;
  for (PixelFormat f : {PixelFormat::GRAY8, PixelFormat::RGBA, PixelFormat::NV12}) {
    for (int aperture : {3, 5, 7}) {
      const HostImage src = structured({f, 333, 211}, seed++);
      CannyParams p;
      p.aperture = aperture;
      p.low = aperture == 3 ? 30 : 300;
      p.high = aperture == 3 ? 90 : 2000;
      p.l2 = aperture == 5;
      const HostImage cpu = edges_cpu(src, p);
      EXPECT_TRUE(testing_support::bytes_equal(cpu.view(), edges_cuda(src, p, false).view()))
          << format_info(f).name << " aperture " << aperture;
      EXPECT_TRUE(testing_support::bytes_equal(cpu.view(), edges_cuda(src, p, true).view()))
          << format_info(f).name << " aperture " << aperture << ", host rounds";
    }
  }
}

TEST(CannyCuda, OverlayEqualsCpu) {
  SKIP_WITHOUT_GPU();
  const HostImage src = structured({PixelFormat::RGBA, 130, 67}, 7);
  CannyParams p;
  p.low = 30;
  p.high = 90;
  std::unique_ptr<CannyOp> op;
  ASSERT_TRUE(CannyOp::create(Backend::Cpu, src.desc(), p, &op).is_ok());
  HostImage cpu({PixelFormat::RGBA, 130, 67});
  ASSERT_TRUE(op->submit_overlay(nullptr, src.view(), cpu.view().plane(0), 0x80ff2010).is_ok());
  EXPECT_TRUE(testing_support::bytes_equal(
      cpu.view(), edges_cuda(src, p, false, true, 0x80ff2010).view()));
}
