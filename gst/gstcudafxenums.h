/* The enum property types of every cudafx element, in one place, with their
 * mapping onto the cudafx library's enums. Values are the GObject enums'
 * (what gst-launch and g_object_set see); the C++ enums are the ops'. */
#pragma once

#include <glib-object.h>

#include "cudafx/border.hpp"
#include "cudafx/delta.hpp"
#include "cudafx/resize.hpp"

G_BEGIN_DECLS

/* `backend`: where an element processes frames. */
typedef enum
{
  GST_CUDA_FX_BACKEND_AUTO,
  GST_CUDA_FX_BACKEND_CUDA,
  GST_CUDA_FX_BACKEND_CPU,
} GstCudaFxBackend;
#define GST_TYPE_CUDA_FX_BACKEND (gst_cuda_fx_backend_get_type ())
GType gst_cuda_fx_backend_get_type (void);

/* `memory-mode`: how the CUDA backend reads and writes frames in system
 * memory. */
typedef enum
{
  GST_CUDA_FX_MEMORY_AUTO,
  GST_CUDA_FX_MEMORY_COPY,
  GST_CUDA_FX_MEMORY_MAPPED,
} GstCudaFxMemoryMode;
#define GST_TYPE_CUDA_FX_MEMORY_MODE (gst_cuda_fx_memory_mode_get_type ())
GType gst_cuda_fx_memory_mode_get_type (void);

/* `border-mode`: where pixels outside the frame come from. */
typedef enum
{
  GST_CUDA_FX_BORDER_REPLICATE,
  GST_CUDA_FX_BORDER_REFLECT_101,
  GST_CUDA_FX_BORDER_CONSTANT,
} GstCudaFxBorderMode;
#define GST_TYPE_CUDA_FX_BORDER_MODE (gst_cuda_fx_border_mode_get_type ())
GType gst_cuda_fx_border_mode_get_type (void);

/* cudaupscale's `method`. */
typedef enum
{
  GST_CUDA_UPSCALE_NEAREST,
  GST_CUDA_UPSCALE_BILINEAR,
  GST_CUDA_UPSCALE_BICUBIC,
} GstCudaUpscaleMethod;
#define GST_TYPE_CUDA_UPSCALE_METHOD (gst_cuda_upscale_method_get_type ())
GType gst_cuda_upscale_method_get_type (void);

/* cudadeltaenc's `compression`. */
typedef enum
{
  GST_CUDA_DELTA_COMPRESSION_NONE,
  GST_CUDA_DELTA_COMPRESSION_ZSTD,
  GST_CUDA_DELTA_COMPRESSION_RANS,
  GST_CUDA_DELTA_COMPRESSION_PREDICTIVE,
} GstCudaDeltaCompression;
#define GST_TYPE_CUDA_DELTA_COMPRESSION (gst_cuda_delta_compression_get_type ())
GType gst_cuda_delta_compression_get_type (void);

/* cudaharris's `threshold-mode`, `window` and `draw-shape`. */
typedef enum
{
  GST_CUDA_HARRIS_THRESHOLD_ABSOLUTE,
  GST_CUDA_HARRIS_THRESHOLD_RELATIVE,
} GstCudaHarrisThresholdMode;
#define GST_TYPE_CUDA_HARRIS_THRESHOLD_MODE (gst_cuda_harris_threshold_mode_get_type ())
GType gst_cuda_harris_threshold_mode_get_type (void);

typedef enum
{
  GST_CUDA_HARRIS_WINDOW_BOX,
  GST_CUDA_HARRIS_WINDOW_GAUSSIAN,
} GstCudaHarrisWindow;
#define GST_TYPE_CUDA_HARRIS_WINDOW (gst_cuda_harris_window_get_type ())
GType gst_cuda_harris_window_get_type (void);

typedef enum
{
  GST_CUDA_HARRIS_SHAPE_CROSS,
  GST_CUDA_HARRIS_SHAPE_CIRCLE,
} GstCudaHarrisShape;
#define GST_TYPE_CUDA_HARRIS_SHAPE (gst_cuda_harris_shape_get_type ())
GType gst_cuda_harris_shape_get_type (void);

/* cudagreyworld's and cudaautocontrast's `mode`: statistics of each frame,
 * or averaged over time (gstcudafxsmoothing.h). */
typedef enum
{
  GST_CUDA_FX_STATS_FRAME,
  GST_CUDA_FX_STATS_SMOOTH,
} GstCudaFxStatsMode;
#define GST_TYPE_CUDA_FX_STATS_MODE (gst_cuda_fx_stats_mode_get_type ())
GType gst_cuda_fx_stats_mode_get_type (void);

/* cudacanny's `mode`. */
typedef enum
{
  GST_CUDA_CANNY_EDGES,
  GST_CUDA_CANNY_OVERLAY,
} GstCudaCannyMode;
#define GST_TYPE_CUDA_CANNY_MODE (gst_cuda_canny_mode_get_type ())
GType gst_cuda_canny_mode_get_type (void);

/* cudaautocontrast's `channels`. */
typedef enum
{
  GST_CUDA_AUTO_CONTRAST_PER_CHANNEL,
  GST_CUDA_AUTO_CONTRAST_LUMA,
} GstCudaAutoContrastChannels;
#define GST_TYPE_CUDA_AUTO_CONTRAST_CHANNELS (gst_cuda_auto_contrast_channels_get_type ())
GType gst_cuda_auto_contrast_channels_get_type (void);

/* cudatextoverlay's enums: textoverlay's and timeoverlay's values and nicks,
 * so that launch lines and numbers written for them mean the same here. */
typedef enum
{
  GST_CUDA_TEXT_HALIGN_LEFT = 0,
  GST_CUDA_TEXT_HALIGN_CENTER = 1,
  GST_CUDA_TEXT_HALIGN_RIGHT = 2,
  GST_CUDA_TEXT_HALIGN_POSITION = 4,
  GST_CUDA_TEXT_HALIGN_ABSOLUTE = 5,
} GstCudaTextHAlign;
#define GST_TYPE_CUDA_TEXT_HALIGN (gst_cuda_text_halign_get_type ())
GType gst_cuda_text_halign_get_type (void);

typedef enum
{
  GST_CUDA_TEXT_VALIGN_BASELINE = 0,
  GST_CUDA_TEXT_VALIGN_BOTTOM = 1,
  GST_CUDA_TEXT_VALIGN_TOP = 2,
  GST_CUDA_TEXT_VALIGN_POSITION = 3,
  GST_CUDA_TEXT_VALIGN_CENTER = 4,
  GST_CUDA_TEXT_VALIGN_ABSOLUTE = 5,
} GstCudaTextVAlign;
#define GST_TYPE_CUDA_TEXT_VALIGN (gst_cuda_text_valign_get_type ())
GType gst_cuda_text_valign_get_type (void);

typedef enum
{
  GST_CUDA_TEXT_LINE_ALIGN_LEFT = 0,
  GST_CUDA_TEXT_LINE_ALIGN_CENTER = 1,
  GST_CUDA_TEXT_LINE_ALIGN_RIGHT = 2,
} GstCudaTextLineAlign;
#define GST_TYPE_CUDA_TEXT_LINE_ALIGN (gst_cuda_text_line_align_get_type ())
GType gst_cuda_text_line_align_get_type (void);

typedef enum
{
  GST_CUDA_TEXT_WRAP_NONE = -1,
  GST_CUDA_TEXT_WRAP_WORD = 0,
  GST_CUDA_TEXT_WRAP_CHAR = 1,
  GST_CUDA_TEXT_WRAP_WORD_CHAR = 2,
} GstCudaTextWrapMode;
#define GST_TYPE_CUDA_TEXT_WRAP_MODE (gst_cuda_text_wrap_mode_get_type ())
GType gst_cuda_text_wrap_mode_get_type (void);

/* `time-mode`: timeoverlay's modes, and none. */
typedef enum
{
  GST_CUDA_TEXT_TIME_NONE = -1,
  GST_CUDA_TEXT_TIME_BUFFER = 0,
  GST_CUDA_TEXT_TIME_STREAM = 1,
  GST_CUDA_TEXT_TIME_RUNNING = 2,
  GST_CUDA_TEXT_TIME_CODE = 3,
  GST_CUDA_TEXT_TIME_ELAPSED_RUNNING = 4,
} GstCudaTextTimeMode;
#define GST_TYPE_CUDA_TEXT_TIME_MODE (gst_cuda_text_time_mode_get_type ())
GType gst_cuda_text_time_mode_get_type (void);

G_END_DECLS

/* GObject value <-> op value. The GObject enums are validated by GObject, so
 * every value maps. */
cudafx::BorderMode gst_cuda_fx_border_to_op (GstCudaFxBorderMode mode);
GstCudaFxBorderMode gst_cuda_fx_border_from_op (cudafx::BorderMode mode);
cudafx::ResizeMethod gst_cuda_upscale_method_to_op (GstCudaUpscaleMethod method);
cudafx::DeltaCompression gst_cuda_delta_compression_to_op (GstCudaDeltaCompression c);
