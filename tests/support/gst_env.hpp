// Initialises GStreamer once for a test program (include in one file).
#pragma once

#include <gst/gst.h>
#include <gtest/gtest.h>

namespace testing_support {

class GstEnv : public ::testing::Environment {
 public:
  void SetUp() override { gst_init(nullptr, nullptr); }
};

}  // namespace testing_support

static const auto* const kGstEnv = ::testing::AddGlobalTestEnvironment(new testing_support::GstEnv);
