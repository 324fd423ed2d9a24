#include "cudafx/image.hpp"

#include <cstring>
#include <string>

namespace cudafx {
namespace {

constexpr PlaneLayout kNone{0, 0, 0};
constexpr FormatInfo kFormats[] = {
    {PixelFormat::RGBA, "RGBA", 1, {{4, 0, 0}, kNone, kNone}},
    {PixelFormat::BGRA, "BGRA", 1, {{4, 0, 0}, kNone, kNone}},
    {PixelFormat::RGBx, "RGBx", 1, {{4, 0, 0}, kNone, kNone}},
    {PixelFormat::BGRx, "BGRx", 1, {{4, 0, 0}, kNone, kNone}},
    {PixelFormat::ARGB, "ARGB", 1, {{4, 0, 0}, kNone, kNone}},
    {PixelFormat::ABGR, "ABGR", 1, {{4, 0, 0}, kNone, kNone}},
    {PixelFormat::RGB, "RGB", 1, {{3, 0, 0}, kNone, kNone}},
    {PixelFormat::BGR, "BGR", 1, {{3, 0, 0}, kNone, kNone}},
    {PixelFormat::GRAY8, "GRAY8", 1, {{1, 0, 0}, kNone, kNone}},
    {PixelFormat::I420, "I420", 3, {{1, 0, 0}, {1, 1, 1}, {1, 1, 1}}},
    {PixelFormat::NV12, "NV12", 2, {{1, 0, 0}, {2, 1, 1}, kNone}},
    {PixelFormat::Y444, "Y444", 3, {{1, 0, 0}, {1, 0, 0}, {1, 0, 0}}},
};

size_t align_up(size_t v, size_t a) { return a <= 1 ? v : (v + a - 1) / a * a; }

}  // namespace

const FormatInfo& format_info(PixelFormat format) {
  for (const FormatInfo& fi : kFormats)
    if (fi.format == format)
      return fi;
  return kFormats[0];  // unreachable: every enumerator is in the table
}

bool format_from_name(const char* name, PixelFormat* out) {
  for (const FormatInfo& fi : kFormats) {
    if (std::strcmp(fi.name, name) == 0) {
      *out = fi.format;
      return true;
    }
  }
  return false;
}

PlaneView ImageView::plane(int i) const {
  const FormatInfo& fi = format_info(desc.format);
  PlaneView p;
  p.data = data[i];
  p.pitch = pitch[i];
  p.width = plane_width(fi, i, desc.width);
  p.height = plane_height(fi, i, desc.height);
  p.channels = fi.planes[i].channels;
  return p;
}

Status validate_view(const ImageView& view, const ImageDesc& desc, const char* what) {
  if (view.desc.format != desc.format || view.desc.width != desc.width ||
      view.desc.height != desc.height)
    return Status::invalid(std::string(what) + ": image does not match the op's format or size");
  if (desc.width <= 0 || desc.height <= 0)
    return Status::invalid(std::string(what) + ": empty image");
  const FormatInfo& fi = format_info(desc.format);
  for (int i = 0; i < fi.n_planes; i++) {
    const PlaneView p = view.plane(i);
    if (!p.data)
      return Status::invalid(std::string(what) + ": plane " + std::to_string(i) + " has no data");
    if (p.pitch < p.row_bytes())
      return Status::invalid(std::string(what) + ": plane " + std::to_string(i) + " pitch " +
                             std::to_string(p.pitch) + " is smaller than its row of " +
                             std::to_string(p.row_bytes()) + " bytes");
  }
  return Status::ok();
}

Status check_distinct(const ImageView& src, const ImageView& dst, const char* op) {
  for (int i = 0; i < kMaxPlanes; i++) {
    if (src.data[i] && src.data[i] == dst.data[i])
      return Status::invalid(std::string(op) + ": source and destination must not overlap");
  }
  return Status::ok();
}

ImageView packed_view(const ImageDesc& desc, uint8_t* base, size_t row_align,
                      const size_t* pitches) {
  const FormatInfo& fi = format_info(desc.format);
  ImageView v;
  v.desc = desc;
  size_t offset = 0;
  for (int i = 0; i < fi.n_planes; i++) {
    const size_t row = static_cast<size_t>(plane_width(fi, i, desc.width)) * fi.planes[i].channels;
    v.pitch[i] = pitches && pitches[i] >= row ? pitches[i] : align_up(row, row_align);
    v.data[i] = base ? base + offset : nullptr;
    offset += v.pitch[i] * static_cast<size_t>(plane_height(fi, i, desc.height));
  }
  return v;
}

size_t packed_size(const ImageDesc& desc, size_t row_align, const size_t* pitches) {
  const ImageView v = packed_view(desc, nullptr, row_align, pitches);
  const FormatInfo& fi = format_info(desc.format);
  size_t total = 0;
  for (int i = 0; i < fi.n_planes; i++)
    total += v.pitch[i] * static_cast<size_t>(plane_height(fi, i, desc.height));
  return total;
}

void copy_plane_host(const PlaneView& dst, const PlaneView& src) {
  for (int y = 0; y < src.height; y++)
    std::memcpy(dst.data + static_cast<size_t>(y) * dst.pitch,
                src.data + static_cast<size_t>(y) * src.pitch, src.row_bytes());
}

}  // namespace cudafx
