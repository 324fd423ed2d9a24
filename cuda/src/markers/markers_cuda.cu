// Corner markers on the GPU: a block per corner of the list, its threads
// over the marker's (2 size + 1)^2 box. The count is read on the device, so
// the list a detector wrote earlier on the stream is drawn without a
// synchronisation; blocks past the count return at once.
#include "common/cuda_check.hpp"
#include "cudafx/corner_markers.hpp"
#include "markers/markers_math.hpp"

namespace cudafx {
namespace {

__global__ void draw_markers_kernel(ImageView frame, const HarrisCorner* corners,
                                    const uint32_t* count, MarkerShape shape, int size,
                                    MarkerPaint paint) {
  if (blockIdx.x >= *count)
    return;
  const HarrisCorner c = corners[blockIdx.x];
  const int cx = marker_centre(c.x), cy = marker_centre(c.y);
  const int side = 2 * size + 1;
  for (int i = threadIdx.x; i < side * side; i += blockDim.x) {
    const int dx = i % side - size, dy = i / side - size;
    const int px = cx + dx, py = cy + dy;
    if (px < 0 || py < 0 || px >= frame.desc.width || py >= frame.desc.height)
      continue;
    if (marker_covers(shape, size, dx, dy))
      marker_paint(frame, paint, px, py);
  }
}

}  // namespace

Status draw_corner_markers_cuda(StreamHandle stream, const ImageView& frame,
                                const HarrisCorner* corners, const uint32_t* count, int capacity,
                                const MarkerStyle& style, const MarkerPaint& paint) {
  draw_markers_kernel<<<capacity, 128, 0, stream>>>(frame, corners, count, style.shape,
                                                    style.size, paint);
  return cuda_status(cudaGetLastError(), "draw_markers_kernel");
}

}  // namespace cudafx
