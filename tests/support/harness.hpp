// GstHarness helpers for element tests.
#pragma once

#include <gst/check/gstharness.h>

#include <string>

#include "host_image.hpp"

namespace testing_support {

// True when the registry has an element factory of that name.
bool have_element(const char* name);

// Pushes `img` (rows padded by `pad` bytes) into the harness, pulls one
// frame and returns it at the size the harness's output negotiated, in the
// input's format. Failures are test failures.
HostImage push_pull(GstHarness* h, const HostImage& img, size_t pad = 0);

// Sets `pipeline` (gst-launch syntax) to PLAYING, expecting it to fail, and
// returns the message of the error it posted ("" when it started or posted
// none within ten seconds; a test failure either way).
std::string start_error(const std::string& pipeline);

}  // namespace testing_support
