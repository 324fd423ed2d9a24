// The "rans" entropy stage of delta frames (delta_entropy.hpp). The symbol
// order and the contexts are specified in docs/delta-format.md; encoder and
// decoder below walk the tiles identically.
#include "cudafx/delta_entropy.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "cudafx/parallel.hpp"
#include "delta/adaptive_model.hpp"
#include "delta/byte_order.hpp"
#include "delta/rans.hpp"

namespace cudafx {
namespace {

constexpr size_t kSliceBytes = size_t(128) << 10;  // plane bytes a slice covers, at least
constexpr size_t kFrameSlices = 16;                // slices a frame has at most (but one a plane)
constexpr int kGroupBytes = 8;               // a mask bit covers this many bytes of a row
constexpr int kMaskContexts = 10;            // popcount of the row above, or the first row
constexpr int kByteContexts = 5 * 5 * 3 * 3;  // left and above signed, upper corners by size

// Context classes of a residual byte for one threshold: its size against
// the quantiser's step 2T+1 (0: zero, 1: one step or less, 2: more), and
// the same with its sign (0..4, 2 for zero). Tabulated already weighted by
// the place of each neighbour in the context number (byte_context).
struct Classes {
  uint8_t left[256], above[256], upper_left[256], upper_right[256];
  int threshold = -1;
  void set(int t) {
    if (t == threshold)
      return;
    threshold = t;
    const int step = 2 * t + 1;
    for (int v = 0; v < 256; v++) {
      const int s = static_cast<int8_t>(v);
      const int m = s < 0 ? -s : s;
      const int size = m == 0 ? 0 : m <= step ? 1 : 2;
      const int signed_size = s < 0 ? 2 - size : 2 + size;
      left[v] = static_cast<uint8_t>(signed_size * 45);
      above[v] = static_cast<uint8_t>(signed_size * 9);
      upper_left[v] = static_cast<uint8_t>(size * 3);
      upper_right[v] = static_cast<uint8_t>(size);
    }
  }
};

// A set tile of the frame: where its bytes are in the raw payload.
struct TileRef {
  uint32_t offset;
  uint16_t width, height;  // bytes, rows
  uint8_t stride;          // bytes a pixel of its plane: the distance to the left neighbour
};

struct Slice {
  AdaptiveModel masks{kMaskContexts}, bytes{kByteContexts};
  std::vector<TileRef> tiles;
  std::vector<uint32_t> symbols;  // encoder: (start | freq << 16) in coding order
  std::vector<uint8_t> stream;    // encoder: output, written from its end
  const uint8_t* coded = nullptr; // encoder: first byte of the stream in `stream`
  size_t coded_size = 0;
  std::string error;  // decoder
};

inline uint32_t row_mask(const uint8_t* row, int width) {
  uint32_t mask = 0;
  int g = 0;
  for (; (g + 1) * kGroupBytes <= width; g++) {
    uint64_t w;
    std::memcpy(&w, row + g * kGroupBytes, 8);
    mask |= static_cast<uint32_t>(w != 0) << g;
  }
  if (g * kGroupBytes < width) {
    bool nz = false;
    for (int x = g * kGroupBytes; x < width; x++) nz |= row[x] != 0;
    mask |= static_cast<uint32_t>(nz) << g;
  }
  return mask;
}

inline int byte_context(const Classes& k, const uint8_t* row, const uint8_t* above, int x,
                        int width, int stride) {
  const uint8_t l = x >= stride ? row[x - stride] : 0;
  uint8_t a = 0, ul = 0, ur = 0;
  if (above) {
    a = above[x];
    ul = x >= stride ? above[x - stride] : 0;
    ur = x + stride < width ? above[x + stride] : 0;
  }
  return k.left[l] + k.above[a] + k.upper_left[ul] + k.upper_right[ur];
}

inline int mask_context(int row, uint32_t mask_above) {
  return row == 0 ? kMaskContexts - 1 : __builtin_popcount(mask_above);
}

void encode_slice(Slice* s, const uint8_t* raw, const Classes& k) {
  // A symbol a row and a byte at most, each possibly escaped.
  size_t most = 0;
  for (const TileRef& t : s->tiles) most += size_t(t.height) * (t.width + 1);
  if (s->symbols.size() < 2 * most)
    s->symbols.resize(2 * most);
  uint32_t* out = s->symbols.data();
  for (const TileRef& t : s->tiles) {
    const uint8_t* tile = raw + t.offset;
    uint32_t above_mask = 0;
    for (int y = 0; y < t.height; y++) {
      const uint8_t* row = tile + size_t(y) * t.width;
      const uint8_t* above = y ? row - t.width : nullptr;
      const uint32_t mask = row_mask(row, t.width);
      out = s->masks.encode(mask_context(y, above_mask), static_cast<int>(mask), out);
      for (uint32_t m = mask; m; m &= m - 1) {
        const int g = __builtin_ctz(m);
        const int end = std::min<int>(t.width, (g + 1) * kGroupBytes);
        for (int x = g * kGroupBytes; x < end; x++)
          out = s->bytes.encode(byte_context(k, row, above, x, t.width, t.stride), row[x], out);
      }
      above_mask = mask;
    }
  }
  // Second pass: rANS backwards. At most 2 bytes a symbol, 8 for the states.
  const size_t n = static_cast<size_t>(out - s->symbols.data());
  if (s->stream.size() < n * 2 + 8)
    s->stream.resize(n * 2 + 8);
  RansWriter w(s->stream.data() + s->stream.size());
  for (size_t i = n; i-- > 0;)
    w.put(s->symbols[i] & 0xffff, s->symbols[i] >> 16);
  s->coded = w.finish();
  s->coded_size = static_cast<size_t>(s->stream.data() + s->stream.size() - s->coded);
}

bool decode_slice(Slice* s, const uint8_t* data, size_t size, uint8_t* raw, const Classes& k) {
  RansReader r(data, data + size);
  for (const TileRef& t : s->tiles) {
    uint8_t* tile = raw + t.offset;
    const int groups = (t.width + kGroupBytes - 1) / kGroupBytes;
    uint32_t above_mask = 0;
    for (int y = 0; y < t.height; y++) {
      uint8_t* row = tile + size_t(y) * t.width;
      const uint8_t* above = y ? row - t.width : nullptr;
      const uint32_t mask =
          static_cast<uint32_t>(s->masks.decode(mask_context(y, above_mask), &r));
      if (mask >> groups) {
        s->error = "row mask has bits beyond the tile";
        return false;
      }
      std::memset(row, 0, t.width);
      for (uint32_t m = mask; m; m &= m - 1) {
        const int g = __builtin_ctz(m);
        const int end = std::min<int>(t.width, (g + 1) * kGroupBytes);
        for (int x = g * kGroupBytes; x < end; x++)
          row[x] = static_cast<uint8_t>(
              s->bytes.decode(byte_context(k, row, above, x, t.width, t.stride), &r));
      }
      above_mask = mask;
    }
  }
  if (!r.finished_cleanly()) {
    s->error = "rANS stream damaged";
    return false;
  }
  return true;
}

}  // namespace

struct DeltaEntropyCoder::Impl {
  DeltaLayout layout;
  std::vector<size_t> slice_end;  // tile number (all planes) where each slice ends
  std::vector<std::unique_ptr<Slice>> slices;
  Classes classes;
  // decode(): each slice's stream and verdict
  std::vector<const uint8_t*> stream_begin;
  std::vector<size_t> stream_size;
  std::vector<char> decoded;

  // Distributes the set tiles of `bitmaps` to the slices with their places
  // in the raw payload; false when they do not add up to `raw_size`.
  bool plan(const uint8_t* bitmaps, size_t raw_size) {
    for (auto& s : slices) s->tiles.clear();
    const FormatInfo& fi = format_info(layout.desc.format);
    size_t slice = 0;
    const size_t end = for_each_set_tile(
        layout, bitmaps, [&](int plane, size_t tile, int tx, int ty, size_t offset) {
          while (tile >= slice_end[slice]) slice++;
          const DeltaPlaneLayout& p = layout.planes[plane];
          TileRef t;
          t.offset = static_cast<uint32_t>(offset);  // < frame bytes + bitmaps (create)
          t.width = static_cast<uint16_t>(p.tile_width(tx));
          t.height = static_cast<uint16_t>(p.tile_height(ty));
          t.stride = static_cast<uint8_t>(fi.planes[plane].channels);
          slices[slice]->tiles.push_back(t);
        });
    return end == raw_size;
  }
};

DeltaEntropyCoder::~DeltaEntropyCoder() = default;

// Slices never span planes: luma and chroma residuals differ, and each
// slice's models learn one of them. A plane gets one slice a 128 KiB, and
// a large frame at most 16 in all, shared by the planes' sizes (rounded
// down, so that 16 threads take them in one round): enough parallelism, and
// models (up to ~0.8 MB a slice) that stay small. (A slice never lacks
// tiles: a tile holds at most 1 KiB.)
int DeltaEntropyCoder::plane_slice_count(const DeltaLayout& layout, int plane) {
  const DeltaPlaneLayout& p = layout.planes[plane];
  const size_t bytes = size_t(p.row_bytes) * p.height;
  const size_t by_size = (bytes + kSliceBytes - 1) / kSliceBytes;
  const size_t share = kFrameSlices * bytes / layout.frame_bytes;
  return static_cast<int>(std::max<size_t>(1, std::min(by_size, share)));
}

int DeltaEntropyCoder::slice_count(const DeltaLayout& layout) {
  int n = 0;
  for (int i = 0; i < layout.n_planes; i++) n += plane_slice_count(layout, i);
  return n;
}

Status DeltaEntropyCoder::create(const DeltaLayout& layout,
                                 std::unique_ptr<DeltaEntropyCoder>* out) {
  if (layout.max_raw_bytes() > 0xffffffffu)
    return Status::invalid("delta entropy coder: frame too large");
  std::unique_ptr<DeltaEntropyCoder> c(new DeltaEntropyCoder());
  c->impl_.reset(new Impl());
  Impl& m = *c->impl_;
  m.layout = layout;
  size_t first = 0;  // the plane's first tile
  for (int i = 0; i < layout.n_planes; i++) {
    const size_t tiles = layout.planes[i].tile_count();
    const int n = plane_slice_count(layout, i);
    for (int s = 0; s < n; s++) {
      m.slice_end.push_back(first + tiles * (s + 1) / n);
      m.slices.emplace_back(new Slice());
    }
    first += tiles;
  }
  const int n = static_cast<int>(m.slices.size());
  m.stream_begin.resize(n);
  m.stream_size.resize(n);
  m.decoded.resize(n);
  *out = std::move(c);
  return Status::ok();
}

void DeltaEntropyCoder::reset() {
  for (auto& s : impl_->slices) {
    s->masks.reset();
    s->bytes.reset();
  }
}

Status DeltaEntropyCoder::encode(const uint8_t* raw, size_t raw_size, int threshold,
                                 std::vector<uint8_t>* out) {
  Impl& m = *impl_;
  if (raw_size < m.layout.bitmap_bytes || !m.plan(raw, raw_size))
    return Status::invalid("delta entropy coder: payload does not match its tile bitmaps");
  m.classes.set(threshold);
  const int n = static_cast<int>(m.slices.size());
  const Classes& k = m.classes;
  parallel_for(n, [&](int i, int) { encode_slice(m.slices[i].get(), raw, k); });
  const size_t at = out->size();
  size_t total = m.layout.bitmap_bytes + 4 * size_t(n);
  for (auto& s : m.slices) total += s->coded_size;
  out->resize(at + total);
  uint8_t* p = out->data() + at;
  std::memcpy(p, raw, m.layout.bitmap_bytes);
  p += m.layout.bitmap_bytes;
  for (auto& s : m.slices) {
    if (s->coded_size > 0xffffffffu)
      return Status::invalid("delta entropy coder: slice too large");
    put32(p, static_cast<uint32_t>(s->coded_size));
    p += 4;
  }
  for (auto& s : m.slices) {
    std::memcpy(p, s->coded, s->coded_size);
    p += s->coded_size;
  }
  return Status::ok();
}

Status DeltaEntropyCoder::decode(const uint8_t* data, size_t size, int threshold, uint8_t* raw,
                                 size_t raw_size) {
  Impl& m = *impl_;
  auto bad = [](const std::string& why) { return Status::invalid("rans payload: " + why); };
  const int n = static_cast<int>(m.slices.size());
  const size_t head = m.layout.bitmap_bytes + 4 * size_t(n);
  if (size < head)
    return bad("shorter than its bitmaps and slice sizes");
  if (raw_size < m.layout.bitmap_bytes)
    return bad("raw size smaller than the bitmaps");
  std::memcpy(raw, data, m.layout.bitmap_bytes);
  if (!m.plan(raw, raw_size))
    return bad("tile bytes do not match the tile bitmap");
  size_t pos = head;
  for (int i = 0; i < n; i++) {
    m.stream_size[i] = get32(data + m.layout.bitmap_bytes + 4 * size_t(i));
    if (m.stream_size[i] > size - pos)
      return bad("slice " + std::to_string(i) + " runs past the payload");
    m.stream_begin[i] = data + pos;
    pos += m.stream_size[i];
  }
  if (pos != size)
    return bad("slice sizes do not add up to the payload");
  m.classes.set(threshold);
  const Classes& k = m.classes;
  parallel_for(n, [&](int i, int) {
    m.decoded[i] = decode_slice(m.slices[i].get(), m.stream_begin[i], m.stream_size[i], raw, k);
  });
  for (int i = 0; i < n; i++)
    if (!m.decoded[i])
      return bad("slice " + std::to_string(i) + ": " + m.slices[i]->error);
  return Status::ok();
}

}  // namespace cudafx
