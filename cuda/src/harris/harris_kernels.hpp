// The per-item code of the Harris CUDA kernels, as __host__ __device__
// functions: harris_cuda.cu runs them on the GPU (one item per thread, a
// barrier between stages), harris_emulate.cpp runs the very same functions
// on the host, block by block and thread by thread, so that a build without
// a GPU tests the kernels' tiling, border mapping, 32-bit sums, suppression
// and selection against the CPU backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "cudafx/border.hpp"
#include "cudafx/harris.hpp"
#include "cudafx/harris_math.hpp"
#include "cudafx/hd.hpp"
#include "cudafx/image.hpp"

// Loops whose trip count is a template parameter: unrolled in device code
// (the host compiler decides for itself).
#if defined(__CUDA_ARCH__)
#define CUDAFX_HARRIS_UNROLL _Pragma("unroll")
#else
#define CUDAFX_HARRIS_UNROLL
#endif

namespace cudafx {
namespace harris_kernels {

constexpr int kTileW = 32, kTileH = 16, kThreads = 256;  // response kernel
constexpr int kNmsW = 32, kNmsH = 8;                     // suppression kernel (threads)
constexpr int kNmsRun = 4;                               // suppression: pixels a thread a row
constexpr int kNmsRows = 2;                              // suppression: rows a thread
constexpr int kSelectThreads = 1024;                     // selection kernel
constexpr int kMinSortCapacity = 2048;
// Score buckets: the key's bits 62..51 (its top bit is always set), the
// exponent and 4 mantissa bits of the score: 16 buckets an octave. The
// suppression kernel counts its corners per bucket, so the selection
// finds the bucket of the max_corners-th corner with one scan.
constexpr int kBucketShift = 51, kBuckets = 4096;
// The selection ranks keys within their buckets (a key compares itself
// with every key of its bucket) when that takes at most this many
// comparisons, the sum of the squared counts of the buckets up to the
// boundary (a few microseconds of one block's issue); else it sorts.
constexpr unsigned long long kRankBudget = 1ull << 18;

// The keys the selection kernel sorts in shared memory: a power of two,
// at least max_corners.
inline unsigned sort_capacity(int max_corners) {
  unsigned c = kMinSortCapacity;
  while (c < static_cast<unsigned>(max_corners))
    c <<= 1;
  return c;
}

// Zero at the start of every frame: zeroed when the buffers are prepared,
// and by the selection kernel once it has read them.
struct DeviceState {
  unsigned max_bits;  // bits of the largest positive response (0: none)
  unsigned count;     // candidates appended
  unsigned pad[2];
  alignas(16) unsigned hist[kBuckets];  // candidates a score bucket (16-byte words)
};

// The score bucket of a key: ascending with the key.
CUDAFX_HD unsigned key_bucket(unsigned long long key) {
  return static_cast<unsigned>(key >> kBucketShift) & (kBuckets - 1);
}

struct ResponseArgs {
  const uint8_t* src;
  size_t src_pitch;
  int channels, ro, go, bo;  // ro < 0: byte 0 is the grey value
  bool word4;                // 4-byte pixels at 4-byte aligned addresses: one load a pixel
  // Rows allow aligned 4-pixel loads: 16 bytes (RGBA-like, channels 4) or
  // 4 bytes (one byte a pixel) at addresses of that alignment.
  bool vec;
  float* resp;
  size_t resp_pitch;
  bool resp_vec4;  // response rows 16-byte aligned: 4 floats a store
  int width, height;
  BorderMode border;
  int deriv[kHarrisMaxTaps], smooth[kHarrisMaxTaps], window[kHarrisMaxTaps];
  float norm, k;
  bool box;            // window weights all 1: window sums run (add one, drop one)
  unsigned* max_bits;  // nullptr: the maximum is not wanted
};

CUDAFX_HD uint8_t load_byte(const uint8_t* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(p);
#else
  return *p;
#endif
}

// Aligned loads of 4 bytes and of 16 bytes (as 4 words), through the
// read-only cache on the GPU; little-endian on both sides.
CUDAFX_HD uint32_t load_word(const uint8_t* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(reinterpret_cast<const uint32_t*>(p));
#else
  uint32_t w;
  std::memcpy(&w, p, 4);
  return w;
#endif
}
CUDAFX_HD void load_words4(const uint8_t* p, uint32_t w[4]) {
#if defined(__CUDA_ARCH__)
  const uint4 v = __ldg(reinterpret_cast<const uint4*>(p));
  w[0] = v.x;
  w[1] = v.y;
  w[2] = v.z;
  w[3] = v.w;
#else
  std::memcpy(w, p, 16);
#endif
}
// Byte i (0..3) of w: one byte-permute instruction on the GPU.
CUDAFX_HD int byte_of(uint32_t w, int i) {
#if defined(__CUDA_ARCH__)
  return static_cast<int>(__byte_perm(w, 0u, 0x4440u | static_cast<unsigned>(i)));
#else
  return static_cast<int>((w >> (8 * i)) & 0xffu);
#endif
}

// The grey value of the pixel at `p` (ResponseArgs's luma rule): byte 0 as
// is, or the luma of its R, G, B bytes -- one 4-byte load where the pixels
// are 4 aligned bytes (word4), little-endian on both sides.
CUDAFX_HD int grey_of_pixel(const ResponseArgs& a, const uint8_t* p) {
  if (a.ro < 0)
    return load_byte(p);
  if (a.word4) {
#if defined(__CUDA_ARCH__)
    const uint32_t w = __ldg(reinterpret_cast<const uint32_t*>(p));
#else
    uint32_t w;
    std::memcpy(&w, p, 4);
#endif
    return harris_luma((w >> (8 * a.ro)) & 0xff, (w >> (8 * a.go)) & 0xff, (w >> (8 * a.bo)) & 0xff);
  }
  return harris_luma(load_byte(p + a.ro), load_byte(p + a.go), load_byte(p + a.bo));
}

// Exact products and sums in Acc: int64, or uint32 modulo 2^32 (the plan
// proved that Sxx, Syy < 2^32 and |Sxy| < 2^31, so the residues are the
// values: Sxx, Syy read as unsigned, Sxy as two's complement).
template <class Acc>
struct AccOps;
template <>
struct AccOps<long long> {
  CUDAFX_HD static long long prod(int a, int b) { return static_cast<long long>(a) * b; }
  CUDAFX_HD static float unsigned_value(long long v) { return harris_to_float(v); }
  CUDAFX_HD static float signed_value(long long v) { return harris_to_float(v); }
};
template <>
struct AccOps<unsigned> {
  CUDAFX_HD static unsigned prod(int a, int b) {
    return static_cast<unsigned>(a) * static_cast<unsigned>(b);
  }
  CUDAFX_HD static float unsigned_value(unsigned v) {
#if defined(__CUDA_ARCH__)
    return __uint2float_rn(v);
#else
    return static_cast<float>(v);
#endif
  }
  CUDAFX_HD static float signed_value(unsigned v) {
#if defined(__CUDA_ARCH__)
    return __int2float_rn(static_cast<int>(v));
#else
    return static_cast<float>(static_cast<int>(v));
#endif
  }
};

// The shared memory of one response block and its stages. A block owns the
// kTileW x kTileH responses from (x0, y0); every stage is a loop over its
// items (`i` from 0 to the stage's count), independent within the stage.
//
//  1. load: the grey tile, image pixels x0 - H .. x0 + kTileW + H (H =
//     GR + BR) through the border rule (Constant: 0), luma converted;
//  2. rows: at each product column c (image column x0 - BR + c) the row
//     pass of the Sobel taps over every grey row, computed at the column
//     the border rule maps c to -- a product outside the frame is the
//     product at the mapped position (Constant: 0);
//  3. cols: Ix, Iy at each product position, the column pass at the mapped
//     row. The mapped position of every product an in-frame response needs
//     lies in the tile with its Sobel halo; the others (needed only by
//     responses past the frame's edge, never stored) are left 0;
//  4. hsum: horizontal window sums of Ix^2, IxIy, Iy^2 for every product row;
//  5. output: vertical sums and harris_response, stored when in the frame.
template <int GR, int BR, class Acc>
struct ResponseTile {
  static constexpr int H = GR + BR;
  static constexpr int GW = kTileW + 2 * H, GH = kTileH + 2 * H;    // grey tile
  static constexpr int PW = kTileW + 2 * BR, PH = kTileH + 2 * BR;  // product positions
  static constexpr int kLoadItems = GH * GW, kRowItems = GH * PW, kColItems = PH * PW,
                       kHsumItems = PH * kTileW, kOutputItems = kTileH * kTileW;
  using Ops = AccOps<Acc>;

  int grey[GH][GW];
  int hd[GH][PW];  // row pass, derivative taps (towards Ix)
  int hs[GH][PW];  // row pass, smoothing taps (towards Iy)
  int ix[PH][PW];
  int iy[PH][PW];
  Acc wxx[PH][kTileW], wxy[PH][kTileW], wyy[PH][kTileW];

  CUDAFX_HD void load(const ResponseArgs& a, int x0, int y0, int i) {
    const int r = i / GW, c = i - r * GW;
    const int ys = border_index(y0 - H + r, a.height, a.border);
    const int xs = border_index(x0 - H + c, a.width, a.border);
    int v = 0;
    if (ys >= 0 && xs >= 0) {
      const uint8_t* p = a.src + static_cast<size_t>(ys) * a.src_pitch +
                         static_cast<size_t>(xs) * a.channels;
      v = grey_of_pixel(a, p);
    }
    grey[r][c] = v;
  }

  CUDAFX_HD void rows(const ResponseArgs& a, int x0, int i) {
    const int r = i / PW, c = i - r * PW;
    const int mx = border_index(x0 - BR + c, a.width, a.border);
    const int gc = mx - (x0 - H);
    int d = 0, s = 0;
    if (mx >= 0 && gc >= GR && gc < GW - GR) {
CUDAFX_HARRIS_UNROLL
      for (int t = -GR; t <= GR; t++) {
        const int v = grey[r][gc + t];
        d += a.deriv[t + GR] * v;
        s += a.smooth[t + GR] * v;
      }
    }
    hd[r][c] = d;
    hs[r][c] = s;
  }

  CUDAFX_HD void cols(const ResponseArgs& a, int y0, int i) {
    const int r = i / PW, c = i - r * PW;
    const int my = border_index(y0 - BR + r, a.height, a.border);
    const int gr = my - (y0 - H);
    int dx = 0, dy = 0;
    if (my >= 0 && gr >= GR && gr < GH - GR) {
CUDAFX_HARRIS_UNROLL
      for (int t = -GR; t <= GR; t++) {
        dx += a.smooth[t + GR] * hd[gr + t][c];
        dy += a.deriv[t + GR] * hs[gr + t][c];
      }
    }
    ix[r][c] = dx;
    iy[r][c] = dy;
  }

  CUDAFX_HD void hsum(const ResponseArgs& a, int i) {
    const int r = i / kTileW, c = i - r * kTileW;
    Acc sxx = 0, sxy = 0, syy = 0;
CUDAFX_HARRIS_UNROLL
    for (int t = 0; t <= 2 * BR; t++) {
      const int dx = ix[r][c + t], dy = iy[r][c + t];
      const Acc w = static_cast<Acc>(a.window[t]);
      sxx += w * Ops::prod(dx, dx);
      sxy += w * Ops::prod(dx, dy);
      syy += w * Ops::prod(dy, dy);
    }
    wxx[r][c] = sxx;
    wxy[r][c] = sxy;
    wyy[r][c] = syy;
  }

  // Stores the response when (x0 + c, y0 + r) is in the frame and returns
  // it there; 0 elsewhere.
  CUDAFX_HD float output(const ResponseArgs& a, int x0, int y0, int i) {
    const int r = i / kTileW, c = i - r * kTileW;
    const int x = x0 + c, y = y0 + r;
    Acc sxx = 0, sxy = 0, syy = 0;
CUDAFX_HARRIS_UNROLL
    for (int t = 0; t <= 2 * BR; t++) {
      const Acc w = static_cast<Acc>(a.window[t]);
      sxx += w * wxx[r + t][c];
      sxy += w * wxy[r + t][c];
      syy += w * wyy[r + t][c];
    }
    if (x >= a.width || y >= a.height)
      return 0.0f;
    const float R = harris_response(Ops::unsigned_value(sxx), Ops::signed_value(sxy),
                                    Ops::unsigned_value(syy), a.norm, a.k);
    reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(a.resp) +
                             static_cast<size_t>(y) * a.resp_pitch)[x] = R;
    return R;
  }
};

struct NmsArgs {
  const float* resp;
  size_t resp_pitch;
  int width, height, radius;
  bool relative;
  float threshold;
  DeviceState* state;
  unsigned long long* keys;
  unsigned capacity;
  bool vec4;  // rows 16-byte aligned: a thread's run is one 16-byte load
};

// The kNmsRun pixels from (x0, y): their responses (one 16-byte load where
// the rows allow it) and whether each is a candidate, above the threshold.
// Most pixels are not: a thread a pixel spent its time on indexing and the
// ballot, not on the test.
CUDAFX_HD void nms_load(const NmsArgs& a, float t, int x0, int y, float v[kNmsRun],
                        bool cand[kNmsRun]) {
  const bool row_in = y < a.height;
  const float* row = row_in ? reinterpret_cast<const float*>(reinterpret_cast<const unsigned char*>(a.resp) +
                                                             static_cast<size_t>(y) * a.resp_pitch)
                            : nullptr;
  if (row_in && a.vec4 && x0 + kNmsRun <= a.width) {
#if defined(__CUDA_ARCH__)
    const float4 q = *reinterpret_cast<const float4*>(row + x0);
    v[0] = q.x;
    v[1] = q.y;
    v[2] = q.z;
    v[3] = q.w;
#else
    std::memcpy(v, row + x0, kNmsRun * sizeof(float));
#endif
  } else {
    for (int k = 0; k < kNmsRun; k++)
      v[k] = row_in && x0 + k < a.width ? row[x0 + k] : 0.0f;
  }
  for (int k = 0; k < kNmsRun; k++)
    cand[k] = row_in && x0 + k < a.width && v[k] > t;
}

// Whether pixel (q, k) of a thread's patch -- kNmsRows rows of kNmsRun
// pixels, v -- is beaten by a pixel at most one row and min(r, kNmsRun)
// columns away among the values the warp holds: the thread's patch and
// the patches of the lanes left and right of it (`has_left`, `has_right`:
// those lanes exist). Pixels past the frame's right or bottom edge hold 0,
// which beats no candidate. A cheap test before the square's: around a
// corner most pixels above the threshold lose to a close neighbour.
CUDAFX_HD bool nms_patch_beaten(const float left[kNmsRows][kNmsRun], const float v[kNmsRows][kNmsRun],
                                const float right[kNmsRows][kNmsRun], bool has_left, bool has_right,
                                int r, int q, int k) {
  // Fixed loop bounds, every index a constant once q and k are (the
  // callers' loops unroll): the arrays stay in registers.
  const int reach = r < kNmsRun ? r : kNmsRun;
  const float p = v[q][k];
  bool beaten = false;
CUDAFX_HARRIS_UNROLL
  for (int dy = -1; dy <= 1; dy++) {
    const int qq = q + dy;
    if (qq < 0 || qq >= kNmsRows)
      continue;
CUDAFX_HARRIS_UNROLL
    for (int dx = -kNmsRun; dx <= kNmsRun; dx++) {
      if ((dy == 0 && dx == 0) || dx < -reach || dx > reach || reach == 0)
        continue;
      const int c = k + dx;
      float o;
      if (c < 0) {
        if (!has_left)
          continue;
        o = left[qq][c + kNmsRun];
      } else if (c >= kNmsRun) {
        if (!has_right)
          continue;
        o = right[qq][c - kNmsRun];
      } else {
        o = v[qq][c];
      }
      // Earlier in raster order (a row above, or left in the row): an
      // equal value beats.
      beaten |= dy < 0 || (dy == 0 && dx < 0) ? o >= p : o > p;
    }
  }
  return beaten;
}

// Whether position j (raster order) of the (2r+1) x (2r+1) square around
// the candidate (x, y), response v, is an in-frame pixel that beats it.
// The lanes of a warp test a candidate's square together, 32 positions at a
// time, so a candidate costs one or two rounds of independent loads where a
// thread scanning its square alone waited for each of (2r+1)^2 loads in
// turn (the scan stops at the first pixel that beats it, so the compiler
// could not batch them; the corners themselves scan the whole square).
CUDAFX_HD bool nms_square_beats(const NmsArgs& a, int x, int y, float v, int j) {
  const int side = 2 * a.radius + 1;
  const int dy = j / side, dx = j - dy * side;
  const int qx = x - a.radius + dx, qy = y - a.radius + dy;
  if (qx < 0 || qy < 0 || qx >= a.width || qy >= a.height || (qx == x && qy == y))
    return false;
  const uint32_t w = static_cast<uint32_t>(a.width);
  return harris_beats(harris_response_at(a.resp, a.resp_pitch, qx, qy),
                      static_cast<uint32_t>(qy) * w + static_cast<uint32_t>(qx), v,
                      static_cast<uint32_t>(y) * w + static_cast<uint32_t>(x));
}

struct SelectArgs {
  const unsigned long long* keys;
  unsigned capacity;
  DeviceState* state;  // read, then zeroed for the next frame
  const float* resp;
  size_t resp_pitch;
  int width, height;
  unsigned max_corners;
  unsigned sort_capacity;  // a power of two >= max_corners: keys in shared memory
  bool relative;
  float threshold;
  bool subpixel;
  uint8_t* result;       // HarrisResultHeader, then corners
  uint8_t* host_result;  // the same in mapped pinned memory; null: copied after
};

// The selection's shared state besides the keys.
struct SelectShared {
  unsigned hist[256];
  unsigned long long prefix, mask;
  unsigned need, count;
  int done;
  unsigned warp_sums[32];
  unsigned boundary, upto;  // the m-th key's bucket; keys in it and below
  unsigned long long rank_cost;  // comparisons the ranking would take
  unsigned start[kBuckets]; // the buckets' first positions (then their ends)
};

// Where the key at sk[i] goes in the list once the keys up to the boundary
// bucket lie in their buckets' segments (`ends`: each bucket's end, which
// is the next one's start): its bucket's start plus its rank among the
// bucket's keys.
CUDAFX_HD unsigned bucket_rank_position(const unsigned long long* sk, const unsigned* ends,
                                        unsigned i) {
  const unsigned long long k = sk[i];
  const unsigned b = key_bucket(k);
  const unsigned lo = b ? ends[b - 1] : 0u, hi = ends[b];
  unsigned rank = 0;
  for (unsigned t = lo; t < hi; t++)
    rank += sk[t] < k;
  return lo + rank;
}

// One radix-select step (thread 0), after hist holds the counts of the
// 8-bit digit at `shift` among the keys that match prefix under mask: the
// digit of the need-th smallest of them joins the prefix; done when every
// key with the new prefix is among the wanted ones.
CUDAFX_HD void radix_step(SelectShared& s, int shift) {
  unsigned need = s.need, d = 0;
  while (d < 255 && s.hist[d] < need) {
    need -= s.hist[d];
    d++;
  }
  s.prefix |= static_cast<unsigned long long>(d) << shift;
  s.mask |= 0xffull << shift;
  s.need = need;
  s.done = s.hist[d] == need;
}

// The compare-exchange of item i in the bitonic stage (k, j): ascending
// overall once k reaches the length.
CUDAFX_HD void bitonic_item(unsigned long long* sk, unsigned i, unsigned j, unsigned k) {
  const unsigned l = i ^ j;
  if (l > i) {
    const unsigned long long u = sk[i], w = sk[l];
    if ((i & k) == 0 ? u > w : u < w) {
      sk[i] = w;
      sk[l] = u;
    }
  }
}

// The sort's padding: at least one warp's 64 keys (the register stages
// work on 64-key chunks).
CUDAFX_HD unsigned sort_padded(unsigned n) {
  unsigned p2 = 64;
  while (p2 < n)
    p2 <<= 1;
  return p2;
}

// The kernels' arguments for a plan (host code, shared by the launches and
// the emulation).
inline ResponseArgs response_args(const HarrisPlan& plan, const ImageView& src, float* resp,
                                  size_t resp_pitch, unsigned* max_bits) {
  ResponseArgs a{};
  const PlaneView p0 = src.plane(0);
  a.src = p0.data;
  a.src_pitch = p0.pitch;
  a.channels = plan.luma.channels;
  a.ro = plan.luma.r;
  a.go = plan.luma.g;
  a.bo = plan.luma.b;
  a.resp = resp;
  a.resp_pitch = resp_pitch;
  a.resp_vec4 = reinterpret_cast<uintptr_t>(resp) % 16 == 0 && resp_pitch % 16 == 0;
  a.width = plan.desc.width;
  a.height = plan.desc.height;
  a.border = plan.params.border;
  for (int t = 0; t < kHarrisMaxTaps; t++) {
    a.deriv[t] = plan.deriv[t];
    a.smooth[t] = plan.smooth[t];
    a.window[t] = plan.window[t];
  }
  a.word4 = plan.luma.channels == 4 && plan.luma.r >= 0 &&
            reinterpret_cast<uintptr_t>(p0.data) % 4 == 0 && p0.pitch % 4 == 0;
  const size_t vec_align = plan.luma.channels == 4 ? 16 : 4;
  a.vec = ((plan.luma.channels == 4 && plan.luma.r >= 0) ||
           (plan.luma.channels == 1 && plan.luma.r < 0)) &&
          reinterpret_cast<uintptr_t>(p0.data) % vec_align == 0 && p0.pitch % vec_align == 0;
  a.norm = plan.norm;
  a.k = plan.params.k;
  a.box = plan.params.window == HarrisWindow::Box;
  a.max_bits = max_bits;
  return a;
}

inline NmsArgs nms_args(const HarrisPlan& plan, const float* resp, size_t resp_pitch,
                        DeviceState* state, unsigned long long* keys) {
  NmsArgs n{};
  n.resp = resp;
  n.resp_pitch = resp_pitch;
  n.width = plan.desc.width;
  n.height = plan.desc.height;
  n.radius = plan.params.min_distance;
  n.relative = plan.params.threshold_mode == HarrisThresholdMode::Relative;
  n.threshold = plan.params.threshold;
  n.state = state;
  n.keys = keys;
  n.capacity = static_cast<unsigned>(plan.capacity);
  n.vec4 = reinterpret_cast<uintptr_t>(resp) % 16 == 0 && resp_pitch % 16 == 0;
  return n;
}

inline SelectArgs select_args(const HarrisPlan& plan, const unsigned long long* keys,
                              DeviceState* state, const float* resp, size_t resp_pitch,
                              uint8_t* result, uint8_t* host_result = nullptr) {
  SelectArgs a{};
  a.keys = keys;
  a.capacity = static_cast<unsigned>(plan.capacity);
  a.state = state;
  a.resp = resp;
  a.resp_pitch = resp_pitch;
  a.width = plan.desc.width;
  a.height = plan.desc.height;
  a.max_corners = static_cast<unsigned>(plan.params.max_corners);
  a.sort_capacity = sort_capacity(plan.params.max_corners);
  a.relative = plan.params.threshold_mode == HarrisThresholdMode::Relative;
  a.threshold = plan.params.threshold;
  a.subpixel = plan.params.subpixel;
  a.result = result;
  a.host_result = host_result;
  return a;
}

}  // namespace harris_kernels
}  // namespace cudafx

#include "harris/harris_fast_tile.hpp"
