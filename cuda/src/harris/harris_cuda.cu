// CUDA backend of the Harris op: three kernels and one copy per frame, all
// on the caller's stream.
//
// 1. harris_response_kernel: one pass over the frame. A block of 256
//    threads owns a 64x16 tile of responses (32x16 with 64-bit sums). A
//    tile whose halo lies inside the frame runs the fast stages
//    (ResponseFastTile, harris_fast_tile.hpp: runs of 4 outputs an item,
//    constant Sobel taps, running box sums); the others run, in 32-column
//    slices, the staged tile with the border rule. The staged tile:
//    a block owns a 32x16 tile of responses; in shared memory it builds,
//    stage by stage (one barrier each; ResponseTile in harris_kernels.hpp),
//    the grey tile with a halo of gradient_radius + block_radius (luma
//    conversion and border rule applied while loading), the row pass of the
//    Sobel filters at the tile's product columns, the column pass (Ix, Iy
//    at the product positions: the tile plus block_radius around it, each
//    through the border rule as the CPU does), the horizontal window sums
//    of Ix^2, IxIy, Iy^2, and finally the vertical sums and harris_response.
//    Integers up to the sums: int64, or uint32 modulo 2^32 where the plan
//    proves the sums fit (HarrisPlan::narrow), the same integers either way.
//    The block's largest response goes to the frame maximum with one
//    atomicMax on its bits (positive floats order as their bits).
// 2. harris_nms_kernel: a thread per 4 pixels of a row (one 16-byte load);
//    a pixel above the threshold
//    scans its (2r+1)^2 square in the response (L2-resident after kernel 1)
//    and stops at the first pixel that beats it; survivors append their
//    sort key (score, position) through one atomicAdd per warp. The append
//    order varies from run to run; nothing downstream depends on it.
// 3. harris_select_kernel: one block of 1024 threads. With n candidates,
//    when n fits the shared sort buffer all are sorted; otherwise a radix
//    select over the keys (8 bits a pass, from the top, stopping as soon as
//    the boundary bucket is taken whole) finds the max_corners smallest
//    keys, which are gathered and sorted. Keys are unique, so the selected
//    set and the bitonic sort's result are the same whatever the order of
//    the candidates: the list is deterministic and equals the CPU's. The
//    kernel writes the header and the corners (sub-pixel refinement from
//    the response) into device memory, and one async copy brings
//    header + max_corners corners to the op's pinned memory.
//
// The per-item code of all three is in harris_kernels.hpp, which
// harris_emulate.cpp also runs on the host (HarrisOp tests compare that
// emulation with the CPU backend in every build).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "common/cuda_check.hpp"
#include "cudafx/harris.hpp"
#include "cudafx/harris_math.hpp"
#include "harris/harris_kernels.hpp"

namespace cudafx {
namespace {

using namespace harris_kernels;

constexpr size_t kAlign = 256;

template <int GR, int BR, class Acc>
__global__ void __launch_bounds__(kThreads)
    harris_response_kernel(const __grid_constant__ ResponseArgs a) {
  using Fast = ResponseFastTile<GR, BR, Acc>;
  using Tile = ResponseTile<GR, BR, Acc>;
  // Interior blocks run the fast stages, the others (their halo crosses an
  // edge of the frame) the staged tile with the border rule, in
  // kTileW-column slices.
  union Shared {
    Fast fast;
    Tile tile;
  };
  __shared__ Shared sm;
  __shared__ float warp_max[kThreads / 32];
  const int x0 = blockIdx.x * Fast::kFastW, y0 = blockIdx.y * kFastH;
  const int tid = threadIdx.x;
  float local_max = 0.0f;

  if (Fast::fits(a, x0, y0)) {
    for (int i = tid; i < Fast::kLoadItems; i += kThreads)
      sm.fast.load(a, x0, y0, i);
    __syncthreads();
    for (int i = tid; i < Fast::kRowItems; i += kThreads)
      sm.fast.rows(i);
    __syncthreads();
    for (int i = tid; i < Fast::kColItems; i += kThreads)
      sm.fast.cols(i);
    __syncthreads();
    for (int i = tid; i < Fast::kHsumItems; i += kThreads)
      sm.fast.hsum(a, i);
    __syncthreads();
    for (int i = tid; i < Fast::kOutputItems; i += kThreads)
      local_max = fmaxf(local_max, sm.fast.output(a, x0, y0, i));
  } else {
    for (int xs = x0; xs < x0 + Fast::kFastW && xs < a.width; xs += kTileW) {
      for (int i = tid; i < Tile::kLoadItems; i += kThreads)
        sm.tile.load(a, xs, y0, i);
      __syncthreads();
      for (int i = tid; i < Tile::kRowItems; i += kThreads)
        sm.tile.rows(a, xs, i);
      __syncthreads();
      for (int i = tid; i < Tile::kColItems; i += kThreads)
        sm.tile.cols(a, y0, i);
      __syncthreads();
      for (int i = tid; i < Tile::kHsumItems; i += kThreads)
        sm.tile.hsum(a, i);
      __syncthreads();
      for (int i = tid; i < Tile::kOutputItems; i += kThreads)
        local_max = fmaxf(local_max, sm.tile.output(a, xs, y0, i));
      __syncthreads();  // the next slice overwrites the tile
    }
  }

  if (a.max_bits) {  // the same for the whole grid
#pragma unroll
    for (int off = 16; off > 0; off >>= 1)
      local_max = fmaxf(local_max, __shfl_xor_sync(0xffffffffu, local_max, off));
    if ((tid & 31) == 0)
      warp_max[tid >> 5] = local_max;
    __syncthreads();
    if (tid == 0) {
      float m = warp_max[0];
      for (int w = 1; w < kThreads / 32; w++)
        m = fmaxf(m, warp_max[w]);
      const unsigned bits = __float_as_uint(m);
      // Skip the atomic when a larger maximum is already there.
      if (m > 0.0f && bits > *reinterpret_cast<volatile unsigned*>(a.max_bits))
        atomicMax(a.max_bits, bits);
    }
  }
}

__global__ void __launch_bounds__(kNmsW* kNmsH) harris_nms_kernel(const __grid_constant__ NmsArgs a) {
  const int x0 = (blockIdx.x * kNmsW + threadIdx.x) * kNmsRun;
  const int y = blockIdx.y * kNmsH + threadIdx.y;
  const float t = harris_threshold(a.relative, a.threshold, __uint_as_float(a.state->max_bits));
  float v[kNmsRun];
  bool keep[kNmsRun];
  nms_run(a, t, x0, y, v, keep);
  // One atomicAdd per warp and run position (blockDim.x is 32: a warp is
  // one row of the block); every thread of the warp reaches the ballots.
  const int lane = threadIdx.x;
#pragma unroll
  for (int k = 0; k < kNmsRun; k++) {
    const unsigned mask = __ballot_sync(0xffffffffu, keep[k]);
    if (!mask)
      continue;
    unsigned base = 0;
    if (lane == 0)
      base = atomicAdd(&a.state->count, static_cast<unsigned>(__popc(mask)));
    base = __shfl_sync(0xffffffffu, base, 0);
    if (keep[k]) {
      const unsigned slot = base + __popc(mask & ((1u << lane) - 1u));
      if (slot < a.capacity)  // never false: capacity bounds the corners of a frame
        a.keys[slot] = harris_key(v[k], static_cast<uint32_t>(y) * a.width + x0 + k);
    }
  }
}

__global__ void __launch_bounds__(kSelectThreads)
    harris_select_kernel(const __grid_constant__ SelectArgs a) {
  extern __shared__ unsigned long long sk[];  // sort_capacity keys
  __shared__ SelectShared sh;
  const unsigned tid = threadIdx.x, nt = blockDim.x;
  const unsigned n = min(a.state->count, a.capacity);
  const unsigned m = min(n, a.max_corners);

  unsigned loaded;
  if (n <= a.sort_capacity) {
    for (unsigned i = tid; i < n; i += nt)
      sk[i] = a.keys[i];
    loaded = n;
  } else {
    // The m smallest keys: the prefix of the m-th smallest, 8 bits at a
    // time from the top, until every key with the prefix is wanted.
    if (tid == 0) {
      sh.prefix = 0;
      sh.mask = 0;
      sh.need = m;
      sh.done = 0;
      sh.count = 0;
    }
    __syncthreads();
    for (int shift = 56; shift >= 0; shift -= 8) {
      for (unsigned i = tid; i < 256; i += nt)
        sh.hist[i] = 0;
      __syncthreads();
      const unsigned long long prefix = sh.prefix, mask = sh.mask;
      for (unsigned i = tid; i < n; i += nt) {
        const unsigned long long k = a.keys[i];
        if ((k & mask) == prefix)
          atomicAdd(&sh.hist[(k >> shift) & 0xffu], 1u);
      }
      __syncthreads();
      if (tid == 0)
        radix_step(sh, shift);
      __syncthreads();
      if (sh.done)
        break;
    }
    // Keys whose top bits (under the mask) are at most the prefix: exactly
    // m of them (keys are unique), in any order.
    const unsigned long long prefix = sh.prefix, mask = sh.mask;
    for (unsigned i = tid; i < n; i += nt) {
      const unsigned long long k = a.keys[i];
      if ((k & mask) <= prefix) {
        const unsigned slot = atomicAdd(&sh.count, 1u);
        if (slot < a.sort_capacity)
          sk[slot] = k;
      }
    }
    loaded = m;
  }
  __syncthreads();

  // Bitonic sort, padded to a power of two with keys above any real one.
  unsigned p2 = 1;
  while (p2 < loaded)
    p2 <<= 1;
  for (unsigned i = loaded + tid; i < p2; i += nt)
    sk[i] = ~0ull;
  __syncthreads();
  for (unsigned k = 2; k <= p2; k <<= 1) {
    for (unsigned j = k >> 1; j > 0; j >>= 1) {
      for (unsigned i = tid; i < p2; i += nt)
        bitonic_item(sk, i, j, k);
      __syncthreads();
    }
  }

  const float max_r = __uint_as_float(a.state->max_bits);
  if (tid == 0) {
    HarrisResultHeader h;
    h.count = m;
    h.candidates = n;
    h.max_response = max_r;
    h.threshold = harris_threshold(a.relative, a.threshold, max_r);
    *reinterpret_cast<HarrisResultHeader*>(a.result) = h;
  }
  HarrisCorner* out = reinterpret_cast<HarrisCorner*>(a.result + sizeof(HarrisResultHeader));
  for (unsigned i = tid; i < m; i += nt) {
    HarrisCorner c;
    harris_corner_of(sk[i], a.resp, a.resp_pitch, a.width, a.height, a.subpixel, &c.x, &c.y,
                     &c.score);
    out[i] = c;
  }
}

size_t align_up(size_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

size_t result_bytes(const HarrisPlan& plan) {
  return sizeof(HarrisResultHeader) +
         static_cast<size_t>(plan.params.max_corners) * sizeof(HarrisCorner);
}

template <int GR, int BR, class Acc>
void launch_response(const ResponseArgs& a, cudaStream_t s) {
  const dim3 grid((a.width + ResponseFastTile<GR, BR, Acc>::kFastW - 1) / ResponseFastTile<GR, BR, Acc>::kFastW,
                  (a.height + kFastH - 1) / kFastH);
  harris_response_kernel<GR, BR, Acc><<<grid, kThreads, 0, s>>>(a);
}

template <int GR, int BR>
void launch_response(const ResponseArgs& a, bool narrow, cudaStream_t s) {
  if constexpr (GR <= 2) {
    if (narrow)
      return launch_response<GR, BR, unsigned>(a, s);
  }
  launch_response<GR, BR, long long>(a, s);
}

template <int GR>
void launch_response(const ResponseArgs& a, int br, bool narrow, cudaStream_t s) {
  switch (br) {
    case 1:
      return launch_response<GR, 1>(a, narrow, s);
    case 2:
      return launch_response<GR, 2>(a, narrow, s);
    default:
      return launch_response<GR, 3>(a, narrow, s);
  }
}

}  // namespace

Status harris_cuda_prepare(const HarrisPlan& plan, HarrisCudaBuffers* b) {
  // The fast stages compile the Sobel taps in: they must be the plan's.
  for (int t = 0; t <= 2 * plan.grad_radius; t++)
    if (plan.deriv[t] != sobel_deriv(plan.grad_radius, t) ||
        plan.smooth[t] != sobel_smooth(plan.grad_radius, t))
      return Status::error(StatusCode::Internal, "harris: the kernels' Sobel taps differ from the plan's");
  const int W = plan.desc.width, H = plan.desc.height;
  const size_t res = result_bytes(plan);
  b->response_pitch = align_up(static_cast<size_t>(W) * sizeof(float));
  b->result_at = align_up(sizeof(DeviceState));
  b->keys_at = b->result_at + align_up(res);
  b->response_at = b->keys_at + align_up(plan.capacity * sizeof(unsigned long long));
  const size_t total = b->response_at + b->response_pitch * static_cast<size_t>(H);
  if (b->device.size() < total)
    CUDAFX_TRY(b->device.allocate(total));
  if (b->host.size() < res)
    CUDAFX_TRY(b->host.allocate(res));
  *reinterpret_cast<HarrisResultHeader*>(b->host.get()) = HarrisResultHeader{0, 0, 0.0f, 0.0f};

  const unsigned capacity = sort_capacity(plan.params.max_corners);
  const size_t shared = capacity * sizeof(unsigned long long);
  int device = 0, optin = 0;
  CUDAFX_CUDA_TRY(cudaGetDevice(&device));
  CUDAFX_CUDA_TRY(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  cudaFuncAttributes attr;
  CUDAFX_CUDA_TRY(cudaFuncGetAttributes(&attr, harris_select_kernel));
  if (shared + attr.sharedSizeBytes > static_cast<size_t>(optin)) {
    const size_t fit = (static_cast<size_t>(optin) - attr.sharedSizeBytes) / sizeof(unsigned long long);
    size_t most = kMinSortCapacity;
    while (most * 2 <= fit)
      most *= 2;
    return Status::error(StatusCode::Unsupported,
                         "max-corners " + std::to_string(plan.params.max_corners) +
                             " needs " + std::to_string(shared) +
                             " bytes of shared memory to sort; this GPU allows " +
                             std::to_string(optin) + ": use at most " + std::to_string(most));
  }
  CUDAFX_CUDA_TRY(cudaFuncSetAttribute(harris_select_kernel,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(shared)));
  b->sort_capacity = static_cast<int>(capacity);
  return Status::ok();
}

Status harris_cuda(const HarrisPlan& plan, const ImageView& src, const HarrisResponseView& response,
                   bool detect, HarrisCudaBuffers* b, StreamHandle stream) {
  CUDAFX_TRY(validate_view(src, plan.desc, "harris source"));
  if (response.data)
    CUDAFX_TRY(harris_check_response(plan, response, "harris response"));
  const size_t res = result_bytes(plan);
  if (!b->device.get() || b->sort_capacity < plan.params.max_corners || b->host.size() < res)
    return Status::invalid("harris: the CUDA buffers were not prepared for this plan");
  cudaStream_t s = stream;
  const int W = plan.desc.width, H = plan.desc.height;
  uint8_t* base = b->device.bytes();
  auto* state = reinterpret_cast<DeviceState*>(base);
  float* resp = response.data ? response.data : reinterpret_cast<float*>(base + b->response_at);
  const size_t resp_pitch = response.data ? response.pitch : b->response_pitch;

  if (detect)
    CUDAFX_CUDA_TRY(cudaMemsetAsync(state, 0, sizeof(DeviceState), s));

  const ResponseArgs a =
      response_args(plan, src, resp, resp_pitch, detect ? &state->max_bits : nullptr);
  switch (plan.grad_radius) {
    case 1:
      launch_response<1>(a, plan.block_radius, plan.narrow, s);
      break;
    case 2:
      launch_response<2>(a, plan.block_radius, plan.narrow, s);
      break;
    default:
      launch_response<3>(a, plan.block_radius, plan.narrow, s);
      break;
  }
  CUDAFX_CUDA_TRY(cudaGetLastError());
  if (!detect)
    return Status::ok();

  auto* keys = reinterpret_cast<unsigned long long*>(base + b->keys_at);
  const dim3 nms_grid((W + kNmsW * kNmsRun - 1) / (kNmsW * kNmsRun), (H + kNmsH - 1) / kNmsH);
  harris_nms_kernel<<<nms_grid, dim3(kNmsW, kNmsH), 0, s>>>(
      nms_args(plan, resp, resp_pitch, state, keys));
  CUDAFX_CUDA_TRY(cudaGetLastError());
  const SelectArgs sa = select_args(plan, keys, state, resp, resp_pitch, base + b->result_at);
  harris_select_kernel<<<1, kSelectThreads, sa.sort_capacity * sizeof(unsigned long long), s>>>(sa);
  CUDAFX_CUDA_TRY(cudaGetLastError());
  CUDAFX_CUDA_TRY(cudaMemcpyAsync(b->host.get(), base + b->result_at, res,
                                  cudaMemcpyDeviceToHost, s));
  return Status::ok();
}

}  // namespace cudafx
