// Pitched, multi-plane image views. A view never owns memory; the pointers
// may be host or device memory, which the op that receives it documents.
// Pitch is in bytes and is never assumed to equal width * bytes-per-pixel.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cudafx/status.hpp"

namespace cudafx {

enum class PixelFormat {
  RGBA, BGRA, RGBx, BGRx, ARGB, ABGR, RGB, BGR,  // packed, 3 or 4 bytes a pixel
  GRAY8,                                         // one plane, one byte
  I420,                                          // Y, U, V planes; chroma 2x2 subsampled
  NV12,                                          // Y plane, interleaved UV plane 2x2 subsampled
  Y444,                                          // Y, U, V planes at full size
};

constexpr int kMaxPlanes = 3;

// How one plane of a format is laid out relative to the image size.
struct PlaneLayout {
  int channels;    // interleaved bytes per pixel of this plane (1..4)
  int x_shift;     // plane width  = ceil(width  / 2^x_shift)
  int y_shift;     // plane height = ceil(height / 2^y_shift)
};

struct FormatInfo {
  PixelFormat format;
  const char* name;
  int n_planes;
  PlaneLayout planes[kMaxPlanes];
};

const FormatInfo& format_info(PixelFormat format);
// Looks a format up by its GStreamer name ("RGBA", "NV12", ...).
bool format_from_name(const char* name, PixelFormat* out);

inline int plane_width(const FormatInfo& fi, int plane, int width) {
  const int s = fi.planes[plane].x_shift;
  return (width + (1 << s) - 1) >> s;
}
inline int plane_height(const FormatInfo& fi, int plane, int height) {
  const int s = fi.planes[plane].y_shift;
  return (height + (1 << s) - 1) >> s;
}

struct ImageDesc {
  PixelFormat format = PixelFormat::RGBA;
  int width = 0;
  int height = 0;
};

// One plane: `width` pixels of `channels` bytes each, `height` rows `pitch`
// bytes apart.
struct PlaneView {
  uint8_t* data = nullptr;
  size_t pitch = 0;
  int width = 0;
  int height = 0;
  int channels = 0;
  size_t row_bytes() const { return static_cast<size_t>(width) * channels; }
};

struct ImageView {
  ImageDesc desc;
  uint8_t* data[kMaxPlanes] = {nullptr, nullptr, nullptr};
  size_t pitch[kMaxPlanes] = {0, 0, 0};

  PlaneView plane(int i) const;
};

// Checks that a view is complete and consistent with `desc`: every plane
// present, pitches large enough. Does not touch the memory.
Status validate_view(const ImageView& view, const ImageDesc& desc, const char* what);

// For ops that read `src` while writing `dst`: an error, "<op>: source and
// destination must not overlap", when a plane of one is a plane of the other.
// Compares plane pointers only (the views may be device memory).
Status check_distinct(const ImageView& src, const ImageView& dst, const char* op);

// Copies the pixel bytes of one host plane to another of the same width,
// height and channels, row by row (each pitch its own; padding untouched).
void copy_plane_host(const PlaneView& dst, const PlaneView& src);

// Bytes a tightly packed image of `desc` takes with every row of a plane
// padded to `row_align` bytes, and the view of such an image at `base`: the
// planes one after the other. `pitches` (optional, kMaxPlanes entries) gives
// plane i the pitch pitches[i] instead where that is not 0 (at least its row:
// e.g. a staging image whose rows match another image's, so that copies
// between them are single linear copies).
size_t packed_size(const ImageDesc& desc, size_t row_align = 1, const size_t* pitches = nullptr);
ImageView packed_view(const ImageDesc& desc, uint8_t* base, size_t row_align = 1,
                      const size_t* pitches = nullptr);

}  // namespace cudafx
