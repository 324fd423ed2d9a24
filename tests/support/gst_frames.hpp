// GstBuffer <-> HostImage for element tests.
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include <string>

#include "host_image.hpp"

namespace testing_support {

// "video/x-raw,format=F,width=W,height=H,framerate=30/1" (+ memory feature).
std::string caps_string(const cudafx::ImageDesc& desc, bool cuda_memory = false);

// A system-memory buffer holding `img`, each row padded by `pad` bytes, with
// a GstVideoMeta describing the padded strides.
GstBuffer* buffer_from_image(const HostImage& img, size_t pad = 0);

// Copies a (system-memory) buffer of `desc` out into a HostImage.
bool image_from_buffer(GstBuffer* buf, const cudafx::ImageDesc& desc, HostImage* out);

}  // namespace testing_support
