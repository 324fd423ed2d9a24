// Decodes test images with GStreamer (the GPU machine has no OpenCV codecs).
#pragma once

#include <string>
#include <vector>

#include "host_image.hpp"

namespace testing_support {

// Decodes `path` (any format decodebin handles) converted to `format`.
// Returns false with *error set when it cannot.
bool load_image(const std::string& path, cudafx::PixelFormat format, HostImage* out,
                std::string* error);

// Decodes up to `max_frames` frames of a video file converted to `format`.
bool load_video(const std::string& path, cudafx::PixelFormat format, int max_frames,
                std::vector<HostImage>* out, std::string* error);

}  // namespace testing_support
