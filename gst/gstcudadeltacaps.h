/* Caps of the delta stream, shared by cudadeltaenc and cudadeltadec. */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include "cudafx/image.hpp"

#define GST_CUDA_DELTA_MEDIA_TYPE "video/x-cudafx-delta"
/* The raw formats the codec carries (CUDAMemory-free for now). */
#define GST_CUDA_DELTA_FORMATS "{ RGBA, BGRA, RGBx, BGRx, RGB, BGR, GRAY8, I420, NV12 }"

#define GST_CUDA_DELTA_CAPS \
  GST_CUDA_DELTA_MEDIA_TYPE ", version = (int) 1, format = (string) " GST_CUDA_DELTA_FORMATS \
  ", width = (int) [ 1, 16384 ], height = (int) [ 1, 16384 ], framerate = " GST_VIDEO_FPS_RANGE
