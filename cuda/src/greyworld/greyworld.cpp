// Grey-world op: layouts, the op object, and the CPU backend.
#include <algorithm>
#include <vector>

#include "cudafx/greyworld.hpp"
#include "cudafx/greyworld_math.hpp"
#include "cudafx/parallel.hpp"
#include "greyworld/greyworld_lanes.hpp"

namespace cudafx {

Status greyworld_layout(PixelFormat format, GreyWorldLayout* out) {
  GreyWorldLayout l;
  auto rgb = [&](int channels, int first) {
    l.rgb = true;
    l.count = 3;
    for (int i = 0; i < 3; i++)
      l.ch[i] = {0, channels, first + i};
  };
  switch (format) {
    case PixelFormat::RGBA:
    case PixelFormat::BGRA:
    case PixelFormat::RGBx:
    case PixelFormat::BGRx: rgb(4, 0); break;
    case PixelFormat::ARGB:
    case PixelFormat::ABGR: rgb(4, 1); break;
    case PixelFormat::RGB:
    case PixelFormat::BGR: rgb(3, 0); break;
    case PixelFormat::I420:
    case PixelFormat::Y444:
      l.count = 2;
      l.ch[0] = {1, 1, 0};
      l.ch[1] = {2, 1, 0};
      break;
    case PixelFormat::NV12:
      l.count = 2;
      l.ch[0] = {1, 2, 0};
      l.ch[1] = {1, 2, 1};
      break;
    default:
      return Status::invalid(std::string("grey world: ") + format_info(format).name +
                             " has no colour to balance");
  }
  *out = l;
  return Status::ok();
}

Status GreyWorldOp::create(Backend backend, const ImageDesc& desc,
                           std::unique_ptr<GreyWorldOp>* out) {
  out->reset();
  if (backend == Backend::Cuda && !cuda_built())
    return Status::error(StatusCode::Unsupported, "gst-cudafx was built without CUDA support");
  if (desc.width <= 0 || desc.height <= 0)
    return Status::invalid("grey world: image size must be positive");
  std::unique_ptr<GreyWorldOp> op(new GreyWorldOp(backend));
  op->desc_ = desc;
  CUDAFX_TRY(greyworld_layout(desc.format, &op->layout_));
  if (backend == Backend::Cuda)
    CUDAFX_TRY(op->prepare_cuda());
  *out = std::move(op);
  return Status::ok();
}

GreyWorldOp::~GreyWorldOp() = default;

Status GreyWorldOp::submit(StreamHandle stream, const ImageView& frame, double weight) {
  CUDAFX_TRY(validate_view(frame, desc_, "grey world frame"));
  if (!(weight > 0.0 && weight <= 1.0))
    return Status::invalid("grey world: weight must be in (0, 1]");
  const Status s =
      backend_ == Backend::Cpu ? submit_cpu(frame, weight) : submit_cuda(stream, frame, weight);
  if (s.is_ok())
    reset_ = false;
  return s;
}

Status GreyWorldOp::submit_cpu(const ImageView& frame, double weight) {
  // Sums: each plane with balanced channels read once, every byte lane of
  // its pixels summed (as the CUDA kernel does), bands of rows on the pool.
  uint64_t lanes[kMaxPlanes][4] = {};
  LaneMap maps[kMaxPlanes];
  bool used[kMaxPlanes] = {false, false, false};
  const int bands = cpu_worker_count();
  for (int pl = 0; pl < kMaxPlanes; pl++) {
    used[pl] = greyworld_lane_map(layout_, pl, &maps[pl]);
    if (!used[pl])
      continue;
    const PlaneView p = frame.plane(pl);
    const int C = maps[pl].channels;
    std::vector<uint64_t> part(static_cast<size_t>(bands) * 4, 0);
    const int n = std::min(bands, p.height);
    parallel_for(n, [&](int band, int) {
      const int y0 = static_cast<int>(static_cast<long>(p.height) * band / n);
      const int y1 = static_cast<int>(static_cast<long>(p.height) * (band + 1) / n);
      for (int y = y0; y < y1; y++) {
        const uint8_t* row = p.data + static_cast<size_t>(y) * p.pitch;
        uint32_t r[4] = {0, 0, 0, 0};  // a row: at most 65536 * 255 < 2^32 a lane
        for (int x = 0; x < p.width; x++)
          for (int c = 0; c < C; c++)
            r[c] += row[static_cast<size_t>(x) * C + c];
        for (int c = 0; c < C; c++)
          part[static_cast<size_t>(band) * 4 + c] += r[c];
      }
    });
    for (int band = 0; band < n; band++)
      for (int c = 0; c < 4; c++)
        lanes[pl][c] += part[static_cast<size_t>(band) * 4 + c];
  }
  uint64_t sums[3] = {0, 0, 0}, counts[3] = {0, 0, 0};
  for (int i = 0; i < layout_.count; i++) {
    const GreyWorldChannel& c = layout_.ch[i];
    const PlaneView p = frame.plane(c.plane);
    sums[i] = lanes[c.plane][c.offset];
    counts[i] = static_cast<uint64_t>(p.width) * p.height;
  }
  greyworld_smooth(sums, counts, layout_.count, weight, reset_, means_);
  uint8_t table[kMaxLaneTables][256];
  for (int i = 0; i < layout_.count; i++)
    for (int v = 0; v < 256; v++)
      table[i][v] = greyworld_table_value(layout_.rgb, means_, i, v);

  // Apply: every byte of a balanced channel through its table.
  for (int p = 0; p < kMaxPlanes; p++)
    if (used[p])
      apply_lane_tables_cpu(frame.plane(p), maps[p], table);
  return Status::ok();
}

}  // namespace cudafx
