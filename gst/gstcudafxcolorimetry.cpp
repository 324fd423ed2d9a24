#include "gstcudafxcolorimetry.h"

cudafx::OverlayColorimetry
gst_cuda_fx_overlay_colorimetry (const GstVideoInfo * info)
{
  cudafx::OverlayColorimetry c;
  switch (GST_VIDEO_INFO_COLORIMETRY (info).matrix) {
    case GST_VIDEO_COLOR_MATRIX_BT709:
      c.matrix = cudafx::ColorMatrix::BT709;
      break;
    case GST_VIDEO_COLOR_MATRIX_BT2020:
      c.matrix = cudafx::ColorMatrix::BT2020;
      break;
    default:
      c.matrix = cudafx::ColorMatrix::BT601;
      break;
  }
  c.range = GST_VIDEO_INFO_COLORIMETRY (info).range == GST_VIDEO_COLOR_RANGE_0_255 ||
      GST_VIDEO_INFO_FORMAT (info) == GST_VIDEO_FORMAT_GRAY8 ?
      cudafx::ColorRange::Full : cudafx::ColorRange::Limited;
  return c;
}
