// Decodes test images with GStreamer (the GPU machine has no OpenCV codecs).
#pragma once

#include <string>

#include "host_image.hpp"

namespace testing_support {

// Decodes `path` (any format decodebin handles) converted to `format`.
// Returns false with *error set when it cannot.
bool load_image(const std::string& path, cudafx::PixelFormat format, HostImage* out,
                std::string* error);

}  // namespace testing_support
