// Format 4's motion vectors on the host: the vector section of a packet and
// the encoder's per-plane global candidate (delta_motion.hpp).
#include "cudafx/delta_motion.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "cudafx/delta.hpp"
#include "cudafx/parallel.hpp"
#include "delta/bit_stream.hpp"
#include "delta/byte_order.hpp"

namespace cudafx {
namespace {

// Gamma codes of the section: a run of tiles fits 2^21 tiles (make_delta_layout
// allows 2^20), a vector's difference from the one before |d| <= 254 half
// pixels (code <= 508, gamma(509): 8 zeros).
constexpr int kRunZeros = 21, kDifferenceZeros = 8;

uint32_t signed_to_code(int d) {  // 0, 1, -1, 2, -2, ... as 0, 1, 2, 3, 4, ...
  return d > 0 ? 2u * d - 1 : static_cast<uint32_t>(-2 * d);
}
int code_to_signed(uint32_t u) {
  return (u & 1) ? static_cast<int>((u + 1) / 2) : -static_cast<int>(u / 2);
}

// The plane of tile number `tile` (all planes counted).
int plane_of(const DeltaLayout& layout, size_t tile) {
  int i = 0;
  while (i + 1 < layout.n_planes && tile >= layout.first_tile[i + 1]) i++;
  return i;
}

// Whether any of v[begin, end) is set: their bytes ORed a block at a time
// (a loop the compiler vectorises; vector by vector, the CUDA encoder's
// host spent ~50 us a 2160p RGBA frame on a frame without vectors).
bool any_set(const DeltaVector* v, size_t begin, size_t end) {
  static_assert(sizeof(DeltaVector) == 2, "two bytes a vector");
  const auto* bytes = reinterpret_cast<const uint8_t*>(v);
  constexpr size_t kBlock = 4096;
  for (size_t at = 2 * begin; at < 2 * end; at += kBlock) {
    const size_t stop = std::min(2 * end, at + kBlock);
    uint8_t any = 0;
    for (size_t i = at; i < stop; i++) any |= bytes[i];
    if (any)
      return true;
  }
  return false;
}

}  // namespace

bool delta_any_vector(const DeltaLayout& layout, const DeltaVector* v) {
  return any_set(v, 0, layout.tile_count());
}

void delta_global_vectors(const DeltaLayout& layout, const DeltaVector* v,
                          DeltaVector global[kMaxPlanes]) {
  // Counts by vector: (2 * kDeltaMaxVector + 1)^2 bins (two tables of
  // ~260 KB, made once a thread; only the bins a plane used are cleared
  // after it), with where each vector first occurs for the tie rule.
  // Vectors are within +-kDeltaMaxVector (the encoders' search and
  // read_delta_vectors keep them there; -128 would fall outside the bins).
  // A plane without vectors (every plane after a frame without search, or
  // of content that does not move) costs one scan.
  constexpr int kSide = 2 * kDeltaMaxVector + 1;
  thread_local std::vector<uint32_t> count(kSide * kSide, 0u), first(kSide * kSide);
  thread_local std::vector<int> used;
  for (int i = 0; i < kMaxPlanes; i++) global[i] = DeltaVector{};
  for (int i = 0; i < layout.n_planes; i++) {
    const size_t begin = layout.first_tile[i], end = begin + layout.planes[i].tile_count();
    if (!any_set(v, begin, end))
      continue;
    int best = -1;
    for (size_t t = begin; t < end; t++) {
      if (!delta_vector_set(v[t]))
        continue;
      const int bin = (v[t].dy + kDeltaMaxVector) * kSide + v[t].dx + kDeltaMaxVector;
      if (count[bin]++ == 0) {
        first[bin] = static_cast<uint32_t>(t - begin);
        used.push_back(bin);
      }
      if (best < 0 || count[bin] > count[best] ||
          (count[bin] == count[best] && first[bin] < first[best]))
        best = bin;
    }
    for (int bin : used) count[bin] = 0;
    used.clear();
    if (best >= 0)
      global[i] = DeltaVector{static_cast<int8_t>(best % kSide - kDeltaMaxVector),
                              static_cast<int8_t>(best / kSide - kDeltaMaxVector)};
  }
}

void delta_margin_image(const DeltaLayout& layout, std::vector<uint8_t>* storage,
                        ImageView* view) {
  constexpr int m = kDeltaSearchMargin;
  size_t pitch[kMaxPlanes] = {}, offset[kMaxPlanes] = {}, total = 0;
  for (int i = 0; i < layout.n_planes; i++) {
    const DeltaPlaneLayout& p = layout.planes[i];
    pitch[i] = (static_cast<size_t>(p.row_bytes) + 2 * m * p.pixel_bytes + 63) / 64 * 64;
    offset[i] = total + m * pitch[i] + static_cast<size_t>(m) * p.pixel_bytes;
    total += pitch[i] * (p.height + 2 * m);
  }
  if (storage->size() != total)
    storage->assign(total, 0);
  *view = ImageView{};
  view->desc = layout.desc;
  for (int i = 0; i < layout.n_planes; i++) {
    view->data[i] = storage->data() + offset[i];
    view->pitch[i] = pitch[i];
  }
}

void delta_fill_margin_rows(const DeltaPlaneLayout& p, uint8_t* plane, size_t pitch, int y0,
                            int y1) {
  constexpr int m = kDeltaSearchMargin;
  const int c = p.pixel_bytes;
  for (int y = y0; y < y1; y++) {
    uint8_t* const row = plane + static_cast<size_t>(y) * pitch;
    uint8_t* const last = row + p.row_bytes - c;
    if (c == 1) {
      std::memset(row - m, row[0], m);
      std::memset(last + 1, last[0], m);
    } else {
      for (int k = 0; k < m * c; k++) {
        row[k - m * c] = row[k % c];
        last[c + k] = last[k % c];
      }
    }
  }
  const size_t span = static_cast<size_t>(p.row_bytes) + 2 * m * c;
  if (y0 == 0) {
    uint8_t* const first_row = plane - m * c;
    for (int k = 1; k <= m; k++) std::memcpy(first_row - k * pitch, first_row, span);
  }
  if (y1 == p.height) {
    uint8_t* const last_row = plane - m * c + static_cast<size_t>(p.height - 1) * pitch;
    for (int k = 1; k <= m; k++) std::memcpy(last_row + k * pitch, last_row, span);
  }
}

namespace {
// Calls fn(plane, y0, y1) for bands of kBand rows of every plane, in
// parallel (the margins of a frame on one thread had left the other cores
// waiting).
template <class F>
void for_each_row_band(const DeltaLayout& layout, F fn) {
  constexpr int kBand = 32;
  int bands[kMaxPlanes + 1] = {};
  for (int i = 0; i < layout.n_planes; i++)
    bands[i + 1] = bands[i] + (layout.planes[i].height + kBand - 1) / kBand;
  parallel_for(bands[layout.n_planes], [&](int job, int) {
    int i = 0;
    while (job >= bands[i + 1]) i++;
    const int y0 = (job - bands[i]) * kBand;
    fn(i, y0, std::min(layout.planes[i].height, y0 + kBand));
  });
}
}  // namespace

void delta_fill_margins(const DeltaLayout& layout, const ImageView& view) {
  for_each_row_band(layout, [&](int i, int y0, int y1) {
    delta_fill_margin_rows(layout.planes[i], view.data[i], view.pitch[i], y0, y1);
  });
}

void write_delta_vectors(const DeltaLayout& layout, const DeltaVector* v,
                         std::vector<uint8_t>* out) {
  const size_t at = out->size();
  out->resize(at + 4);
  BitWriter bits(out);
  const size_t n = layout.tile_count();
  size_t run = 0;
  int plane = -1, px = 0, py = 0;  // the plane's vector before
  for (size_t t = 0; t < n; t++) {
    if (!delta_vector_set(v[t])) {
      run++;
      continue;
    }
    const int i = plane_of(layout, t);
    if (i != plane) {
      plane = i;
      px = py = 0;
    }
    bits.gamma(static_cast<uint32_t>(run) + 1);
    bits.gamma(signed_to_code(v[t].dx - px) + 1);
    bits.gamma(signed_to_code(v[t].dy - py) + 1);
    px = v[t].dx;
    py = v[t].dy;
    run = 0;
  }
  bits.gamma(static_cast<uint32_t>(run) + 1);
  bits.flush();
  put32(out->data() + at, static_cast<uint32_t>(out->size() - at - 4));
}

Status read_delta_vectors(const DeltaLayout& layout, const uint8_t* data, size_t size,
                          size_t* used, DeltaVector* v) {
  auto bad = [](const std::string& why) { return Status::invalid("vector section: " + why); };
  if (size < 4)
    return bad("truncated size");
  const size_t length = get32(data);
  if (length > size - 4)
    return bad(std::to_string(length) + " bytes announced, " + std::to_string(size - 4) +
               " follow");
  const size_t n = layout.tile_count();
  std::fill(v, v + n, DeltaVector{});
  BitReader bits(data + 4, length);
  size_t t = 0, vectors = 0;
  int plane = -1, px = 0, py = 0;
  for (;;) {
    uint32_t g = 0;
    if (!bits.gamma(&g, kRunZeros))
      return bad("truncated or overlong run");
    if (g - 1 > n - t)
      return bad("a run passes the last tile");
    t += g - 1;
    if (t == n)
      break;
    uint32_t gx = 0, gy = 0;
    if (!bits.gamma(&gx, kDifferenceZeros) || !bits.gamma(&gy, kDifferenceZeros))
      return bad("truncated or overlong vector");
    const int i = plane_of(layout, t);
    if (i != plane) {
      plane = i;
      px = py = 0;
    }
    const int dx = px + code_to_signed(gx - 1), dy = py + code_to_signed(gy - 1);
    if (dx < -kDeltaMaxVector || dx > kDeltaMaxVector || dy < -kDeltaMaxVector ||
        dy > kDeltaMaxVector)
      return bad("vector (" + std::to_string(dx) + ", " + std::to_string(dy) + ") of tile " +
                 std::to_string(t) + " beyond ±" + std::to_string(kDeltaMaxVector));
    if (dx == 0 && dy == 0)
      return bad("vector (0, 0) given for tile " + std::to_string(t));
    v[t] = DeltaVector{static_cast<int8_t>(dx), static_cast<int8_t>(dy)};
    px = dx;
    py = dy;
    t++;
    vectors++;
  }
  if (vectors == 0)
    return bad("no vector");
  if (bits.bytes_read() != length)
    return bad(std::to_string(length) + " bytes announced, " + std::to_string(bits.bytes_read()) +
               " coded");
  *used = 4 + length;
  return Status::ok();
}

}  // namespace cudafx
