// The test helpers themselves: the GPU gate (CUDAFX_REQUIRE_GPU turns a
// skip into a failure), the oracle comparison (a truncation within one
// level fails) and the test data loaders (a missing file fails; only a
// missing folder skips).
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zstd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "support/gpu.hpp"
#include "support/host_image.hpp"
#include "support/oracle_compare.hpp"
#include "support/testdata.hpp"

using namespace cudafx;
using namespace testing_support;

namespace {

// Sets an environment variable for a scope, restoring the old value after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name))
      old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A test body whose GPU (or GPU plugin) is missing.
void body_without_gpu(bool* reached_end) {
  SKIP_UNLESS_GPU_READY(false, "fake: no device");
  *reached_end = true;
}

// Runs body_without_gpu, collecting what it reports into `results`;
// returns whether it ran to its end.
bool run_without_gpu(::testing::TestPartResultArray* results) {
  bool reached_end = false;
  ::testing::ScopedFakeTestPartResultReporter reporter(
      ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, results);
  body_without_gpu(&reached_end);
  return reached_end;
}

}  // namespace

TEST(GpuGate, DecidesFromAvailabilityAndTheVariable) {
  EXPECT_EQ(gpu_gate(true, nullptr), GpuGate::Run);
  EXPECT_EQ(gpu_gate(true, "1"), GpuGate::Run);
  EXPECT_EQ(gpu_gate(false, nullptr), GpuGate::Skip);
  EXPECT_EQ(gpu_gate(false, ""), GpuGate::Skip);
  EXPECT_EQ(gpu_gate(false, "0"), GpuGate::Skip);
  EXPECT_EQ(gpu_gate(false, "1"), GpuGate::Fail);
  EXPECT_EQ(gpu_gate(false, "yes"), GpuGate::Fail);
}

TEST(GpuGate, CountGateDecidesFromTheCountAndTheVariable) {
  EXPECT_EQ(gpus_gate(2, 2, nullptr), GpuGate::Run);
  EXPECT_EQ(gpus_gate(2, 3, "2"), GpuGate::Run);
  EXPECT_EQ(gpus_gate(2, 1, nullptr), GpuGate::Skip);
  EXPECT_EQ(gpus_gate(2, 1, ""), GpuGate::Skip);
  EXPECT_EQ(gpus_gate(2, 1, "1"), GpuGate::Skip);  // one device asked for, two needed
  EXPECT_EQ(gpus_gate(2, 1, "2"), GpuGate::Fail);
  EXPECT_EQ(gpus_gate(2, 0, "4"), GpuGate::Fail);
}

TEST(GpuGate, MissingGpuSkipsByDefault) {
  ScopedEnv env("CUDAFX_REQUIRE_GPU", nullptr);
  ::testing::TestPartResultArray results;
  EXPECT_FALSE(run_without_gpu(&results));
  ASSERT_EQ(results.size(), 1);
  EXPECT_TRUE(results.GetTestPartResult(0).skipped());
  EXPECT_STREQ(results.GetTestPartResult(0).message(), "fake: no device");
}

TEST(GpuGate, MissingGpuFailsWhenRequired) {
  ScopedEnv env("CUDAFX_REQUIRE_GPU", "1");
  ::testing::TestPartResultArray results;
  EXPECT_FALSE(run_without_gpu(&results));
  ASSERT_EQ(results.size(), 1);
  EXPECT_TRUE(results.GetTestPartResult(0).fatally_failed());
  EXPECT_STREQ(results.GetTestPartResult(0).message(),
               "Failed\nCUDAFX_REQUIRE_GPU is set, but fake: no device");
}

TEST(GpuGate, GpuPartRunsFailsWhenRequiredAndMissing) {
  if (gpu_available())
    GTEST_SKIP() << "a CUDA device is present: nothing is missing";
  {
    ScopedEnv env("CUDAFX_REQUIRE_GPU", nullptr);
    EXPECT_FALSE(gpu_part_runs());  // and no failure
  }
  ScopedEnv env("CUDAFX_REQUIRE_GPU", "1");
  EXPECT_NONFATAL_FAILURE(EXPECT_FALSE(gpu_part_runs()),
                          "CUDAFX_REQUIRE_GPU is set, but no usable CUDA device: ");
}

// A smooth image and copies of it: equal, one byte off, and off by one on
// about half the bytes the way a truncation would be.
TEST(OracleCompare, FailsOnTruncationNotOnStrayRounding) {
  const ImageDesc desc{PixelFormat::RGB, 64, 40};
  HostImage want(desc, 3), same(desc, 1), stray(desc), trunc(desc);
  want.fill_random(5);
  same.copy_from(want.view());
  stray.copy_from(want.view());
  trunc.copy_from(want.view());
  const uint8_t w = want.view().data[0][100];
  stray.view().data[0][100] = w < 255 ? w + 1 : w - 1;
  uint8_t* t = trunc.view().data[0];
  for (size_t i = 0; i < trunc.view().pitch[0] * 40; i += 2)
    t[i] = static_cast<uint8_t>(t[i] ? t[i] - 1 : 0);

  EXPECT_NEAR_ORACLE(same.view(), want.view(), kExactBounds);
  EXPECT_NEAR_ORACLE(stray.view(), want.view(), kGaussianBounds);
  const OracleStats s = oracle_stats(trunc.view(), want.view());
  EXPECT_EQ(s.bytes, 64u * 40 * 3);
  EXPECT_EQ(s.max_abs, 1);
  EXPECT_NEAR(s.share_differing(), 0.5, 0.01);
  EXPECT_NEAR(s.mean_signed(), -0.5, 0.01);
  for (const OracleBounds* b : {&kGaussianBounds, &kResizeBounds, &kResizeReferenceBounds}) {
    const ::testing::AssertionResult r = near_oracle(s, *b);
    EXPECT_FALSE(r);
    EXPECT_NE(std::string(r.message()).find("share differing"), std::string::npos)
        << r.message();
    EXPECT_NE(std::string(r.message()).find("mean d"), std::string::npos) << r.message();
  }
  EXPECT_NONFATAL_FAILURE(EXPECT_NEAR_ORACLE(trunc.view(), want.view(), kGaussianBounds),
                          "trunc.view() against want.view() beyond kGaussianBounds");
  // Off by two anywhere fails whatever the share.
  stray.view().data[0][100] = w < 254 ? w + 2 : w - 2;
  EXPECT_FALSE(near_oracle(oracle_stats(stray.view(), want.view()), kResizeBounds));
}

// Below kOracleMinBytes only the largest difference counts.
TEST(OracleCompare, SmallImagesOnlyBoundTheLargestDifference) {
  OracleStats s;
  s.add(11, 10);
  s.add(10, 10);
  EXPECT_TRUE(near_oracle(s, kGaussianBounds));
  s.add(12, 10);
  EXPECT_FALSE(near_oracle(s, kGaussianBounds));
}

// A folder of its own under TMPDIR, removed with its files afterwards.
class TempDir {
 public:
  TempDir() {
    std::string t = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                    "/cudafx-test-XXXXXX";
    path_ = mkdtemp(t.data()) ? t : "";
  }
  ~TempDir() {
    for (const std::string& f : files_)
      std::remove((path_ + "/" + f).c_str());
    rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }
  void write(const std::string& name, const std::vector<char>& bytes) {
    std::ofstream(path_ + "/" + name, std::ios::binary).write(bytes.data(), bytes.size());
    files_.push_back(name);
  }

 private:
  std::string path_;
  std::vector<std::string> files_;
};

void body_with_testdata(bool* reached_end) {
  SKIP_WITHOUT_TESTDATA();
  *reached_end = true;
}

TEST(TestData, OnlyAnAbsentFolderSkips) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  {
    ScopedEnv env("CUDAFX_TESTDATA", (dir.path() + "/absent").c_str());
    ::testing::TestPartResultArray results;
    bool reached_end = false;
    {
      ::testing::ScopedFakeTestPartResultReporter reporter(
          ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
      body_with_testdata(&reached_end);
    }
    EXPECT_FALSE(reached_end);
    ASSERT_EQ(results.size(), 1);
    EXPECT_TRUE(results.GetTestPartResult(0).skipped());
  }
  ScopedEnv env("CUDAFX_TESTDATA", dir.path().c_str());
  bool reached_end = false;
  body_with_testdata(&reached_end);
  EXPECT_TRUE(reached_end);
  HostImage img;
  const ::testing::AssertionResult missing =
      load_testdata_image("nothing.png", PixelFormat::RGBA, &img);
  EXPECT_FALSE(missing);
  EXPECT_NE(std::string(missing.message()).find("nothing.png is missing from the test data"),
            std::string::npos)
      << missing.message();
  dir.write("garbage.png", std::vector<char>(300, 'x'));
  const ::testing::AssertionResult garbage =
      load_testdata_image("garbage.png", PixelFormat::RGBA, &img);
  EXPECT_FALSE(garbage);
  EXPECT_NE(std::string(garbage.message()).find("cannot decode"), std::string::npos)
      << garbage.message();
  std::vector<HostImage> clip;
  EXPECT_FALSE(load_testdata_clip("clip.avi", 4, &clip));
}

// A clip that is not there (or, on the GPU machine, that GStreamer cannot
// decode) comes from its raw copy.
TEST(TestData, ClipFallsBackToItsRawCopy) {
  TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  const ImageDesc desc{PixelFormat::I420, 6, 4};
  std::vector<HostImage> frames;
  std::string raw = "CUDAFX-RAW I420 6x4 3\n";
  for (uint32_t n = 0; n < 3; n++) {
    frames.emplace_back(desc);
    frames.back().fill_random(n);
    const ImageView& v = frames.back().view();
    for (int i = 0; i < 3; i++)
      raw.append(reinterpret_cast<const char*>(v.data[i]), v.pitch[i] * (i ? 2 : 4));
  }
  std::vector<char> packed(ZSTD_compressBound(raw.size()));
  packed.resize(ZSTD_compress(packed.data(), packed.size(), raw.data(), raw.size(), 3));
  dir.write("clip.avi.i420.zst", packed);
  ScopedEnv env("CUDAFX_TESTDATA", dir.path().c_str());
  std::vector<HostImage> clip;
  ASSERT_TRUE(load_testdata_clip("clip.avi", 2, &clip));
  ASSERT_EQ(clip.size(), 2u);
  for (int n = 0; n < 2; n++)
    EXPECT_TRUE(bytes_equal(clip[n].view(), frames[n].view())) << n;
  // Damage is reported, not read as frames.
  packed.resize(packed.size() - 5);
  dir.write("clip.avi.i420.zst", packed);
  const ::testing::AssertionResult cut = load_testdata_clip("clip.avi", 2, &clip);
  EXPECT_FALSE(cut);
  EXPECT_NE(std::string(cut.message()).find("the raw copy"), std::string::npos) << cut.message();
}
