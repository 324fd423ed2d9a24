// CUDA backend of the resize op.
//
// One thread produces a run of P consecutive output pixels (16 bytes for 4-
// and 2-byte pixels, 16 pixels for nearest on 1- and 3-byte pixels, 8 or 12
// bytes for the filters on those) on
// `seg` consecutive output rows, walking down: the write of each row is one
// aligned vector store, and a warp writes one contiguous span (coalesced).
// Its columns' taps (byte offsets, weights) are read once, from the plan's
// tables in device memory, and kept in registers.
//
// Filters keep, in registers, the horizontal sums of the `T` source rows the
// current output row needs (a sliding window): moving down one output row
// costs a horizontal pass only for source rows not yet in the window, so an
// upscale by 2 filters each source row about once per thread. Source pixels
// are gathered with read-only cached loads: neighbouring threads read
// neighbouring, overlapping source pixels, which L1 serves. The horizontal
// taps go in pairs through dp2a (two 16-bit weights times two
// bytes plus an accumulator, one instruction). All arithmetic is exact
// integer arithmetic (resize_math.hpp), so results equal the CPU's.
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda_check.hpp"
#include "cudafx/resize.hpp"
#include "cudafx/resize_math.hpp"

namespace cudafx {
namespace {

constexpr int kBlockX = 32, kBlockY = 4;  // a block: 4 warps, one per row strip
constexpr int kMaxSeg = 16;

struct PlaneArgs {
  const uint8_t* src;
  uint8_t* dst;
  size_t src_pitch, dst_pitch;
  int src_w, src_h, dst_w, dst_h;
  const ResizeTap* xt;
  const ResizeTap* yt;
  int seg;          // output rows a thread
  int dst_aligned;  // dst pointer and pitch multiples of 16
};

// Pixels a thread produces in a row.
// Nearest: 16 bytes of 4- and 2-byte pixels, 16 pixels of 1- and 3-byte
// ones. (8 RGBA pixels a thread measured 60 % slower at 2160p on an H200:
// fewer threads hide the gathers' latency worse.)
__host__ __device__ constexpr int nearest_px(int C) { return C == 4 ? 4 : (C == 2 ? 8 : 16); }
__host__ __device__ constexpr int filter_px(int C) { return C == 1 ? 8 : 4; }

// Packs the low bytes of four words.
__device__ __forceinline__ uint32_t pack4(uint32_t b0, uint32_t b1, uint32_t b2, uint32_t b3) {
  return __byte_perm(__byte_perm(b0, b1, 0x0040), __byte_perm(b2, b3, 0x0040), 0x5410);
}

// Stores the first `n` of the B bytes in `w` at `out`: whole vectors when the
// run is complete and aligned (the common case), bytes at a ragged edge.
template <int B>
__device__ __forceinline__ void store_run(uint8_t* out, const uint32_t (&w)[B / 4], int n,
                                          bool aligned) {
  if (aligned && n == B) {
    if constexpr (B % 16 == 0) {
#pragma unroll
      for (int i = 0; i < B / 16; i++)
        reinterpret_cast<uint4*>(out)[i] = make_uint4(w[4 * i], w[4 * i + 1], w[4 * i + 2], w[4 * i + 3]);
    } else if constexpr (B % 8 == 0) {
#pragma unroll
      for (int i = 0; i < B / 8; i++)
        reinterpret_cast<uint2*>(out)[i] = make_uint2(w[2 * i], w[2 * i + 1]);
    } else {
#pragma unroll
      for (int i = 0; i < B / 4; i++)
        reinterpret_cast<uint32_t*>(out)[i] = w[i];
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < B; i++)
    if (i < n)
      out[i] = static_cast<uint8_t>(w[i / 4] >> (8 * (i % 4)));
}

struct ThreadRun {
  int x0, y0, y1;
};

__device__ __forceinline__ bool thread_run(const PlaneArgs& a, int px, ThreadRun* r) {
  r->x0 = (blockIdx.x * kBlockX + threadIdx.x) * px;
  r->y0 = (blockIdx.y * kBlockY + threadIdx.y) * a.seg;
  r->y1 = min(r->y0 + a.seg, a.dst_h);
  return r->x0 < a.dst_w && r->y0 < r->y1;
}

// ---- nearest ----

template <int C, bool W4>
__global__ void __launch_bounds__(kBlockX* kBlockY) resize_nearest(const __grid_constant__ PlaneArgs a) {
  constexpr int P = nearest_px(C), B = P * C;
  ThreadRun run;
  if (!thread_run(a, P, &run))
    return;
  int xo[P];
#pragma unroll
  for (int j = 0; j < P; j++)
    xo[j] = a.xt[min(run.x0 + j, a.dst_w - 1)].base * C;
  const int n = min(P, a.dst_w - run.x0) * C;
  uint8_t* out = a.dst + static_cast<size_t>(run.y0) * a.dst_pitch + run.x0 * C;
  uint32_t w[B / 4];
  int last = -1;
  for (int y = run.y0; y < run.y1; y++, out += a.dst_pitch) {
    const int sy = a.yt[y].base;
    if (sy != last) {  // an upscale repeats source rows: reuse the gathered run
      const uint8_t* row = a.src + static_cast<size_t>(sy) * a.src_pitch;
      if constexpr (W4) {
#pragma unroll
        for (int j = 0; j < P; j++)
          w[j] = __ldg(reinterpret_cast<const uint32_t*>(row + xo[j]));
      } else {
        uint32_t b[B];
#pragma unroll
        for (int j = 0; j < P; j++)
#pragma unroll
          for (int c = 0; c < C; c++)
            b[j * C + c] = __ldg(row + xo[j] + c);
#pragma unroll
        for (int i = 0; i < B / 4; i++)
          w[i] = pack4(b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]);
      }
      last = sy;
    }
    store_run<B>(out, w, n, a.dst_aligned);
  }
}

// ---- bilinear, bicubic ----

// c + lo16(w) * byte0(b) + hi16(w) * byte1(b): two taps of one channel in one
// instruction (weights signed 16-bit, bytes unsigned), exact in int32.
__device__ __forceinline__ int32_t dot2(uint32_t w, uint32_t b, int32_t c) {
  int32_t d;
  asm("dp2a.lo.s32.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(w), "r"(b), "r"(c));
  return d;
}

// Horizontal sums of source row `sy` for this thread's P pixels: taps in
// pairs, each pair of each channel one dp2a. `xw` holds the weights of taps
// 2m and 2m+1 as the low and high halves of word m.
template <int C, int T, int P, bool W4>
__device__ __forceinline__ void filter_row(const PlaneArgs& a, int sy, const uint32_t (&xo)[P][T],
                                           const uint32_t (&xw)[P][T / 2], int32_t (&h)[P * C]) {
  const uint8_t* row = a.src + static_cast<size_t>(sy) * a.src_pitch;
#pragma unroll
  for (int j = 0; j < P; j++) {
#pragma unroll
    for (int k = 0; k < T; k += 2) {
      uint32_t pair[C];  // channel c of taps k and k + 1 as bytes 0 and 1
      if constexpr (W4) {
        const uint32_t p = __ldg(reinterpret_cast<const uint32_t*>(row + xo[j][k]));
        const uint32_t q = __ldg(reinterpret_cast<const uint32_t*>(row + xo[j][k + 1]));
#pragma unroll
        for (int c = 0; c < C; c++)
          pair[c] = __byte_perm(p, q, c | ((4 + c) << 4));
      } else {
#pragma unroll
        for (int c = 0; c < C; c++)
          pair[c] = __ldg(row + xo[j][k] + c) | (__ldg(row + xo[j][k + 1] + c) << 8);
      }
#pragma unroll
      for (int c = 0; c < C; c++)
        h[j * C + c] = dot2(xw[j][k / 2], pair[c], k == 0 ? 0 : h[j * C + c]);
    }
  }
}

template <int C, int T, bool W4>
__global__ void __launch_bounds__(kBlockX* kBlockY) resize_filter(const __grid_constant__ PlaneArgs a) {
  constexpr int P = filter_px(C), V = P * C;
  ThreadRun run;
  if (!thread_run(a, P, &run))
    return;
  uint32_t xo[P][T], xw[P][T / 2];
#pragma unroll
  for (int j = 0; j < P; j++) {
    const ResizeTap t = a.xt[min(run.x0 + j, a.dst_w - 1)];
#pragma unroll
    for (int k = 0; k < T; k++) {
      xo[j][k] = resize_clamp(t.base + k, a.src_w) * C;
    }
#pragma unroll
    for (int k = 0; k < T; k += 2)
      xw[j][k / 2] = static_cast<uint16_t>(t.w[k]) |
                     (static_cast<uint32_t>(static_cast<uint16_t>(t.w[k + 1])) << 16);
  }
  const int n = min(P, a.dst_w - run.x0) * C;
  uint8_t* out = a.dst + static_cast<size_t>(run.y0) * a.dst_pitch + run.x0 * C;
  // h[k]: horizontal sums of source row window_base + k (unclamped).
  int32_t h[T][V];
  int window_base = 0;  // empty on the strip's first row
  for (int y = run.y0; y < run.y1; y++, out += a.dst_pitch) {
    const ResizeTap ty = a.yt[y];
    int d = y == run.y0 ? T : ty.base - window_base;
    if (d < 0 || d > T)
      d = T;
    // Slide the window down by d rows (d is the same for the whole warp).
    for (int s = 0; s < d; s++) {
#pragma unroll
      for (int k = 0; k < T - 1; k++)
#pragma unroll
        for (int i = 0; i < V; i++)
          h[k][i] = h[k + 1][i];
      filter_row<C, T, P, W4>(a, resize_clamp(ty.base + T - d + s, a.src_h), xo, xw,
                              h[T - 1]);
    }
    window_base = ty.base;
    // Vertical sums, rounded: resize_finish's (v + 2^21) >> 22 with the
    // rounding term as the sum's start; bilinear weights are non-negative
    // and sum to 2^11 an axis, so only bicubic can leave [0, 255].
    uint32_t w[V / 4];
#pragma unroll
    for (int i = 0; i < V; i += 4) {
      int32_t r[4];
#pragma unroll
      for (int q = 0; q < 4; q++) {
        int32_t v = 1 << 21;
#pragma unroll
        for (int k = 0; k < T; k++)
          v += ty.w[k] * h[k][i + q];
        r[q] = v >> 22;
        if constexpr (T == 4)
          r[q] = min(max(r[q], 0), 255);
      }
      w[i / 4] = pack4(r[0], r[1], r[2], r[3]);
    }
    store_run<V>(out, w, n, a.dst_aligned);
  }
}

// ---- launch ----

template <int C>
void launch_c(const PlaneArgs& a, int taps, bool w4, dim3 grid, cudaStream_t s) {
  const dim3 block(kBlockX, kBlockY);
  if (taps == 1) {
    if constexpr (C == 4) {
      if (w4) {
        resize_nearest<4, true><<<grid, block, 0, s>>>(a);
        return;
      }
    }
    resize_nearest<C, false><<<grid, block, 0, s>>>(a);
    return;
  }
  if constexpr (C == 4) {
    if (w4) {
      if (taps == 2)
        resize_filter<4, 2, true><<<grid, block, 0, s>>>(a);
      else
        resize_filter<4, 4, true><<<grid, block, 0, s>>>(a);
      return;
    }
  }
  if (taps == 2)
    resize_filter<C, 2, false><<<grid, block, 0, s>>>(a);
  else
    resize_filter<C, 4, false><<<grid, block, 0, s>>>(a);
}

bool aligned(const void* p, size_t pitch, unsigned to) {
  return reinterpret_cast<uintptr_t>(p) % to == 0 && pitch % to == 0;
}

}  // namespace

Status resize_cuda(const ResizePlan& plan, const ResizeDeviceTaps& taps, const ImageView& src,
                   const ImageView& dst, StreamHandle stream) {
  CUDAFX_TRY(validate_view(src, plan.src, "resize source"));
  CUDAFX_TRY(validate_view(dst, plan.dst, "resize destination"));
  cudaStream_t s = stream;
  for (int i = 0; i < plan.n_planes; i++) {
    const ResizePlanePlan& p = plan.planes[i];
    if (!taps.x[i] || !taps.y[i])
      return Status::invalid("resize: the plan's taps are not on the device");
    const PlaneView sp = src.plane(i), dp = dst.plane(i);
    const int C = p.layout.channels;
    PlaneArgs a;
    a.src = sp.data;
    a.dst = dp.data;
    a.src_pitch = sp.pitch;
    a.dst_pitch = dp.pitch;
    a.src_w = p.src_width;
    a.src_h = p.src_height;
    a.dst_w = p.dst_width;
    a.dst_h = p.dst_height;
    a.xt = taps.x[i];
    a.yt = taps.y[i];
    a.dst_aligned = aligned(dp.data, dp.pitch, 16);
    const int px = p.x.taps == 1 ? nearest_px(C) : filter_px(C);
    const unsigned gx = (p.dst_width + kBlockX * px - 1) / (kBlockX * px);
    // Long strips amortise the window's first rows; short ones spread small
    // frames over every SM.
    for (a.seg = kMaxSeg; a.seg > 1; a.seg /= 2) {
      const unsigned gy = (p.dst_height + kBlockY * a.seg - 1) / (kBlockY * a.seg);
      if (gx * gy >= 1024)
        break;
    }
    const dim3 grid(gx, (p.dst_height + kBlockY * a.seg - 1) / (kBlockY * a.seg));
    const bool w4 = C == 4 && aligned(sp.data, sp.pitch, 4);
    switch (C) {
      case 1: launch_c<1>(a, p.x.taps, w4, grid, s); break;
      case 2: launch_c<2>(a, p.x.taps, w4, grid, s); break;
      case 3: launch_c<3>(a, p.x.taps, w4, grid, s); break;
      default: launch_c<4>(a, p.x.taps, w4, grid, s); break;
    }
    CUDAFX_CUDA_TRY(cudaGetLastError());
  }
  return Status::ok();
}

}  // namespace cudafx
