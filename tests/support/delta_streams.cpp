#include "delta_streams.hpp"

#include <gtest/gtest.h>

#include <memory>

#include "cudafx/delta.hpp"
#include "gst_frames.hpp"

namespace testing_support {

GstBuffer* timed_buffer(const HostImage& img, int n, int fps) {
  GstBuffer* b = buffer_from_image(img, 2);
  GST_BUFFER_PTS(b) = n * GST_SECOND / fps;
  GST_BUFFER_DURATION(b) = GST_SECOND / fps;
  return b;
}

std::string stream_caps(const cudafx::ImageDesc& d) {
  return std::string("video/x-cudafx-delta,version=4,format=") + cudafx::format_info(d.format).name +
         ",width=" + std::to_string(d.width) + ",height=" + std::to_string(d.height) +
         ",framerate=30/1";
}

std::vector<std::vector<uint8_t>> damaged_delta_stream(const std::vector<HostImage>& clip,
                                                       int threshold) {
  EXPECT_GE(clip.size(), 8u);
  if (clip.size() < 8)
    return {};
  std::unique_ptr<cudafx::DeltaEncoder> enc;
  EXPECT_TRUE(cudafx::DeltaEncoder::create(clip[0].desc(), &enc).is_ok());
  std::vector<std::vector<uint8_t>> packets(clip.size());
  for (size_t n = 0; n < clip.size(); n++) {
    cudafx::DeltaEncodeSettings s;
    s.threshold = threshold;
    s.force_keyframe = n % 5 == 0;
    EXPECT_TRUE(enc->encode(clip[n].view(), s, &packets[n]).is_ok());
  }
  packets[7].resize(packets[7].size() / 2);
  return packets;
}

}  // namespace testing_support
