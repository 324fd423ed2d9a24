// CUDA backend of the Canny op, on the caller's stream, in three launches:
//   1. front (a block a 32x32 tile): the grey bytes of the tile and its
//      ring into shared memory, dx, dy and the magnitude of the tile and a
//      one-pixel ring, then the non-maximum suppression and the thresholds
//      (canny_math.hpp, the CPU backend's functions); each warp row of 32
//      pixels leaves two bit words: candidates and strong pixels. Nothing
//      but those bits (2 bits a pixel, 2 MB at 2160p: L2-resident) reaches
//      memory;
//   2. hysteresis, a warp a 32x32 tile (a lane a row word): strong bits
//      grow into 8-connected candidate bits inside the tile until it
//      settles (a round: one row step up and down by shuffles, a whole run
//      along the row by a prefix fill); a tile whose border gained strong
//      pixels marks its neighbours for the next round of the whole frame.
//      The rounds run in one cooperative launch with a grid barrier between
//      them until a round changes no border, so strong pixels reach every
//      candidate connected to them, however far, with no host round trip.
//      (A device without cooperative launch runs one round a launch and
//      reads a flag back each round.)
//   3. the edges: 255 where strong (or the overlay's colour), 0 elsewhere.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "common/cuda_check.hpp"
#include "cudafx/canny.hpp"
#include "cudafx/canny_math.hpp"
#include "cudafx/rgb_luma.hpp"

namespace cudafx {
namespace {

constexpr int kTile = 32;       // pixels: a warp row, a bit word
constexpr int kFrontRowsY = 8;  // front blocks: 32 x 8 threads, 4 rows each
constexpr int kHystBlock = 256; // hysteresis: 8 warps a block, a tile a warp
constexpr unsigned kFull = 0xffffffffu;

// Device scratch: the bit planes, the tiles' "look again" marks for two
// rounds, and three round flags (see hysteresis_kernel).
struct Scratch {
  uint32_t* cand;    // words x rows: candidates (weak or strong)
  uint32_t* strong;  // words x rows
  uint8_t* dirty[2]; // a byte a tile
  int* more;         // [3]
  int words, rows, tiles_x, tiles_y;
};

// Sections on 256-byte boundaries (the flags take atomics and 4-byte
// stores; a frame of odd area must not misalign them).
constexpr size_t kSectionAlign = 256;
size_t section(size_t bytes) { return (bytes + kSectionAlign - 1) / kSectionAlign * kSectionAlign; }

// Places the sections in `base` (null: only sizes them); returns the bytes.
size_t lay_out(uint8_t* base, int w, int h, Scratch* s) {
  s->words = (w + kTile - 1) / kTile;
  s->rows = h;
  s->tiles_x = s->words;
  s->tiles_y = (h + kTile - 1) / kTile;
  const size_t plane = static_cast<size_t>(s->words) * h * sizeof(uint32_t);
  const size_t tiles = static_cast<size_t>(s->tiles_x) * s->tiles_y;
  size_t at = 0;
  auto take = [&](size_t bytes) {
    uint8_t* p = base ? base + at : nullptr;
    at += section(bytes);
    return p;
  };
  s->cand = reinterpret_cast<uint32_t*>(take(plane));
  s->strong = reinterpret_cast<uint32_t*>(take(plane));
  s->dirty[0] = take(tiles);
  s->dirty[1] = take(tiles);
  s->more = reinterpret_cast<int*>(take(3 * sizeof(int)));
  return at;
}

// Where the front reads its grey bytes: plane 0 and, for packed RGB, the
// byte positions of R, G and B (g < 0: the first byte of each pixel).
struct GreySource {
  const uint8_t* data;
  size_t pitch;
  int channels, r, g, b;
};

__device__ __forceinline__ uint8_t grey_at(const GreySource& src, int x, int y) {
  const uint8_t* px = src.data + static_cast<size_t>(y) * src.pitch +
                      static_cast<size_t>(x) * src.channels;
  if (src.g < 0)
    return __ldg(px);
  if (src.channels == 4 && (reinterpret_cast<uintptr_t>(px) & 3u) == 0) {
    const uint32_t v = __ldg(reinterpret_cast<const uint32_t*>(px));  // one load a pixel
    return static_cast<uint8_t>(luma_bt601((v >> (8 * src.r)) & 0xffu,
                                           (v >> (8 * src.g)) & 0xffu,
                                           (v >> (8 * src.b)) & 0xffu));
  }
  return static_cast<uint8_t>(luma_bt601(__ldg(px + src.r), __ldg(px + src.g), __ldg(px + src.b)));
}

// Step 1: the candidate and strong bits of one 32x32 tile. R: the Sobel
// radius (aperture / 2). Shared memory holds the grey bytes of the tile
// with R + 1 pixels around it (loaded from clamped positions: the
// replicated border), and the magnitudes of the tile with one pixel around
// it (0 outside the frame, as the rule says). A lane owns a column of the
// tile and a warp four rows: the Sobel runs separably down the column
// (row sums once a grey row, the column sums from registers), and the
// lane keeps its four dx, dy for the suppression.
template <int R>
__global__ void __launch_bounds__(kTile* kFrontRowsY)
    front_kernel(GreySource src, int w, int h, int l2, int low, int high, Scratch s) {
  constexpr int H = R + 1;
  constexpr int G = kTile + 2 * H;  // grey tile side
  constexpr int M = kTile + 2;      // magnitude tile side
  constexpr int kRows = kTile / kFrontRowsY;  // 4 rows a warp
  constexpr int kRing = 2 * M + 2 * kTile;    // magnitudes around the tile
  __shared__ uint8_t grey[G][G + 1];
  __shared__ int mag[M][M];
  const int x0 = blockIdx.x * kTile, y0 = blockIdx.y * kTile;
  const int lane = threadIdx.x, tid = threadIdx.y * kTile + threadIdx.x;
  constexpr int kThreads = kTile * kFrontRowsY;
  for (int i = tid; i < G * G; i += kThreads) {
    const int yy = i / G, xx = i - yy * G;
    const int x = min(max(x0 - H + xx, 0), w - 1), y = min(max(y0 - H + yy, 0), h - 1);
    grey[yy][xx] = grey_at(src, x, y);
  }
  __syncthreads();
  // The tile's own magnitudes: grey rows wy - R .. wy + 3 + R of column x.
  const int wy = threadIdx.y * kRows, x = x0 + lane;
  int hd[kRows + 2 * R], hs[kRows + 2 * R];
#pragma unroll
  for (int k = 0; k < kRows + 2 * R; k++) {
    int a = 0, b = 0;
#pragma unroll
    for (int j = -R; j <= R; j++) {
      const int v = grey[wy + k + 1][lane + H + j];  // position (x + j, y0 + wy + k - R)
      a += sobel_tap(R, j + R, true) * v;
      b += sobel_tap(R, j + R, false) * v;
    }
    hd[k] = a;
    hs[k] = b;
  }
  int dxs[kRows], dys[kRows];
#pragma unroll
  for (int q = 0; q < kRows; q++) {
    int gx = 0, gy = 0;
#pragma unroll
    for (int i = -R; i <= R; i++) {
      gx += sobel_tap(R, i + R, false) * hd[q + R + i];
      gy += sobel_tap(R, i + R, true) * hs[q + R + i];
    }
    canny_finish_gradient(gx, gy, R, &dxs[q], &dys[q]);
    const int y = y0 + wy + q;
    mag[wy + q + 1][lane + 1] = x < w && y < h ? canny_magnitude(dxs[q], dys[q], l2 != 0) : 0;
  }
  // The ring's magnitudes, a pixel a thread, the taps read directly.
  auto g = [&](int xs, int ys) { return static_cast<int>(grey[ys - (y0 - H)][xs - (x0 - H)]); };
  for (int i = tid; i < kRing; i += kThreads) {
    int xx, yy;
    if (i < 2 * M) {  // the rows above and below, corners included
      xx = i % M;
      yy = i < M ? 0 : M - 1;
    } else {          // the columns left and right
      xx = i < 2 * M + kTile ? 0 : M - 1;
      yy = 1 + (i - 2 * M) % kTile;
    }
    const int xr = x0 - 1 + xx, yr = y0 - 1 + yy;
    int m = 0;
    if (xr >= 0 && yr >= 0 && xr < w && yr < h) {
      int dx, dy;
      canny_gradient_at(g, xr, yr, R, &dx, &dy);
      m = canny_magnitude(dx, dy, l2 != 0);
    }
    mag[yy][xx] = m;
  }
  __syncthreads();
  // mag[] is 0 where the ring lies outside the frame: no checks.
  auto m = [&](int xs, int ys) { return mag[ys - (y0 - 1)][xs - (x0 - 1)]; };
#pragma unroll
  for (int q = 0; q < kRows; q++) {
    const int y = y0 + wy + q;
    uint8_t v = 0;
    if (x < w && y < h)
      v = canny_classify(m, x, y, dxs[q], dys[q], low, high);
    // A warp's row of 32 pixels: its ballots are the row's words.
    const uint32_t cand = __ballot_sync(kFull, v != 0), strong = __ballot_sync(kFull, v == 2);
    if (lane == 0 && y < h) {
      const size_t at = static_cast<size_t>(y) * s.words + blockIdx.x;
      s.cand[at] = cand;
      s.strong[at] = strong;
    }
  }
}

// The bits reachable from `seeds` along runs of `allowed` in both
// directions of the row (prefix fill, log2(32) steps each way).
__device__ __forceinline__ uint32_t fill_runs(uint32_t seeds, uint32_t allowed) {
  uint32_t up = seeds, down = seeds, pu = allowed, pd = allowed;
#pragma unroll
  for (int k = 1; k < 32; k <<= 1) {
    up |= pu & (up << k);
    pu &= pu << k;
    down |= pd & (down >> k);
    pd &= pd >> k;
  }
  return up | down;
}

// Row y's strong word (0 past the frame). Loads through L2 (__ldcg):
// neighbouring tiles write these words.
__device__ __forceinline__ uint32_t strong_word(const Scratch& s, int y, int word) {
  if (y < 0 || y >= s.rows || word < 0 || word >= s.words)
    return 0;
  return __ldcg(s.strong + static_cast<size_t>(y) * s.words + word);
}

// The tile's strong bits grown to closure inside it, its ring's strong
// pixels fixed seeds; returns (in every lane) which borders gained strong
// bits: 1 top, 2 bottom, 4 left, 8 right.
__device__ unsigned grow_tile(const Scratch& s, int tx, int ty, int lane) {
  const int y = ty * kTile + lane;
  const bool in = y < s.rows;
  const size_t at = static_cast<size_t>(y) * s.words + tx;
  const uint32_t cand = in ? __ldcg(s.cand + at) : 0u;
  const uint32_t before = strong_word(s, y, tx);
  // Nothing to grow into: done (the common case on most tiles).
  if (!__any_sync(kFull, (cand & ~before) != 0))
    return 0;
  // The ring, fixed while the tile grows: the rows above and below the
  // tile (lanes 0 and 31 use them), and per lane whether a strong pixel
  // of the columns left and right of the tile touches its row (rows
  // y - 1..y + 1): bit 0 and bit 31 seeds.
  const uint32_t top = lane == 0 ? strong_word(s, y - 1, tx) : 0u,
                 bottom = lane == kTile - 1 ? strong_word(s, y + 1, tx) : 0u;
  const uint32_t left = strong_word(s, y, tx - 1) >> 31, right = strong_word(s, y, tx + 1) & 1u;
  uint32_t left_near = left | __shfl_up_sync(kFull, left, 1) | __shfl_down_sync(kFull, left, 1);
  uint32_t right_near = right | __shfl_up_sync(kFull, right, 1) | __shfl_down_sync(kFull, right, 1);
  if (lane == 0) {
    left_near |= strong_word(s, y - 1, tx - 1) >> 31;
    right_near |= strong_word(s, y - 1, tx + 1) & 1u;
  }
  if (lane == kTile - 1) {
    left_near |= strong_word(s, y + 1, tx - 1) >> 31;
    right_near |= strong_word(s, y + 1, tx + 1) & 1u;
  }
  const uint32_t ring = (left_near ? 1u : 0u) | (right_near ? 0x80000000u : 0u);
  uint32_t row = before;
  for (;;) {
    uint32_t above = __shfl_up_sync(kFull, row, 1), below = __shfl_down_sync(kFull, row, 1);
    if (lane == 0)
      above = top;
    if (lane == kTile - 1)
      below = bottom;
    const uint32_t near = above | row | below;
    const uint32_t touched = (near | near << 1 | near >> 1 | ring) & cand;
    const uint32_t next = row | fill_runs(touched, cand);
    const bool changed = next != row;
    row = next;
    if (!__any_sync(kFull, changed))
      break;
  }
  const uint32_t gained = row & ~before;
  if (in && gained)
    __stcg(s.strong + at, row);
  unsigned border = 0;
  if (lane == 0 && gained)
    border |= 1;
  if (lane == kTile - 1 && gained)
    border |= 2;
  if (gained & 1u)
    border |= 4;
  if (gained >> 31)
    border |= 8;
  // OR over the warp.
  for (int o = 16; o > 0; o >>= 1)
    border |= __shfl_xor_sync(kFull, border, o);
  return border;
}

// Rounds of the hysteresis from `round` on, at most `rounds` of them (one
// when not launched cooperatively). Round 0 visits every tile; round k > 0
// the tiles marked in dirty[k & 1] by round k - 1, clearing the marks as
// it takes them. A tile whose border gained strong bits marks its
// neighbours on those sides in dirty[(k + 1) & 1] and raises more[(k + 1)
// % 3]; after the grid barrier everyone reads that flag to decide whether
// to go on. Block 0 clears more[(k + 2) % 3] during round k: its last
// readers read it right after the barrier that ended round k - 2.
// Neighbouring tiles read each other's border words while they are being
// written: aligned 32-bit words that only ever gain bits, so a reader sees
// the old or the new word, and a border change it missed brings it back
// next round through its mark.
__global__ void __launch_bounds__(kHystBlock)
    hysteresis_kernel(Scratch s, int round, int rounds) {
  const int lane = threadIdx.x & 31;
  const int warp = (blockIdx.x * kHystBlock + threadIdx.x) >> 5;
  const int warps = (gridDim.x * kHystBlock) >> 5;
  const int tiles = s.tiles_x * s.tiles_y;
  for (int k = round; k < round + rounds; k++) {
    if (blockIdx.x == 0 && threadIdx.x == 0)
      s.more[(k + 2) % 3] = 0;
    // (selects, not s.dirty[k & 1]: a dynamic index would put the
    // parameter on the stack)
    uint8_t* marks = k & 1 ? s.dirty[1] : s.dirty[0];
    uint8_t* next = k & 1 ? s.dirty[0] : s.dirty[1];
    for (int t = warp; t < tiles; t += warps) {
      if (k > 0) {
        if (!__ldcg(marks + t))
          continue;
        if (lane == 0)
          marks[t] = 0;
      }
      const int tx = t % s.tiles_x, ty = t / s.tiles_x;
      const unsigned border = grow_tile(s, tx, ty, lane);
      if (border && lane == 0) {
        const bool top = border & 1, bottom = border & 2, left = border & 4, right = border & 8;
        // The neighbours that can see a changed border pixel.
        for (int dy = -1; dy <= 1; dy++)
          for (int dx = -1; dx <= 1; dx++) {
            if (dx == 0 && dy == 0)
              continue;
            const bool sees = (dy == -1 && top) || (dy == 1 && bottom) || (dx == -1 && left) ||
                              (dx == 1 && right);
            const int nx = tx + dx, ny = ty + dy;
            if (sees && nx >= 0 && ny >= 0 && nx < s.tiles_x && ny < s.tiles_y)
              next[ny * s.tiles_x + nx] = 1;
          }
        s.more[(k + 1) % 3] = 1;
      }
    }
    if (rounds == 1)
      return;
    cooperative_groups::this_grid().sync();
    if (!__ldcg(s.more + (k + 1) % 3))
      return;
  }
}

// Step 3, four pixels a thread (one nibble of a strong word). colour: 0
// for 255/0 bytes, else the premultiplied B, G, R, A bytes of an edge
// pixel in one word (4-byte pixels, 0 elsewhere).
__global__ void edges_kernel(Scratch s, int w, int h, uint8_t* out, size_t pitch, int overlay,
                             uint32_t colour) {
  const int x = 4 * (blockIdx.x * blockDim.x + threadIdx.x), y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h)
    return;
  const uint32_t word = __ldg(s.strong + static_cast<size_t>(y) * s.words + x / kTile);
  const uint32_t bits = (word >> (x % kTile)) & 0xfu;  // bits past w are 0
  const int n = min(4, w - x);
  uint8_t* o = out + static_cast<size_t>(y) * pitch;
  if (!overlay) {
    // bit k -> byte k: 0x01 spread to each byte, then times 255
    const uint32_t bytes = ((bits * 0x00204081u) & 0x01010101u) * 255u;
    uint8_t* px = o + x;
    if (n == 4 && (reinterpret_cast<uintptr_t>(px) & 3u) == 0) {
      *reinterpret_cast<uint32_t*>(px) = bytes;
      return;
    }
    for (int k = 0; k < n; k++)
      px[k] = static_cast<uint8_t>(bytes >> (8 * k));
    return;
  }
  uint32_t v[4];
  for (int k = 0; k < 4; k++)
    v[k] = (bits >> k) & 1u ? colour : 0u;
  uint8_t* px = o + 4 * static_cast<size_t>(x);
  if (n == 4 && (reinterpret_cast<uintptr_t>(px) & 15u) == 0) {
    *reinterpret_cast<uint4*>(px) = make_uint4(v[0], v[1], v[2], v[3]);
    return;
  }
  for (int k = 0; k < n; k++)
    for (int c = 0; c < 4; c++)
      px[4 * k + c] = static_cast<uint8_t>(v[k] >> (8 * c));
}

size_t scratch_bytes(int w, int h) {
  Scratch unused;
  return lay_out(nullptr, w, h, &unused);
}

Status launch_front(int radius, dim3 grid, cudaStream_t st, const GreySource& src, int w, int h,
                    int l2, int low, int high, const Scratch& s) {
  const dim3 block(kTile, kFrontRowsY);
  switch (radius) {
    case 1: front_kernel<1><<<grid, block, 0, st>>>(src, w, h, l2, low, high, s); break;
    case 2: front_kernel<2><<<grid, block, 0, st>>>(src, w, h, l2, low, high, s); break;
    case 3: front_kernel<3><<<grid, block, 0, st>>>(src, w, h, l2, low, high, s); break;
    default: return Status::invalid("Canny: aperture must be 3, 5 or 7");
  }
  CUDAFX_CUDA_TRY(cudaGetLastError());
  return Status::ok();
}

}  // namespace

Status CannyOp::prepare_cuda() {
  CUDAFX_TRY(device_.allocate(scratch_bytes(desc_.width, desc_.height)));
  CUDAFX_TRY(flag_.allocate(sizeof(int)));
  // The cooperative grid: as many blocks as can be resident at once (the
  // grid barrier needs them all), no more than the tiles need.
  int device = 0, cooperative = 0, sms = 0, per_sm = 0;
  CUDAFX_CUDA_TRY(cudaGetDevice(&device));
  CUDAFX_CUDA_TRY(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device));
  CUDAFX_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDAFX_CUDA_TRY(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, hysteresis_kernel, kHystBlock, 0));
  Scratch s;
  lay_out(nullptr, desc_.width, desc_.height, &s);
  const int warps_a_block = kHystBlock / 32;
  const int needed = (s.tiles_x * s.tiles_y + warps_a_block - 1) / warps_a_block;
  cooperative_blocks_ = cooperative && per_sm > 0 ? std::min(needed, per_sm * sms) : 0;
  return Status::ok();
}

Status CannyOp::submit_cuda(StreamHandle stream, const ImageView& src, const PlaneView& edges,
                            const uint8_t* colour) {
  cudaStream_t st = stream;
  const int w = desc_.width, h = desc_.height;
  Scratch s;
  lay_out(static_cast<uint8_t*>(device_.get()), w, h, &s);
  const PlaneView p = src.plane(0);
  GreySource g{p.data, p.pitch, p.channels, 0, -1, -1};
  RgbBytes rgb;
  if (rgb_bytes(desc_.format, &rgb))
    g = GreySource{p.data, p.pitch, rgb.channels, rgb.r, rgb.g, rgb.b};
  CUDAFX_TRY(launch_front(params_.aperture / 2, dim3(s.tiles_x, s.tiles_y), st, g, w, h,
                          params_.l2, low_, high_, s));
  // The marks and flags start clear (dirty[0], more[] and dirty[1] are
  // adjacent sections).
  CUDAFX_CUDA_TRY(cudaMemsetAsync(s.dirty[0], 0,
                                  reinterpret_cast<uint8_t*>(s.more + 3) - s.dirty[0], st));
  if (cooperative_blocks_ > 0 && !host_rounds_) {
    int round = 0, rounds = 1 << 30;
    void* args[] = {&s, &round, &rounds};
    CUDAFX_CUDA_TRY(cudaLaunchCooperativeKernel(reinterpret_cast<void*>(hysteresis_kernel),
                                                dim3(cooperative_blocks_), dim3(kHystBlock),
                                                args, 0, st));
  } else {
    // A round a launch, the flag read back after each.
    const int blocks = (s.tiles_x * s.tiles_y * 32 + kHystBlock - 1) / kHystBlock;
    auto* more = static_cast<int*>(flag_.get());
    for (int k = 0;; k++) {
      hysteresis_kernel<<<blocks, kHystBlock, 0, st>>>(s, k, 1);
      CUDAFX_CUDA_TRY(cudaGetLastError());
      CUDAFX_CUDA_TRY(cudaMemcpyAsync(more, s.more + (k + 1) % 3, sizeof(int),
                                      cudaMemcpyDeviceToHost, st));
      CUDAFX_CUDA_TRY(cudaStreamSynchronize(st));
      if (*more == 0)
        break;
    }
  }
  const uint32_t word = colour ? colour[0] | colour[1] << 8 | colour[2] << 16 |
                                     static_cast<uint32_t>(colour[3]) << 24
                              : 0u;
  const dim3 block(32, 8), grid((w + 127) / 128, (h + 7) / 8);
  edges_kernel<<<grid, block, 0, st>>>(s, w, h, edges.data, edges.pitch, colour != nullptr, word);
  CUDAFX_CUDA_TRY(cudaGetLastError());
  return Status::ok();
}

}  // namespace cudafx
