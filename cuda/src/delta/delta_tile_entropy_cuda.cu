// The kernels of format 4's entropy stage on a CUDA device
// (delta_tile_entropy_cuda.hpp). The order of the pairs, their contexts and
// the rANS arithmetic are the CPU coder's (delta_tile_entropy.cpp,
// delta_predict_math.hpp, rans.hpp), so the streams are the same bytes.
#include <cuda_runtime.h>

#include "common/cuda_check.hpp"
#include "cudafx/delta_predict_math.hpp"
#include "cudafx/delta_tile_entropy_cuda.hpp"
#include "delta/rans.hpp"

namespace cudafx {
static_assert(sizeof(RansSymbol) == sizeof(DeltaCodingEntry) &&
                  alignof(RansSymbol) <= alignof(DeltaCodingEntry),
              "the coding table's entries are RansSymbols");
namespace {

constexpr unsigned kFull = 0xffffffffu;
constexpr int kHistogram = kDeltaContexts * 256;
constexpr int kCountWarps = 8;  // lanes a block of the counting kernel
static_assert(kDeltaTileW == 64 && kDeltaGroupBytes == 8,
              "a warp takes a tile row two bytes a thread, a group four threads");

struct CountPlane {
  size_t offset;  // DeltaLayout::plane_offset
  int row_bytes, height, pixel_bytes;
};

struct CountArgs {
  CountPlane planes[kMaxPlanes];
  const DeltaLaneDevice* lanes;
  unsigned n_lanes;
  const uint8_t* symbols;
  const uint8_t* modes;
  int keyframe, range;
  uint16_t* pairs;
  uint32_t* pair_count;
  uint32_t* histogram;
};

// The pair for symbol x of a tile row, as the CPU's coding_at and walk_lane
// make it.
__device__ __forceinline__ uint16_t symbol_pair(const uint8_t* row, int x, int y, int c,
                                                int row_bytes, int mode, int range) {
  const int v = row[x];
  const DeltaSymbolCoding k =
      delta_symbol_coding(mode, x >= c ? delta_unfold(row[x - c]) : 0,
                          y > 0 ? delta_unfold(row[x - row_bytes]) : 0);
  return static_cast<uint16_t>(k.context << 8 | (k.flip ? delta_flip_symbol(v, range) : v));
}

// One warp a lane: per tile its mode (delta frames), then per row its mask
// (the groups of 8 bytes holding a non-zero symbol) and the symbols of those
// groups in x order. Thread t holds bytes 2t and 2t + 1 of the row, so
// group g is threads 4g .. 4g + 3, and each symbol's place in the sequence
// is the number of symbols of lower threads.
__global__ void __launch_bounds__(kCountWarps * 32) lanes_count(const __grid_constant__ CountArgs a) {
  __shared__ uint32_t hist[kHistogram];
  for (int i = threadIdx.x; i < kHistogram; i += blockDim.x)
    hist[i] = 0;
  __syncthreads();
  const unsigned t = threadIdx.x % 32;
  const unsigned li = blockIdx.x * kCountWarps + threadIdx.x / 32;
  if (li < a.n_lanes) {
    const DeltaLaneDevice lane = a.lanes[li];
    const CountPlane p = a.planes[lane.plane];
    const uint8_t* modes = a.modes + lane.first_tile;
    // A lane is coded unless all its tiles are skipped.
    const bool present =
        a.keyframe || __any_sync(kFull, t < lane.tiles && modes[t] != kDeltaSkip);
    uint16_t* seq = a.pairs + lane.pairs_offset;
    uint32_t n = 0;  // the same in every thread
    const auto emit = [&](uint32_t at, uint16_t pair) {
      seq[at] = pair;
      atomicAdd(&hist[pair], 1u);
    };
    for (unsigned tile = 0; present && tile < lane.tiles; tile++) {
      const int mode = modes[tile];
      if (!a.keyframe) {
        if (t == 0)
          emit(n, static_cast<uint16_t>(kDeltaModeContext << 8 | mode));
        n++;
      }
      if (mode == kDeltaSkip)
        continue;
      const int tx = lane.tx0 + tile;
      const int w = min(kDeltaTileW, p.row_bytes - tx * kDeltaTileW);
      const int h = min(kDeltaTileH, p.height - static_cast<int>(lane.ty) * kDeltaTileH);
      const uint8_t* row = a.symbols + p.offset +
                           static_cast<size_t>(lane.ty) * kDeltaTileH * p.row_bytes +
                           static_cast<size_t>(tx) * kDeltaTileW;
      const int x = 2 * t;
      unsigned above = 0;
      for (int y = 0; y < h; y++, row += p.row_bytes) {
        const bool in0 = x < w, in1 = x + 1 < w;
        const unsigned nz = __ballot_sync(kFull, (in0 && row[x]) || (in1 && row[x + 1]));
        unsigned mask = 0;
#pragma unroll
        for (int g = 0; g < 8; g++)
          mask |= ((nz >> (4 * g)) & 0xfu) ? 1u << g : 0u;
        const bool set = (mask >> (t / 4)) & 1;
        const bool e0 = in0 && set, e1 = in1 && set;
        const unsigned b0 = __ballot_sync(kFull, e0), b1 = __ballot_sync(kFull, e1);
        const unsigned lower = (1u << t) - 1;
        uint32_t at = n + 1 + __popc(b0 & lower) + __popc(b1 & lower);
        if (t == 0)
          emit(n, static_cast<uint16_t>(delta_mask_context(y == 0, above) << 8 | mask));
        if (e0)
          emit(at++, symbol_pair(row, x, y, p.pixel_bytes, p.row_bytes, mode, a.range));
        if (e1)
          emit(at, symbol_pair(row, x + 1, y, p.pixel_bytes, p.row_bytes, mode, a.range));
        n += 1 + __popc(b0) + __popc(b1);
        above = mask;
      }
    }
    if (t == 0)
      a.pair_count[li] = n;
  }
  __syncthreads();
  for (int i = threadIdx.x; i < kHistogram; i += blockDim.x)
    if (hist[i])
      atomicAdd(&a.histogram[i], hist[i]);
}

// A thread a lane: its pairs last first, as the CPU codes them. The lanes
// are few and long (about 4 000 at 2160p RGBA, up to ~8 000 pairs each), so
// the kernel's time is one lane's chain of state arithmetic: nothing else
// may wait in it. A pair's entry (a RansSymbol: no division) depends only on
// the pair, so the pairs are loaded kAhead ahead into registers, and they
// are coded two at a time (RansWriter::put2: the two states' arithmetic side
// by side). (A copy of
// the 90 KB table in each block's shared memory measured no faster than
// reading it through the cache: 0.93-0.98 against 0.92-0.95 ms a 2160p
// frame's coding, H100.)
constexpr int kAhead = 8;

__global__ void __launch_bounds__(32) lanes_code(const DeltaLaneDevice* __restrict__ lanes,
                                                 unsigned n_lanes,
                                                 const uint16_t* __restrict__ pairs,
                                                 const uint32_t* __restrict__ pair_count,
                                                 const DeltaCodingEntry* __restrict__ coding,
                                                 uint8_t* __restrict__ room,
                                                 uint32_t* __restrict__ sizes) {
  const RansSymbol* table = reinterpret_cast<const RansSymbol*>(coding);
  const unsigned li = blockIdx.x * blockDim.x + threadIdx.x;
  if (li >= n_lanes)
    return;
  const uint32_t n = pair_count[li];
  if (n == 0) {
    sizes[li] = 0;
    return;
  }
  const DeltaLaneDevice lane = lanes[li];
  const uint16_t* __restrict__ seq = pairs + lane.pairs_offset;
  uint8_t* end = room + lane.room_end;
  RansWriter writer(end);
  uint32_t k = n;
  if (k & 1)  // an odd one first, then two at a time (RansWriter::put2)
    writer.put(table[seq[--k]]);
  // ring[j] holds the pair coded j steps from now (in turns of kAhead).
  uint16_t ring[kAhead];
#pragma unroll
  for (int j = 0; j < kAhead; j++)
    ring[j] = static_cast<uint32_t>(j) < k ? seq[k - 1 - j] : 0;
  while (k > 0) {
#pragma unroll
    for (int j = 0; j < kAhead; j += 2) {
      if (k == 0)
        break;
      const RansSymbol a = table[ring[j]], b = table[ring[j + 1]];
      k -= 2;
      ring[j] = k + 1 >= kAhead ? seq[k + 1 - kAhead] : 0;
      ring[j + 1] = k >= kAhead ? seq[k - kAhead] : 0;
      writer.put2(a, b);
    }
  }
  sizes[li] = static_cast<uint32_t>(end - writer.finish());
}

// A warp a lane: its stream copied to its place.
__global__ void lanes_pack(const DeltaLaneDevice* lanes, unsigned n_lanes, const uint8_t* room,
                           const uint32_t* sizes, const uint32_t* offsets, uint8_t* packed) {
  const unsigned li = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  if (li >= n_lanes)
    return;
  const uint32_t size = sizes[li];
  const uint8_t* from = room + lanes[li].room_end - size;
  uint8_t* to = packed + offsets[li];
  for (uint32_t i = threadIdx.x % 32; i < size; i += 32)
    to[i] = from[i];
}

struct DecodeArgs {
  CountPlane planes[kMaxPlanes];
  const DeltaLaneDevice* lanes;
  unsigned n_lanes;
  const uint32_t* lane_begin;
  const uint8_t* data;
  const uint32_t* slots;
  const int32_t* alphabet;
  int keyframe, range;
  uint8_t* symbols;
  uint8_t* modes;
  uint32_t* verdict;
};

// A thread a lane, as the CPU decoder's lane loop (delta_tile_entropy.cpp):
// per tile its mode (delta frames), then per row its mask and the symbols of
// the groups it sets (zeros in the others), each in the context its left
// and upper neighbours (already decoded by this thread) give.
__global__ void __launch_bounds__(32) lanes_decode(const __grid_constant__ DecodeArgs a) {
  const unsigned li = blockIdx.x * blockDim.x + threadIdx.x;
  if (li >= a.n_lanes)
    return;
  const DeltaLaneDevice lane = a.lanes[li];
  const uint32_t begin = a.lane_begin[li], end = a.lane_begin[li + 1];
  uint8_t* modes = a.modes + lane.first_tile;
  if (begin == end) {
    for (unsigned t = 0; t < lane.tiles; t++)
      modes[t] = kDeltaSkip;
    return;
  }
  const CountPlane p = a.planes[lane.plane];
  RansReader reader(a.data + begin, a.data + end);
  const auto take = [&](int ctx, int* v) {
    if (a.alphabet[ctx] == 0)
      return false;
    const uint32_t e = __ldg(a.slots + ctx * kRansScale + reader.slot());
    *v = static_cast<int>(e & 0xffu);
    reader.take(reader.slot() - ((e >> 8) & 0xfffu), (e >> 20) + 1);
    return true;
  };
  uint64_t n = 0;
  bool ok = true;
  for (unsigned tile = 0; tile < lane.tiles && ok; tile++) {
    int mode = kDeltaSpatial;
    if (!a.keyframe)
      ok = take(kDeltaModeContext, &mode);
    modes[tile] = static_cast<uint8_t>(mode);
    if (!ok || mode == kDeltaSkip)
      continue;
    const int tx = lane.tx0 + tile;
    const int w = min(kDeltaTileW, p.row_bytes - tx * kDeltaTileW);
    const int h = min(kDeltaTileH, p.height - static_cast<int>(lane.ty) * kDeltaTileH);
    const int groups = (w + kDeltaGroupBytes - 1) / kDeltaGroupBytes;
    uint8_t* row = a.symbols + p.offset + static_cast<size_t>(lane.ty) * kDeltaTileH * p.row_bytes +
                   static_cast<size_t>(tx) * kDeltaTileW;
    int above = 0;
    for (int y = 0; y < h && ok; y++, row += p.row_bytes) {
      int mask = 0;
      ok = take(delta_mask_context(y == 0, static_cast<unsigned>(above)), &mask) &&
           (mask >> groups) == 0;
      for (int g = 0; g < groups && ok; g++) {
        const int x0 = g * kDeltaGroupBytes, x1 = min(w, x0 + kDeltaGroupBytes);
        if (!(mask & (1 << g))) {
          for (int x = x0; x < x1; x++)
            row[x] = 0;
          continue;
        }
        for (int x = x0; x < x1 && ok; x++) {
          const DeltaSymbolCoding c =
              delta_symbol_coding(mode, x >= p.pixel_bytes ? delta_unfold(row[x - p.pixel_bytes]) : 0,
                                  y > 0 ? delta_unfold(row[x - p.row_bytes]) : 0);
          int v = 0;
          ok = take(c.context, &v);
          row[x] = static_cast<uint8_t>(c.flip ? delta_flip_symbol(v, a.range) : v);
        }
      }
      above = mask;
    }
    n += static_cast<uint64_t>(w) * h;
  }
  if (!ok || !reader.finished_cleanly())
    atomicMin(a.verdict, li);
  atomicAdd(reinterpret_cast<unsigned long long*>(a.verdict + 2), static_cast<unsigned long long>(n));
}

void set_planes(const DeltaLayout& layout, CountPlane (&planes)[kMaxPlanes]) {
  for (int i = 0; i < layout.n_planes; i++)
    planes[i] = {layout.plane_offset[i], layout.planes[i].row_bytes, layout.planes[i].height,
                 layout.planes[i].pixel_bytes};
}

unsigned blocks(size_t items, unsigned per_block) {
  return static_cast<unsigned>((items + per_block - 1) / per_block);
}

}  // namespace

Status delta_lanes_count_cuda(const DeltaLayout& layout, const DeltaLaneDevice* lanes,
                              size_t n_lanes, const uint8_t* symbols, const uint8_t* modes,
                              bool keyframe, int range, uint16_t* pairs, uint32_t* pair_count,
                              uint32_t* histogram, StreamHandle stream) {
  if (n_lanes == 0)
    return Status::ok();
  CountArgs a{};
  set_planes(layout, a.planes);
  a.lanes = lanes;
  a.n_lanes = static_cast<unsigned>(n_lanes);
  a.symbols = symbols;
  a.modes = modes;
  a.keyframe = keyframe;
  a.range = range;
  a.pairs = pairs;
  a.pair_count = pair_count;
  a.histogram = histogram;
  lanes_count<<<blocks(n_lanes, kCountWarps), kCountWarps * 32, 0, stream>>>(a);
  CUDAFX_CUDA_TRY(cudaGetLastError());
  return Status::ok();
}

Status delta_lanes_code_cuda(const DeltaLaneDevice* lanes, size_t n_lanes, const uint16_t* pairs,
                             const uint32_t* pair_count, const DeltaCodingEntry* coding,
                             uint8_t* room, uint32_t* sizes, StreamHandle stream) {
  if (n_lanes == 0)
    return Status::ok();
  // 32 threads a block: the lanes are few (about 4 000 at 2160p RGBA) and
  // long, so they are spread over as many SMs as they fill.
  lanes_code<<<blocks(n_lanes, 32), 32, 0, stream>>>(lanes, static_cast<unsigned>(n_lanes), pairs,
                                                     pair_count, coding, room, sizes);
  CUDAFX_CUDA_TRY(cudaGetLastError());
  return Status::ok();
}

Status delta_lanes_decode_cuda(const DeltaLayout& layout, const DeltaLaneDevice* lanes,
                               size_t n_lanes, const uint32_t* lane_begin, const uint8_t* data,
                               const uint32_t* slots, const int32_t* alphabet, bool keyframe,
                               int range, uint8_t* symbols, uint8_t* modes, uint32_t* verdict,
                               StreamHandle stream) {
  if (n_lanes == 0)
    return Status::ok();
  DecodeArgs a{};
  set_planes(layout, a.planes);
  a.lanes = lanes;
  a.n_lanes = static_cast<unsigned>(n_lanes);
  a.lane_begin = lane_begin;
  a.data = data;
  a.slots = slots;
  a.alphabet = alphabet;
  a.keyframe = keyframe;
  a.range = range;
  a.symbols = symbols;
  a.modes = modes;
  a.verdict = verdict;
  lanes_decode<<<blocks(n_lanes, 32), 32, 0, stream>>>(a);
  CUDAFX_CUDA_TRY(cudaGetLastError());
  return Status::ok();
}

Status delta_lanes_pack_cuda(const DeltaLaneDevice* lanes, size_t n_lanes, const uint8_t* room,
                             const uint32_t* sizes, const uint32_t* offsets, uint8_t* packed,
                             StreamHandle stream) {
  if (n_lanes == 0)
    return Status::ok();
  lanes_pack<<<blocks(n_lanes, 8), 256, 0, stream>>>(lanes, static_cast<unsigned>(n_lanes), room,
                                                     sizes, offsets, packed);
  CUDAFX_CUDA_TRY(cudaGetLastError());
  return Status::ok();
}

}  // namespace cudafx
