// What the delta element tests feed their harnesses: timed raw frames, the
// delta stream's caps, and a damaged stream with a known verdict per packet.
#pragma once

#include <gst/gst.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cudafx/image.hpp"
#include "host_image.hpp"

namespace testing_support {

// `img` as a buffer (rows padded by 2) stamped as frame `n` at `fps`.
GstBuffer* timed_buffer(const HostImage& img, int n, int fps = 30);

// The delta stream's caps (format 4) for frames of `d`, 30 frames/s.
std::string stream_caps(const cudafx::ImageDesc& d);

// The delta stream of `clip` (at least 8 frames; CPU encoder at
// `threshold`, a keyframe every 5) with packet 7 truncated: decoders drop 7,
// and 8 and 9, which wait for the keyframe 10.
std::vector<std::vector<uint8_t>> damaged_delta_stream(const std::vector<HostImage>& clip,
                                                       int threshold);

}  // namespace testing_support
