/* The colorimetry of negotiated caps as the blend op takes it: the matrix
 * (BT.601 unless the caps say BT.709 or BT.2020) and the range (full for
 * 0-255 caps and for GRAY8, else limited). For every element that blends
 * ARGB overlays onto frames (cudatextoverlay, cudacanny's overlay). */
#pragma once

#include <gst/video/video.h>

#include "cudafx/overlay_blend.hpp"

cudafx::OverlayColorimetry gst_cuda_fx_overlay_colorimetry (const GstVideoInfo * info);
