// The kernels of format 4's entropy stage on a CUDA device
// (delta_tile_entropy_cuda.hpp). The order of the pairs, their contexts and
// the rANS arithmetic are the CPU coder's (delta_tile_entropy.cpp,
// delta_predict_math.hpp, rans.hpp), so the streams are the same bytes.
#include <cuda_runtime.h>

#include <algorithm>

#include "common/block_scan.cuh"
#include "common/cuda_check.hpp"
#include "cudafx/delta_predict_math.hpp"
#include "cudafx/delta_tile_entropy_cuda.hpp"
#include "delta/rans.hpp"

namespace cudafx {
static_assert(kRansScale == 4096 && kDeltaLaneTableBytes % 16 == 0,
              "the decoder's table image: 4 096 slots a context, copied 16 bytes at a time");
static_assert(sizeof(RansSymbol) == sizeof(DeltaCodingEntry) &&
                  alignof(RansSymbol) <= alignof(DeltaCodingEntry),
              "the coding table's entries are RansSymbols");
namespace {

constexpr unsigned kFull = 0xffffffffu;
constexpr int kHistogram = kDeltaContexts * 256;
constexpr int kCountWarps = 8;  // lanes a block of the counting kernel
static_assert(kDeltaTileW == 64 && kDeltaGroupBytes == 8,
              "a warp takes a tile row two bytes a thread, a group four threads");
static_assert(kDeltaLaneTiles <= 32, "a thread holds a tile's mode");

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

// The pair of symbol v with its left (kl) and upper (ku) neighbours'
// symbols (0 where the tile has none), as the CPU's coding_at and walk_lane
// make it.
__device__ __forceinline__ uint16_t symbol_pair(int v, int left, bool has_left, int up,
                                                bool has_up, int mode, int range) {
  const DeltaSymbolCoding k = delta_symbol_coding(mode, has_left ? delta_unfold(left) : 0,
                                                  has_up ? delta_unfold(up) : 0);
  return static_cast<uint16_t>(k.context << 8 | (k.flip ? delta_flip_symbol(v, range) : v));
}

// One warp a lane: per tile its mode (delta frames), then per row its mask
// (the groups of 8 bytes holding a non-zero symbol) and the symbols of those
// groups in x order. Thread t holds bytes 2t and 2t + 1 of the row, so
// group g is threads 4g .. 4g + 3, and each symbol's place in the sequence
// is the number of symbols of lower threads. A tile's rows are loaded
// before its first row is counted, the neighbours then come from
// registers (above: the thread's own last row; left: a shuffle): loaded row
// by row, each row waited for its load (ncu, H100, 2160p RGBA: 32 % of the
// kernel's stall samples, 0.20 ms a frame).
__global__ void __launch_bounds__(kCountWarps * 32) lanes_count(const __grid_constant__ CountArgs a) {
  __shared__ uint32_t hist[kHistogram];
  for (int i = threadIdx.x; i < kHistogram; i += blockDim.x)
    hist[i] = 0;
  __syncthreads();
  const int t = static_cast<int>(threadIdx.x % 32);
  const unsigned li = blockIdx.x * kCountWarps + threadIdx.x / 32;
  if (li < a.n_lanes) {
    const DeltaLaneDevice lane = a.lanes[li];
    const CountPlane p = a.planes[lane.plane];
    const int n_tiles = static_cast<int>(lane.tiles);  // <= kDeltaLaneTiles: a thread's mode each
    const int my_mode = t < n_tiles ? a.modes[lane.first_tile + t] : kDeltaSkip;
    // A lane is coded unless all its tiles are skipped.
    const bool present = a.keyframe || __any_sync(kFull, my_mode != kDeltaSkip);
    uint16_t* seq = a.pairs + lane.pairs_offset;
    uint32_t n = 0;  // the same in every thread
    const auto emit = [&](uint32_t at, uint16_t pair) {
      seq[at] = pair;
      atomicAdd(&hist[pair], 1u);
    };
    const int c = p.pixel_bytes, x = 2 * t;
    // Where the left neighbours (bytes x - c and x + 1 - c) are: the thread
    // and which of its two bytes.
    const int src0 = (t - (c + 1) / 2) & 31, src1 = (t - c / 2) & 31;
    const int slot0 = 8 * (c & 1), slot1 = 8 * (1 - (c & 1));
    const int h = min(kDeltaTileH, p.height - static_cast<int>(lane.ty) * kDeltaTileH);
    const uint8_t* band = a.symbols + p.offset +
                          static_cast<size_t>(lane.ty) * kDeltaTileH * p.row_bytes;
    for (int tile = 0; present && tile < n_tiles; tile++) {
      const int mode = __shfl_sync(kFull, my_mode, tile);
      if (!a.keyframe) {
        if (t == 0)
          emit(n, static_cast<uint16_t>(kDeltaModeContext << 8 | mode));
        n++;
      }
      if (mode == kDeltaSkip)
        continue;
      const int tx = static_cast<int>(lane.tx0) + tile;
      const int w = min(kDeltaTileW, p.row_bytes - tx * kDeltaTileW);
      const bool in0 = x < w, in1 = x + 1 < w;
      // The thread's two bytes of each row (0 outside the tile).
      uint32_t v[kDeltaTileH];
      const uint8_t* row = band + static_cast<size_t>(tx) * kDeltaTileW + x;
#pragma unroll
      for (int y = 0; y < kDeltaTileH; y++, row += p.row_bytes)
        v[y] = (y < h && in0 ? row[0] : 0u) | (y < h && in1 ? row[1] : 0u) << 8;
      unsigned above = 0;
#pragma unroll
      for (int y = 0; y < kDeltaTileH; y++) {
        if (y >= h)  // the same in every thread
          break;
        const uint32_t cur = v[y], up = y > 0 ? v[y - 1] : 0u;
        const unsigned nz = __ballot_sync(kFull, cur != 0);
        unsigned mask = 0;
#pragma unroll
        for (int g = 0; g < 8; g++)
          mask |= ((nz >> (4 * g)) & 0xfu) ? 1u << g : 0u;
        const bool set = (mask >> (t / 4)) & 1;
        const bool e0 = in0 && set, e1 = in1 && set;
        const unsigned b0 = __ballot_sync(kFull, e0), b1 = __ballot_sync(kFull, e1);
        const uint32_t w0 = __shfl_sync(kFull, cur, src0), w1 = __shfl_sync(kFull, cur, src1);
        const unsigned lower = (1u << t) - 1;
        uint32_t at = n + 1 + __popc(b0 & lower) + __popc(b1 & lower);
        if (t == 0)
          emit(n, static_cast<uint16_t>(delta_mask_context(y == 0, above) << 8 | mask));
        if (e0)
          emit(at++, symbol_pair(cur & 0xff, w0 >> slot0 & 0xff, x >= c, up & 0xff, y > 0, mode,
                                 a.range));
        if (e1)
          emit(at, symbol_pair(cur >> 8 & 0xff, w1 >> slot1 & 0xff, x + 1 >= c, up >> 8 & 0xff,
                               y > 0, mode, a.range));
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

// RansWriter's arithmetic and bytes (rans.hpp) with the bytes gathered in a
// register and stored a word at a time below an aligned end. RansWriter
// stores both candidate bytes of each state at every symbol (branch-free on
// a CPU); on the device those were four byte stores a step from each of
// ~4 000 threads, which kept L2 busy (64 % of its throughput) and the
// lanes' chains waiting behind them. Same bytes.
class RansWordWriter {
 public:
  __device__ explicit RansWordWriter(uint8_t* end) : w_(reinterpret_cast<uint32_t*>(end)) {}
  __device__ __forceinline__ void put(const RansSymbol& sym) {
    const uint32_t n = rans_shed_bytes(cur_, sym);
    shed(cur_, n);
    store_word();
    const uint32_t x = cur_ >> (8 * n);
    cur_ = other_;
    other_ = rans_code_step(x, sym);
  }
  // put(a) then put(b) (RansWriter::put2).
  __device__ __forceinline__ void put2(const RansSymbol& a, const RansSymbol& b) {
    const uint32_t na = rans_shed_bytes(cur_, a), nb = rans_shed_bytes(other_, b);
    shed(cur_, na);
    shed(other_, nb);
    store_word();
    const uint32_t xa = cur_ >> (8 * na), xb = other_ >> (8 * nb);
    cur_ = rans_code_step(xa, a);
    other_ = rans_code_step(xb, b);
  }
  // RansWriter::finish: the pending bytes, then the final states.
  __device__ uint8_t* finish() {
    uint8_t* p = reinterpret_cast<uint8_t*>(w_);
    for (int i = pending_ - 1; i >= 0; i--) *--p = static_cast<uint8_t>(acc_ >> (8 * i));
    for (const uint32_t x : {cur_, other_})
      for (int i = 0; i < 4; i++) *--p = static_cast<uint8_t>(x >> (8 * i));
    return p;
  }

 private:
  // The n (0..2) bytes state x sheds, the low one first, appended to the
  // pending ones (the oldest highest: it belongs at the highest address).
  __device__ __forceinline__ void shed(uint32_t x, uint32_t n) {
    const uint32_t swapped = (x & 0xffu) << 8 | (x >> 8 & 0xffu);
    acc_ = acc_ << (8 * n) | swapped >> (16 - 8 * n);
    pending_ += n;
  }
  // At most 7 bytes pending after a step: the oldest 4 go down as a word.
  __device__ __forceinline__ void store_word() {
    if (pending_ >= 4) {
      pending_ -= 4;
      *--w_ = static_cast<uint32_t>(acc_ >> (8 * pending_));
    }
  }
  uint32_t cur_ = kRansLow, other_ = kRansLow;
  uint32_t* w_;
  uint64_t acc_ = 0;
  uint32_t pending_ = 0;
};

// A thread a lane: its pairs last first, as the CPU codes them. The lanes
// are few and long (about 4 000 at 2160p RGBA, up to ~8 000 pairs each), so
// the kernel's time is one lane's chain of state arithmetic: nothing else
// may wait in it. A pair's entry (a RansSymbol: no division) depends only on
// the pair, so the entries are loaded kAhead steps before they are coded
// and the pairs kAhead steps before that, and they are coded two at a time
// (put2: the two states' arithmetic side by side). (With the entries
// loaded at their step, their latency was the kernel's largest stall: 36 %
// of the samples, 0.45 ms a 2160p RGBA frame. A copy of the 90 KB table in
// each block's shared memory measured no faster than reading it through
// the cache, when the bytes were still stored one by one.)
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
  uint8_t* end = room + lane.room_end;  // a multiple of 4 (device_lanes)
  RansWordWriter writer(end);
  uint32_t k = n;
  if (k & 1)  // an odd one first, then two at a time
    writer.put(table[pairs[lane.pairs_offset + --k]]);
  // Step i codes pair k - 1 - i. At step i, entry[i % kAhead] holds step
  // i's entry and pair[i % kAhead] step i + kAhead's pair (0, a valid
  // index, past the end).
  const uint16_t* __restrict__ seq = pairs + lane.pairs_offset;
  const auto pair_at = [&](uint32_t step) -> uint32_t { return step < k ? seq[k - 1 - step] : 0u; };
  RansSymbol entry[kAhead];
  uint32_t pair[kAhead];
#pragma unroll
  for (int j = 0; j < kAhead; j++) {
    entry[j] = table[pair_at(j)];
    pair[j] = pair_at(j + kAhead);
  }
  for (uint32_t i = 0; i < k;) {
#pragma unroll
    for (int j = 0; j < kAhead; j += 2, i += 2) {
      if (i >= k)
        break;
      const RansSymbol a = entry[j], b = entry[j + 1];
      entry[j] = table[pair[j]];
      entry[j + 1] = table[pair[j + 1]];
      pair[j] = pair_at(i + 2 * kAhead);
      pair[j + 1] = pair_at(i + 2 * kAhead + 1);
      writer.put2(a, b);
    }
  }
  sizes[li] = static_cast<uint32_t>(end - writer.finish());
}

// One block: where each lane's stream goes in the packed frame (the sizes
// before it summed) and, at offsets[n], the total.
constexpr int kScanThreads = 1024;
__global__ void __launch_bounds__(kScanThreads)
    lanes_offsets(const uint32_t* __restrict__ sizes, unsigned n, uint32_t* __restrict__ offsets) {
  __shared__ unsigned warp_sums[32];
  const unsigned per = (n + kScanThreads - 1) / kScanThreads;
  const unsigned begin = min(n, threadIdx.x * per), end = min(n, begin + per);
  uint32_t sum = 0;
  for (unsigned i = begin; i < end; i++) sum += sizes[i];
  uint32_t before = block_exclusive_scan(sum, warp_sums);
  for (unsigned i = begin; i < end; i++) {
    offsets[i] = before;
    before += sizes[i];
  }
  if (threadIdx.x == kScanThreads - 1)  // the last thread's range ends at the total
    offsets[n] = before;
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

// The packed frame's first min(*total, capacity) bytes into pinned host
// memory, 16 bytes a store (both buffers are 16-byte aligned).
__global__ void copy_out(const uint8_t* __restrict__ packed, const uint32_t* __restrict__ total,
                         size_t capacity, uint8_t* __restrict__ host) {
  const size_t n = min(static_cast<size_t>(*total), capacity);
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  const size_t first = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  for (size_t i = first; i < n / 16; i += stride)
    reinterpret_cast<uint4*>(host)[i] = reinterpret_cast<const uint4*>(packed)[i];
  for (size_t i = n / 16 * 16 + first; i < n; i += stride)
    host[i] = packed[i];
}

// zlib's CRC-32 of each 64 KB piece, a block of kCrcThreads a piece: each
// thread takes 256 bytes eight bytes a step ("slicing by 8": the eight
// tables in shared memory, built by each block from the polynomial), then
// the block joins its parts pairwise in eight rounds as crc32_combine does:
// CRC(a b) = CRC(a) x^(8 |b|) mod P + CRC(b), the product in GF(2)[x] mod
// the polynomial P (zlib's multmodp), x^(8 |b|) from the powers x^(2^k)
// (zlib's x2n_table, made on the host). A thread a whole 4 KB piece took
// ~0.1 ms at any frame size: 512 dependent steps, few threads.
constexpr int kCrcThreads = 256;
constexpr size_t kCrcPartBytes = 256;
static_assert(kDeltaCrcPieceBytes == kCrcThreads * kCrcPartBytes && kCrcPartBytes % 8 == 0,
              "a piece is a block's parts, each of eight-byte steps");
constexpr uint32_t kCrcPolynomial = 0xedb88320u;  // reflected, as zlib

// a b mod P, CRC-32's bit order (x^0 is the top bit).
CUDAFX_HD uint32_t crc_multiply(uint32_t a, uint32_t b) {
  uint32_t p = 0;
  for (int k = 0; k < 32; k++) {
    p ^= (a & (0x80000000u >> k)) ? b : 0u;
    b = (b >> 1) ^ ((b & 1) ? kCrcPolynomial : 0u);
  }
  return p;
}

// x^(2^k) mod P for k = 0..31.
struct CrcPowers {
  uint32_t x2n[32];
};
CrcPowers crc_powers() {
  CrcPowers p;
  p.x2n[0] = 0x40000000u;  // x^1
  for (int k = 1; k < 32; k++) p.x2n[k] = crc_multiply(p.x2n[k - 1], p.x2n[k - 1]);
  return p;
}

// x^(8 n) mod P: what a CRC is multiplied by to move it past n bytes.
__device__ uint32_t crc_shift(const CrcPowers& powers, size_t n) {
  uint32_t p = 0x80000000u;  // x^0
  for (int k = 3; n; n >>= 1, k++)
    if (n & 1)
      p = crc_multiply(powers.x2n[k & 31], p);
  return p;
}

// Slicing by 8: a 4-byte word w's part of the CRC register's step through
// it, the word `first` (4: the first of eight bytes, 0: the second) ...
__device__ __forceinline__ uint32_t crc_word(const uint32_t (*table)[256], int first, uint32_t w) {
  return table[first + 3][w & 0xff] ^ table[first + 2][(w >> 8) & 0xff] ^
         table[first + 1][(w >> 16) & 0xff] ^ table[first][w >> 24];
}
// ... the register after eight bytes whose words are lo (the register
// already XORed into it) and hi; and after one byte.
__device__ __forceinline__ uint32_t crc_step8(const uint32_t (*table)[256], uint32_t lo,
                                              uint32_t hi) {
  return crc_word(table, 4, lo) ^ crc_word(table, 0, hi);
}
__device__ __forceinline__ uint32_t crc_step1(const uint32_t (*table)[256], uint32_t c,
                                              uint32_t byte) {
  return table[0][(c ^ byte) & 0xff] ^ (c >> 8);
}

__global__ void __launch_bounds__(kCrcThreads)
    crc_pieces(const uint8_t* __restrict__ data, const uint32_t* __restrict__ total,
               uint32_t* __restrict__ crcs, const CrcPowers powers) {
  __shared__ uint32_t table[8][256];
  __shared__ uint32_t part_crc[kCrcThreads];
  const size_t size = *total;
  const size_t start = blockIdx.x * kDeltaCrcPieceBytes;
  if (start >= size)
    return;  // past the end (launched for the largest frame)
  for (int i = threadIdx.x; i < 256; i += blockDim.x) {
    uint32_t c = static_cast<uint32_t>(i);
    for (int k = 0; k < 8; k++)
      c = (c >> 1) ^ ((c & 1) ? kCrcPolynomial : 0u);
    table[0][i] = c;
  }
  __syncthreads();
  for (int t = 1; t < 8; t++) {
    for (int i = threadIdx.x; i < 256; i += blockDim.x)
      table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xffu];
    __syncthreads();
  }
  // This thread's part: its CRC (0 for a part past the end, never joined).
  const int part = threadIdx.x;
  const size_t at = start + part * kCrcPartBytes;
  uint32_t c = 0;
  if (at < size) {
    const size_t n = min(kCrcPartBytes, size - at);
    const uint8_t* p = data + at;  // 8-byte aligned: a device buffer, parts of 256 bytes
    c = 0xffffffffu;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      const uint2 w = *reinterpret_cast<const uint2*>(p + i);
      c = crc_step8(table, w.x ^ c, w.y);
    }
    for (; i < n; i++)
      c = crc_step1(table, c, p[i]);
    c ^= 0xffffffffu;
  }
  part_crc[part] = c;
  __syncthreads();
  // Round r joins parts of 2^r into parts of 2^(r+1): the left one's CRC
  // moved past the right one's bytes (x^(2^(r+11)) when it is whole), the
  // right one's added. A right part past the end leaves the left as it is.
  for (int r = 0, width = 1; width < kCrcThreads; r++, width *= 2) {
    if (part % (2 * width) == 0) {
      const size_t right = start + (part + width) * kCrcPartBytes;
      if (right < size) {
        const size_t n = min(width * kCrcPartBytes, size - right);
        const uint32_t shift =
            n == width * kCrcPartBytes ? powers.x2n[r + 11] : crc_shift(powers, n);
        part_crc[part] = crc_multiply(shift, part_crc[part]) ^ part_crc[part + width];
      }
    }
    __syncthreads();
  }
  if (part == 0)
    crcs[blockIdx.x] = part_crc[0];
}

struct DecodeArgs {
  CountPlane planes[kMaxPlanes];
  const DeltaLaneDevice* lanes;
  unsigned n_lanes;
  const uint32_t* lane_begin;
  const uint8_t* data;
  const uint8_t* tables;  // kDeltaLaneTableBytes (an absent context's spans: kDeltaAbsentSpan)
  unsigned lanes_per_block;
  int keyframe, range;
  uint8_t* symbols;
  uint8_t* modes;
  uint32_t* verdict;
};

// At most 32 lanes a block; the rows take two tile rows of 8 words a lane.
// Four lanes a warp (2160p, H100: 1.34 ms a decoded RGBA frame against 1.35
// with 8, 1.41 with 2, 1.72 with 1, 1.82 with 32; NV12 within 3 % from 1 to
// 4): a warp's lanes part where their masks differ and issue both ways, so
// few lanes a warp, but a warp alone on a scheduler waits on every
// dependent step, so several warps a scheduler.
constexpr int kDecodeLanesPerBlock = 32;
constexpr int kDecodeLanesPerWarp = 4;
constexpr size_t kDecodeRowBytesPerLane = 2 * 8 * sizeof(uint64_t);

// n bytes of `word` (the first in its low bits) to `to`.
__device__ __forceinline__ void store_group(uint8_t* to, uint64_t word, int n) {
  if (n == 8 && (reinterpret_cast<uintptr_t>(to) & 7) == 0) {
    *reinterpret_cast<uint64_t*>(to) = word;
    return;
  }
  for (int i = 0; i < n; i++)
    to[i] = static_cast<uint8_t>(word >> (8 * i));
}
// n zero bytes to `to`.
__device__ __forceinline__ void zero_row(uint8_t* to, int n) {
  if (n == kDeltaTileW && (reinterpret_cast<uintptr_t>(to) & 7) == 0) {
#pragma unroll
    for (int i = 0; i < kDeltaTileW / 8; i++)
      reinterpret_cast<uint64_t*>(to)[i] = 0;
    return;
  }
  for (int i = 0; i < n; i++)
    to[i] = 0;
}

// kDecodeLanesPerWarp lanes a warp, as the CPU decoder's lane loop
// (delta_tile_entropy.cpp): per tile its mode (delta frames), then per row
// its mask and the symbols of the groups it sets (zeros in the others),
// each in the context its left and upper neighbours give. A lane is one
// chain of dependent steps, so the kernel's time is its longest lane's
// symbols times the instructions a symbol: everything a step needs is kept
// in registers or shared memory and the common step (a value inside a
// group) is one straight path:
//  - the coded bytes: `p` the next, the two from there loaded a step ahead
//    of the renormalisation that may take them; the lane's end is checked
//    at the end of each group (past it the stream is damaged: the CPU reader
//    would have needed a byte past the lane's end; the bytes read past it,
//    at most 17, are of the 64 the caller's buffer has there);
//  - the tables: a value from its slot, then its span (start | freq << 16;
//    bit 31 marks an absent context, collected in `bad`);
//  - the context: both neighbours' magnitudes and signs a byte each, summed
//    by dp4a;
//  - the group's bytes: shifted in at the top of (hi:lo), so that the left
//    neighbour (1-4 bytes back, across groups too) is one byte of `hi`; the
//    row above: a word a group from shared memory (`rows`: two tile rows of
//    8 words a lane, by row parity), shifted out a byte a value.
template <bool kSharedTables>
__global__ void __launch_bounds__(32 * kDecodeLanesPerBlock / kDecodeLanesPerWarp)
    lanes_decode(const __grid_constant__ DecodeArgs a) {
  // Shared memory: the tables (when they are kept there) at its start, so
  // that a slot's address is the context and the slot and nothing else,
  // then the rows.
  extern __shared__ uint4 shared[];
  const uint8_t* tables = a.tables;
  uint64_t* rows = reinterpret_cast<uint64_t*>(shared);
  if constexpr (kSharedTables) {
    const uint4* from = reinterpret_cast<const uint4*>(a.tables);
    constexpr int kWords = kDeltaLaneTableBytes / sizeof(uint4);
#pragma unroll 4
    for (int i = threadIdx.x; i < kWords; i += blockDim.x)
      shared[i] = __ldg(from + i);
    __syncthreads();
    tables = reinterpret_cast<const uint8_t*>(shared);
    rows = reinterpret_cast<uint64_t*>(shared + kWords);
  }
  const uint8_t* slot_values = tables;
  const uint32_t* spans = reinterpret_cast<const uint32_t*>(tables + kDeltaLaneSlotBytes);
  const unsigned t = threadIdx.x / 32 * kDecodeLanesPerWarp + threadIdx.x % 32;  // the block's lane
  const unsigned li = blockIdx.x * a.lanes_per_block + t;
  if (threadIdx.x % 32 >= kDecodeLanesPerWarp || t >= a.lanes_per_block || li >= a.n_lanes)
    return;
  const DeltaLaneDevice lane = a.lanes[li];
  const uint32_t begin = a.lane_begin[li], end = a.lane_begin[li + 1];
  uint8_t* modes = a.modes + lane.first_tile;
  if (begin == end) {
    for (unsigned i = 0; i < lane.tiles; i++)
      modes[i] = kDeltaSkip;
    return;
  }
  // The lane's bytes into L1 now rather than a miss at a time.
  for (uint32_t at = begin & ~127u; at < end; at += 128)
    asm volatile("prefetch.global.L1 [%0];" ::"l"(a.data + at));
  const CountPlane plane = a.planes[lane.plane];
  // __byte_perm's selector of the neighbours: byte 0 the left one (byte 4 -
  // pixel_bytes of hi), byte 1 the one above (byte 0 of above_lo).
  uint32_t left_up = 0x0040u | static_cast<uint32_t>(4 - plane.pixel_bytes);
  asm("" : "+r"(left_up));  // kept in a register, not worked out again each step

  // The reader: `p` the next byte, b0 and b1 the two from there, loaded a
  // step ahead of the renormalisation that may take them.
  const uint8_t* p = a.data + begin;
  const uint8_t* const stop = a.data + end;
  const auto left = [&]() { return static_cast<int>(stop - p); };
  uint32_t bad = 0;
  const auto read_state = [&]() {
    uint32_t x = 0;
    for (int i = 0; i < 4; i++)
      x = x << 8 | __ldg(p + i);
    p += 4;
    bad |= (x < kRansLow || x >= (kRansLow << 8)) ? 0x80000000u : 0u;
    return x;
  };
  uint32_t cur = read_state();
  uint32_t other = read_state();
  uint32_t b0 = __ldg(p), b1 = __ldg(p + 1);
  const auto take = [&](uint32_t ctx) -> uint32_t {
    const uint32_t slot = cur & (kRansScale - 1);
    const uint32_t v = slot_values[ctx << kRansScaleBits | slot];
    const uint32_t span = spans[ctx << 8 | v];
    bad |= span;
    const uint32_t x = (span >> 16) * (cur >> kRansScaleBits) + slot - (span & 0xffffu);
    // x >= 2^11 (freq >= 1, cur >= 2^23): two bytes at most bring it back.
    const uint32_t shift = (x < kRansLow ? 8u : 0u) + (x < (kRansLow >> 8) ? 8u : 0u);
    cur = other;
    other = (x << shift) | ((b0 << 8 | b1) >> (16 - shift));
    p += shift >> 3;
    b0 = __ldg(p);
    b1 = __ldg(p + 1);
    return v;
  };

  enum { kMode, kMask, kValue };
  int kind = kMode, context_base = 0;  // the tile's: its mode's symbol contexts
  unsigned tile = 0;
  int w = 0, h = 0, groups = 0, y = 0, g = 0, j = 0, glen = 0;
  unsigned mask = 0, row_mask = 0, above_mask = 0;  // mask: the row's groups still to come
  uint32_t lo = 0, hi = 0, above_lo = 0, above_hi = 0;
  uint8_t* row = nullptr;
  uint64_t n = 0;
  bool damaged = false;
  const auto begin_tile = [&](int mode) {
    context_base = delta_symbol_coding(mode, 0, 0).context;  // class 0's
    const int tx = static_cast<int>(lane.tx0 + tile);
    w = min(kDeltaTileW, plane.row_bytes - tx * kDeltaTileW);
    h = min(kDeltaTileH, plane.height - static_cast<int>(lane.ty) * kDeltaTileH);
    groups = (w + kDeltaGroupBytes - 1) / kDeltaGroupBytes;
    row = a.symbols + plane.offset + static_cast<size_t>(lane.ty) * kDeltaTileH * plane.row_bytes +
          static_cast<size_t>(tx) * kDeltaTileW;
    y = 0;
    kind = kMask;
    n += static_cast<uint64_t>(w) * h;
  };
  const auto row_word = [&](int parity, int group) -> uint64_t& {
    return rows[(parity * 8 + group) * a.lanes_per_block + t];
  };
  const auto start_group = [&](int group) {
    if (group != g + 1)
      lo = hi = 0;  // the groups between are zeros
    g = group;
    j = 0;
    glen = min(kDeltaGroupBytes, w - g * kDeltaGroupBytes);
    const uint64_t above = y > 0 ? row_word((y - 1) & 1, g) : 0;
    above_lo = static_cast<uint32_t>(above);
    above_hi = static_cast<uint32_t>(above >> 32);
  };
  if (a.keyframe) {
    modes[0] = kDeltaSpatial;
    begin_tile(kDeltaSpatial);
  }
  for (;;) {
    if (kind == kValue) {
      do {
        // delta_symbol_coding on both neighbours at once, a byte each:
        // |k| = (m >> 1) + (m & 1), k's sign the parity; their sum and
        // signed sum by dp4a.
        const uint32_t lu = __byte_perm(hi, above_lo, left_up);
        const uint32_t odd = lu & 0x0101u;
        const uint32_t magnitude = ((lu >> 1) & 0x7f7fu) + odd;
        const uint32_t sign = odd * 0xfeu + 0x0101u;  // a byte each: 1, or -1 when odd
        int sum;
        asm("dp4a.u32.s32 %0, %1, %2, %3;" : "=r"(sum) : "r"(magnitude), "r"(sign), "r"(0));
        const int activity = static_cast<int>(__dp4a(magnitude, 0x0101u, 0u));
        above_lo = __funnelshift_r(above_lo, above_hi, 8);
        above_hi >>= 8;
        uint32_t v = take(static_cast<uint32_t>(context_base + delta_activity_class(activity)));
        // delta_flip_symbol without a branch (v < range: the tables'
        // alphabets are checked): odd v up unless at the top, even v down, 0
        // stays (v - 1 wraps above range).
        const uint32_t flipped = v + 2 * (v & 1) - 1;
        v = sum < 0 ? (flipped < static_cast<uint32_t>(a.range) ? flipped : v) : v;
        lo = __funnelshift_r(lo, hi, 8);
        hi = __funnelshift_r(hi, v, 8);
      } while (++j < glen);
      if (left() < 0) {
        damaged = true;
        break;
      }
      // The group's bytes are the top glen of (hi:lo).
      const uint64_t word = (static_cast<uint64_t>(hi) << 32 | lo) >> (8 * (kDeltaGroupBytes - glen));
      store_group(row + g * kDeltaGroupBytes, word, glen);
      row_word(y & 1, g) = word;
      if (mask) {
        const int following = __ffs(mask) - 1;
        mask &= mask - 1;
        start_group(following);
        continue;
      }
    } else if (kind == kMask) {
      const uint32_t v = take(static_cast<uint32_t>(delta_mask_context(y == 0, above_mask)));
      if (left() < 0 || (v >> groups) != 0) {
        damaged = true;
        break;
      }
      zero_row(row, w);  // the groups the mask leaves clear stay zero
#pragma unroll
      for (int i = 0; i < 8; i++)
        row_word(y & 1, i) = 0;
      row_mask = v;
      if (v) {
        kind = kValue;
        g = -1;
        lo = hi = 0;  // nothing left of the row's first byte
        mask = v & (v - 1);
        start_group(__ffs(v) - 1);
        continue;
      }
    } else {
      const uint32_t v = take(kDeltaModeContext);
      if (left() < 0) {
        damaged = true;
        break;
      }
      modes[tile] = static_cast<uint8_t>(v);
      if (v != kDeltaSkip) {
        begin_tile(static_cast<int>(v));
      } else if (++tile == lane.tiles) {
        break;
      }
      continue;
    }
    // The row is complete.
    above_mask = row_mask;
    row += plane.row_bytes;
    if (++y < h) {
      kind = kMask;
      continue;
    }
    if (++tile == lane.tiles)
      break;
    if (a.keyframe) {
      modes[tile] = kDeltaSpatial;
      begin_tile(kDeltaSpatial);
    } else {
      kind = kMode;
    }
  }
  // As RansReader::finished_cleanly: the bytes taken exactly, both states
  // back where the encoder started them.
  if (damaged || (bad >> 31) || left() != 0 || cur != kRansLow || other != kRansLow)
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

bool delta_lanes_decode_shared_tables_fit() {
  int device = 0, most = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) !=
          cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  const size_t bytes = kDeltaLaneTableBytes + kDecodeLanesPerBlock * kDecodeRowBytesPerLane;
  if (static_cast<size_t>(most) < bytes)
    return false;
  if (cudaFuncSetAttribute(lanes_decode<true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(bytes)) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return true;
}

Status delta_lanes_decode_cuda(const DeltaLayout& layout, const DeltaLaneDevice* lanes,
                               size_t n_lanes, const uint32_t* lane_begin, const uint8_t* data,
                               const uint8_t* tables, bool shared_tables, bool keyframe, int range,
                               uint8_t* symbols, uint8_t* modes, uint32_t* verdict,
                               StreamHandle stream) {
  if (n_lanes == 0)
    return Status::ok();
  DecodeArgs a{};
  set_planes(layout, a.planes);
  a.lanes = lanes;
  a.n_lanes = static_cast<unsigned>(n_lanes);
  a.lane_begin = lane_begin;
  a.data = data;
  a.tables = tables;
  a.keyframe = keyframe;
  a.range = range;
  a.symbols = symbols;
  a.modes = modes;
  a.verdict = verdict;
  int device = 0, sms = 1;
  CUDAFX_CUDA_TRY(cudaGetDevice(&device));
  CUDAFX_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  // The lanes spread over every SM (a block an SM: the tables fill its
  // shared memory), up to 32 a block.
  a.lanes_per_block = static_cast<unsigned>(
      std::min<size_t>(kDecodeLanesPerBlock, (n_lanes + sms - 1) / sms));
  const unsigned grid = blocks(n_lanes, a.lanes_per_block);
  const unsigned threads = 32 * blocks(a.lanes_per_block, kDecodeLanesPerWarp);
  const size_t rows = a.lanes_per_block * kDecodeRowBytesPerLane;
  if (shared_tables)
    lanes_decode<true><<<grid, threads, kDeltaLaneTableBytes + rows, stream>>>(a);
  else
    lanes_decode<false><<<grid, threads, rows, stream>>>(a);
  CUDAFX_CUDA_TRY(cudaGetLastError());
  return Status::ok();
}

Status delta_lanes_offsets_cuda(const uint32_t* sizes, size_t n_lanes, uint32_t* offsets,
                                StreamHandle stream) {
  if (n_lanes > 0xffffffffu)
    return Status::invalid("delta lane offsets: too many lanes");
  lanes_offsets<<<1, kScanThreads, 0, stream>>>(sizes, static_cast<unsigned>(n_lanes), offsets);
  CUDAFX_CUDA_TRY(cudaGetLastError());
  return Status::ok();
}

Status delta_lanes_pack_cuda(const DeltaLaneDevice* lanes, size_t n_lanes, const uint8_t* room,
                             const uint32_t* sizes, const uint32_t* offsets, uint8_t* packed,
                             uint8_t* host, size_t host_capacity, StreamHandle stream) {
  if (n_lanes == 0)
    return Status::ok();
  if ((reinterpret_cast<uintptr_t>(packed) | reinterpret_cast<uintptr_t>(host)) & 15)
    return Status::invalid("delta lane packing: buffers must be 16-byte aligned");
  lanes_pack<<<blocks(n_lanes, 8), 256, 0, stream>>>(lanes, static_cast<unsigned>(n_lanes), room,
                                                     sizes, offsets, packed);
  CUDAFX_CUDA_TRY(cudaGetLastError());
  if (host_capacity > 0) {
    copy_out<<<264, 256, 0, stream>>>(packed, offsets + n_lanes, host_capacity, host);
    CUDAFX_CUDA_TRY(cudaGetLastError());
  }
  return Status::ok();
}

Status delta_crc_pieces_cuda(const uint8_t* data, const uint32_t* size, size_t max_size,
                             uint32_t* crcs, StreamHandle stream) {
  if (max_size == 0)
    return Status::ok();
  if (reinterpret_cast<uintptr_t>(data) & 7)
    return Status::invalid("delta CRC pieces: the data must be 8-byte aligned");
  const size_t pieces = (max_size + kDeltaCrcPieceBytes - 1) / kDeltaCrcPieceBytes;
  static const CrcPowers powers = crc_powers();
  crc_pieces<<<static_cast<unsigned>(pieces), kCrcThreads, 0, stream>>>(data, size, crcs, powers);
  CUDAFX_CUDA_TRY(cudaGetLastError());
  return Status::ok();
}

}  // namespace cudafx
