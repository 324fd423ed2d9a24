// CUDA backend of the resize op.
//
// One thread produces a run of P consecutive output pixels (16 bytes for 4-
// and 2-byte pixels, 16 pixels for nearest on 1- and 3-byte pixels, 8 or 12
// bytes for the filters on those) on `seg` consecutive output rows, walking
// down: the write of each row is one aligned vector store, and a warp writes
// one contiguous span (coalesced). Its columns' taps (where each pixel's tap
// window starts, weights) are read once, from the plan's tables in device
// memory, and kept in registers. `seg` is as long as one wave of resident
// blocks allows (launch()), so each thread starts its window once and no
// partial last wave idles SMs.
//
// Filters keep, in registers, the horizontal sums of the `T` source rows the
// current output row needs (a sliding window): moving down one output row
// costs a horizontal pass only for source rows not yet in the window, so an
// upscale by 2 filters each source row about once per thread. The plan keeps
// every tap window inside the source (resize.hpp), so a pixel's taps are T
// consecutive source pixels read from one address. Source pixels are
// gathered with read-only cached loads: neighbouring threads read
// neighbouring, overlapping source pixels, which L1 serves. The horizontal
// taps go in pairs through dp2a (two 16-bit weights times two bytes plus an
// accumulator, one instruction). All arithmetic is exact integer arithmetic
// (resize_math.hpp), so results equal the CPU's.
//
// Measured on an H200 at 2160p output (docs/benchmarks.md): the bilinear
// upscale kernel with its stores removed takes about as long as the nearest
// kernel (memory only) takes in all; together they overlap only in part.
// Nearest and bilinear upscales by exactly 2 or 4 of 4-byte pixels (the
// common `factor` cases) have kernels without tap tables
// (resize_nearest_exact, and resize_bilinear_exact with two channels per
// integer multiply-add).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "common/cuda_check.hpp"
#include "cudafx/resize.hpp"
#include "cudafx/resize_math.hpp"
#include "resize/resize_kernel_common.cuh"
#include "resize/resize_periodic.cuh"

namespace cudafx {
namespace {

using namespace resize_kernels;

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
  // Each row's source row is read a row ahead, so that the table's latency
  // is not in every row's path (the tables end with spare taps: y + 1 is
  // always readable, resize_op.cpp).
  static_assert(kResizeTapsAhead >= 1, "resize_nearest reads one tap ahead");
  int next = a.yt[run.y0].base;
  for (int y = run.y0; y < run.y1; y++, out += a.dst_pitch) {
    const int sy = next;
    next = a.yt[y + 1].base;
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

// The source words of one row under this thread's taps, loaded ahead of
// their use so that the loads' latency overlaps other work: with W4 one word
// (all channels) a tap, otherwise one byte a tap and channel.
template <int C, int T, int P, bool W4>
struct RowLoads {
  uint32_t v[W4 ? P * T : P * T * C];
};

// This thread's columns: the byte offset in a source row at which each
// pixel's tap window starts, and the weights of taps 2m and 2m+1 as the low
// and high halves of word m. Bilinear weights are kept times 4 (at most
// 2^13, still 16-bit), so that the vertical pass yields 4v directly
// (vertical_bilinear).
template <int T, int P>
struct Columns {
  int xb[P];
  uint32_t xw[P][T / 2];
};

template <int C, int T, int P>
__device__ __forceinline__ void column_taps(const PlaneArgs& a, int x0, Columns<T, P>& col) {
#pragma unroll
  for (int j = 0; j < P; j++) {
    const ResizeTap t = a.xt[min(x0 + j, a.dst_w - 1)];
    col.xb[j] = t.base * C;
    constexpr int scale = T == 2 ? 4 : 1;
#pragma unroll
    for (int k = 0; k < T; k += 2)
      col.xw[j][k / 2] = static_cast<uint16_t>(t.w[k] * scale) |
                         (static_cast<uint32_t>(static_cast<uint16_t>(t.w[k + 1] * scale)) << 16);
  }
}

// row + off (off >= 0) as one 64-bit add: written plainly, the compiler
// folds the row's offset into each pixel's and spends five instructions a
// pixel instead of two.
__device__ __forceinline__ const uint8_t* offset(const uint8_t* row, int off) {
  const uint8_t* p;
  asm("add.u64 %0, %1, %2;" : "=l"(p) : "l"(row), "l"(static_cast<uint64_t>(static_cast<uint32_t>(off))));
  return p;
}

// The plan puts every tap window inside the row (resize.hpp), so a pixel's
// taps are T consecutive source pixels: one address, constant offsets.
// NARROW: a source narrower than T, each tap clamped into it.
template <int C, int T, int P, bool W4, bool NARROW>
__device__ __forceinline__ void load_row(const PlaneArgs& a, int sy, const Columns<T, P>& col,
                                         RowLoads<C, T, P, W4>& r) {
  const uint8_t* row = a.src + static_cast<size_t>(sy) * a.src_pitch;
#pragma unroll
  for (int j = 0; j < P; j++) {
    const uint8_t* p = offset(row, col.xb[j]);
#pragma unroll
    for (int k = 0; k < T; k++) {
      const uint8_t* q = p + k * C;
      if constexpr (NARROW)
        q = row + resize_clamp(col.xb[j] / C + k, a.src_w) * C;
      if constexpr (W4) {
        r.v[j * T + k] = __ldg(reinterpret_cast<const uint32_t*>(q));
      } else {
#pragma unroll
        for (int c = 0; c < C; c++)
          r.v[(j * T + k) * C + c] = __ldg(q + c);
      }
    }
  }
}

// Horizontal sums of a loaded row for this thread's P pixels: taps in
// pairs, each pair of each channel one dp2a.
template <int C, int T, int P, bool W4>
__device__ __forceinline__ void filter_loaded(const RowLoads<C, T, P, W4>& r, const Columns<T, P>& col,
                                              int32_t (&h)[P * C]) {
#pragma unroll
  for (int j = 0; j < P; j++) {
#pragma unroll
    for (int k = 0; k < T; k += 2) {
      uint32_t pair[C];  // channel c of taps k and k + 1 as bytes 0 and 1
#pragma unroll
      for (int c = 0; c < C; c++) {
        if constexpr (W4)
          pair[c] = __byte_perm(r.v[j * T + k], r.v[j * T + k + 1], c | ((4 + c) << 4));
        else
          pair[c] = r.v[(j * T + k) * C + c] | (r.v[(j * T + k + 1) * C + c] << 8);
      }
#pragma unroll
      for (int c = 0; c < C; c++)
        h[j * C + c] = dot2(col.xw[j][k / 2], pair[c], k == 0 ? 0 : h[j * C + c]);
    }
  }
}

template <int C, int T, int P, bool W4, bool NARROW>
__device__ __forceinline__ void filter_row(const PlaneArgs& a, int sy, const Columns<T, P>& col,
                                           int32_t (&h)[P * C]) {
  RowLoads<C, T, P, W4> r;
  load_row<C, T, P, W4, NARROW>(a, sy, col, r);
  filter_loaded<C, T, P, W4>(r, col, h);
}

// Vertical sums, rounded to bytes and packed four to a word: resize_finish's
// (v + 2^21) >> 22 with the rounding term as the sum's start.
// Bilinear: h0, h1 are 4 times the horizontal sums (column_taps) and wy holds
// the two vertical weights (low and high half). Weights are non-negative and
// sum to 2^11 an axis, so 4v + 2^23 fits in 32 unsigned bits and its top byte
// is the result: no shift, no clamp.
template <int V>
__device__ __forceinline__ void vertical_bilinear(uint32_t wy, const int32_t (&h0)[V],
                                                  const int32_t (&h1)[V], uint32_t (&w)[V / 4]) {
  const uint32_t w0 = wy & 0xffff, w1 = wy >> 16;
#pragma unroll
  for (int i = 0; i < V; i += 4) {
    uint32_t r[4];
#pragma unroll
    for (int q = 0; q < 4; q++)
      r[q] = static_cast<uint32_t>(h1[i + q]) * w1 +
             (static_cast<uint32_t>(h0[i + q]) * w0 + (1u << 23));
    w[i / 4] = __byte_perm(__byte_perm(r[0], r[1], 0x0073), __byte_perm(r[2], r[3], 0x0073), 0x5410);
  }
}

// The first two weights of a tap as one word (low, high half).
__device__ __forceinline__ uint32_t weight_pair(const ResizeTap* t) {
  return *reinterpret_cast<const uint32_t*>(t->w);
}

// Any T (window h of source rows ty.base ..): bicubic can leave [0, 255].
template <int T, int V>
__device__ __forceinline__ void vertical_row(const ResizeTap& ty, const int32_t (&h)[T][V],
                                             uint32_t (&w)[V / 4]) {
  if constexpr (T == 2) {
    vertical_bilinear<V>(weight_pair(&ty), h[0], h[1], w);
  } else {
#pragma unroll
    for (int i = 0; i < V; i += 4)
      w[i / 4] = vertical_word<T, true>([&](int k) { return static_cast<int32_t>(ty.w[k]); },
                                        [&](int k, int q) { return h[k][i + q]; });
  }
}

// A filter thread's run, columns, bytes to write a row (fewer at the right
// edge) and first output row; false if it has none.
template <int C, int T, int P>
struct FilterThread {
  ThreadRun run;
  Columns<T, P> col;
  int n;
  uint8_t* out;
};

template <int C, int T, int P>
__device__ __forceinline__ bool filter_thread(const PlaneArgs& a, FilterThread<C, T, P>* ft) {
  if (!thread_run(a, P, &ft->run))
    return false;
  column_taps<C, T, P>(a, ft->run.x0, ft->col);
  ft->n = min(P, a.dst_w - ft->run.x0) * C;
  ft->out = a.dst + static_cast<size_t>(ft->run.y0) * a.dst_pitch + ft->run.x0 * C;
  return true;
}

// Any vertical scale: the window may move by any number of rows.
template <int C, int T, bool W4, bool NARROW>
__global__ void __launch_bounds__(kBlockX* kBlockY) resize_filter(const __grid_constant__ PlaneArgs a) {
  constexpr int P = filter_px(C), V = P * C;
  FilterThread<C, T, P> ft;
  if (!filter_thread(a, &ft))
    return;
  const ThreadRun& run = ft.run;
  const Columns<T, P>& col = ft.col;
  const int n = ft.n;
  uint8_t* out = ft.out;
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
      filter_row<C, T, P, W4, NARROW>(a, resize_clamp(ty.base + T - d + s, a.src_h), col,
                              h[T - 1]);
    }
    window_base = ty.base;
    uint32_t w[V / 4];
    vertical_row<T, V>(ty, h, w);
    store_run<V>(out, w, n, a.dst_aligned);
  }
}

// Bilinear with a vertical upscale (the plan's y taps step by at most one
// row): the window of two filtered source rows moves down one row at a time,
// so the row to filter next is always the one below it. Its loads are issued
// as soon as the window moves, and each output row's taps a row ahead, so
// neither waits in a row's critical path. The two window rows swap roles at
// each move (the loop is unrolled by two) instead of being copied.
struct UpRows {
  const ResizeTap* t;     // taps of the next row to write
  const ResizeTap* last;  // taps of the strip's last row
  int base;               // t->base
  uint32_t wy;            // t's weights
  uint8_t* out;           // the next row to write
};

// Writes output rows while their taps start at source row `top`, from hr0
// (horizontal sums of source row top) and hr1 (row top + 1). Returns false at
// the strip's end. The next row's taps are read before this row is computed:
// the tables end with spare taps (resize_op.cpp), so t + 1 is always readable.
template <int V>
__device__ __forceinline__ bool rows_from(int top, const int32_t (&hr0)[V], const int32_t (&hr1)[V],
                                          const PlaneArgs& a, int n, UpRows& r) {
  for (;;) {
    static_assert(kResizeTapsAhead >= 1, "rows_from reads one tap ahead");
    const int next_base = r.t[1].base;
    const uint32_t next_wy = weight_pair(r.t + 1);
    uint32_t w[V / 4];
    vertical_bilinear<V>(r.wy, hr0, hr1, w);
    store_run<V>(r.out, w, n, a.dst_aligned);
    if (r.t == r.last)
      return false;
    r.t++;
    r.out += a.dst_pitch;
    r.base = next_base;
    r.wy = next_wy;
    if (r.base != top)
      return true;
  }
}

template <int C, bool W4>
__global__ void __launch_bounds__(kBlockX* kBlockY) resize_bilinear_up(const __grid_constant__ PlaneArgs a) {
  constexpr int T = 2, P = filter_px(C), V = P * C;
  FilterThread<C, T, P> ft;
  if (!filter_thread(a, &ft))
    return;
  const Columns<T, P>& col = ft.col;
  const int n = ft.n;
  UpRows r;
  r.t = a.yt + ft.run.y0;
  r.last = a.yt + ft.run.y1 - 1;
  r.base = r.t->base;
  r.wy = weight_pair(r.t);
  r.out = ft.out;
  const int last_top = r.last->base;
  int top = r.base;
  int32_t ha[V], hb[V];
  filter_row<C, T, P, W4, false>(a, resize_clamp(top, a.src_h), col, ha);
  filter_row<C, T, P, W4, false>(a, resize_clamp(top + 1, a.src_h), col, hb);
  RowLoads<C, T, P, W4> next;  // source row top + 2
  if (top < last_top)
    load_row<C, T, P, W4, false>(a, resize_clamp(top + 2, a.src_h), col, next);
  for (;;) {
    if (!rows_from<V>(top, ha, hb, a, n, r))
      break;
    filter_loaded<C, T, P, W4>(next, col, ha);  // ha: row top + 2
    if (++top < last_top)
      load_row<C, T, P, W4, false>(a, resize_clamp(top + 2, a.src_h), col, next);
    if (!rows_from<V>(top, hb, ha, a, n, r))
      break;
    filter_loaded<C, T, P, W4>(next, col, hb);
    if (++top < last_top)
      load_row<C, T, P, W4, false>(a, resize_clamp(top + 2, a.src_h), col, next);
  }
}

// ---- upscales by exactly 2 or 4, 4-byte pixels (the plan's exact_up) ----
//
// Bilinear (resize.hpp's exact_up formula): each output sample blends two
// source samples with weights that are small multiples of 2^11 / 2N, the
// same for every N-th sample, so the taps are compile-time constants and the
// sums fit 16 bits: a thread keeps channels 0 and 2 of a pixel in the two 16-bit
// lanes of one word and channels 1 and 3 in another, and one integer
// multiply-add serves two channels. A thread writes 4 pixels (16 bytes) a row
// from the 4 / N + 2 source pixels under them, one 4-byte load each (cached:
// neighbours overlap), and walks down its rows as resize_bilinear_up does,
// loading the next source row while it writes the rows of the current pair.
//
// Same integers as resize_finish: with weights 2^11 / 2N times (a, b) on each
// axis, the vertical sum is v = 2^22 / 4N^2 * S, S = sum of the small-weight
// products, and (v + 2^21) >> 22 = (S + 2N^2) >> log2(4N^2). In a lane,
// T = 64 / N^2 * S + 128 <= 65 408 holds the result in its high byte.

// Output pixels a thread, 4 bytes each. (8 took 80 registers instead of 56,
// left a third fewer warps to hide the loads and ran 1.7x slower at 2160p on
// an H200.)
constexpr int kExactPx = 4;

// Channel lanes of a source pixel: lo = channels 0 and 2, hi = 1 and 3.
struct Lanes {
  uint32_t lo, hi;
};

// The source pixels under a thread's output pixels: sx0 .. sx0 + P/N + 1.
template <int N>
struct ExactLoads {
  uint32_t v[kExactPx / N + 2];
};

template <int N>
__device__ __forceinline__ void exact_load(const uint8_t* row, int sx0, int src_w, ExactLoads<N>& l) {
#pragma unroll
  for (int k = 0; k < kExactPx / N + 2; k++)
    l.v[k] = __ldg(reinterpret_cast<const uint32_t*>(row) + resize_clamp(sx0 + k, src_w));
}

// Horizontal sums of one loaded source row for this thread's output pixels:
// (2N - 2j - 1) times the left source pixel plus (2j + 1) times the right,
// in lanes (<= 2N * 255).
template <int N>
__device__ __forceinline__ void exact_row(const ExactLoads<N>& l, Lanes (&h)[kExactPx]) {
  constexpr int S = kExactPx / N + 2;
  Lanes p[S];
#pragma unroll
  for (int k = 0; k < S; k++) {
    p[k].lo = __byte_perm(l.v[k], 0, 0x4240);
    p[k].hi = __byte_perm(l.v[k], 0, 0x4341);
  }
#pragma unroll
  for (int q = 0; q < kExactPx; q++) {
    // Output pixel q blends source pixels r - 1 and r, r = (q + N/2) / N
    // past sx0 + 1, with j = (q + N/2) % N.
    const int r = (q + N / 2) / N + 1, j = (q + N / 2) % N;
    const uint32_t wl = 2 * N - 2 * j - 1, wr = 2 * j + 1;
    h[q].lo = p[r - 1].lo * wl + p[r].lo * wr;
    h[q].hi = p[r - 1].hi * wl + p[r].hi * wr;
  }
}

// Output row j of a source row pair (h0 = upper, h1 = lower), packed into
// pixel words. Called from unrolled loops, where j and so the weights are
// constants.
template <int N>
__device__ __forceinline__ void exact_column(int j, const Lanes (&h0)[kExactPx],
                                             const Lanes (&h1)[kExactPx], uint32_t (&w)[kExactPx]) {
  constexpr uint32_t scale = 64 / (N * N);
  const uint32_t w0 = scale * (2 * N - 2 * j - 1), w1 = scale * (2 * j + 1);
#pragma unroll
  for (int q = 0; q < kExactPx; q++) {
    const uint32_t lo = h0[q].lo * w0 + (h1[q].lo * w1 + 0x00800080u);
    const uint32_t hi = h0[q].hi * w0 + (h1[q].hi * w1 + 0x00800080u);
    w[q] = __byte_perm(lo, hi, 0x7351);  // the lanes' high bytes, channels in order
  }
}

// Writes the output rows of the source pair (r - 1, r) that lie in this
// thread's [y0, y1): rows N r - N/2 + j. False when y1 is reached.
template <int N>
__device__ __forceinline__ bool exact_pair(int r, const Lanes (&h0)[kExactPx],
                                           const Lanes (&h1)[kExactPx], const PlaneArgs& a,
                                           const ThreadRun& run, int n, uint8_t* out) {
  const int first = N * r - N / 2;
#pragma unroll
  for (int j = 0; j < N; j++) {
    const int y = first + j;
    if (y >= run.y0 && y < run.y1) {
      uint32_t w[kExactPx];
      exact_column<N>(j, h0, h1, w);
      store_run<kExactPx * 4>(out + static_cast<size_t>(y - run.y0) * a.dst_pitch, w, n,
                              a.dst_aligned);
    }
  }
  return first + N < run.y1;
}

template <int N>
__global__ void __launch_bounds__(kBlockX* kBlockY) resize_bilinear_exact(const __grid_constant__ PlaneArgs a) {
  ThreadRun run;
  if (!thread_run(a, kExactPx, &run))
    return;
  const int n = min(kExactPx, a.dst_w - run.x0) * 4;
  uint8_t* out = a.dst + static_cast<size_t>(run.y0) * a.dst_pitch + run.x0 * 4;
  const int sx0 = run.x0 / N - 1;
  const auto row = [&](int sy) {
    return a.src + static_cast<size_t>(resize_clamp(sy, a.src_h)) * a.src_pitch;
  };
  // The pair of source rows (r - 1, r) whose output rows start at y0.
  int r = (run.y0 + N / 2) / N;
  Lanes ha[kExactPx], hb[kExactPx];
  ExactLoads<N> l;
  exact_load<N>(row(r - 1), sx0, a.src_w, l);
  exact_row<N>(l, ha);
  exact_load<N>(row(r), sx0, a.src_w, l);
  exact_row<N>(l, hb);
  // The next source row is loaded as soon as the window moves, so that its
  // loads are in flight while the rows of the current pair are written; the
  // window's rows swap roles at each step (unrolled by two) instead of being
  // copied.
  exact_load<N>(row(r + 1), sx0, a.src_w, l);
  for (;;) {
    if (!exact_pair<N>(r, ha, hb, a, run, n, out))
      break;
    exact_row<N>(l, ha);
    exact_load<N>(row(++r + 1), sx0, a.src_w, l);
    if (!exact_pair<N>(r, hb, ha, a, run, n, out))
      break;
    exact_row<N>(l, hb);
    exact_load<N>(row(++r + 1), sx0, a.src_w, l);
  }
}

// Nearest upscale by exactly 2 or 4, 4-byte pixels (exact_up): output pixel
// x of row y is source pixel x / N of row y / N, so a thread's 4 output
// pixels come from 4 / N source pixels and each source row serves N output
// rows. No tables; the next source row is loaded while the current one's
// rows are written.
template <int N>
__global__ void __launch_bounds__(kBlockX* kBlockY) resize_nearest_exact(const __grid_constant__ PlaneArgs a) {
  constexpr int S = kExactPx / N;
  ThreadRun run;
  if (!thread_run(a, kExactPx, &run))
    return;
  const int n = min(kExactPx, a.dst_w - run.x0) * 4;
  uint8_t* out = a.dst + static_cast<size_t>(run.y0) * a.dst_pitch + run.x0 * 4;
  const int sx0 = run.x0 / N;
  const auto load = [&](int sy, uint32_t (&v)[S]) {
    const uint32_t* row = reinterpret_cast<const uint32_t*>(
        a.src + static_cast<size_t>(min(sy, a.src_h - 1)) * a.src_pitch);
#pragma unroll
    for (int k = 0; k < S; k++)
      v[k] = __ldg(row + min(sx0 + k, a.src_w - 1));
  };
  int r = run.y0 / N;
  uint32_t v[S];
  load(r, v);
  for (int y = run.y0; y < run.y1; r++) {
    uint32_t w[kExactPx];
#pragma unroll
    for (int q = 0; q < kExactPx; q++)
      w[q] = v[q / N];
    load(r + 1, v);
    for (const int end = min(run.y1, (r + 1) * N); y < end; y++, out += a.dst_pitch)
      store_run<kExactPx * 4>(out, w, n, a.dst_aligned);
  }
}

// ---- launch ----

using Kernel = void (*)(PlaneArgs);

template <int C, bool W4>
Kernel kernel_for(int taps, bool narrow, bool up) {
  if (taps == 1)
    return resize_nearest<C, W4>;
  if (narrow)  // rare and tiny: the general kernel, byte loads
    return taps == 2 ? resize_filter<C, 2, false, true> : resize_filter<C, 4, false, true>;
  if (taps == 2)
    return up ? resize_bilinear_up<C, W4> : resize_filter<C, 2, W4, false>;
  return resize_filter<C, 4, W4, false>;
}

// The exact-factor kernels apply (4-byte pixels with 4-byte loads, the same
// factor on both axes).
int exact_factor(const ResizePlanePlan& p, bool w4) {
  return w4 && p.layout.channels == 4 && p.x.exact_up == p.y.exact_up ? p.x.exact_up : 0;
}

// The periodic kernels (resize_periodic.cuh) apply: bilinear or bicubic,
// 4-byte pixels with 4-byte loads, the same period on both axes, one of the
// periods compiled (Q / P: 2, 4, 3, 3/2, 1/2). Returns the period Q, or 0.
template <int T, bool F>
Kernel periodic_kernel(int q, int p) {
  switch (q * 8 + p) {
    case 2 * 8 + 1: return resize_periodic<T, 2, 1, F>;
    case 4 * 8 + 1: return resize_periodic<T, 4, 1, F>;
    case 3 * 8 + 1: return resize_periodic<T, 3, 1, F>;
    case 3 * 8 + 2: return resize_periodic<T, 3, 2, F>;
    case 1 * 8 + 2: return resize_periodic<T, 1, 2, F>;
    default: return nullptr;
  }
}

Kernel periodic_kernel(const ResizePlanePlan& p, bool w4) {
  if (!w4 || p.layout.channels != 4 || p.x.taps < 2 || p.x.period == 0 ||
      p.x.period != p.y.period || p.x.period_step != p.y.period_step)
    return nullptr;
  const int q = p.x.period, step = p.x.period_step;
  if (p.x.period_fixed && p.y.period_fixed)
    return p.x.taps == 2 ? periodic_kernel<2, true>(q, step) : periodic_kernel<4, true>(q, step);
  return p.x.taps == 2 ? periodic_kernel<2, false>(q, step) : periodic_kernel<4, false>(q, step);
}

Kernel kernel_for(const ResizePlanePlan& p, bool w4) {
  const bool nearest = p.x.taps == 1;
  switch (exact_factor(p, w4)) {
    case 2: return nearest ? resize_nearest_exact<2> : resize_bilinear_exact<2>;
    case 4: return nearest ? resize_nearest_exact<4> : resize_bilinear_exact<4>;
    default: break;
  }
  if (Kernel k = periodic_kernel(p, w4))
    return k;
  const bool narrow = p.src_width < p.x.taps, up = p.y.steps_by_one;
  switch (p.layout.channels) {
    case 1: return kernel_for<1, false>(p.x.taps, narrow, up);
    case 2: return kernel_for<2, false>(p.x.taps, narrow, up);
    case 3: return kernel_for<3, false>(p.x.taps, narrow, up);
    default: return w4 ? kernel_for<4, true>(p.x.taps, narrow, up) : kernel_for<4, false>(p.x.taps, narrow, up);
  }
}

// Launches `k` over the plane with strips as long as one wave of resident
// blocks allows: every thread's row window then starts once, and no partial
// last wave leaves SMs idle (with 2-3 waves of equal blocks, the last one
// cost a quarter of the time). `resident` blocks fit on the device at once
// (resize_cuda_prepare). Strips are `rows` (a period) long or a multiple.
Status launch_plane(Kernel k, PlaneArgs a, int px, int rows, long resident, cudaStream_t s) {
  const int gx = (a.dst_w + kBlockX * px - 1) / (kBlockX * px);
  const long block_rows = std::max(1L, resident / gx);
  a.seg = static_cast<int>((a.dst_h + kBlockY * block_rows - 1) / (kBlockY * block_rows));
  a.seg = (a.seg + rows - 1) / rows * rows;
  const dim3 grid(gx, (a.dst_h + kBlockY * a.seg - 1) / (kBlockY * a.seg));
  k<<<grid, dim3(kBlockX, kBlockY), 0, s>>>(a);
  CUDAFX_CUDA_TRY(cudaGetLastError());
  return Status::ok();
}

bool aligned(const void* p, size_t pitch, unsigned to) {
  return reinterpret_cast<uintptr_t>(p) % to == 0 && pitch % to == 0;
}

}  // namespace

// The compiled kernels' occupancy on the current device, once per op rather
// than per frame (three driver queries a plane).
Status resize_cuda_prepare(const ResizePlan& plan, ResizeLaunch* launch) {
  int device = 0;
  CUDAFX_CUDA_TRY(cudaGetDevice(&device));
  CUDAFX_CUDA_TRY(cudaDeviceGetAttribute(&launch->sms, cudaDevAttrMultiProcessorCount, device));
  for (int i = 0; i < plan.n_planes; i++)
    for (int w4 = 0; w4 < 2; w4++) {
      int per_sm = 0;
      CUDAFX_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &per_sm, kernel_for(plan.planes[i], w4 != 0), kBlockX * kBlockY, 0));
      launch->blocks_per_sm[i][w4] = std::max(per_sm, 1);
    }
  return Status::ok();
}

Status resize_cuda(const ResizePlan& plan, const ResizeDeviceTaps& taps,
                   const ResizeLaunch& launch, const ImageView& src, const ImageView& dst,
                   StreamHandle stream) {
  CUDAFX_TRY(validate_view(src, plan.src, "resize source"));
  CUDAFX_TRY(validate_view(dst, plan.dst, "resize destination"));
  for (int i = 0; i < plan.n_planes; i++) {
    const ResizePlanePlan& p = plan.planes[i];
    if (!taps.x[i] || !taps.y[i])
      return Status::invalid("resize: the plan's taps are not on the device");
    const PlaneView sp = src.plane(i), dp = dst.plane(i);
    const int C = p.layout.channels;
    PlaneArgs a{};
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
    a.seg = 1;
    const bool w4 = C == 4 && aligned(sp.data, sp.pitch, 4);
    const long resident = static_cast<long>(launch.sms) * launch.blocks_per_sm[i][w4];
    int px = exact_factor(p, w4) ? kExactPx : (p.x.taps == 1 ? nearest_px(C) : filter_px(C));
    int rows = 1;
    if (!exact_factor(p, w4) && periodic_kernel(p, w4)) {
      px = periodic_px(p.x.period);
      rows = p.y.period;
      a.period_xt = taps.period_x[i];
      a.period_yt = taps.period_y[i];
      for (int j = 0; j < p.x.period; j++) {
        const int16_t* wx = p.x.period_w[j];
        for (int k = 0; k < 2; k++)
          a.period_xw[j][k] = static_cast<uint16_t>(wx[2 * k]) |
                              (static_cast<uint32_t>(static_cast<uint16_t>(wx[2 * k + 1])) << 16);
        for (int k = 0; k < kResizeMaxTaps; k++)
          a.period_yw[j][k] = p.y.period_w[j][k];
      }
    }
    CUDAFX_TRY(launch_plane(kernel_for(p, w4), a, px, rows, resident, stream));
  }
  return Status::ok();
}

}  // namespace cudafx
