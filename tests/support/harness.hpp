// GstHarness helpers for element tests.
#pragma once

#include <gst/check/gstharness.h>

#include "host_image.hpp"

namespace testing_support {

// True when the registry has an element factory of that name.
bool have_element(const char* name);

// Pushes `img` (rows padded by `pad` bytes) into the harness, pulls one
// frame and returns it at the size the harness's output negotiated, in the
// input's format. Failures are test failures.
HostImage push_pull(GstHarness* h, const HostImage& img, size_t pad = 0);

}  // namespace testing_support
