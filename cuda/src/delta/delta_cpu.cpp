// The delta codec's layout, checksum and closed loop on the CPU.
#include <algorithm>
#include <cstring>

#include "cudafx/delta.hpp"
#include "cudafx/delta_math.hpp"
#include "cudafx/parallel.hpp"

namespace cudafx {

Status make_delta_layout(const ImageDesc& desc, DeltaLayout* out) {
  if (desc.width <= 0 || desc.height <= 0 || desc.width > 16384 || desc.height > 16384)
    return Status::invalid("delta codec: frame size must be 1..16384 on each side, got " +
                           std::to_string(desc.width) + "x" + std::to_string(desc.height));
  const FormatInfo& fi = format_info(desc.format);
  DeltaLayout l;
  l.desc = desc;
  l.n_planes = fi.n_planes;
  for (int i = 0; i < fi.n_planes; i++) {
    DeltaPlaneLayout& p = l.planes[i];
    p.row_bytes = plane_width(fi, i, desc.width) * fi.planes[i].channels;
    p.height = plane_height(fi, i, desc.height);
    p.pixel_bytes = fi.planes[i].channels;
    l.plane_offset[i] = l.frame_bytes;
    l.first_tile[i] = i == 0 ? 0 : l.first_tile[i - 1] + l.planes[i - 1].tile_count();
    p.tiles_x = (p.row_bytes + kDeltaTileW - 1) / kDeltaTileW;
    p.tiles_y = (p.height + kDeltaTileH - 1) / kDeltaTileH;
    l.frame_bytes += static_cast<size_t>(p.row_bytes) * p.height;
    l.bitmap_bytes += p.bitmap_bytes();
  }
  *out = l;
  return Status::ok();
}

namespace {

// The checksum's terms for rows [y0, y1) of plane `i`, whose first word is
// number `base` of the whole image.
uint64_t checksum_rows(const DeltaPlaneLayout& p, const uint8_t* data, size_t pitch, int y0,
                       int y1, uint64_t base) {
  const size_t words = (static_cast<size_t>(p.row_bytes) + 7) / 8;
  const size_t full = static_cast<size_t>(p.row_bytes) / 8;  // words with 8 bytes
  auto term = [](uint64_t v, uint64_t pos) {
    const uint64_t m = (v ^ (pos * 0x9E3779B97F4A7C15ull)) * 0xBF58476D1CE4E5B9ull;
    return m ^ (m >> 31);
  };
  uint64_t sum = 0, pos = base + static_cast<uint64_t>(y0) * words;
  for (int y = y0; y < y1; y++) {
    const uint8_t* row = data + static_cast<size_t>(y) * pitch;
    for (size_t w = 0; w < full; w++) {
      uint64_t v;
      std::memcpy(&v, row + w * 8, 8);  // little-endian machines only (x86-64, arm64)
      sum += term(v, pos + w);
    }
    if (full < words) {  // the row's last bytes, zero-extended
      uint64_t v = 0;
      std::memcpy(&v, row + full * 8, p.row_bytes - full * 8);
      sum += term(v, pos + full);
    }
    pos += words;
  }
  return sum;
}

}  // namespace

uint64_t delta_checksum_rows(const DeltaLayout& layout, const ImageView& img, int plane, int y0,
                             int y1) {
  uint64_t base = 0;
  for (int i = 0; i < plane; i++)
    base += static_cast<uint64_t>((layout.planes[i].row_bytes + 7) / 8) * layout.planes[i].height;
  return checksum_rows(layout.planes[plane], img.data[plane], img.pitch[plane], y0, y1, base);
}

// A sum of independent terms: bands of rows in parallel, added up after.
uint64_t delta_checksum(const DeltaLayout& layout, const ImageView& img) {
  constexpr int kBandRows = 64;
  struct Band {
    int plane, y0, y1;
    uint64_t base;
  };
  std::vector<Band> bands;
  uint64_t base = 0;
  for (int i = 0; i < layout.n_planes; i++) {
    const DeltaPlaneLayout& p = layout.planes[i];
    for (int y = 0; y < p.height; y += kBandRows)
      bands.push_back({i, y, std::min(p.height, y + kBandRows), base});
    base += static_cast<uint64_t>((p.row_bytes + 7) / 8) * p.height;
  }
  std::vector<uint64_t> sums(bands.size());
  parallel_for(static_cast<int>(bands.size()), [&](int b, int) {
    const Band& band = bands[b];
    sums[b] = checksum_rows(layout.planes[band.plane], img.data[band.plane],
                            img.pitch[band.plane], band.y0, band.y1, band.base);
  });
  uint64_t sum = 0;
  for (uint64_t v : sums)
    sum += v;
  return sum;
}

namespace {

// Calls fn(x0, bytes, y0, rows) for the tile (tx, ty) of plane p.
template <class F>
void tile_rect(const DeltaPlaneLayout& p, int tx, int ty, F fn) {
  fn(tx * kDeltaTileW, p.tile_width(tx), ty * kDeltaTileH, p.tile_height(ty));
}

}  // namespace

void delta_encode_cpu(const DeltaLayout& layout, const ImageView& cur, const ImageView& ref,
                      int threshold, bool keyframe, DeltaScratch* scratch,
                      std::vector<uint8_t>* raw, size_t* changed_bytes) {
  raw->clear();
  if (changed_bytes)
    *changed_bytes = 0;
  if (keyframe) {
    raw->resize(layout.frame_bytes);
    for (int i = 0; i < layout.n_planes; i++) {
      const DeltaPlaneLayout& p = layout.planes[i];
      for (int y = 0; y < p.height; y++) {
        const uint8_t* src = cur.data[i] + static_cast<size_t>(y) * cur.pitch[i];
        std::memcpy(raw->data() + layout.plane_offset[i] + static_cast<size_t>(y) * p.row_bytes,
                    src, p.row_bytes);
        std::memcpy(ref.data[i] + static_cast<size_t>(y) * ref.pitch[i], src, p.row_bytes);
      }
    }
    return;
  }
  scratch->residual.resize(layout.frame_bytes);
  scratch->changed.assign(layout.tile_count(), 0);
  if (scratch->step_threshold != threshold) {
    scratch->step = delta_step_divisor(threshold);
    scratch->step_threshold = threshold;
  }
  const uint16_t t = static_cast<uint16_t>(threshold), s = static_cast<uint16_t>(2 * t + 1);
  const uint16_t step_mul = static_cast<uint16_t>(scratch->step.mul);
  const unsigned step_shift = scratch->step.shift;

  // Residuals and the reference update, one tile row of one plane a job.
  // The loops over a tile's row are written so that the compiler vectorises
  // them: byte lanes for the tests, 16-bit lanes for the quantiser.
  struct Job {
    int plane, ty;
  };
  std::vector<Job> jobs;
  for (int i = 0; i < layout.n_planes; i++)
    for (int ty = 0; ty < layout.planes[i].tiles_y; ty++)
      jobs.push_back({i, ty});
  parallel_for(static_cast<int>(jobs.size()), [&](int j, int) {
    const int i = jobs[j].plane, ty = jobs[j].ty;
    const uint16_t tl = t, sl = s, mul = step_mul;  // locals, not captured references:
    const unsigned shift = step_shift;              // the vectoriser needs them invariant
    const DeltaPlaneLayout& p = layout.planes[i];
    // A tile at a time, its flag written once: the flags of neighbouring
    // tile rows share cache lines across threads.
    uint8_t* flags =
        scratch->changed.data() + layout.first_tile[i] + static_cast<size_t>(ty) * p.tiles_x;
    const int y0 = ty * kDeltaTileH, y1 = std::min(p.height, y0 + kDeltaTileH);
    for (int tx = 0; tx < p.tiles_x; tx++) {
      const int x0 = tx * kDeltaTileW, x1 = std::min(p.row_bytes, x0 + kDeltaTileW);
      bool changed = false;
      for (int y = y0; y < y1; y++) {
        const uint8_t* __restrict c = cur.data[i] + static_cast<size_t>(y) * cur.pitch[i];
        uint8_t* __restrict r = ref.data[i] + static_cast<size_t>(y) * ref.pitch[i];
        uint8_t* __restrict res = scratch->residual.data() + layout.plane_offset[i] +
                                  static_cast<size_t>(y) * p.row_bytes;
        if (threshold == 0) {  // lossless: the difference itself, and ref = cur
          uint8_t any = 0;
          for (int x = x0; x < x1; x++) {
            const uint8_t d = static_cast<uint8_t>(c[x] - r[x]);
            res[x] = d;
            any |= d;
            r[x] = c[x];
          }
          changed |= any != 0;
          continue;
        }
        // A byte gets a non-zero residual exactly when |cur - ref| > t
        // (delta_math.hpp). Most of a static scene's rows have none: one
        // pass finds out, and they cost nothing more.
        uint8_t most = 0;
        for (int x = x0; x < x1; x++) {
          const uint8_t a = c[x], b = r[x];
          const uint8_t d = static_cast<uint8_t>(a > b ? a - b : b - a);
          most = d > most ? d : most;
        }
        if (most <= tl) {
          std::memset(res + x0, 0, x1 - x0);
          continue;
        }
        changed = true;
        // delta_residual(), in 16-bit lanes: the multiple of the step
        // nearest to d (0 when |d| <= t, as then |d| + t < s), then the
        // clamp of ref + q into 0..255.
        for (int x = x0; x < x1; x++) {
          const int16_t cv = c[x], rv = r[x];
          const int16_t d = static_cast<int16_t>(cv - rv);
          const uint16_t n = static_cast<uint16_t>((d < 0 ? -d : d) + tl);
          const uint16_t k = static_cast<uint16_t>(((uint32_t(n) * mul) >> 16) >> shift);
          const int16_t m = static_cast<int16_t>(k * sl);
          int16_t nr = static_cast<int16_t>(rv + (d < 0 ? -m : m));
          nr = nr < 0 ? 0 : (nr > 255 ? 255 : nr);
          res[x] = static_cast<uint8_t>(nr - rv);
          r[x] = static_cast<uint8_t>(nr);
        }
      }
      flags[tx] = changed;
    }
  });

  pack_delta_payload(layout, scratch->residual.data(), scratch->changed.data(), raw,
                     changed_bytes);
}

void pack_delta_payload(const DeltaLayout& layout, const uint8_t* residual,
                        const uint8_t* changed, std::vector<uint8_t>* raw,
                        size_t* changed_bytes) {
  // Bitmaps, then the residual bytes of the changed tiles in raster order.
  raw->assign(layout.bitmap_bytes, 0);
  size_t bit_base = 0;
  for (int i = 0; i < layout.n_planes; i++) {
    const DeltaPlaneLayout& p = layout.planes[i];
    for (size_t k = 0; k < p.tile_count(); k++)
      if (changed[layout.first_tile[i] + k])
        (*raw)[bit_base + k / 8] |= static_cast<uint8_t>(1u << (k % 8));
    bit_base += p.bitmap_bytes();
  }
  // The bitmaps give the payload's size and every tile's place: one
  // allocation, then the tiles copied (and their non-zero bytes counted for
  // the statistics) in parallel, a run of tiles a job.
  struct TileAt {
    int plane, tx, ty;
    size_t offset;
  };
  std::vector<TileAt> tiles;
  raw->resize(for_each_set_tile(layout, raw->data(),
                                [&](int i, size_t, int tx, int ty, size_t offset) {
                                  tiles.push_back({i, tx, ty, offset});
                                }));
  constexpr size_t kTilesPerJob = 32;
  const int jobs = static_cast<int>((tiles.size() + kTilesPerJob - 1) / kTilesPerJob);
  std::vector<size_t> counts(jobs);
  parallel_for(jobs, [&](int j, int) {
    size_t count = 0;
    const size_t end = std::min(tiles.size(), (j + 1) * kTilesPerJob);
    for (size_t k = j * kTilesPerJob; k < end; k++) {
      const TileAt& t = tiles[k];
      const DeltaPlaneLayout& p = layout.planes[t.plane];
      uint8_t* out = raw->data() + t.offset;
      tile_rect(p, t.tx, t.ty, [&](int x0, int bytes, int y0, int rows) {
        for (int y = y0; y < y0 + rows; y++, out += bytes) {
          const uint8_t* res =
              residual + layout.plane_offset[t.plane] + static_cast<size_t>(y) * p.row_bytes + x0;
          std::memcpy(out, res, bytes);
          unsigned nonzero = 0;
          for (int x = 0; x < bytes; x++)
            nonzero += res[x] != 0;
          count += nonzero;
        }
      });
    }
    counts[j] = count;
  });
  if (changed_bytes) {
    *changed_bytes = 0;
    for (size_t c : counts)
      *changed_bytes += c;
  }
}

void delta_apply_cpu(const DeltaLayout& layout, const uint8_t* raw, size_t, bool keyframe,
                     const ImageView& ref) {
  if (keyframe) {
    for (int i = 0; i < layout.n_planes; i++) {
      const DeltaPlaneLayout& p = layout.planes[i];
      for (int y = 0; y < p.height; y++)
        std::memcpy(ref.data[i] + static_cast<size_t>(y) * ref.pitch[i],
                    raw + layout.plane_offset[i] + static_cast<size_t>(y) * p.row_bytes,
                    p.row_bytes);
    }
    return;
  }
  for_each_set_tile(layout, raw, [&](int i, size_t, int tx, int ty, size_t offset) {
    const uint8_t* tile = raw + offset;
    tile_rect(layout.planes[i], tx, ty, [&](int x0, int bytes, int y0, int rows) {
      for (int y = y0; y < y0 + rows; y++, tile += bytes) {
        uint8_t* r = ref.data[i] + static_cast<size_t>(y) * ref.pitch[i] + x0;
        for (int x = 0; x < bytes; x++)
          r[x] = static_cast<uint8_t>(r[x] + tile[x]);
      }
    });
  });
}

}  // namespace cudafx
