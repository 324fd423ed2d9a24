#include "testdata.hpp"

#include <zstd.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "gst_image.hpp"

namespace testing_support {

using namespace cudafx;

bool testdata_present() {
  struct stat st;
  return stat(testdata_dir().c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

::testing::AssertionResult load_testdata_image(const std::string& name, PixelFormat format,
                                               HostImage* out) {
  const std::string path = testdata_dir() + "/" + name;
  if (!is_file(path))
    return ::testing::AssertionFailure()
           << name << " is missing from the test data folder " << testdata_dir();
  std::string err;
  if (!load_image(path, format, out, &err))
    return ::testing::AssertionFailure() << "cannot decode " << path << ": " << err;
  return ::testing::AssertionSuccess();
}

bool load_raw_clip(const std::string& path, int max_frames, std::vector<HostImage>* out,
                   std::string* error) {
  out->clear();
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    *error = "cannot open " + path;
    return false;
  }
  const std::vector<char> packed((std::istreambuf_iterator<char>(f)),
                                 std::istreambuf_iterator<char>());
  // Streaming decompression: the frame header need not carry the size.
  std::vector<uint8_t> raw;
  ZSTD_DStream* ds = ZSTD_createDStream();
  ZSTD_inBuffer in{packed.data(), packed.size(), 0};
  std::vector<uint8_t> chunk(ZSTD_DStreamOutSize());
  size_t ret = 1;
  while (in.pos < in.size) {
    ZSTD_outBuffer o{chunk.data(), chunk.size(), 0};
    ret = ZSTD_decompressStream(ds, &o, &in);
    if (ZSTD_isError(ret))
      break;
    raw.insert(raw.end(), chunk.data(), chunk.data() + o.pos);
  }
  ZSTD_freeDStream(ds);
  if (ZSTD_isError(ret) || ret != 0) {
    *error = path + ": " + (ZSTD_isError(ret) ? ZSTD_getErrorName(ret) : "truncated zstd data");
    return false;
  }
  const auto* nl = static_cast<const uint8_t*>(
      std::memchr(raw.data(), '\n', std::min<size_t>(raw.size(), 64)));
  const std::string header(raw.begin(), nl ? raw.begin() + (nl - raw.data()) : raw.begin());
  int w = 0, h = 0, n = 0;
  if (!nl || std::sscanf(header.c_str(), "CUDAFX-RAW I420 %dx%d %d", &w, &h, &n) != 3 || w <= 0 ||
      h <= 0 || n <= 0) {
    *error = path + ": no \"CUDAFX-RAW I420 WxH N\" header";
    return false;
  }
  const ImageDesc desc{PixelFormat::I420, w, h};
  const FormatInfo& fi = format_info(desc.format);
  size_t frame_bytes = 0;
  for (int i = 0; i < fi.n_planes; i++)
    frame_bytes += static_cast<size_t>(plane_width(fi, i, w)) * fi.planes[i].channels *
                   plane_height(fi, i, h);
  const uint8_t* p = nl + 1;
  const size_t body = raw.size() - static_cast<size_t>(p - raw.data());
  if (body != frame_bytes * n) {
    *error = path + ": " + std::to_string(body) + " bytes of frames, expected " +
             std::to_string(frame_bytes * n);
    return false;
  }
  for (int k = 0; k < n && k < max_frames; k++) {
    ImageView v;
    v.desc = desc;
    for (int i = 0; i < fi.n_planes; i++) {
      v.data[i] = const_cast<uint8_t*>(p);
      v.pitch[i] = static_cast<size_t>(plane_width(fi, i, w)) * fi.planes[i].channels;
      p += v.pitch[i] * plane_height(fi, i, h);
    }
    HostImage img(desc);
    img.copy_from(v);
    out->push_back(std::move(img));
  }
  return true;
}

::testing::AssertionResult load_testdata_clip(const std::string& name, int max_frames,
                                              std::vector<HostImage>* out) {
  const std::string path = testdata_dir() + "/" + name, raw = path + ".i420.zst";
  std::string err;
  if (is_file(path)) {
    if (load_video(path, PixelFormat::I420, max_frames, out, &err))
      return ::testing::AssertionSuccess();
  } else {
    err = name + " is missing from the test data folder " + testdata_dir();
  }
  if (!is_file(raw))
    return ::testing::AssertionFailure()
           << err << "; no raw copy " << raw << " either (scripts/pack-gpu-runtime.sh makes one)";
  std::string raw_err;
  if (!load_raw_clip(raw, max_frames, out, &raw_err))
    return ::testing::AssertionFailure() << err << "; and the raw copy: " << raw_err;
  return ::testing::AssertionSuccess() << "from the raw copy " << raw << " (" << err << ")";
}

}  // namespace testing_support
