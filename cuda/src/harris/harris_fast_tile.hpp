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
// compile-time constants, products stay in registers, and box windows sum
// by running (add the entering value, subtract the leaving one: exact
// integers, the same sums). The integers and the one float formula are
// those of the staged tile and the CPU backend, so the results are
// identical bit for bit (tests compare the GPU, and this code run on the
// host by harris_emulate.cpp, with the CPU).
//
// Stages (a barrier after each), for a kFastW x kFastH tile at (x0, y0)
// (kFastW: 64 columns, 32 with 64-bit sums):
//  1. load:  grey rows y0-H .. y0+kFastH+H-1, columns x0-H .., as bytes,
//            4 pixels an item (one aligned 16- or 4-byte load, one store);
//  2. rows:  the Sobel row passes (derivative, smoothing) at product columns
//            x0-BR .. x0+kFastW+BR-1 of every grey row, kRunX columns an
//            item, as 16-bit values (both fit 16 bits signed);
//  3. cols:  a product column and kRunY output rows an item (a column each
//            thread: conflict-free): Ix, Iy and their products on the
//            kRunY + 2*BR product rows the windows cover, in registers,
//            and the vertical window sums;
//  4. out:   an output row and kRunX columns an item: the horizontal window
//            sums (128-bit loads) and the responses (one 16-byte store).
// Products are computed (2*BR + kRunY) / kRunY times over instead of
// being stored and loaded: cheaper than a shared-memory round trip and a
// stage (H100, 2160p RGBA g5 b5: 66 -> 64 us; GRAY8 g3 b5 56 -> 49 us).
// Tried and slower: 8 output rows a column item (fewer instructions, 48
// registers: GRAY8 g3 b5 49 -> 51 us); a grid of resident blocks looping
// over the tiles (80 -> 89 us under Nsight Compute).
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

// Four floats to global memory: one 16-byte store when `vec` (the address
// is 16-byte aligned), else four.
CUDAFX_HD void store4(float* p, const float v[4], bool vec) {
#if defined(__CUDA_ARCH__)
  if (vec) {
    *reinterpret_cast<float4*>(p) = make_float4(v[0], v[1], v[2], v[3]);
    return;
  }
#else
  (void)vec;
#endif
  for (int k = 0; k < 4; k++)
    p[k] = v[k];
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
  // The grey tile starts kLead columns left of x0 - H, so that its 4-pixel
  // load groups start at multiples of 4 pixels (x0 is a multiple of 64):
  // aligned 16-byte (RGBA) or 4-byte (GRAY8) loads.
  static constexpr int kLead = (4 - H % 4) % 4;
  static constexpr int kGroups = (kLead + GW + 3) / 4;  // load groups a grey row
  // Row lengths with room for the last group and the last run's reads past
  // the end, rounded to 16 bytes for the 128-bit loads.
  static constexpr int GWS_NEED = kGroups * 4 > kLead + kRowGroups * kRunX + 2 * GR
                                      ? kGroups * 4
                                      : kLead + kRowGroups * kRunX + 2 * GR;
  static constexpr int GWS = (GWS_NEED + 15) / 16 * 16;  // bytes
  static constexpr int PWS = (kFastW + kRunX + 2 * BR + 3) / 4 * 4;         // values
  static constexpr int kLoadItems = GH * kGroups, kRowItems = GH * kRowGroups,
                       kColItems = (kFastH / kRunY) * PW, kOutputItems = kFastH * (kFastW / kRunX);
  static_assert(kFastW % kRunX == 0 && kFastH % kRunY == 0, "runs tile the outputs");
  static_assert(kRunX == 4, "output runs are one 16-byte store");
  using Ops = AccOps<Acc>;

  alignas(16) uint8_t grey[GH][GWS];
  // The row passes of every grey row, derivative and smoothing taps (both
  // fit 16 bits signed): apart, so the column stage loads them
  // sign-extended as they are (one packed word needed three instructions
  // to unpack).
  alignas(16) int16_t pass_d[GH][PW];
  alignas(16) int16_t pass_s[GH][PW];
  // Vertical window sums of Ix^2, IxIy, Iy^2 at every output row and
  // product column.
  alignas(16) Acc vsum[3][kFastH][PWS];

  // The columns of block bx of the response grid: block 0 is one staged
  // slice (kTileW columns) at the left edge, the others kFastW columns
  // from kTileW on. Blocks at the left and right edges run the staged
  // code, a slice at a time; starting the wide blocks a slice in makes
  // each edge one slice wide (for 3840 columns: 0..31 and 3808..3839)
  // instead of kFastW / kTileW of them.
  CUDAFX_HD static int block_x0(int bx) { return bx == 0 ? 0 : kTileW + (bx - 1) * kFastW; }
  CUDAFX_HD static int block_width(int bx) { return bx == 0 ? kTileW : kFastW; }
  static int blocks_x(int width) {
    return width <= kTileW ? 1 : 1 + (width - kTileW + kFastW - 1) / kFastW;
  }

  // Whether the tile at (x0, y0) reads no pixel outside the frame.
  CUDAFX_HD static bool fits(const ResponseArgs& a, int x0, int y0) {
    return x0 >= H && y0 >= H && x0 + kFastW + H <= a.width && y0 + kFastH + H <= a.height;
  }

  // Four grey pixels of row r from tile column 4 * q (image column
  // x0 - H - kLead + 4q): one aligned load where the format and the rows
  // allow (ResponseArgs::vec), stored as one word. Pixels past the frame's
  // right edge (the last group may reach 3 past the tile) are 0; no output
  // reads them.
  CUDAFX_HD void load(const ResponseArgs& a, int x0, int y0, int i) {
    const int r = i / kGroups, q = i - r * kGroups;
    const int x = x0 - H - kLead + 4 * q;
    const uint8_t* row = a.src + static_cast<size_t>(y0 - H + r) * a.src_pitch;
    uint32_t packed = 0;
    if (a.vec && x + 4 <= a.width) {
      if (a.channels == 4) {
        uint32_t w[4];
        load_words4(row + static_cast<size_t>(x) * 4, w);
CUDAFX_HARRIS_UNROLL
        for (int t = 0; t < 4; t++)
          packed |= static_cast<uint32_t>(harris_luma(byte_of(w[t], a.ro), byte_of(w[t], a.go),
                                                      byte_of(w[t], a.bo)))
                    << (8 * t);
      } else {
        packed = load_word(row + x);
      }
    } else {
      for (int t = 0; t < 4 && x + t < a.width; t++)
        packed |= static_cast<uint32_t>(grey_of_pixel(a, row + static_cast<size_t>(x + t) * a.channels))
                  << (8 * t);
    }
    *reinterpret_cast<uint32_t*>(&grey[r][4 * q]) = packed;
  }

  // kRunX product columns of grey row r from column 4 * group.
  CUDAFX_HD void rows(int i) {
    const int r = i / kRowGroups, c0 = (i - r * kRowGroups) * kRunX;
    constexpr int N = kRunX + 2 * GR;
    int g[N];
    // Whole words: the run and its taps lie in bytes c0 .. c0 + N - 1.
    const uint8_t* row = grey[r] + kLead + c0;
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
      if (c0 + k < PW) {
        pass_d[r][c0 + k] = static_cast<int16_t>(d);
        pass_s[r][c0 + k] = static_cast<int16_t>(s);
      }
    }
  }

  // The window sum along a run of N values for kRun outputs: box by
  // running (add the entering value, subtract the leaving one: exact
  // integers, the same sums), else weighted.
  template <int kRun, int N>
  CUDAFX_HD static void window_run(const ResponseArgs& a, const Acc (&v)[N], Acc (&out)[kRun]) {
    if (a.box) {
      Acc sum = 0;
CUDAFX_HARRIS_UNROLL
      for (int t = 0; t <= 2 * BR; t++)
        sum += v[t];
      out[0] = sum;
CUDAFX_HARRIS_UNROLL
      for (int k = 1; k < kRun; k++) {
        sum += v[k + 2 * BR] - v[k - 1];
        out[k] = sum;
      }
    } else {
CUDAFX_HARRIS_UNROLL
      for (int k = 0; k < kRun; k++) {
        Acc w = 0;
CUDAFX_HARRIS_UNROLL
        for (int t = 0; t <= 2 * BR; t++)
          w += static_cast<Acc>(a.window[t]) * v[k + t];
        out[k] = w;
      }
    }
  }

  // Product column c, output rows 4 * group ..: Ix, Iy and their products
  // on the kRunY + 2 * BR product rows their windows cover (kept in
  // registers, never stored), and the vertical window sums.
  CUDAFX_HD void cols(const ResponseArgs& a, int i) {
    const int grp = i / PW, c = i - grp * PW, r0 = grp * kRunY;
    constexpr int P = kRunY + 2 * BR;  // product rows
    constexpr int N = P + 2 * GR;      // row-pass rows
    int d[N], s[N];
CUDAFX_HARRIS_UNROLL
    for (int j = 0; j < N; j++) {
      d[j] = pass_d[r0 + j][c];
      s[j] = pass_s[r0 + j][c];
    }
    Acc p[3][P];
CUDAFX_HARRIS_UNROLL
    for (int k = 0; k < P; k++) {
      int dx = 0, dy = 0;
CUDAFX_HARRIS_UNROLL
      for (int t = 0; t <= 2 * GR; t++) {
        dx += sobel_smooth(GR, t) * d[k + t];
        dy += sobel_deriv(GR, t) * s[k + t];
      }
      p[0][k] = Ops::prod(dx, dx);
      p[1][k] = Ops::prod(dx, dy);
      p[2][k] = Ops::prod(dy, dy);
    }
CUDAFX_HARRIS_UNROLL
    for (int q = 0; q < 3; q++) {
      Acc w[kRunY];
      window_run<kRunY>(a, p[q], w);
CUDAFX_HARRIS_UNROLL
      for (int k = 0; k < kRunY; k++)
        vsum[q][r0 + k][c] = w[k];
    }
  }

  // Output row r, kRunX columns from 4 * group: the horizontal window sums
  // of the vertical ones (128-bit loads) and the responses, stored (one
  // 16-byte store where the rows allow); returns their largest (0 when
  // none is positive).
  CUDAFX_HD float output(const ResponseArgs& a, int x0, int y0, int i) {
    constexpr int G = kFastW / kRunX;
    constexpr int N = (kRunX + 2 * BR + 3) / 4 * 4;
    const int r = i / G, c0 = (i - r * G) * kRunX;
    Acc sums[3][kRunX];
CUDAFX_HARRIS_UNROLL
    for (int q = 0; q < 3; q++) {
      Acc v[N];
CUDAFX_HARRIS_UNROLL
      for (int j = 0; j < N; j += 4)
        load4(&vsum[q][r][c0 + j], &v[j]);
      window_run<kRunX>(a, v, sums[q]);
    }
    float R[kRunX], m = 0.0f;
CUDAFX_HARRIS_UNROLL
    for (int k = 0; k < kRunX; k++) {
      R[k] = harris_response(Ops::unsigned_value(sums[0][k]), Ops::signed_value(sums[1][k]),
                             Ops::unsigned_value(sums[2][k]), a.norm, a.k);
      m = m > R[k] ? m : R[k];
    }
    float* out = reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(a.resp) +
                                          static_cast<size_t>(y0 + r) * a.resp_pitch) +
                 x0 + c0;
    store4(out, R, a.resp_vec4);
    return m;
  }
};

}  // namespace harris_kernels
}  // namespace cudafx
