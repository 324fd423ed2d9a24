// CUDA backend of the Canny op, on the caller's stream:
//   1. grey bytes (a thread a pixel);
//   2. dx, dy and the magnitude (a thread a pixel, the taps over the grey
//      plane through the read-only cache; canny_math.hpp);
//   3. the classification (0, 1 weak, 2 strong), a thread a pixel;
//   4. the hysteresis: a pass lets every 32x32 tile spread strong pixels to
//      its 8-connected weak ones in shared memory until the tile settles
//      (its one-pixel ring read, not written), counting the pixels it
//      changed; passes are queued 8 at a time and the count read back
//      (one stream synchronisation) until a round changes nothing: strong
//      pixels then reach every candidate connected to them, however far;
//   5. the edges, 255 where strong (or an overlay's colour, 0 elsewhere).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "common/cuda_check.hpp"
#include "cudafx/canny.hpp"
#include "cudafx/canny_math.hpp"
#include "cudafx/rgb_luma.hpp"

namespace cudafx {
namespace {

constexpr int kTile = 32;
constexpr int kTileThreadsY = 8;  // hysteresis blocks: kTile x 8 threads
constexpr int kPassesARound = 8;

struct Scratch {
  uint8_t* grey;
  int16_t* dx;
  int16_t* dy;
  int32_t* mag;
  uint8_t* map;
  unsigned int* changed;  // device counter
};

// Sections of the one scratch allocation, each on a 256-byte boundary: the
// counter's atomics need 4-byte alignment and a frame of odd area would put
// it on an odd address if the sections were simply packed.
constexpr size_t kSectionAlign = 256;

size_t section(size_t bytes) { return (bytes + kSectionAlign - 1) / kSectionAlign * kSectionAlign; }

// Places the sections in `base` (null: only sizes them); returns the bytes.
size_t lay_out(uint8_t* base, int w, int h, Scratch* s) {
  const size_t n = static_cast<size_t>(w) * h;
  size_t at = 0;
  auto take = [&](size_t bytes) {
    uint8_t* p = base ? base + at : nullptr;
    at += section(bytes);
    return p;
  };
  s->mag = reinterpret_cast<int32_t*>(take(4 * n));
  s->dx = reinterpret_cast<int16_t*>(take(2 * n));
  s->dy = reinterpret_cast<int16_t*>(take(2 * n));
  s->grey = take(n);
  s->map = take(n);
  s->changed = reinterpret_cast<unsigned int*>(take(sizeof(unsigned int)));
  return at;
}

Scratch scratch_of(void* base, int w, int h) {
  Scratch s;
  lay_out(static_cast<uint8_t*>(base), w, h, &s);
  return s;
}

__global__ void grey_kernel(const uint8_t* src, size_t pitch, int w, int h, int channels, int r,
                            int g, int b, uint8_t* grey) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h)
    return;
  const uint8_t* px = src + static_cast<size_t>(y) * pitch + static_cast<size_t>(x) * channels;
  grey[static_cast<size_t>(y) * w + x] =
      g < 0 ? px[r] : static_cast<uint8_t>(luma_bt601(px[r], px[g], px[b]));
}

__global__ void gradient_kernel(Scratch s, int w, int h, int radius, int l2) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h)
    return;
  const uint8_t* grey = s.grey;
  auto g = [&](int xs, int ys) {
    return static_cast<int>(__ldg(grey + static_cast<size_t>(ys) * w + xs));
  };
  int dx, dy;
  canny_gradient(g, x, y, w, h, radius, &dx, &dy);
  const size_t i = static_cast<size_t>(y) * w + x;
  s.dx[i] = static_cast<int16_t>(dx);
  s.dy[i] = static_cast<int16_t>(dy);
  s.mag[i] = canny_magnitude(dx, dy, l2 != 0);
}

__global__ void classify_kernel(Scratch s, int w, int h, int low, int high) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h)
    return;
  const int32_t* mag = s.mag;
  auto m = [&](int xs, int ys) {
    return xs < 0 || ys < 0 || xs >= w || ys >= h ? 0
                                                  : __ldg(mag + static_cast<size_t>(ys) * w + xs);
  };
  const size_t i = static_cast<size_t>(y) * w + x;
  s.map[i] = canny_classify(m, x, y, s.dx[i], s.dy[i], low, high);
}

// One hysteresis pass over 32x32 tiles (blocks of 32x8 threads, 4 rows a
// thread): the tile grows its strong pixels into their weak neighbours
// round by round until a round changes nothing.
__global__ void hysteresis_kernel(Scratch s, int w, int h) {
  __shared__ uint8_t t[kTile + 2][kTile + 2];
  __shared__ int settled;
  __shared__ unsigned int changed;
  const int x0 = blockIdx.x * kTile, y0 = blockIdx.y * kTile;
  if (threadIdx.x == 0 && threadIdx.y == 0)
    changed = 0;
  for (int yy = threadIdx.y; yy < kTile + 2; yy += blockDim.y)
    for (int xx = threadIdx.x; xx < kTile + 2; xx += blockDim.x) {
      const int x = x0 + xx - 1, y = y0 + yy - 1;
      t[yy][xx] = x < 0 || y < 0 || x >= w || y >= h ? 0 : s.map[static_cast<size_t>(y) * w + x];
    }
  __syncthreads();
  // Each round reads the tile, then (after a barrier) writes what it
  // found: no thread reads a byte another writes in the same phase.
  constexpr int kRows = kTile / kTileThreadsY;
  unsigned int mine = 0;
  for (;;) {
    if (threadIdx.x == 0 && threadIdx.y == 0)
      settled = 1;
    __syncthreads();
    bool grow[kRows];
#pragma unroll
    for (int k = 0; k < kRows; k++) {
      const int yy = 1 + threadIdx.y + k * kTileThreadsY, xx = 1 + threadIdx.x;
      grow[k] = t[yy][xx] == 1 &&
                (t[yy - 1][xx - 1] == 2 || t[yy - 1][xx] == 2 || t[yy - 1][xx + 1] == 2 ||
                 t[yy][xx - 1] == 2 || t[yy][xx + 1] == 2 || t[yy + 1][xx - 1] == 2 ||
                 t[yy + 1][xx] == 2 || t[yy + 1][xx + 1] == 2);
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kRows; k++) {
      if (grow[k]) {
        t[1 + threadIdx.y + k * kTileThreadsY][1 + threadIdx.x] = 2;
        settled = 0;
        mine++;
      }
    }
    __syncthreads();
    if (settled)
      break;
    __syncthreads();
  }
  for (int yy = 1 + threadIdx.y; yy <= kTile; yy += blockDim.y) {
    const int x = x0 + threadIdx.x, y = y0 + yy - 1;
    if (x < w && y < h && t[yy][1 + threadIdx.x] == 2)
      s.map[static_cast<size_t>(y) * w + x] = 2;
  }
  if (mine)
    atomicAdd(&changed, mine);
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && changed)
    atomicAdd(s.changed, changed);
}

// colour: 0 for 255/0 bytes, else the premultiplied B, G, R, A bytes of an
// edge pixel in one word (4-byte pixels, 0 elsewhere).
__global__ void edges_kernel(Scratch s, int w, int h, uint8_t* out, size_t pitch, int overlay,
                             uint32_t colour) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h)
    return;
  const bool edge = s.map[static_cast<size_t>(y) * w + x] == 2;
  uint8_t* o = out + static_cast<size_t>(y) * pitch;
  if (!overlay) {
    o[x] = edge ? 255 : 0;
    return;
  }
  const uint32_t v = edge ? colour : 0u;
  for (int c = 0; c < 4; c++)
    o[4 * x + c] = static_cast<uint8_t>(v >> (8 * c));
}

size_t scratch_bytes(int w, int h) {
  Scratch unused;
  return lay_out(nullptr, w, h, &unused);
}

}  // namespace

Status CannyOp::prepare_cuda() {
  CUDAFX_TRY(device_.allocate(scratch_bytes(desc_.width, desc_.height)));
  return flag_.allocate(sizeof(unsigned int));
}

Status CannyOp::submit_cuda(StreamHandle stream, const ImageView& src, const PlaneView& edges,
                            const uint8_t* colour) {
  cudaStream_t st = stream;
  const int w = desc_.width, h = desc_.height;
  const Scratch s = scratch_of(device_.get(), w, h);
  const dim3 block(32, 8), grid((w + 31) / 32, (h + 7) / 8);
  const PlaneView p = src.plane(0);
  RgbBytes rgb;
  if (rgb_bytes(desc_.format, &rgb))
    grey_kernel<<<grid, block, 0, st>>>(p.data, p.pitch, w, h, rgb.channels, rgb.r, rgb.g, rgb.b,
                                        s.grey);
  else
    grey_kernel<<<grid, block, 0, st>>>(p.data, p.pitch, w, h, p.channels, 0, -1, -1, s.grey);
  gradient_kernel<<<grid, block, 0, st>>>(s, w, h, params_.aperture / 2, params_.l2);
  classify_kernel<<<grid, block, 0, st>>>(s, w, h, low_, high_);
  CUDAFX_CUDA_TRY(cudaGetLastError());
  const dim3 tiles((w + kTile - 1) / kTile, (h + kTile - 1) / kTile);
  auto* count = static_cast<unsigned int*>(flag_.get());
  for (;;) {
    CUDAFX_CUDA_TRY(cudaMemsetAsync(s.changed, 0, sizeof(unsigned int), st));
    for (int i = 0; i < kPassesARound; i++)
      hysteresis_kernel<<<tiles, dim3(kTile, kTileThreadsY), 0, st>>>(s, w, h);
    CUDAFX_CUDA_TRY(cudaGetLastError());
    CUDAFX_CUDA_TRY(cudaMemcpyAsync(count, s.changed, sizeof(unsigned int),
                                    cudaMemcpyDeviceToHost, st));
    CUDAFX_CUDA_TRY(cudaStreamSynchronize(st));
    if (*count == 0)
      break;
  }
  const uint32_t word = colour ? colour[0] | colour[1] << 8 | colour[2] << 16 |
                                     static_cast<uint32_t>(colour[3]) << 24
                              : 0u;
  edges_kernel<<<grid, block, 0, st>>>(s, w, h, edges.data, edges.pitch, colour != nullptr,
                                       word);
  CUDAFX_CUDA_TRY(cudaGetLastError());
  return Status::ok();
}

}  // namespace cudafx
