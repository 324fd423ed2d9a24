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
  int src_words;  // source pointer and pitch allow aligned 4-byte loads
  int dst_words;  // destination likewise for stores
  // Taps in 1/256, zero past the plane's radius up to the kernel's R.
  uint32_t qx[kGaussianFixedMaxRadius + 1];
  uint32_t qy0;
  uint32_t qy_pair[kGaussianFixedMaxRadius + 1];  // qy[k] in bytes 0 and 1 (dp2a)
};

__device__ __forceinline__ int floor_div(int a, int b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

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

// The 4 staged bytes from byte 4i + s of a staged row (s in 0..3; constant
// once the tap loop is unrolled).
__device__ __forceinline__ uint32_t staged_word(const uint32_t* row, int i, int s) {
  return s == 0 ? row[i] : __funnelshift_r(row[i], row[i + 1], 8 * s);
}

template <int C, int R>
__global__ void __launch_bounds__(kThreads)
    gaussian_fixed_kernel(const __grid_constant__ FixedArgs a, int tile_h) {
  constexpr int kHalo = (R * C + 3) / 4 * 4;  // staged bytes either side
  constexpr int kStaged = kTileWords + 2 * kHalo / 4;  // staged words a row (even)
  extern __shared__ __align__(16) uint32_t smem[];
  const int rows = tile_h + 2 * R;
  uint32_t* raw = smem;
  uint2* mid = reinterpret_cast<uint2*>(smem + rows * kStaged);
  const int xb0 = blockIdx.x * kTileWords * 4;
  const int y0 = blockIdx.y * tile_h;

  for (int item = threadIdx.x; item < rows * kStaged; item += kThreads) {
    const int r = item / kStaged, w = item - r * kStaged;
    raw[item] = load_word<C>(a, border_index(y0 - R + r, a.height, a.border),
                             xb0 - kHalo + 4 * w);
  }
  __syncthreads();

  // Rows: word w of staged row r; its first byte is staged byte kHalo + 4w,
  // the byte k pixels to its left kHalo + 4w - kC.
  for (int item = threadIdx.x; item < rows * kTileWords; item += kThreads) {
    const int r = item / kTileWords, w = item - r * kTileWords;
    const uint32_t* row = raw + r * kStaged;
    const int base = kHalo / 4 + w;
    const uint32_t c = row[base];
    uint32_t even = a.qx[0] * (c & kLanes);
    uint32_t odd = a.qx[0] * ((c >> 8) & kLanes);
#pragma unroll
    for (int k = 1; k <= R; k++) {
      const int back = k * C;  // bytes
      const uint32_t l = staged_word(row, base - (back + 3) / 4, (4 - back % 4) % 4);
      const uint32_t rr = staged_word(row, base + back / 4, back % 4);
      even += a.qx[k] * ((l & kLanes) + (rr & kLanes));
      odd += a.qx[k] * (((l >> 8) & kLanes) + ((rr >> 8) & kLanes));
    }
    mid[item] = make_uint2(even, odd);
  }
  __syncthreads();

  // Columns: thread (w, g) sums word w of rows g, g + 4, ...
  const int w = threadIdx.x % kTileWords, g = threadIdx.x / kTileWords;
  const int gb = xb0 + 4 * w;
  if (gb >= a.row_bytes)
    return;
  for (int r = g; r < tile_h && y0 + r < a.height; r += kColumnGroups) {
    const uint2 c = mid[(r + R) * kTileWords + w];
    uint32_t s0 = a.qy0 * (c.x & 0xFFFFu), s2 = a.qy0 * (c.x >> 16);
    uint32_t s1 = a.qy0 * (c.y & 0xFFFFu), s3 = a.qy0 * (c.y >> 16);
#pragma unroll
    for (int k = 1; k <= R; k++) {
      const uint2 u = mid[(r + R - k) * kTileWords + w];
      const uint2 d = mid[(r + R + k) * kTileWords + w];
      const uint32_t q = a.qy_pair[k];
      s0 = __dp2a_lo(__byte_perm(u.x, d.x, 0x5410), q, s0);
      s2 = __dp2a_lo(__byte_perm(u.x, d.x, 0x7632), q, s2);
      s1 = __dp2a_lo(__byte_perm(u.y, d.y, 0x5410), q, s1);
      s3 = __dp2a_lo(__byte_perm(u.y, d.y, 0x7632), q, s3);
    }
    // gaussian_fixed_round: + 2^15, then byte 2 of each sum (< 2^24).
    constexpr uint32_t kHalf = 1u << (2 * kGaussianFixedBits - 1);
    static_assert(kGaussianFixedBits == 8, "the byte select assumes sums scaled by 2^16");
    const uint32_t lo = __byte_perm(s0 + kHalf, s1 + kHalf, 0x0062);
    const uint32_t hi = __byte_perm(s2 + kHalf, s3 + kHalf, 0x0062);
    const uint32_t out = __byte_perm(lo, hi, 0x5410);
    uint8_t* dst = a.dst + static_cast<size_t>(y0 + r) * a.dst_pitch + gb;
    if (a.dst_words && gb + 4 <= a.row_bytes) {
      *reinterpret_cast<uint32_t*>(dst) = out;
    } else {
      for (int i = 0; i < 4 && gb + i < a.row_bytes; i++)
        dst[i] = static_cast<uint8_t>(out >> (8 * i));
    }
  }
}

bool words_aligned(const void* p, size_t pitch) {
  return reinterpret_cast<uintptr_t>(p) % 4 == 0 && pitch % 4 == 0;
}

size_t shared_bytes(int C, int R, int tile_h) {
  const int halo = (R * C + 3) / 4 * 4;
  const int staged = kTileWords + 2 * halo / 4;
  const size_t rows = tile_h + 2 * R;
  return rows * staged * sizeof(uint32_t) + rows * kTileWords * sizeof(uint2);
}

template <int C, int R>
Status launch(const FixedArgs& a, cudaStream_t stream) {
  int tile_h = 32;
  while (tile_h > 8 && shared_bytes(C, R, tile_h) > kSharedLimit)
    tile_h /= 2;
  const size_t shared = shared_bytes(C, R, tile_h);
  if (shared > kSharedLimit)
    return Status::error(StatusCode::Internal, "gaussian: fixed-point tile exceeds shared memory");
  const dim3 grid((a.row_bytes + kTileWords * 4 - 1) / (kTileWords * 4),
                  (a.height + tile_h - 1) / tile_h);
  gaussian_fixed_kernel<C, R><<<grid, kThreads, shared, stream>>>(a, tile_h);
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
  if (radius <= 8)
    return launch<C, 8>(a, stream);
  return launch<C, 16>(a, stream);
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
  a.src_words = words_aligned(src.data, src.pitch);
  a.dst_words = words_aligned(dst.data, dst.pitch);
  for (int k = 0; k <= p.x.q_radius; k++)
    a.qx[k] = p.x.q[k];
  a.qy0 = p.y.q[0];
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
