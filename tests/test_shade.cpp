// The shade op: every format against a plain reference written here from
// shade.hpp's rules (luma or colour bytes max(0, b - value); alpha, padding
// bytes, chroma planes and row padding untouched; every byte of the frame
// buffer compared), clipping on every side and past INT_MAX, value 0 and
// 255, row bands on the CPU pool, the errors, and CUDA against CPU byte for
// byte over the whole device buffer (row padding included).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cudafx/cuda_resources.hpp"
#include "cudafx/shade.hpp"
#include "support/all_formats.hpp"
#include "support/gpu.hpp"

using namespace cudafx;
using testing_support::kAllFormats;

namespace {

// A frame and the bytes it lives in, every byte random (row padding too, so
// a stray write anywhere shows). Rows are padded by `pad` bytes: 3 makes
// pitches that are neither 2- nor 4-byte multiples.
struct Frame {
  ImageDesc desc;
  size_t pad = 3;
  std::vector<uint8_t> bytes;

  Frame(ImageDesc d, uint32_t seed, size_t row_pad = 3) : desc(d), pad(row_pad) {
    bytes.resize(packed_size(desc, 1, pitches().data()));
    std::mt19937 rng(seed);
    for (uint8_t& b : bytes)
      b = static_cast<uint8_t>(rng());
  }
  std::vector<size_t> pitches() const {
    const FormatInfo& fi = format_info(desc.format);
    std::vector<size_t> p(kMaxPlanes, 0);
    for (int i = 0; i < fi.n_planes; i++)
      p[i] = static_cast<size_t>(plane_width(fi, i, desc.width)) * fi.planes[i].channels + pad;
    return p;
  }
  ImageView view() { return packed_view(desc, bytes.data(), 1, pitches().data()); }
};

std::string name(PixelFormat f) { return format_info(f).name; }

// Is byte c of a plane-0 pixel shaded? The luma byte of GRAY8 and YUV; the
// R, G and B bytes of packed RGB, read off the format's name ("ARGB",
// "BGRx", "RGB"), never its 'A' or 'x'.
bool shaded_byte(PixelFormat f, int c) {
  const FormatInfo& fi = format_info(f);
  if (fi.planes[0].channels == 1)
    return true;
  const char ch = fi.name[c];
  return ch == 'R' || ch == 'G' || ch == 'B';
}

// The frame's bytes after shading [x, x + w) x [y, y + h) by `value`, from
// the bytes before: every plane-0 pixel tested against the rectangle.
std::vector<uint8_t> reference(Frame& f, const std::vector<uint8_t>& before, int x, int y,
                               int w, int h, int value) {
  std::vector<uint8_t> out = before;
  const ImageView v = f.view();
  const int channels = format_info(f.desc.format).planes[0].channels;
  for (int fy = 0; fy < f.desc.height; fy++)
    for (int fx = 0; fx < f.desc.width; fx++) {
      if (fx < x || fx >= static_cast<long long>(x) + w || fy < y ||
          fy >= static_cast<long long>(y) + h)
        continue;
      const size_t at = fy * v.pitch[0] + fx * channels;
      for (int c = 0; c < channels; c++)
        if (shaded_byte(f.desc.format, c))
          out[at + c] = static_cast<uint8_t>(std::max(0, before[at + c] - value));
    }
  return out;
}

// Shades on the CPU and compares every byte of the frame's buffer with the
// reference.
::testing::AssertionResult cpu_matches_reference(PixelFormat format, int W, int H, int x, int y,
                                                 int w, int h, int value, uint32_t seed) {
  Frame f({format, W, H}, seed);
  const std::vector<uint8_t> before = f.bytes;
  const Status s = shade_rect(Backend::Cpu, nullptr, f.view(), x, y, w, h, value);
  const std::string what = name(format) + " " + std::to_string(W) + "x" + std::to_string(H) +
                           ", " + std::to_string(w) + "x" + std::to_string(h) + " at (" +
                           std::to_string(x) + ", " + std::to_string(y) + "), value " +
                           std::to_string(value);
  if (!s.is_ok())
    return ::testing::AssertionFailure() << what << ": " << s.message();
  const std::vector<uint8_t> want = reference(f, before, x, y, w, h, value);
  for (size_t i = 0; i < want.size(); i++)
    if (f.bytes[i] != want[i])
      return ::testing::AssertionFailure() << what << ": byte " << i << " of the buffer is "
                                           << int(f.bytes[i]) << ", wanted " << int(want[i])
                                           << " (was " << int(before[i]) << ")";
  return ::testing::AssertionSuccess();
}

// Rectangles (w, h, x, y) on a W x H frame: inside at odd and even places,
// across each side and corner, larger than the frame, one pixel in a corner,
// and sizes or places near the int limits that still cover pixels.
std::vector<std::array<int, 4>> rectangles(int W, int H) {
  return {{13, 11, 5, 7},       {10, 8, 4, 6},          {9, 7, -4, H / 3},
          {9, 7, W - 5, H / 3}, {9, 7, W / 3, -4},      {9, 7, W / 3, H - 3},
          {8, 6, -3, -3},       {8, 6, W - 5, -2},      {8, 6, -5, H - 4},
          {8, 6, W - 3, H - 5}, {W + 5, H + 4, -3, -2}, {1, 1, W - 1, H - 1},
          {1, 1, 0, 0},         {INT_MAX, INT_MAX, 3, 2}, {INT_MAX, 5, INT_MIN + 10, 1}};
}

constexpr int kValues[] = {1, 80, 200, 254, 255};

}  // namespace

// Every format and value, rectangles inside and across every side.
TEST(Shade, EveryFormatMatchesReference) {
  const int W = 37, H = 29;
  uint32_t seed = 1;
  for (PixelFormat f : kAllFormats)
    for (int value : kValues)
      for (const auto& r : rectangles(W, H))
        EXPECT_TRUE(cpu_matches_reference(f, W, H, r[2], r[3], r[0], r[1], value, seed++));
}

// 1x1 frames, frames of one row or column, odd 4:2:0 edges; pitches without
// padding.
TEST(Shade, TinyFramesAndTightPitches) {
  const int sizes[][2] = {{1, 1}, {1, 5}, {5, 1}, {3, 3}, {7, 5}};
  uint32_t seed = 100;
  for (PixelFormat f : kAllFormats)
    for (const auto& sz : sizes)
      for (size_t pad : {0, 1}) {
        const int W = sz[0], H = sz[1];
        const std::array<int, 4> at[] = {{1, 1, 0, 0}, {W, H, 0, 0}, {2, 2, W - 1, H - 1},
                                         {W + 2, 1, -1, H / 2}};
        for (const auto& r : at) {
          Frame fr({f, W, H}, seed++, pad);
          const std::vector<uint8_t> before = fr.bytes;
          ASSERT_TRUE(shade_rect(Backend::Cpu, nullptr, fr.view(), r[2], r[3], r[0], r[1], 90)
                          .is_ok());
          EXPECT_EQ(fr.bytes, reference(fr, before, r[2], r[3], r[0], r[1], 90))
              << name(f) << " " << W << "x" << H << " pad " << pad;
        }
      }
}

// Rectangles wholly outside the frame (x + width passing INT_MAX included)
// and empty ones: OK, and not a byte written.
TEST(Shade, WhollyOutsideOrEmptyIsNothing) {
  const int W = 17, H = 11;
  const std::array<int, 4> rects[] = {  // w, h, x, y
      {10, 6, W, 0},           {10, 6, -10, 0},       {10, 6, 0, H},
      {10, 6, 0, -6},          {10, 6, W, H},         {10, 6, INT_MAX, 0},
      {10, 6, 0, INT_MAX - 3}, {10, 6, INT_MIN, INT_MIN},
      {INT_MAX, 6, INT_MIN, 0},  // ends at -1
      {0, 6, 2, 2},            {6, 0, 2, 2},          {-3, 6, 2, 2},
      {6, INT_MIN, 2, 2},      {INT_MIN, INT_MIN, 5, 5}};
  for (PixelFormat f : kAllFormats) {
    Frame fr({f, W, H}, 21);
    const std::vector<uint8_t> before = fr.bytes;
    for (const auto& r : rects) {
      const Status s = shade_rect(Backend::Cpu, nullptr, fr.view(), r[2], r[3], r[0], r[1], 255);
      EXPECT_TRUE(s.is_ok()) << s.message();
      EXPECT_EQ(fr.bytes, before) << name(f) << ": " << r[0] << "x" << r[1] << " at " << r[2]
                                  << "," << r[3];
    }
  }
}

// Value 0 changes nothing; 255 makes the shaded bytes 0 (black luma, black
// colour) and leaves alpha, padding bytes and chroma as they were.
TEST(Shade, ValueZeroAndFull) {
  const int W = 20, H = 14, x = 3, y = 2, w = 11, h = 9;
  for (PixelFormat f : kAllFormats) {
    Frame fr({f, W, H}, 31);
    const std::vector<uint8_t> before = fr.bytes;
    ASSERT_TRUE(shade_rect(Backend::Cpu, nullptr, fr.view(), x, y, w, h, 0).is_ok());
    EXPECT_EQ(fr.bytes, before) << name(f) << " value 0";
    ASSERT_TRUE(shade_rect(Backend::Cpu, nullptr, fr.view(), x, y, w, h, 255).is_ok());
    const ImageView v = fr.view();
    const FormatInfo& fi = format_info(f);
    const int channels = fi.planes[0].channels;
    for (int j = y; j < y + h; j++)
      for (int i = x; i < x + w; i++)
        for (int c = 0; c < channels; c++) {
          const size_t at = j * v.pitch[0] + i * channels + c;
          const int want = shaded_byte(f, c) ? 0 : before[at];
          ASSERT_EQ(fr.bytes[at], want) << name(f) << " pixel " << i << "," << j << " byte " << c;
        }
    // Chroma planes (they follow plane 0 in the buffer) as they were.
    const size_t chroma = v.pitch[0] * H;
    EXPECT_TRUE(std::equal(fr.bytes.begin() + chroma, fr.bytes.end(), before.begin() + chroma))
        << name(f);
    if (fi.n_planes > 1) {
      EXPECT_LT(chroma, fr.bytes.size());
    }
  }
}

// Rectangles above the inline limit go to the pool in bands of rows; a wide
// one of few rows has fewer rows than bands.
TEST(Shade, LargeRectanglesMatchReference) {
  for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::BGR, PixelFormat::I420, PixelFormat::NV12})
    EXPECT_TRUE(cpu_matches_reference(f, 301, 203, -7, 5, 300, 190, 80, 77));
  EXPECT_TRUE(cpu_matches_reference(PixelFormat::GRAY8, 40000, 3, 1, 0, 39998, 3, 100, 78));
  EXPECT_TRUE(cpu_matches_reference(PixelFormat::ARGB, 400, 200, 0, 0, 400, 200, 255, 79));
}

namespace {

// `s` is InvalidArgument with exactly `text`.
::testing::AssertionResult refused(const Status& s, const std::string& text) {
  if (s.code() != StatusCode::InvalidArgument || s.message() != text)
    return ::testing::AssertionFailure() << "got \"" << s.message() << "\", wanted \"" << text
                                         << "\" (InvalidArgument)";
  return ::testing::AssertionSuccess();
}

}  // namespace

// Bad values and views: InvalidArgument with the documented text, also when
// the rectangle is empty or off the frame, and the frame untouched.
TEST(Shade, BadArgumentsAreRefused) {
  Frame fr({PixelFormat::I420, 8, 6}, 5);
  const std::vector<uint8_t> before = fr.bytes;
  const ImageView good = fr.view();
  for (int value : {-1, 256, INT_MIN, INT_MAX}) {
    const std::string text = "shade: value " + std::to_string(value) + " is not in 0..255";
    EXPECT_TRUE(refused(shade_rect(Backend::Cpu, nullptr, good, 0, 0, 8, 6, value), text));
    EXPECT_TRUE(refused(shade_rect(Backend::Cpu, nullptr, good, 0, 0, 0, 0, value), text));
    EXPECT_TRUE(refused(shade_rect(Backend::Cpu, nullptr, good, 100, 100, 2, 2, value), text));
  }
  auto expect_error = [&](const ImageView& v, const std::string& text) {
    EXPECT_TRUE(refused(shade_rect(Backend::Cpu, nullptr, v, 0, 0, 4, 4, 80), text));
    EXPECT_TRUE(refused(shade_rect(Backend::Cpu, nullptr, v, 0, 0, 0, 0, 80), text));
  };
  ImageView v = good;
  v.data[0] = nullptr;
  expect_error(v, "shade frame: plane 0 has no data");
  v = good;
  v.data[2] = nullptr;  // untouched by the op, but the view is not a frame
  expect_error(v, "shade frame: plane 2 has no data");
  v = good;
  v.pitch[0] = 7;
  expect_error(v, "shade frame: plane 0 pitch 7 is smaller than its row of 8 bytes");
  v = good;
  v.desc.width = 0;
  expect_error(v, "shade frame: empty image");
  v = good;
  v.desc.height = -4;
  expect_error(v, "shade frame: empty image");
  v = good;
  v.desc.format = static_cast<PixelFormat>(42);
  expect_error(v, "shade frame: unknown pixel format 42");
  EXPECT_EQ(fr.bytes, before);
  if (!cuda_built()) {
    // Said even when there is nothing to do, so a caller learns it at once.
    for (int w : {4, 0}) {
      const Status s = shade_rect(Backend::Cuda, nullptr, good, 0, 0, w, 4, 80);
      EXPECT_EQ(s.code(), StatusCode::Unsupported);
      EXPECT_EQ(s.message(), "this build of cudafx has no CUDA support");
    }
    EXPECT_EQ(fr.bytes, before);
  }
}

// ---- CUDA against CPU

namespace {

// The same frame, random in every byte, in device memory with rows aligned
// to `align` bytes and in host memory laid out the same way; shaded on the
// GPU and on the CPU: the two buffers equal byte for byte, row padding
// included (the CPU's result is the reference's, by the tests above).
::testing::AssertionResult cuda_equals_cpu(const ImageDesc& d, int x, int y, int w, int h,
                                           int value, uint32_t seed, StreamHandle stream,
                                           size_t align = 256) {
  std::vector<uint8_t> cpu(packed_size(d, align)), got(cpu.size());
  std::mt19937 rng(seed);
  for (uint8_t& b : cpu)
    b = static_cast<uint8_t>(rng());
  DeviceBuffer dev;
  Status s = dev.allocate(cpu.size());
  if (s.is_ok())
    s = copy_bytes_async(dev.get(), cpu.data(), cpu.size(), stream);
  if (s.is_ok())
    s = shade_rect(Backend::Cuda, stream, packed_view(d, dev.bytes(), align), x, y, w, h, value);
  if (s.is_ok())
    s = copy_bytes_async(got.data(), dev.get(), got.size(), stream);
  if (s.is_ok())
    s = synchronize_stream(stream);
  if (!s.is_ok())
    return ::testing::AssertionFailure() << "CUDA: " << s.message();
  s = shade_rect(Backend::Cpu, nullptr, packed_view(d, cpu.data(), align), x, y, w, h, value);
  if (!s.is_ok())
    return ::testing::AssertionFailure() << "CPU: " << s.message();
  for (size_t i = 0; i < cpu.size(); i++)
    if (got[i] != cpu[i])
      return ::testing::AssertionFailure() << "byte " << i << " of the buffer: CUDA "
                                           << int(got[i]) << ", CPU " << int(cpu[i]);
  return ::testing::AssertionSuccess();
}

}  // namespace

TEST(ShadeCuda, EqualsCpuForEveryFormat) {
  SKIP_WITHOUT_GPU();
  CudaStream stream;
  ASSERT_TRUE(stream.create().is_ok());
  const int W = 37, H = 29;
  uint32_t seed = 900;
  for (PixelFormat f : kAllFormats)
    for (int value : {0, 1, 80, 255}) {
      for (const auto& r : rectangles(W, H))
        EXPECT_TRUE(cuda_equals_cpu({f, W, H}, r[2], r[3], r[0], r[1], value, seed++,
                                    stream.get()))
            << name(f) << " " << r[0] << "x" << r[1] << " at " << r[2] << "," << r[3]
            << " value " << value;
      // Off the frame and empty: nothing written on the device either.
      for (const auto& r : {std::array<int, 4>{5, 5, W, 0}, std::array<int, 4>{0, 5, 1, 1}})
        EXPECT_TRUE(cuda_equals_cpu({f, W, H}, r[2], r[3], r[0], r[1], value, seed++,
                                    stream.get()))
            << name(f) << " nothing";
    }
}

// Grids of many blocks; a rectangle taller than the grid's rows (65535
// blocks of 8: the threads loop) and one of exactly that many. The tall
// frames' rows are aligned to 4 bytes, not 256 (150 MB a copy otherwise).
TEST(ShadeCuda, EqualsCpuOnLargeAndTallFrames) {
  SKIP_WITHOUT_GPU();
  CudaStream stream;
  ASSERT_TRUE(stream.create().is_ok());
  struct Case {
    PixelFormat f;
    int W, H, x, y, w, h, value;
    size_t align;
  };
  const Case cases[] = {
      {PixelFormat::BGRA, 1920, 1080, 1100, 500, 1000, 700, 80, 256},
      {PixelFormat::RGB, 1920, 1080, -3, -5, 1930, 1090, 120, 256},
      {PixelFormat::NV12, 1920, 1080, 101, 901, 1001, 701, 80, 256},
      {PixelFormat::I420, 5, 40001, 1, 1, 4, 40000, 200, 4},
      {PixelFormat::GRAY8, 3, 600001, 0, -1, 2, 600003, 80, 4},
      {PixelFormat::GRAY8, 2, 524280, 0, 0, 2, 524280, 7, 4},
  };
  for (const Case& c : cases)
    EXPECT_TRUE(cuda_equals_cpu({c.f, c.W, c.H}, c.x, c.y, c.w, c.h, c.value, 1000 + c.H,
                                stream.get(), c.align))
        << name(c.f) << " " << c.W << "x" << c.H;
}
