// CUDA backend of the fixed-point Gaussian (semantics in cudafx/gaussian.hpp,
// CPU twin in gaussian_fixed_cpu.cpp).
//
// One kernel: a block owns a tile 64 words (256 bytes) of a plane's rows wide
// and tile_h rows tall. It stages the tile's source bytes with their halo
// (R pixels left and right, R rows above and below, through the border rule)
// in shared memory, filters every staged row horizontally once, and then
// each thread sums the columns of one output word.
//
// Why it is fast: a word of 4 bytes is filtered as two words of 16-bit lanes
// (bytes 0 and 2, bytes 1 and 3), so one integer multiply-add serves two
// values; taps are symmetric, so the left and right bytes are added first
// (lanes stay below 2^16: the taps sum to 256). The vertical pass needs
// 32-bit sums; dp2a multiplies the upper and the lower row's 16-bit values
// by the same tap and adds both in one instruction. No floats, no
// conversions; each value's sum is exact, so the order differs from the
// CPU's and the bytes do not.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "common/cuda_check.hpp"
#include "gaussian/gaussian_fixed.hpp"

namespace cudafx {
namespace {

constexpr int kThreads = 256;
constexpr int kTileWords = 64;                        // output words a tile row
constexpr int kColumnGroups = kThreads / kTileWords;  // threads a word column
constexpr uint32_t kLanes = 0x00FF00FFu;              // bytes 0 and 2 of a word
constexpr size_t kSharedLimit = 48 * 1024;

struct FixedArgs {
  const uint8_t* src;
  uint8_t* dst;
  size_t src_pitch, dst_pitch;
  int width, height, row_bytes;
  BorderMode border;
  int src_words;    // source pointer and pitch allow aligned 4-byte loads
  int src_vectors;  // ... and 16-byte loads
  int dst_words;    // destination: 4-byte stores
  // Taps in 1/256, zero past the plane's radius up to the kernel's R.
  uint32_t qx[kGaussianFixedMaxRadius + 1];
  // The vertical centre tap as dp2a operands: min(q0, 255) in byte 0
  // (qy0_lo) or byte 1 (qy0_hi); qy0_extra when q0 is 256 (add 1x more).
  uint32_t qy0_lo, qy0_hi, qy0_extra;
  uint32_t qy_pair[kGaussianFixedMaxRadius + 1];  // qy[k] in bytes 0 and 1
};

// Bytes [g, g + 4) of source row ys (-1: a Constant-border row), bytes
// outside the row through the border rule; g is a multiple of 4.
template <int C>
__device__ __forceinline__ uint32_t load_word(const FixedArgs& a, int ys, int g) {
  if (ys < 0)
    return 0;
  const uint8_t* row = a.src + static_cast<size_t>(ys) * a.src_pitch;
  if (a.src_words && g >= 0 && g + 4 <= a.row_bytes)
    return __ldg(reinterpret_cast<const uint32_t*>(row + g));
  uint32_t w = 0;
#pragma unroll
  for (int i = 0; i < 4; i++) {
    const int gi = g + i;
    const int x = floor_div(gi, C);
    const int xs = border_index(x, a.width, a.border);
    const uint32_t b = xs < 0 ? 0u : __ldg(row + xs * C + (gi - x * C));
    w |= b << (8 * i);
  }
  return w;
}

// A chunk at an edge of the plane or from an unaligned source: 16 bytes one
// by one through the border rule. Out of line: inlined into the unrolled
// staging loop it made each kernel instance several times larger.
template <int C>
__device__ __noinline__ void stage_chunk_by_bytes(const FixedArgs& a, int ys, int g, uint32_t* d) {
  for (int i = 0; i < 4; i++)
    d[i] = load_word<C>(a, ys, g + 4 * i);
}

// Copies 16 staged bytes (source bytes [g, g + 16) of row ys, or of a
// Constant-border row) to shared memory at d. `fast`: the caller knows the
// chunk lies inside the row and the source allows 16-byte loads.
template <int C>
__device__ __forceinline__ void stage_chunk(const FixedArgs& a, int ys, int g, uint32_t* d,
                                            bool fast) {
  if (fast || (a.src_vectors && ys >= 0 && g >= 0 && g + 16 <= a.row_bytes)) {
    const uint8_t* p = a.src + static_cast<size_t>(ys) * a.src_pitch + g;
#if __CUDA_ARCH__ >= 800
    // Asynchronous copy: every chunk of the tile in flight at once.
    const unsigned sd = static_cast<unsigned>(__cvta_generic_to_shared(d));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(sd), "l"(p));
#else
    *reinterpret_cast<uint4*>(d) = __ldg(reinterpret_cast<const uint4*>(p));
#endif
    return;
  }
  stage_chunk_by_bytes<C>(a, ys, g, d);
}

// Byte `off` (compile-time once unrolled) of a row held as words in `w`, as
// the word of its 4 bytes.
template <int N>
__device__ __forceinline__ uint32_t word_at(const uint32_t (&w)[N], int off) {
  const int i = off / 4, s = off % 4;
  return s == 0 ? w[i] : __funnelshift_r(w[i], w[i + 1], 8 * s);
}

template <int C, int R, int TH>
__global__ void __launch_bounds__(kThreads)
    gaussian_fixed_kernel(const __grid_constant__ FixedArgs a) {
  constexpr int kHalo = (R * C + 15) / 16 * 16;        // staged bytes either side
  constexpr int kHaloWords = kHalo / 4;
  constexpr int kStaged = kTileWords + 2 * kHaloWords;  // staged words a row
  constexpr int kChunks = kStaged / 4;                  // 16-byte chunks a row
  constexpr int kRows = TH + 2 * R;                     // staged rows
  constexpr int kRowsPerThread = TH / kColumnGroups;
  extern __shared__ __align__(16) uint32_t smem[];
  uint32_t* raw = smem;                                  // kRows x kStaged
  uint2* mid = reinterpret_cast<uint2*>(smem + kRows * kStaged);  // kRows x kTileWords
  const int xb0 = blockIdx.x * kTileWords * 4;
  const int y0 = blockIdx.y * TH;
  const int g0 = xb0 - kHalo;

  // Stage: a tile away from every edge needs no border rule (one test a block).
  const bool inside = a.src_vectors && g0 >= 0 && g0 + kStaged * 4 <= a.row_bytes &&
                      y0 - R >= 0 && y0 + TH + R <= a.height;
  // Each thread keeps one chunk column and steps down the rows (no division
  // an item).
  constexpr int kRowStep = kThreads / kChunks;
  static_assert(kRowStep >= 1, "a staged row has more chunks than the block has threads");
  if (threadIdx.x < kRowStep * kChunks) {
    const int q = threadIdx.x % kChunks;
    for (int r = threadIdx.x / kChunks; r < kRows; r += kRowStep) {
      const int y = y0 - R + r;
      stage_chunk<C>(a, inside ? y : border_index(y, a.height, a.border), g0 + 16 * q,
                     raw + r * kStaged + 4 * q, inside);
    }
  }
#if __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
  __syncthreads();

  // Rows: 4 output words of a staged row an item. Output word j's first byte
  // is byte 4 (kHaloWords + j) of the item's window, the byte k pixels to its
  // left kC before it; all offsets are constants once unrolled.
  for (int item = threadIdx.x; item < kRows * (kTileWords / 4); item += kThreads) {
    const int r = item / (kTileWords / 4), qd = item - r * (kTileWords / 4);
    uint32_t w[4 + 2 * kHaloWords + 1];
    const uint4* src = reinterpret_cast<const uint4*>(raw + r * kStaged) + qd;
#pragma unroll
    for (int i = 0; i < (4 + 2 * kHaloWords) / 4; i++) {
      const uint4 v = src[i];
      w[4 * i] = v.x;
      w[4 * i + 1] = v.y;
      w[4 * i + 2] = v.z;
      w[4 * i + 3] = v.w;
    }
    w[4 + 2 * kHaloWords] = 0;  // never read: the last word is aligned
    uint32_t even[4], odd[4];
#pragma unroll
    for (int j = 0; j < 4; j++) {
      const int centre = 4 * (kHaloWords + j);
      const uint32_t c = w[centre / 4];
      even[j] = a.qx[0] * (c & kLanes);
      odd[j] = a.qx[0] * __byte_perm(c, 0, 0x4341);
#pragma unroll
      for (int k = 1; k <= R; k++) {
        const uint32_t l = word_at(w, centre - k * C);
        const uint32_t rr = word_at(w, centre + k * C);
        even[j] += a.qx[k] * ((l & kLanes) + (rr & kLanes));
        odd[j] += a.qx[k] * (__byte_perm(l, 0, 0x4341) + __byte_perm(rr, 0, 0x4341));
      }
    }
    uint4* out = reinterpret_cast<uint4*>(mid + r * kTileWords + 4 * qd);
    out[0] = make_uint4(even[0], odd[0], even[1], odd[1]);
    out[1] = make_uint4(even[2], odd[2], even[3], odd[3]);
  }
  __syncthreads();

  // Columns: thread (w, g) sums word w of kRowsPerThread consecutive rows,
  // its window of kRowsPerThread + 2R row values held in registers.
  const int w = threadIdx.x % kTileWords, g = threadIdx.x / kTileWords;
  const int gb = xb0 + 4 * w;
  const int r0 = g * kRowsPerThread;
  if (gb >= a.row_bytes || y0 + r0 >= a.height)
    return;
  uint2 v[kRowsPerThread + 2 * R];
#pragma unroll
  for (int i = 0; i < kRowsPerThread + 2 * R; i++)
    v[i] = mid[(r0 + i) * kTileWords + w];
  const bool words = a.dst_words && gb + 4 <= a.row_bytes;
  constexpr uint32_t kHalf = 1u << (2 * kGaussianFixedBits - 1);
  static_assert(kGaussianFixedBits == 8, "the byte select assumes sums scaled by 2^16");
#pragma unroll
  for (int j = 0; j < kRowsPerThread; j++) {
    const int y = y0 + r0 + j;
    if (y >= a.height)
      break;
    // The centre: dp2a of each 16-bit lane with the tap in one byte (the
    // other 0); a centre of 256 (no other taps) is 255 + 1.
    const uint2 c = v[j + R];
    // gaussian_fixed_round's + 2^15 starts every sum.
    uint32_t s0 = __dp2a_lo(c.x, a.qy0_lo, kHalf), s2 = __dp2a_lo(c.x, a.qy0_hi, kHalf);
    uint32_t s1 = __dp2a_lo(c.y, a.qy0_lo, kHalf), s3 = __dp2a_lo(c.y, a.qy0_hi, kHalf);
    if (a.qy0_extra) {
      s0 += c.x & 0xFFFFu;
      s2 += c.x >> 16;
      s1 += c.y & 0xFFFFu;
      s3 += c.y >> 16;
    }
#pragma unroll
    for (int k = 1; k <= R; k++) {
      const uint2 u = v[j + R - k], d = v[j + R + k];
      const uint32_t q = a.qy_pair[k];
      s0 = __dp2a_lo(__byte_perm(u.x, d.x, 0x5410), q, s0);
      s2 = __dp2a_lo(__byte_perm(u.x, d.x, 0x7632), q, s2);
      s1 = __dp2a_lo(__byte_perm(u.y, d.y, 0x5410), q, s1);
      s3 = __dp2a_lo(__byte_perm(u.y, d.y, 0x7632), q, s3);
    }
    // The rounded byte: byte 2 of each sum (< 2^24).
    const uint32_t lo = __byte_perm(s0, s1, 0x0062);
    const uint32_t hi = __byte_perm(s2, s3, 0x0062);
    const uint32_t out = __byte_perm(lo, hi, 0x5410);
    uint8_t* dst = a.dst + static_cast<size_t>(y) * a.dst_pitch + gb;
    if (words) {
      *reinterpret_cast<uint32_t*>(dst) = out;
    } else {
      for (int i = 0; i < 4 && gb + i < a.row_bytes; i++)
        dst[i] = static_cast<uint8_t>(out >> (8 * i));
    }
  }
}

bool aligned(const void* p, size_t pitch, size_t n) {
  return reinterpret_cast<uintptr_t>(p) % n == 0 && pitch % n == 0;
}

constexpr size_t shared_bytes(int C, int R, int tile_h) {
  const int halo = (R * C + 15) / 16 * 16;
  const int staged = kTileWords + 2 * halo / 4;
  const size_t rows = tile_h + 2 * R;
  return rows * staged * sizeof(uint32_t) + rows * kTileWords * sizeof(uint2);
}

template <int C, int R>
Status launch(const FixedArgs& a, cudaStream_t stream) {
  constexpr int kTileH = 32;
  constexpr size_t kShared = shared_bytes(C, R, kTileH);
  static_assert(kShared <= kSharedLimit, "fixed-point tile exceeds 48 KB of shared memory");
  const dim3 grid((a.row_bytes + kTileWords * 4 - 1) / (kTileWords * 4),
                  (a.height + kTileH - 1) / kTileH);
  gaussian_fixed_kernel<C, R, kTileH><<<grid, kThreads, kShared, stream>>>(a);
  CUDAFX_CUDA_TRY(cudaGetLastError());
  return Status::ok();
}

template <int C>
Status launch_c(int radius, const FixedArgs& a, cudaStream_t stream) {
  if (radius <= 1)
    return launch<C, 1>(a, stream);
  if (radius <= 2)
    return launch<C, 2>(a, stream);
  if (radius <= 4)
    return launch<C, 4>(a, stream);
  return launch<C, 8>(a, stream);
}

}  // namespace

Status gaussian_fixed_cuda_plane(const GaussianPlanePlan& p, BorderMode border,
                                 const PlaneView& src, const PlaneView& dst, StreamHandle stream) {
  const int radius = std::max(p.x.q_radius, p.y.q_radius);
  if (!p.fixed || radius > kGaussianFixedMaxRadius)
    return Status::invalid("gaussian: the plane's plan is not fixed point");
  FixedArgs a{};
  a.src = src.data;
  a.dst = dst.data;
  a.src_pitch = src.pitch;
  a.dst_pitch = dst.pitch;
  a.width = p.width;
  a.height = p.height;
  a.row_bytes = p.width * p.layout.channels;
  a.border = border;
  a.src_words = aligned(src.data, src.pitch, 4);
  a.src_vectors = aligned(src.data, src.pitch, 16);
  a.dst_words = aligned(dst.data, dst.pitch, 4);
  for (int k = 0; k <= p.x.q_radius; k++)
    a.qx[k] = p.x.q[k];
  const uint32_t q0 = p.y.q[0];
  a.qy0_lo = std::min(q0, 255u);
  a.qy0_hi = a.qy0_lo << 8;
  a.qy0_extra = q0 > 255;
  for (int k = 1; k <= p.y.q_radius; k++)
    a.qy_pair[k] = p.y.q[k] | (static_cast<uint32_t>(p.y.q[k]) << 8);
  cudaStream_t s = stream;
  switch (p.layout.channels) {
    case 1: return launch_c<1>(radius, a, s);
    case 2: return launch_c<2>(radius, a, s);
    case 3: return launch_c<3>(radius, a, s);
    default: return launch_c<4>(radius, a, s);
  }
}

}  // namespace cudafx
