// Test data: ../shared/testdata, or the folder CUDAFX_TESTDATA names. A test
// that reads it skips only when the whole folder is absent (say, a checkout
// without the shared data); a file missing from a folder that exists, or one
// that cannot be decoded (a missing GStreamer plugin), is a failure.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host_image.hpp"

namespace testing_support {

// True when testdata_dir() is a folder.
bool testdata_present();

// Decodes `name` from the test data folder (GStreamer: decodebin) into
// `format`; the failure says which file and why.
::testing::AssertionResult load_testdata_image(const std::string& name,
                                               cudafx::PixelFormat format, HostImage* out);

// Up to `max_frames` frames of the clip `name` as I420. Where GStreamer
// cannot decode it (on the GPU machine: no gstreamer1.0-libav, whose
// dependencies are far too large to carry) and a raw copy `<name>.i420.zst`
// lies beside it -- made by scripts/pack-gpu-runtime.sh -- the frames come
// from that.
::testing::AssertionResult load_testdata_clip(const std::string& name, int max_frames,
                                              std::vector<HostImage>* out);

// The raw copy's format: the line "CUDAFX-RAW I420 <w>x<h> <frames>\n", then
// the frames, tightly packed planes, all zstd-compressed. Reads up to
// `max_frames` frames.
bool load_raw_clip(const std::string& path, int max_frames, std::vector<HostImage>* out,
                   std::string* error);

}  // namespace testing_support

#define SKIP_WITHOUT_TESTDATA()                                                             \
  do {                                                                                      \
    if (!::testing_support::testdata_present())                                             \
      GTEST_SKIP() << "the test data folder " << ::testing_support::testdata_dir()          \
                   << " is absent (set CUDAFX_TESTDATA to a copy of ../shared/testdata)";   \
  } while (0)
