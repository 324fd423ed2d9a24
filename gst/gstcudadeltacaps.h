/* Caps of the delta stream, shared by cudadeltaenc and cudadeltadec. */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include "cudafx/delta.hpp"
#include "cudafx/image.hpp"

#define GST_CUDA_DELTA_MEDIA_TYPE "video/x-cudafx-delta"
/* The raw formats the codec carries; in CUDA memory all but GRAY8, which
 * libgstcuda's allocator lacks. */
#define GST_CUDA_DELTA_FORMATS "{ RGBA, BGRA, RGBx, BGRx, RGB, BGR, GRAY8, I420, NV12 }"
#define GST_CUDA_DELTA_CUDA_FORMATS "{ RGBA, BGRA, RGBx, BGRx, RGB, BGR, I420, NV12 }"

/* The version in the caps is the bitstream's (docs/delta-format.md): 4 for
 * compression=predictive, 3 for the others; decoders take both. */
#define GST_CUDA_DELTA_VERSIONS "{ 3, 4 }"
static_assert (cudafx::kDeltaVersion == 4 && cudafx::kDeltaVersion3 == 3,
    "GST_CUDA_DELTA_VERSIONS follows kDeltaVersion");

#define GST_CUDA_DELTA_CAPS \
  GST_CUDA_DELTA_MEDIA_TYPE ", version = (int) " GST_CUDA_DELTA_VERSIONS ", format = (string) " GST_CUDA_DELTA_FORMATS \
  ", width = (int) [ 1, 16384 ], height = (int) [ 1, 16384 ], framerate = " GST_VIDEO_FPS_RANGE
