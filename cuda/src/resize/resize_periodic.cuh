// Bilinear and bicubic resizes of 4-byte pixels whose taps repeat with a
// period on both axes (ResizeAxis::period, the same Q / P on both): 1.5x,
// 2x, 3x, 4x upscales and 1/2x downscales, the cases a pipeline asks for.
//
// The generic filter kernel (resize_cuda.cu) reads every pixel's taps from
// the plan's tables, keeps each pixel's weights in registers and slides its
// window of filtered rows by copying it; at 2160p its bicubic ran at about
// half of a copy's bandwidth. Here the period fixes at compile time which
// source words each output pixel reads, which filtered rows each output row
// needs and when a new source row comes in. Where the weights are fixed (one
// set a phase: 2x, 4x, 1/2x) they sit in the kernel's parameters and the
// multiplies take them straight from the constant bank; otherwise (1.5x, 3x:
// ResizeAxis::period_fixed) a thread reads its pixels' x weights once and
// each row's y weights as it comes. A thread writes PX pixels (a multiple of Q) of every
// row of its strip and keeps the horizontal sums of the last T source rows
// in registers as a ring: its loop is unrolled over U periods, after which
// the ring's slots line up again (U P is a multiple of T), so no row is ever
// copied. The loads of a source row are issued P rows ahead (as soon as the
// row P before it is filtered), so their latency hides behind the vertical
// sums of the rows between even when an output row needs P new rows (1/2x). The arithmetic is resize_math.hpp's (exact integers):
// the results equal the CPU's bit for bit.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cudafx/resize.hpp"
#include "cudafx/resize_math.hpp"
#include "resize/resize_kernel_common.cuh"

namespace cudafx {
namespace resize_kernels {

// Output pixels a thread: a multiple of the period. (6 at Q = 3, two
// periods, spilled bicubic's ring at 128 registers.)
__host__ __device__ constexpr int periodic_px(int q) { return q == 3 ? 3 : 4; }

template <int T, int Q, int P>
struct PeriodShape {
  static constexpr int PX = periodic_px(Q);
  static constexpr int base(int j) { return resize_periodic_base(T, Q, P, j); }
  // Source words under a thread's PX pixels, from its first window's start.
  static constexpr int L = (PX / Q - 1) * P + base(Q - 1) + T - base(0);
  // Where the window of output pixel q (of a thread's PX) starts among them.
  static constexpr int word(int q) { return (q / Q) * P + base(q % Q) - base(0); }
  // Periods of rows in one turn of the row loop: the ring of T filtered rows
  // lines up again after U periods.
  static constexpr int gcd(int a, int b) { return b == 0 ? a : gcd(b, a % b); }
  static constexpr int U = T / gcd(T, P);
  // Source rows, relative to the turn's first (of phase 0), that the output
  // row of period u, phase j needs: first(u, j) .. last(u, j).
  static constexpr int first(int u, int j) { return P * u + base(j) - base(0); }
  static constexpr int last(int u, int j) { return first(u, j) + T - 1; }
  // The last row filtered before (u, j): the previous row's last, or for
  // (0, 0) the last of the previous turn, U P rows back.
  static constexpr int before(int u, int j) {
    return j > 0 ? last(u, j - 1) : (u > 0 ? last(u - 1, Q - 1) : last(U - 1, Q - 1) - U * P);
  }
  static constexpr int slot(int r) { return ((r % T) + T) % T; }
  static_assert(PX % Q == 0, "a thread's pixels cover whole periods");
};

// The L source words of row sy under a thread whose first window starts at
// word sx: one 4-byte load each, cached (neighbouring threads overlap).
// Threads at the left and right edges clamp every word into the row.
template <int L>
__device__ __forceinline__ void periodic_load(const PlaneArgs& a, int sy, int sx, bool inside,
                                              uint32_t (&v)[L]) {
  const uint32_t* row = reinterpret_cast<const uint32_t*>(
      a.src + static_cast<size_t>(resize_clamp(sy, a.src_h)) * a.src_pitch);
  if (inside) {
#pragma unroll
    for (int l = 0; l < L; l++)
      v[l] = __ldg(row + sx + l);
  } else {
#pragma unroll
    for (int l = 0; l < L; l++)
      v[l] = __ldg(row + resize_clamp(sx + l, a.src_w));
  }
}

// The weights: fixed ones from the kernel's parameters (constant bank) ...
template <int T, int Q, int P, bool F>
struct PeriodicWeights {
  __device__ __forceinline__ void columns(const PlaneArgs&, int) {}
  __device__ __forceinline__ void start(const PlaneArgs&, int) {}
  __device__ __forceinline__ void row(const PlaneArgs&, int) {}
  // Pair `pair` of the x weights of the thread's pixel q (of phase j).
  __device__ __forceinline__ uint32_t x(const PlaneArgs& a, int, int j, int pair) const {
    return a.period_xw[j][pair];
  }
  __device__ __forceinline__ int32_t y(const PlaneArgs& a, int j, int k) const {
    return a.period_yw[j][k];
  }
};

// ... or each sample's, from the period's tables: the thread's pixels' x
// weights once, each row's y weights a row ahead (the tables are followed by
// at least kResizeTapsAhead taps: resize_op.cpp).
template <int T, int Q, int P>
struct PeriodicWeights<T, Q, P, false> {
  uint32_t xw[PeriodShape<T, Q, P>::PX][T / 2];
  uint32_t yw_next[T / 2];  // the next row's, as pairs of 16-bit weights
  int32_t yw[T];
  __device__ __forceinline__ void columns(const PlaneArgs& a, int x0) {
#pragma unroll
    for (int q = 0; q < PeriodShape<T, Q, P>::PX; q++) {
      const ResizeTap* t = a.period_xt + min(x0 + q, a.dst_w - 1);
#pragma unroll
      for (int k = 0; k < T / 2; k++)
        xw[q][k] = __ldg(reinterpret_cast<const uint32_t*>(t->w) + k);
    }
  }
  __device__ __forceinline__ void load_row(const PlaneArgs& a, int y) {
    static_assert(kResizeTapsAhead >= 1, "the periodic kernel reads one tap ahead");
    const uint32_t* w = reinterpret_cast<const uint32_t*>(a.period_yt[y].w);
#pragma unroll
    for (int k = 0; k < T / 2; k++)
      yw_next[k] = __ldg(w + k);
  }
  __device__ __forceinline__ void start(const PlaneArgs& a, int y0) { load_row(a, y0); }
  __device__ __forceinline__ void row(const PlaneArgs& a, int y) {
#pragma unroll
    for (int k = 0; k < T; k += 2) {
      yw[k] = static_cast<int16_t>(yw_next[k / 2] & 0xffff);
      yw[k + 1] = static_cast<int16_t>(yw_next[k / 2] >> 16);
    }
    load_row(a, y + 1);
  }
  __device__ __forceinline__ uint32_t x(const PlaneArgs&, int q, int, int pair) const {
    return xw[q][pair];
  }
  __device__ __forceinline__ int32_t y(const PlaneArgs&, int, int k) const { return yw[k]; }
};

// Horizontal sums of a loaded row for a thread's PX pixels, each channel's
// taps in pairs through dp2a.
template <int T, int Q, int P, bool F>
__device__ __forceinline__ void periodic_filter(const PlaneArgs& a, const PeriodicWeights<T, Q, P, F>& wt,
                                                const uint32_t (&v)[PeriodShape<T, Q, P>::L],
                                                int32_t (&h)[PeriodShape<T, Q, P>::PX * 4]) {
  using S = PeriodShape<T, Q, P>;
#pragma unroll
  for (int q = 0; q < S::PX; q++) {
    const int w = S::word(q), j = q % Q;
#pragma unroll
    for (int c = 0; c < 4; c++) {
      const uint32_t sel = c | ((4 + c) << 4);  // channel c of two words as bytes 0, 1
      int32_t acc = dot2(wt.x(a, q, j, 0), __byte_perm(v[w], v[w + 1], sel), 0);
      if constexpr (T == 4)
        acc = dot2(wt.x(a, q, j, 1), __byte_perm(v[w + 2], v[w + 3], sel), acc);
      h[q * 4 + c] = acc;
    }
  }
}

// One output row of phase J from the ring (its rows FIRST .. FIRST + T - 1
// in slots slot(FIRST + k)), rounded as resize_finish and packed.
template <int T, int Q, int P, bool F, int J, int FIRST>
__device__ __forceinline__ void periodic_vertical(const PlaneArgs& a, const PeriodicWeights<T, Q, P, F>& wt,
                                                  const int32_t (&h)[T][PeriodShape<T, Q, P>::PX * 4],
                                                  uint32_t (&w)[PeriodShape<T, Q, P>::PX]) {
  using S = PeriodShape<T, Q, P>;
  // Bicubic overshoots: saturated while packed. Bilinear weights are >= 0
  // and sum to 1: no overshoot.
#pragma unroll
  for (int q = 0; q < S::PX; q++)
    w[q] = vertical_word<T, T == 4>([&](int k) { return wt.y(a, J, k); },
                                    [&](int k, int c) { return h[S::slot(FIRST + k)][q * 4 + c]; });
}

// What a thread carries down its strip.
template <int T, int Q, int P, bool F>
struct PeriodicThread {
  using S = PeriodShape<T, Q, P>;
  ThreadRun run;
  int n;         // bytes to write a row (fewer at the right edge)
  int sx;        // source word of its first window
  bool inside;   // no word to clamp
  int top;       // source row of the turn's relative row 0
  int y;         // the next output row
  uint8_t* out;  // where it goes
  int32_t h[T][S::PX * 4];  // the ring of filtered rows
  uint32_t ahead[P][S::L];  // the next P source rows' words, loaded ahead (row r in r mod P)
  PeriodicWeights<T, Q, P, F> wt;
};

// Filters relative rows R .. END into the ring, loading row r + P as soon as
// row r is filtered. Templates rather than loops: the ring
// slots must be constants for the ring to stay in registers (with loops
// nvcc kept it in local memory).
template <int T, int Q, int P, bool F, int R, int END>
__device__ __forceinline__ void periodic_rows(const PlaneArgs& a, PeriodicThread<T, Q, P, F>& t) {
  using S = PeriodShape<T, Q, P>;
  if constexpr (R <= END) {
    constexpr int b = ((R % P) + P) % P;  // a turn is U P rows: the slots line up
    periodic_filter<T, Q, P, F>(a, t.wt, t.ahead[b], t.h[S::slot(R)]);
    periodic_load<S::L>(a, t.top + R + P, t.sx, t.inside, t.ahead[b]);
    periodic_rows<T, Q, P, F, R + 1, END>(a, t);
  }
}

// Output rows K .. U Q - 1 of a turn (K = u Q + j); false at the strip's end.
template <int T, int Q, int P, bool F, int K>
__device__ __forceinline__ bool periodic_turn(const PlaneArgs& a, PeriodicThread<T, Q, P, F>& t) {
  using S = PeriodShape<T, Q, P>;
  if constexpr (K < S::U * Q) {
    constexpr int u = K / Q, j = K % Q;
    if (t.y >= t.run.y1)
      return false;
    t.wt.row(a, t.y);
    periodic_rows<T, Q, P, F, S::before(u, j) + 1, S::last(u, j)>(a, t);
    uint32_t w[S::PX];
    periodic_vertical<T, Q, P, F, j, S::first(u, j)>(a, t.wt, t.h, w);
    store_run<S::PX * 4>(t.out, w, t.n, a.dst_aligned);
    t.y++;
    t.out += a.dst_pitch;
    return periodic_turn<T, Q, P, F, K + 1>(a, t);
  }
  return true;
}

// Bicubic at 4 blocks an SM (at most 128 registers): left to itself nvcc
// took 138 for 4x and fit 3 (5 % slower on an H100); capped at 96 or 80 it
// spilled and ran 1.7x and 2.2x slower.
template <int T, int Q, int P, bool F>
__global__ void __launch_bounds__(kBlockX* kBlockY, T == 4 ? 4 : 1) resize_periodic(const __grid_constant__ PlaneArgs a) {
  using S = PeriodShape<T, Q, P>;
  PeriodicThread<T, Q, P, F> t;
  if (!thread_run(a, S::PX, &t.run))  // run.y0 is a multiple of Q (launch: seg is)
    return;
  t.wt.columns(a, t.run.x0);
  t.wt.start(a, t.run.y0);
  t.n = min(S::PX, a.dst_w - t.run.x0) * 4;
  t.out = a.dst + static_cast<size_t>(t.run.y0) * a.dst_pitch + t.run.x0 * 4;
  t.sx = t.run.x0 / Q * P + S::base(0);
  t.inside = t.sx >= 0 && t.sx + S::L <= a.src_w;
  t.top = t.run.y0 / Q * P + S::base(0);
  t.y = t.run.y0;
  // Fill the ring with the T rows up to the one before (0, 0) needs.
  constexpr int fill = S::before(0, 0) - T + 1;
#pragma unroll
  for (int r = fill; r < fill + P; r++)
    periodic_load<S::L>(a, t.top + r, t.sx, t.inside, t.ahead[((r % P) + P) % P]);
  periodic_rows<T, Q, P, F, fill, fill + T - 1>(a, t);
  while (periodic_turn<T, Q, P, F, 0>(a, t))
    t.top += S::U * P;
}

}  // namespace resize_kernels
}  // namespace cudafx
