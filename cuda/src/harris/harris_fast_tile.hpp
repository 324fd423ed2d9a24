// The Harris response kernel's interior blocks: tiles whose grey pixels,
// with the halo of gradient_radius + block_radius, all lie inside the frame,
// so that no position needs the border rule. Nsight Compute showed the
// staged per-item tile (ResponseTile, harris_kernels.hpp) issue-bound at
// about 530 instructions an output pixel: every item recomputed its
// coordinates, mapped them through the border rule and ran its taps from
// kernel arguments, and the window stage recomputed every product
// 2*block_radius+1 times. Here each stage item is a short run of outputs
// along the filter's direction, so one load serves several taps (a 5-tap
// pass over 4 outputs reads 8 values, not 20), the Sobel taps are
// compile-time constants, products are computed once, and box windows sum
// by running (add the entering value, subtract the leaving one: exact
// integers, the same sums). The integers and the one float formula are
// those of the staged tile and the CPU backend, so the results are
// identical bit for bit (tests compare the GPU, and this code run on the
// host by harris_emulate.cpp, with the CPU).
//
// Stages (a barrier after each), for a kFastW x kFastH tile at (x0, y0)
// (kFastW: 64 columns, 32 with 64-bit sums):
//  1. load:  grey rows y0-H .. y0+kFastH+H-1, columns x0-H .., as bytes;
//  2. rows:  the Sobel row passes (derivative, smoothing) at product columns
//            x0-BR .. x0+kFastW+BR-1 of every grey row, kRunX columns an
//            item, packed in one word (both fit 16 bits signed);
//  3. cols:  Ix, Iy at product rows y0-BR .., kRunY rows an item (a column
//            each thread: conflict-free), and Ix^2, IxIy, Iy^2;
//  4. hsum:  horizontal window sums, kRunX columns an item (128-bit loads);
//  5. out:   vertical window sums, kRunY rows an item, and the response.
//
// Included at the end of harris_kernels.hpp (it uses ResponseArgs, AccOps
// and load_byte from there).
#pragma once

#include <cstdint>
#include <cstring>

#include "cudafx/harris_math.hpp"
#include "cudafx/hd.hpp"

namespace cudafx {
namespace harris_kernels {

constexpr int kFastH = 16;           // output rows a tile
constexpr int kRunX = 4, kRunY = 4;  // outputs a stage item

// The Sobel taps of radius r (cv::getDerivKernels), t = 0 .. 2r, as
// constant expressions: the fast stages multiply by literals.
CUDAFX_HD constexpr int sobel_deriv(int r, int t) {
  return r == 1 ? t - 1
       : r == 2 ? (t == 0 ? -1 : t == 1 ? -2 : t == 2 ? 0 : t == 3 ? 2 : 1)
                : (t == 0 ? -1 : t == 1 ? -4 : t == 2 ? -5 : t == 3 ? 0 : t == 4 ? 5 : t == 5 ? 4 : 1);
}
CUDAFX_HD constexpr int sobel_smooth(int r, int t) {
  return r == 1 ? (t == 1 ? 2 : 1)
       : r == 2 ? (t == 2 ? 6 : (t == 1 || t == 3) ? 4 : 1)
                : (t == 3 ? 20 : (t == 2 || t == 4) ? 15 : (t == 1 || t == 5) ? 6 : 1);
}

// Four consecutive values from 16-byte aligned shared memory: one 128-bit
// load for 32-bit values, two for 64-bit ones (host: a copy).
CUDAFX_HD void load4(const unsigned* p, unsigned out[4]) {
#if defined(__CUDA_ARCH__)
  const uint4 v = *reinterpret_cast<const uint4*>(p);
  out[0] = v.x;
  out[1] = v.y;
  out[2] = v.z;
  out[3] = v.w;
#else
  std::memcpy(out, p, 4 * sizeof(unsigned));
#endif
}
CUDAFX_HD void load4(const long long* p, long long out[4]) {
#if defined(__CUDA_ARCH__)
  const longlong2 a = reinterpret_cast<const longlong2*>(p)[0];
  const longlong2 b = reinterpret_cast<const longlong2*>(p)[1];
  out[0] = a.x;
  out[1] = a.y;
  out[2] = b.x;
  out[3] = b.y;
#else
  std::memcpy(out, p, 4 * sizeof(long long));
#endif
}

template <int GR, int BR, class Acc>
struct ResponseFastTile {
  // Output columns: 64, or 32 with 64-bit sums (the static shared memory of
  // a block stays under 48 KB).
  static constexpr int kFastW = sizeof(Acc) == 4 ? 64 : 32;
  static constexpr int H = GR + BR;
  static constexpr int GW = kFastW + 2 * H, GH = kFastH + 2 * H;    // grey tile
  static constexpr int PW = kFastW + 2 * BR, PH = kFastH + 2 * BR;  // product positions
  static constexpr int kRowGroups = (PW + kRunX - 1) / kRunX;
  static constexpr int kColGroups = (PH + kRunY - 1) / kRunY;
  // Row lengths with room for the last run's reads past the end, rounded
  // to 16 bytes for the 128-bit loads.
  static constexpr int GWS = (kRowGroups * kRunX + 2 * GR + 15) / 16 * 16;  // bytes
  static constexpr int PWS = (kFastW + kRunX + 2 * BR + 3) / 4 * 4;         // values
  static constexpr int PASS_ROWS = kColGroups * kRunY + 2 * GR;
  static constexpr int kLoadItems = GH * GW, kRowItems = GH * kRowGroups,
                       kColItems = kColGroups * PW, kHsumItems = PH * (kFastW / kRunX),
                       kOutputItems = (kFastH / kRunY) * kFastW;
  static_assert(kFastW % kRunX == 0 && kFastH % kRunY == 0, "runs tile the outputs");
  using Ops = AccOps<Acc>;

  // The window sums reuse the memory of the grey tile and the row passes,
  // which the stages before them were the last to read.
  struct GreyAndPasses {
    alignas(16) uint8_t grey[GH][GWS];
    alignas(16) uint32_t pass[PASS_ROWS][PW];  // derivative pass low 16 bits, smoothing high, signed
  };
  union Early {
    GreyAndPasses gp;
    alignas(16) Acc wsum[3][PH][kFastW];  // horizontal window sums
  };
  Early e;
  alignas(16) Acc prod[3][PH][PWS];  // Ix^2, IxIy, Iy^2

  // Whether the tile at (x0, y0) reads no pixel outside the frame.
  CUDAFX_HD static bool fits(const ResponseArgs& a, int x0, int y0) {
    return x0 >= H && y0 >= H && x0 + kFastW + H <= a.width && y0 + kFastH + H <= a.height;
  }

  CUDAFX_HD void load(const ResponseArgs& a, int x0, int y0, int i) {
    const int r = i / GW, c = i - r * GW;
    const uint8_t* p = a.src + static_cast<size_t>(y0 - H + r) * a.src_pitch +
                       static_cast<size_t>(x0 - H + c) * a.channels;
    e.gp.grey[r][c] = static_cast<uint8_t>(grey_of_pixel(a, p));
  }

  // kRunX product columns of grey row r from column 4 * group.
  CUDAFX_HD void rows(int i) {
    const int r = i / kRowGroups, c0 = (i - r * kRowGroups) * kRunX;
    constexpr int N = kRunX + 2 * GR;
    int g[N];
    // Whole words: the run and its taps lie in bytes c0 .. c0 + N - 1.
    const uint8_t* row = e.gp.grey[r] + c0;
CUDAFX_HARRIS_UNROLL
    for (int j = 0; j < N; j++)
      g[j] = row[j];
CUDAFX_HARRIS_UNROLL
    for (int k = 0; k < kRunX; k++) {
      int d = 0, s = 0;
CUDAFX_HARRIS_UNROLL
      for (int t = 0; t <= 2 * GR; t++) {
        d += sobel_deriv(GR, t) * g[k + t];
        s += sobel_smooth(GR, t) * g[k + t];
      }
      if (c0 + k < PW)
        e.gp.pass[r][c0 + k] = (static_cast<uint32_t>(d) & 0xffffu) | (static_cast<uint32_t>(s) << 16);
    }
  }

  // kRunY product rows of product column c from row 4 * group.
  CUDAFX_HD void cols(int i) {
    const int grp = i / PW, c = i - grp * PW, r0 = grp * kRunY;
    constexpr int N = kRunY + 2 * GR;
    int d[N], s[N];
CUDAFX_HARRIS_UNROLL
    for (int j = 0; j < N; j++) {
      const uint32_t v = e.gp.pass[r0 + j][c];
      d[j] = static_cast<int>(v << 16) >> 16;
      s[j] = static_cast<int>(v) >> 16;
    }
CUDAFX_HARRIS_UNROLL
    for (int k = 0; k < kRunY; k++) {
      int dx = 0, dy = 0;
CUDAFX_HARRIS_UNROLL
      for (int t = 0; t <= 2 * GR; t++) {
        dx += sobel_smooth(GR, t) * d[k + t];
        dy += sobel_deriv(GR, t) * s[k + t];
      }
      if (r0 + k < PH) {
        prod[0][r0 + k][c] = Ops::prod(dx, dx);
        prod[1][r0 + k][c] = Ops::prod(dx, dy);
        prod[2][r0 + k][c] = Ops::prod(dy, dy);
      }
    }
  }

  // kRunX window sums of product row r from output column 4 * group.
  CUDAFX_HD void hsum(const ResponseArgs& a, int i) {
    constexpr int G = kFastW / kRunX;
    constexpr int N = (kRunX + 2 * BR + 3) / 4 * 4;
    const int r = i / G, c0 = (i - r * G) * kRunX;
CUDAFX_HARRIS_UNROLL
    for (int q = 0; q < 3; q++) {
      Acc v[N];
CUDAFX_HARRIS_UNROLL
      for (int j = 0; j < N; j += 4)
        load4(&prod[q][r][c0 + j], &v[j]);
      Acc sum = 0;
      if (a.box) {
CUDAFX_HARRIS_UNROLL
        for (int t = 0; t <= 2 * BR; t++)
          sum += v[t];
        e.wsum[q][r][c0] = sum;
CUDAFX_HARRIS_UNROLL
        for (int k = 1; k < kRunX; k++) {
          sum += v[k + 2 * BR] - v[k - 1];
          e.wsum[q][r][c0 + k] = sum;
        }
      } else {
CUDAFX_HARRIS_UNROLL
        for (int k = 0; k < kRunX; k++) {
          Acc w = 0;
CUDAFX_HARRIS_UNROLL
          for (int t = 0; t <= 2 * BR; t++)
            w += static_cast<Acc>(a.window[t]) * v[k + t];
          e.wsum[q][r][c0 + k] = w;
        }
      }
    }
  }

  // kRunY responses of output column c from row 4 * group; stores them and
  // returns their largest (0 when none is positive).
  CUDAFX_HD float output(const ResponseArgs& a, int x0, int y0, int i) {
    const int grp = i / kFastW, c = i - grp * kFastW, r0 = grp * kRunY;
    constexpr int N = kRunY + 2 * BR;
    Acc s[3][kRunY];
CUDAFX_HARRIS_UNROLL
    for (int q = 0; q < 3; q++) {
      Acc v[N];
CUDAFX_HARRIS_UNROLL
      for (int j = 0; j < N; j++)
        v[j] = e.wsum[q][r0 + j][c];
      if (a.box) {
        Acc sum = 0;
CUDAFX_HARRIS_UNROLL
        for (int t = 0; t <= 2 * BR; t++)
          sum += v[t];
        s[q][0] = sum;
CUDAFX_HARRIS_UNROLL
        for (int k = 1; k < kRunY; k++) {
          sum += v[k + 2 * BR] - v[k - 1];
          s[q][k] = sum;
        }
      } else {
CUDAFX_HARRIS_UNROLL
        for (int k = 0; k < kRunY; k++) {
          Acc w = 0;
CUDAFX_HARRIS_UNROLL
          for (int t = 0; t <= 2 * BR; t++)
            w += static_cast<Acc>(a.window[t]) * v[k + t];
          s[q][k] = w;
        }
      }
    }
    float m = 0.0f;
    const int x = x0 + c;
CUDAFX_HARRIS_UNROLL
    for (int k = 0; k < kRunY; k++) {
      const float R = harris_response(Ops::unsigned_value(s[0][k]), Ops::signed_value(s[1][k]),
                                      Ops::unsigned_value(s[2][k]), a.norm, a.k);
      reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(a.resp) +
                               static_cast<size_t>(y0 + r0 + k) * a.resp_pitch)[x] = R;
      m = m > R ? m : R;
    }
    return m;
  }
};

}  // namespace harris_kernels
}  // namespace cudafx
