/* The enum property types: see gstcudafxenums.h.
 *
 * Registered by one helper rather than G_DEFINE_ENUM_TYPE, which needs
 * GLib 2.74 (JetPack 6's Ubuntu 22.04 has 2.72) and would show the C
 * identifiers as the values' descriptions in gst-inspect-1.0. */
#include "gstcudafxenums.h"

#include <gst/gst.h>

/* Registers `values` as `name` once; thread-safe. */
static GType
register_enum (GType * type, const gchar * name, const GEnumValue * values)
{
  if (g_once_init_enter (type)) {
    GType t = g_enum_register_static (name, values);
    gst_type_mark_as_plugin_api (t, (GstPluginAPIFlags) 0);
    g_once_init_leave (type, t);
  }
  return *type;
}

GType
gst_cuda_fx_backend_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_FX_BACKEND_AUTO, "CUDA when a device is usable, else CPU", "auto"},
    {GST_CUDA_FX_BACKEND_CUDA, "CUDA; fail to start without a usable device", "cuda"},
    {GST_CUDA_FX_BACKEND_CPU, "CPU (multi-threaded)", "cpu"},
    {0, nullptr, nullptr},
  };
  return register_enum (&type, "GstCudaFxBackend", values);
}

GType
gst_cuda_fx_memory_mode_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_FX_MEMORY_AUTO, "mapped on an integrated GPU (Jetson), else copy", "auto"},
    {GST_CUDA_FX_MEMORY_COPY, "Copy frames to and from device memory", "copy"},
    {GST_CUDA_FX_MEMORY_MAPPED,
        "Kernels read and write the frames where they are (zero-copy)", "mapped"},
    {0, nullptr, nullptr},
  };
  return register_enum (&type, "GstCudaFxMemoryMode", values);
}

GType
gst_cuda_fx_border_mode_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_FX_BORDER_REPLICATE, "Repeat the edge pixel (aaa|abc)", "replicate"},
    {GST_CUDA_FX_BORDER_REFLECT_101, "Mirror without repeating the edge (cb|abc)",
        "reflect-101"},
    {GST_CUDA_FX_BORDER_CONSTANT, "Zero outside the frame", "constant"},
    {0, nullptr, nullptr},
  };
  return register_enum (&type, "GstCudaFxBorderMode", values);
}

GType
gst_cuda_upscale_method_get_type (void)
{
  static GType type = 0;
  /* videoscale's nicks where it has the method */
  static const GEnumValue values[] = {
    {GST_CUDA_UPSCALE_NEAREST, "Nearest neighbour", "nearest-neighbour"},
    {GST_CUDA_UPSCALE_BILINEAR, "Bilinear (2x2 taps)", "bilinear"},
    {GST_CUDA_UPSCALE_BICUBIC, "Bicubic (4x4 taps, Keys a=-0.75 as OpenCV)", "bicubic"},
    {0, nullptr, nullptr},
  };
  return register_enum (&type, "GstCudaUpscaleMethod", values);
}

GType
gst_cuda_delta_compression_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_DELTA_COMPRESSION_NONE, "Format 3, no entropy stage", "none"},
    {GST_CUDA_DELTA_COMPRESSION_ZSTD, "Format 3, zstd", "zstd"},
    {GST_CUDA_DELTA_COMPRESSION_RANS,
        "Format 3: context-modelled rANS for delta frames (zstd for keyframes)", "rans"},
    {GST_CUDA_DELTA_COMPRESSION_PREDICTIVE,
          "Format 4: every tile predicted (temporal or spatial) within the threshold, "
          "keyframes included, and rANS-coded with per-frame tables", "predictive"},
    {0, nullptr, nullptr},
  };
  return register_enum (&type, "GstCudaDeltaCompression", values);
}

GType
gst_cuda_harris_threshold_mode_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_HARRIS_THRESHOLD_ABSOLUTE, "The response a corner must exceed", "absolute"},
    {GST_CUDA_HARRIS_THRESHOLD_RELATIVE,
        "A fraction of the frame's largest response (as goodFeaturesToTrack's qualityLevel)",
        "relative"},
    {0, nullptr, nullptr},
  };
  return register_enum (&type, "GstCudaHarrisThresholdMode", values);
}

GType
gst_cuda_harris_window_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_HARRIS_WINDOW_BOX, "Box (as cv::cornerHarris)", "box"},
    {GST_CUDA_HARRIS_WINDOW_GAUSSIAN, "Binomial (Gaussian-like) weights", "gaussian"},
    {0, nullptr, nullptr},
  };
  return register_enum (&type, "GstCudaHarrisWindow", values);
}

GType
gst_cuda_harris_shape_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_HARRIS_SHAPE_CROSS, "A cross", "cross"},
    {GST_CUDA_HARRIS_SHAPE_CIRCLE, "A one-pixel ring", "circle"},
    {0, nullptr, nullptr},
  };
  return register_enum (&type, "GstCudaHarrisShape", values);
}

GType
gst_cuda_fx_stats_mode_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_FX_STATS_FRAME, "Each frame by its own statistics", "frame"},
    {GST_CUDA_FX_STATS_SMOOTH, "Statistics averaged over time (time-constant)", "smooth"},
    {0, nullptr, nullptr},
  };
  return register_enum (&type, "GstCudaFxStatsMode", values);
}

GType
gst_cuda_canny_mode_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_CANNY_EDGES, "The edge map: GRAY8, 255 on edges, 0 elsewhere", "edges"},
    {GST_CUDA_CANNY_OVERLAY, "The frame with its edges drawn in `color`", "overlay"},
    {0, nullptr, nullptr},
  };
  return register_enum (&type, "GstCudaCannyMode", values);
}

GType
gst_cuda_auto_contrast_channels_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_AUTO_CONTRAST_PER_CHANNEL, "RGB: each colour channel by its own levels",
        "per-channel"},
    {GST_CUDA_AUTO_CONTRAST_LUMA, "RGB: R, G and B by the levels of the luma", "luma"},
    {0, nullptr, nullptr},
  };
  return register_enum (&type, "GstCudaAutoContrastChannels", values);
}

GType
gst_cuda_text_halign_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_TEXT_HALIGN_LEFT, "Left", "left"},
    {GST_CUDA_TEXT_HALIGN_CENTER, "Center", "center"},
    {GST_CUDA_TEXT_HALIGN_RIGHT, "Right", "right"},
    {GST_CUDA_TEXT_HALIGN_POSITION, "Position (xpos, the text's centre)", "position"},
    {GST_CUDA_TEXT_HALIGN_ABSOLUTE, "Absolute (xpos, the text's left edge)", "absolute"},
    {0, nullptr, nullptr},
  };
  return register_enum (&type, "GstCudaTextHAlign", values);
}

GType
gst_cuda_text_valign_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_TEXT_VALIGN_BASELINE, "Baseline", "baseline"},
    {GST_CUDA_TEXT_VALIGN_BOTTOM, "Bottom", "bottom"},
    {GST_CUDA_TEXT_VALIGN_TOP, "Top", "top"},
    {GST_CUDA_TEXT_VALIGN_POSITION, "Position (ypos, the text's centre)", "position"},
    {GST_CUDA_TEXT_VALIGN_CENTER, "Center", "center"},
    {GST_CUDA_TEXT_VALIGN_ABSOLUTE, "Absolute (ypos, the text's top edge)", "absolute"},
    {0, nullptr, nullptr},
  };
  return register_enum (&type, "GstCudaTextVAlign", values);
}

GType
gst_cuda_text_line_align_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_TEXT_LINE_ALIGN_LEFT, "Lines aligned left", "left"},
    {GST_CUDA_TEXT_LINE_ALIGN_CENTER, "Lines centred", "center"},
    {GST_CUDA_TEXT_LINE_ALIGN_RIGHT, "Lines aligned right", "right"},
    {0, nullptr, nullptr},
  };
  return register_enum (&type, "GstCudaTextLineAlign", values);
}

GType
gst_cuda_text_wrap_mode_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_TEXT_WRAP_NONE, "No wrapping", "none"},
    {GST_CUDA_TEXT_WRAP_WORD, "At word boundaries", "word"},
    {GST_CUDA_TEXT_WRAP_CHAR, "At any character", "char"},
    {GST_CUDA_TEXT_WRAP_WORD_CHAR, "At word boundaries, characters where a word does not fit",
        "wordchar"},
    {0, nullptr, nullptr},
  };
  return register_enum (&type, "GstCudaTextWrapMode", values);
}

GType
gst_cuda_text_time_mode_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_TEXT_TIME_NONE, "No time shown", "none"},
    {GST_CUDA_TEXT_TIME_BUFFER, "The buffer's timestamp", "buffer-time"},
    {GST_CUDA_TEXT_TIME_STREAM, "Stream time", "stream-time"},
    {GST_CUDA_TEXT_TIME_RUNNING, "Running time", "running-time"},
    {GST_CUDA_TEXT_TIME_CODE, "The buffer's time code (GstVideoTimeCodeMeta)", "time-code"},
    {GST_CUDA_TEXT_TIME_ELAPSED_RUNNING, "Running time since the first frame",
        "elapsed-running-time"},
    {0, nullptr, nullptr},
  };
  return register_enum (&type, "GstCudaTextTimeMode", values);
}

cudafx::BorderMode
gst_cuda_fx_border_to_op (GstCudaFxBorderMode mode)
{
  switch (mode) {
    case GST_CUDA_FX_BORDER_REFLECT_101:
      return cudafx::BorderMode::Reflect101;
    case GST_CUDA_FX_BORDER_CONSTANT:
      return cudafx::BorderMode::Constant;
    case GST_CUDA_FX_BORDER_REPLICATE:
    default:
      return cudafx::BorderMode::Replicate;
  }
}

GstCudaFxBorderMode
gst_cuda_fx_border_from_op (cudafx::BorderMode mode)
{
  switch (mode) {
    case cudafx::BorderMode::Reflect101:
      return GST_CUDA_FX_BORDER_REFLECT_101;
    case cudafx::BorderMode::Constant:
      return GST_CUDA_FX_BORDER_CONSTANT;
    case cudafx::BorderMode::Replicate:
    default:
      return GST_CUDA_FX_BORDER_REPLICATE;
  }
}

cudafx::ResizeMethod
gst_cuda_upscale_method_to_op (GstCudaUpscaleMethod method)
{
  switch (method) {
    case GST_CUDA_UPSCALE_NEAREST:
      return cudafx::ResizeMethod::Nearest;
    case GST_CUDA_UPSCALE_BICUBIC:
      return cudafx::ResizeMethod::Bicubic;
    case GST_CUDA_UPSCALE_BILINEAR:
    default:
      return cudafx::ResizeMethod::Bilinear;
  }
}

cudafx::DeltaCompression
gst_cuda_delta_compression_to_op (GstCudaDeltaCompression c)
{
  switch (c) {
    case GST_CUDA_DELTA_COMPRESSION_NONE:
      return cudafx::DeltaCompression::None;
    case GST_CUDA_DELTA_COMPRESSION_ZSTD:
      return cudafx::DeltaCompression::Zstd;
    case GST_CUDA_DELTA_COMPRESSION_RANS:
      return cudafx::DeltaCompression::Rans;
    case GST_CUDA_DELTA_COMPRESSION_PREDICTIVE:
    default:
      return cudafx::DeltaCompression::Predictive;
  }
}
