// Auto-contrast op: layouts, the op object, and the CPU backend.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "autocontrast/autocontrast_lanes.hpp"
#include "cudafx/autocontrast.hpp"
#include "cudafx/autocontrast_math.hpp"
#include "cudafx/parallel.hpp"
#include "cudafx/rgb_luma.hpp"

namespace cudafx {

Status autocontrast_layout(PixelFormat format, bool luma, AutoContrastLayout* out) {
  AutoContrastLayout l;
  RgbBytes rgb;
  if (rgb_bytes(format, &rgb)) {
    l.channels = rgb.channels;
    l.r = rgb.r;
    l.g = rgb.g;
    l.b = rgb.b;
    l.luma = luma;
    l.histograms = luma ? 1 : 3;
  } else if (format_info(format).n_planes >= 1 && format_info(format).planes[0].channels == 1) {
    l = AutoContrastLayout{};  // GRAY8 and the Y plane of YUV: byte 0 of plane 0
  } else {
    return Status::invalid(std::string("auto contrast: unsupported format ") +
                           format_info(format).name);
  }
  *out = l;
  return Status::ok();
}

// The lanes of plane 0 that the layout stretches, and by which table.
LaneMap autocontrast_lane_map(const AutoContrastLayout& l) {
  LaneMap m;
  m.channels = l.channels;
  if (l.g < 0) {
    m.table[l.r] = 0;
  } else {
    m.table[l.r] = 0;
    m.table[l.g] = l.luma ? 0 : 1;
    m.table[l.b] = l.luma ? 0 : 2;
  }
  return m;
}

Status AutoContrastOp::create(Backend backend, const ImageDesc& desc,
                              std::unique_ptr<AutoContrastOp>* out) {
  out->reset();
  if (backend == Backend::Cuda && !cuda_built())
    return Status::error(StatusCode::Unsupported, "gst-cudafx was built without CUDA support");
  if (desc.width <= 0 || desc.height <= 0)
    return Status::invalid("auto contrast: image size must be positive");
  AutoContrastLayout l;
  CUDAFX_TRY(autocontrast_layout(desc.format, false, &l));
  std::unique_ptr<AutoContrastOp> op(new AutoContrastOp(backend));
  op->desc_ = desc;
  if (backend == Backend::Cuda)
    CUDAFX_TRY(op->prepare_cuda());
  *out = std::move(op);
  return Status::ok();
}

AutoContrastOp::~AutoContrastOp() = default;

Status AutoContrastOp::submit(StreamHandle stream, const ImageView& frame,
                              const AutoContrastParams& params, double weight) {
  CUDAFX_TRY(validate_view(frame, desc_, "auto contrast frame"));
  if (!(params.clip_low >= 0.0 && params.clip_high >= 0.0 &&
        params.clip_low + params.clip_high < 100.0))
    return Status::invalid("auto contrast: clip-low and clip-high must be >= 0 and sum below 100");
  if (!(weight > 0.0 && weight <= 1.0))
    return Status::invalid("auto contrast: weight must be in (0, 1]");
  AutoContrastLayout l;
  CUDAFX_TRY(autocontrast_layout(desc_.format, params.luma, &l));
  if (params.luma != last_luma_)
    reset_ = true;  // the kept levels were of other histograms
  const Status s = backend_ == Backend::Cpu ? submit_cpu(frame, l, params, weight)
                                            : submit_cuda(stream, frame, l, params, weight);
  if (s.is_ok()) {
    reset_ = false;
    last_luma_ = params.luma;
  }
  return s;
}

Status AutoContrastOp::submit_cpu(const ImageView& frame, const AutoContrastLayout& l,
                                  const AutoContrastParams& params, double weight) {
  const PlaneView p = frame.plane(0);
  // Histograms: bands of rows on the pool, one set a band, added up.
  const int n = std::min(cpu_worker_count(), p.height);
  std::vector<uint64_t> part(static_cast<size_t>(n) * 3 * 256, 0);
  parallel_for(n, [&](int band, int) {
    uint64_t* h = part.data() + static_cast<size_t>(band) * 3 * 256;
    const int y0 = static_cast<int>(static_cast<long>(p.height) * band / n);
    const int y1 = static_cast<int>(static_cast<long>(p.height) * (band + 1) / n);
    const int C = l.channels;
    for (int y = y0; y < y1; y++) {
      const uint8_t* row = p.data + static_cast<size_t>(y) * p.pitch;
      for (int x = 0; x < p.width; x++) {
        const uint8_t* px = row + static_cast<size_t>(x) * C;
        if (l.g < 0) {
          h[px[l.r]]++;
        } else if (l.luma) {
          h[luma_bt601(px[l.r], px[l.g], px[l.b])]++;
        } else {
          h[px[l.r]]++;
          h[256 + px[l.g]]++;
          h[512 + px[l.b]]++;
        }
      }
    }
  });
  uint64_t hist[3][256] = {};
  for (int band = 0; band < n; band++)
    for (int i = 0; i < 3 * 256; i++)
      hist[i / 256][i % 256] += part[static_cast<size_t>(band) * 3 * 256 + i];

  const uint64_t count = static_cast<uint64_t>(p.width) * p.height;
  uint8_t table[kMaxLaneTables][256];
  for (int i = 0; i < l.histograms; i++) {
    double low, high;
    autocontrast_levels(hist[i], count, params.clip_low, params.clip_high, &low, &high);
    autocontrast_smooth(low, high, weight, reset_, levels_[i]);
    for (int v = 0; v < 256; v++)
      table[i][v] = autocontrast_table_value(levels_[i], v);
  }
  apply_lane_tables_cpu(p, autocontrast_lane_map(l), table);
  return Status::ok();
}

}  // namespace cudafx
