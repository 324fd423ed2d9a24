/**
 * SECTION:element-cudaharris
 * @title: cudaharris
 *
 * Harris corner detector on a CUDA device or on the CPU (the same corners
 * bit for bit): Sobel derivatives (#GstCudaHarris:gradient-size), their
 * products summed over a window (#GstCudaHarris:block-size), the response
 * R = det(M) - k trace(M)^2, a threshold (absolute, or relative to the
 * frame's largest response), non-maximum suppression within
 * #GstCudaHarris:min-distance and the #GstCudaHarris:max-corners strongest,
 * on the luma of the frame (BT.601 integer luma of RGB formats, as
 * cv::cvtColor). The exact rules are in cudafx/harris.hpp and
 * docs/elements.md.
 *
 * The video passes through untouched — no copy, and frames in
 * memory:CUDAMemory stay on the GPU — and every buffer gets a corners meta
 * (libgstcudafxmeta: <gst/cudafx/gstcudafxcornersmeta.h>, pkg-config
 * gstreamer-cudafx-meta-1.0) with the corners, strongest first, and the
 * parameters used; with #GstCudaHarris:roi-meta also a
 * GstVideoRegionOfInterestMeta "corner" per corner. With
 * #GstCudaHarris:draw the corners are marked in the frame itself.
 * #GstCudaHarris:message-interval posts an element message "cudaharris"
 * every N frames with the count and the strongest corners.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 v4l2src ! videoconvert ! video/x-raw,format=RGBA ! cudaharris draw=true draw-size=8 ! videoconvert ! autovideosink
 * ]| Marks the corners of a camera's frames.
 * |[
 * gst-launch-1.0 videotestsrc pattern=checkers-8 ! video/x-raw,format=NV12,width=1280,height=720 ! cudaupload ! "video/x-raw(memory:CUDAMemory)" ! cudaharris message-interval=30 ! cudadownload ! fakesink
 * ]| Detects corners of frames in CUDA memory and reports every 30th frame on the bus.
 */
#include "gstcudaharris.h"

#include <gst/cudafx/gstcudafxcornersmeta.h>

#include <algorithm>
#include <memory>

#include "cudafx/corner_markers.hpp"
#include "cudafx/harris.hpp"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_harris_debug);
#define GST_CAT_DEFAULT gst_cuda_harris_debug

static_assert (sizeof (GstCudaFxCorner) == sizeof (cudafx::HarrisCorner) &&
    offsetof (GstCudaFxCorner, score) == offsetof (cudafx::HarrisCorner, score),
    "the meta's corners are the op's corners");

enum
{
  PROP_0,
  PROP_GRADIENT_SIZE,
  PROP_BLOCK_SIZE,
  PROP_WINDOW,
  PROP_K,
  PROP_THRESHOLD,
  PROP_THRESHOLD_MODE,
  PROP_MIN_DISTANCE,
  PROP_MAX_CORNERS,
  PROP_SUBPIXEL,
  PROP_BORDER_MODE,
  PROP_DRAW,
  PROP_DRAW_COLOR,
  PROP_DRAW_SIZE,
  PROP_DRAW_SHAPE,
  PROP_ROI_META,
  PROP_MESSAGE_INTERVAL,
};

#define DEFAULT_DRAW_COLOR 0xff00ff00   /* ARGB: green */
#define DEFAULT_DRAW_SIZE 6
#define DEFAULT_MESSAGE_INTERVAL 0
/* corners listed in a bus message */
#define MESSAGE_CORNERS 10

/* What the properties set, under the object lock. */
struct GstCudaHarrisSettings
{
  cudafx::HarrisParams params;
  gboolean draw = FALSE;
  guint draw_color = DEFAULT_DRAW_COLOR;
  gint draw_size = DEFAULT_DRAW_SIZE;
  GstCudaHarrisShape draw_shape = GST_CUDA_HARRIS_SHAPE_CROSS;
  gboolean roi_meta = FALSE;
  guint message_interval = DEFAULT_MESSAGE_INTERVAL;
  bool changed = false;         /* detector or drawing parameters */
};

struct GstCudaHarrisState
{
  GstCudaHarrisSettings settings;

  /* streaming thread */
  std::unique_ptr < cudafx::HarrisOp > op;
  GstVideoInfo info;
  cudafx::MarkerStyle style;
  GstCudaHarrisSettings used;   /* the settings the op and style were made from */
  guint64 frames = 0;
};

struct _GstCudaHarris
{
  GstCudaFxFilter parent;
  GstCudaHarrisState *state;
};

G_DEFINE_TYPE (GstCudaHarris, gst_cuda_harris, GST_TYPE_CUDA_FX_FILTER);
GST_ELEMENT_REGISTER_DEFINE (cudaharris, "cudaharris", GST_RANK_NONE, GST_TYPE_CUDA_HARRIS);

/* The settings, taken: the op is built from them from now on. */
static GstCudaHarrisSettings
take_settings (GstCudaHarris * self)
{
  GST_OBJECT_LOCK (self);
  GstCudaHarrisSettings s = self->state->settings;
  self->state->settings.changed = false;
  GST_OBJECT_UNLOCK (self);
  return s;
}

/* The marker colour in the frame's own terms: RGB as given, and Y'CbCr by
 * the frame's matrix and range (BT.601 when the caps do not say). */
static cudafx::MarkerStyle
marker_style (const GstVideoInfo * info, const GstCudaHarrisSettings & s)
{
  cudafx::MarkerStyle style;
  style.shape = s.draw_shape == GST_CUDA_HARRIS_SHAPE_CIRCLE ? cudafx::MarkerShape::Circle :
      cudafx::MarkerShape::Cross;
  style.size = s.draw_size;
  const double r = (s.draw_color >> 16) & 0xff, g = (s.draw_color >> 8) & 0xff,
      b = s.draw_color & 0xff;
  style.rgb[0] = (guint8) r;
  style.rgb[1] = (guint8) g;
  style.rgb[2] = (guint8) b;
  gdouble kr = 0.299, kb = 0.114;
  gst_video_color_matrix_get_Kr_Kb (GST_VIDEO_INFO_COLORIMETRY (info).matrix, &kr, &kb);
  const double y = (kr * r + (1.0 - kr - kb) * g + kb * b) / 255.0;
  const double u = (b / 255.0 - y) / (2.0 * (1.0 - kb));
  const double v = (r / 255.0 - y) / (2.0 * (1.0 - kr));
  const bool full = GST_VIDEO_INFO_COLORIMETRY (info).range == GST_VIDEO_COLOR_RANGE_0_255 ||
      GST_VIDEO_INFO_FORMAT (info) == GST_VIDEO_FORMAT_GRAY8;
  auto clamp_byte =[](double x) {
    return (guint8) std::min (255.0, std::max (0.0, std::floor (x + 0.5)));
  };
  style.yuv[0] = clamp_byte (full ? 255.0 * y : 16.0 + 219.0 * y);
  style.yuv[1] = clamp_byte (128.0 + (full ? 255.0 : 224.0) * u);
  style.yuv[2] = clamp_byte (128.0 + (full ? 255.0 : 224.0) * v);
  return style;
}

static cudafx::Status
gst_cuda_harris_setup (GstCudaFxFilter * filter, const GstCudaFxFilterConfig & config)
{
  GstCudaHarris *self = GST_CUDA_HARRIS (filter);
  GstCudaHarrisState *st = self->state;
  st->info = *config.in_info;
  st->used = take_settings (self);
  st->style = marker_style (&st->info, st->used);
  CUDAFX_TRY (cudafx::check_marker_style (config.in, st->style));
  return cudafx::HarrisOp::create (config.backend, config.in, st->used.params, &st->op);
}

/* New settings while playing: the op re-planned, the style remade. */
static cudafx::Status
apply_changes (GstCudaHarris * self)
{
  GstCudaHarrisState *st = self->state;
  GST_OBJECT_LOCK (self);
  const bool changed = st->settings.changed;
  GST_OBJECT_UNLOCK (self);
  if (!changed)
    return cudafx::Status::ok ();
  const GstCudaHarrisSettings s = take_settings (self);
  cudafx::MarkerStyle style = marker_style (&st->info, s);
  CUDAFX_TRY (cudafx::check_marker_style (st->op->plan ().desc, style));
  CUDAFX_TRY (st->op->set_params (s.params));
  st->used = s;
  st->style = style;
  return cudafx::Status::ok ();
}

static cudafx::Status
gst_cuda_harris_process_ip (GstCudaFxFilter * filter, const cudafx::ImageView & frame,
    cudafx::StreamHandle stream)
{
  GstCudaHarris *self = GST_CUDA_HARRIS (filter);
  GstCudaHarrisState *st = self->state;
  CUDAFX_TRY (apply_changes (self));
  CUDAFX_TRY (st->op->submit (stream, frame));
  if (gst_cuda_fx_filter_get_mode (filter) != GST_CUDA_FX_FILTER_MODE_IN_PLACE)
    return cudafx::Status::ok ();
  /* Drawing reads the list where the detector left it: device memory on the
   * CUDA backend (queued behind the detection, no synchronisation). */
  const cudafx::Backend backend = st->op->backend ();
  if (backend == cudafx::Backend::Cuda) {
    const cudafx::HarrisDeviceList list = st->op->device_list ();
    return cudafx::draw_corner_markers (backend, stream, frame, list.corners, list.count,
        st->used.params.max_corners, st->style);
  }
  const cudafx::HarrisCornerList list = st->op->corners ();
  const uint32_t count = static_cast < uint32_t > (list.count);
  return cudafx::draw_corner_markers (backend, stream, frame, list.corners, &count,
      list.count, st->style);
}

/* The parameters the corners were found with, for the meta and messages. */
static GstStructure *
params_structure (const cudafx::HarrisParams & p, const cudafx::HarrisCornerList & list)
{
  return gst_structure_new ("cudaharris",
      "gradient-size", G_TYPE_INT, p.gradient_size,
      "block-size", G_TYPE_INT, p.block_size,
      "window", G_TYPE_STRING, p.window == cudafx::HarrisWindow::Gaussian ? "gaussian" : "box",
      "k", G_TYPE_DOUBLE, (gdouble) p.k,
      "threshold", G_TYPE_DOUBLE, (gdouble) p.threshold,
      "threshold-mode", G_TYPE_STRING,
      p.threshold_mode == cudafx::HarrisThresholdMode::Relative ? "relative" : "absolute",
      "min-distance", G_TYPE_INT, p.min_distance,
      "max-corners", G_TYPE_INT, p.max_corners,
      "subpixel", G_TYPE_BOOLEAN, (gboolean) p.subpixel,
      /* what the threshold came to on this frame, and the frame's peak */
      "applied-threshold", G_TYPE_DOUBLE, (gdouble) list.threshold,
      "max-response", G_TYPE_DOUBLE, (gdouble) list.max_response,
      "candidates", G_TYPE_INT, list.candidates, nullptr);
}

static void
post_message (GstCudaHarris * self, GstBuffer * buffer, const cudafx::HarrisCornerList & list)
{
  GValue corners = G_VALUE_INIT;
  gst_value_array_init (&corners, MESSAGE_CORNERS);
  for (int i = 0; i < list.count && i < MESSAGE_CORNERS; i++) {
    GValue c = G_VALUE_INIT;
    g_value_init (&c, GST_TYPE_STRUCTURE);
    GstStructure *s = gst_structure_new ("corner", "x", G_TYPE_FLOAT, list.corners[i].x,
        "y", G_TYPE_FLOAT, list.corners[i].y, "score", G_TYPE_FLOAT, list.corners[i].score,
        nullptr);
    g_value_take_boxed (&c, s);
    gst_value_array_append_and_take_value (&corners, &c);
  }
  GstStructure *s = gst_structure_new ("cudaharris",
      "frame", G_TYPE_UINT64, self->state->frames,
      "timestamp", G_TYPE_UINT64, GST_BUFFER_PTS (buffer),
      "count", G_TYPE_INT, list.count, nullptr);
  gst_structure_take_value (s, "corners", &corners);
  gst_element_post_message (GST_ELEMENT (self), gst_message_new_element (GST_OBJECT (self), s));
}

static cudafx::Status
gst_cuda_harris_finish (GstCudaFxFilter * filter, GstBuffer * buffer)
{
  GstCudaHarris *self = GST_CUDA_HARRIS (filter);
  GstCudaHarrisState *st = self->state;
  const cudafx::HarrisCornerList list = st->op->corners ();
  GstStructure *params = params_structure (st->used.params, list);
  gst_buffer_add_cuda_fx_corners_meta (buffer,
      reinterpret_cast < const GstCudaFxCorner * >(list.corners), (guint) list.count, params);
  gst_structure_free (params);
  if (st->used.roi_meta) {
    /* A one-pixel region at the corner's pixel, its score as a param. */
    for (int i = 0; i < list.count; i++) {
      const cudafx::HarrisCorner & c = list.corners[i];
      const guint x = (guint) std::max (0, cudafx::marker_centre (c.x));
      const guint y = (guint) std::max (0, cudafx::marker_centre (c.y));
      GstVideoRegionOfInterestMeta *roi =
          gst_buffer_add_video_region_of_interest_meta (buffer, "corner", x, y, 1, 1);
      gst_video_region_of_interest_meta_add_param (roi, gst_structure_new ("cudaharris",
              "x", G_TYPE_FLOAT, c.x, "y", G_TYPE_FLOAT, c.y, "score", G_TYPE_FLOAT, c.score,
              nullptr));
    }
  }
  if (st->used.message_interval > 0 && st->frames % st->used.message_interval == 0)
    post_message (self, buffer, list);
  st->frames++;
  return cudafx::Status::ok ();
}

static void
gst_cuda_harris_teardown (GstCudaFxFilter * filter)
{
  GST_CUDA_HARRIS (filter)->state->op.reset ();
}

static gboolean
gst_cuda_harris_stop (GstBaseTransform * trans)
{
  GST_CUDA_HARRIS (trans)->state->frames = 0;
  return GST_BASE_TRANSFORM_CLASS (gst_cuda_harris_parent_class)->stop (trans);
}

/* ---- properties ---- */

/* gradient-size and block-size take 3, 5 or 7. */
static gboolean
valid_size (GObject * object, const gchar * name, gint v)
{
  if (v == 3 || v == 5 || v == 7)
    return TRUE;
  g_warning ("%s: %s must be 3, 5 or 7, %d ignored", GST_OBJECT_NAME (object), name, v);
  return FALSE;
}

static void
gst_cuda_harris_set_property (GObject * object, guint prop_id, const GValue * value,
    GParamSpec * pspec)
{
  GstCudaHarris *self = GST_CUDA_HARRIS (object);
  GstCudaHarrisSettings & s = self->state->settings;
  cudafx::HarrisParams & p = s.params;
  if (prop_id == PROP_DRAW) {
    const gboolean draw = g_value_get_boolean (value);
    GST_OBJECT_LOCK (self);
    s.draw = draw;
    GST_OBJECT_UNLOCK (self);
    /* Marking corners writes the frame: in place; else the frame passes. */
    gst_cuda_fx_filter_set_mode (GST_CUDA_FX_FILTER (self), draw ?
        GST_CUDA_FX_FILTER_MODE_IN_PLACE : GST_CUDA_FX_FILTER_MODE_ANALYSIS);
    return;
  }
  if ((prop_id == PROP_GRADIENT_SIZE || prop_id == PROP_BLOCK_SIZE) &&
      !valid_size (object, pspec->name, g_value_get_int (value)))
    return;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_GRADIENT_SIZE:
      p.gradient_size = g_value_get_int (value);
      break;
    case PROP_BLOCK_SIZE:
      p.block_size = g_value_get_int (value);
      break;
    case PROP_WINDOW:
      p.window = g_value_get_enum (value) == GST_CUDA_HARRIS_WINDOW_GAUSSIAN ?
          cudafx::HarrisWindow::Gaussian : cudafx::HarrisWindow::Box;
      break;
    case PROP_K:
      p.k = (float) g_value_get_double (value);
      break;
    case PROP_THRESHOLD:
      p.threshold = (float) g_value_get_double (value);
      break;
    case PROP_THRESHOLD_MODE:
      p.threshold_mode = g_value_get_enum (value) == GST_CUDA_HARRIS_THRESHOLD_ABSOLUTE ?
          cudafx::HarrisThresholdMode::Absolute : cudafx::HarrisThresholdMode::Relative;
      break;
    case PROP_MIN_DISTANCE:
      p.min_distance = g_value_get_int (value);
      break;
    case PROP_MAX_CORNERS:
      p.max_corners = g_value_get_int (value);
      break;
    case PROP_SUBPIXEL:
      p.subpixel = g_value_get_boolean (value);
      break;
    case PROP_BORDER_MODE:
      p.border = gst_cuda_fx_border_to_op ((GstCudaFxBorderMode) g_value_get_enum (value));
      break;
    case PROP_DRAW_COLOR:
      s.draw_color = g_value_get_uint (value);
      break;
    case PROP_DRAW_SIZE:
      s.draw_size = g_value_get_int (value);
      break;
    case PROP_DRAW_SHAPE:
      s.draw_shape = (GstCudaHarrisShape) g_value_get_enum (value);
      break;
    case PROP_ROI_META:
      s.roi_meta = g_value_get_boolean (value);
      break;
    case PROP_MESSAGE_INTERVAL:
      s.message_interval = g_value_get_uint (value);
      break;
    default:
      GST_OBJECT_UNLOCK (self);
      G_OBJECT_CLASS (gst_cuda_harris_parent_class)->set_property (object, prop_id, value, pspec);
      return;
  }
  s.changed = true;
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cuda_harris_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstCudaHarris *self = GST_CUDA_HARRIS (object);
  const GstCudaHarrisSettings & s = self->state->settings;
  const cudafx::HarrisParams & p = s.params;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_GRADIENT_SIZE:
      g_value_set_int (value, p.gradient_size);
      break;
    case PROP_BLOCK_SIZE:
      g_value_set_int (value, p.block_size);
      break;
    case PROP_WINDOW:
      g_value_set_enum (value, p.window == cudafx::HarrisWindow::Gaussian ?
          GST_CUDA_HARRIS_WINDOW_GAUSSIAN : GST_CUDA_HARRIS_WINDOW_BOX);
      break;
    case PROP_K:
      g_value_set_double (value, p.k);
      break;
    case PROP_THRESHOLD:
      g_value_set_double (value, p.threshold);
      break;
    case PROP_THRESHOLD_MODE:
      g_value_set_enum (value, p.threshold_mode == cudafx::HarrisThresholdMode::Absolute ?
          GST_CUDA_HARRIS_THRESHOLD_ABSOLUTE : GST_CUDA_HARRIS_THRESHOLD_RELATIVE);
      break;
    case PROP_MIN_DISTANCE:
      g_value_set_int (value, p.min_distance);
      break;
    case PROP_MAX_CORNERS:
      g_value_set_int (value, p.max_corners);
      break;
    case PROP_SUBPIXEL:
      g_value_set_boolean (value, p.subpixel);
      break;
    case PROP_BORDER_MODE:
      g_value_set_enum (value, gst_cuda_fx_border_from_op (p.border));
      break;
    case PROP_DRAW:
      g_value_set_boolean (value, s.draw);
      break;
    case PROP_DRAW_COLOR:
      g_value_set_uint (value, s.draw_color);
      break;
    case PROP_DRAW_SIZE:
      g_value_set_int (value, s.draw_size);
      break;
    case PROP_DRAW_SHAPE:
      g_value_set_enum (value, s.draw_shape);
      break;
    case PROP_ROI_META:
      g_value_set_boolean (value, s.roi_meta);
      break;
    case PROP_MESSAGE_INTERVAL:
      g_value_set_uint (value, s.message_interval);
      break;
    default:
      GST_OBJECT_UNLOCK (self);
      G_OBJECT_CLASS (gst_cuda_harris_parent_class)->get_property (object, prop_id, value, pspec);
      return;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cuda_harris_finalize (GObject * object)
{
  GstCudaHarris *self = GST_CUDA_HARRIS (object);
  delete self->state;
  self->state = nullptr;
  G_OBJECT_CLASS (gst_cuda_harris_parent_class)->finalize (object);
}

static void
gst_cuda_harris_class_init (GstCudaHarrisClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GstCudaFxFilterClass *filter_class = GST_CUDA_FX_FILTER_CLASS (klass);
  const GParamFlags flags = static_cast < GParamFlags > (G_PARAM_READWRITE |
      G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  const cudafx::HarrisParams defaults;

  gobject_class->set_property = gst_cuda_harris_set_property;
  gobject_class->get_property = gst_cuda_harris_get_property;
  gobject_class->finalize = gst_cuda_harris_finalize;

  g_object_class_install_property (gobject_class, PROP_GRADIENT_SIZE,
      g_param_spec_int ("gradient-size", "Gradient size",
          "Sobel aperture: 3, 5 or 7", 3, cudafx::kHarrisMaxTaps, defaults.gradient_size, flags));
  g_object_class_install_property (gobject_class, PROP_BLOCK_SIZE,
      g_param_spec_int ("block-size", "Block size",
          "Side of the window the gradient products are summed over: 3, 5 or 7", 3,
          cudafx::kHarrisMaxTaps, defaults.block_size, flags));
  g_object_class_install_property (gobject_class, PROP_WINDOW,
      g_param_spec_enum ("window", "Window", "Weights of the window",
          GST_TYPE_CUDA_HARRIS_WINDOW, GST_CUDA_HARRIS_WINDOW_BOX, flags));
  g_object_class_install_property (gobject_class, PROP_K,
      g_param_spec_double ("k", "k", "Harris's k in R = det(M) - k trace(M)^2", 0.0, 0.25,
          defaults.k, flags));
  g_object_class_install_property (gobject_class, PROP_THRESHOLD,
      g_param_spec_double ("threshold", "Threshold",
          "The response a corner must exceed: absolute, or a fraction (0..1) of the frame's "
          "largest response (threshold-mode)", 0.0, G_MAXFLOAT, defaults.threshold, flags));
  g_object_class_install_property (gobject_class, PROP_THRESHOLD_MODE,
      g_param_spec_enum ("threshold-mode", "Threshold mode", "How threshold is read",
          GST_TYPE_CUDA_HARRIS_THRESHOLD_MODE, GST_CUDA_HARRIS_THRESHOLD_RELATIVE, flags));
  g_object_class_install_property (gobject_class, PROP_MIN_DISTANCE,
      g_param_spec_int ("min-distance", "Minimum distance",
          "Non-maximum suppression radius in pixels (0: every pixel above the threshold)", 0,
          cudafx::kHarrisMaxMinDistance, defaults.min_distance, flags));
  g_object_class_install_property (gobject_class, PROP_MAX_CORNERS,
      g_param_spec_int ("max-corners", "Maximum corners", "Keep at most this many, strongest "
          "first", 1, cudafx::kHarrisMaxCorners, defaults.max_corners, flags));
  g_object_class_install_property (gobject_class, PROP_SUBPIXEL,
      g_param_spec_boolean ("subpixel", "Sub-pixel",
          "Refine positions by a quadratic fit of the response", defaults.subpixel, flags));
  g_object_class_install_property (gobject_class, PROP_BORDER_MODE,
      g_param_spec_enum ("border-mode", "Border mode", "Where pixels outside the frame come "
          "from", GST_TYPE_CUDA_FX_BORDER_MODE, GST_CUDA_FX_BORDER_REFLECT_101, flags));
  g_object_class_install_property (gobject_class, PROP_DRAW,
      g_param_spec_boolean ("draw", "Draw", "Mark the corners in the frame (else the frame "
          "passes through untouched)", FALSE, flags));
  g_object_class_install_property (gobject_class, PROP_DRAW_COLOR,
      g_param_spec_uint ("draw-color", "Draw colour", "Colour of the marks, 0xAARRGGBB (alpha "
          "ignored)", 0, G_MAXUINT32, DEFAULT_DRAW_COLOR, flags));
  g_object_class_install_property (gobject_class, PROP_DRAW_SIZE,
      g_param_spec_int ("draw-size", "Draw size", "Arm length or radius of a mark in pixels",
          1, cudafx::kMarkerMaxSize, DEFAULT_DRAW_SIZE, flags));
  g_object_class_install_property (gobject_class, PROP_DRAW_SHAPE,
      g_param_spec_enum ("draw-shape", "Draw shape", "Shape of a mark",
          GST_TYPE_CUDA_HARRIS_SHAPE, GST_CUDA_HARRIS_SHAPE_CROSS, flags));
  g_object_class_install_property (gobject_class, PROP_ROI_META,
      g_param_spec_boolean ("roi-meta", "ROI metas", "Also attach a "
          "GstVideoRegionOfInterestMeta \"corner\" per corner", FALSE, flags));
  g_object_class_install_property (gobject_class, PROP_MESSAGE_INTERVAL,
      g_param_spec_uint ("message-interval", "Message interval", "Post a \"cudaharris\" "
          "element message every this many frames (0: never)", 0, G_MAXUINT,
          DEFAULT_MESSAGE_INTERVAL, flags));

  gst_element_class_set_static_metadata (element_class, "CUDA Harris corner detector",
      "Filter/Analyzer/Video", "Harris corners as metadata (and drawn on request) on a CUDA "
      "device or the CPU", "gst-cudafx developers");
  gst_cuda_fx_filter_class_add_pad_templates (filter_class, GST_CUDA_FX_CUDA_FORMATS,
      GST_CUDA_FX_SYSTEM_FORMATS);

  trans_class->stop = GST_DEBUG_FUNCPTR (gst_cuda_harris_stop);
  filter_class->setup = GST_DEBUG_FUNCPTR (gst_cuda_harris_setup);
  filter_class->process_ip = GST_DEBUG_FUNCPTR (gst_cuda_harris_process_ip);
  filter_class->finish = GST_DEBUG_FUNCPTR (gst_cuda_harris_finish);
  filter_class->teardown = GST_DEBUG_FUNCPTR (gst_cuda_harris_teardown);

  GST_DEBUG_CATEGORY_INIT (gst_cuda_harris_debug, "cudaharris", 0, "CUDA Harris corners");
}

static void
gst_cuda_harris_init (GstCudaHarris * self)
{
  self->state = new GstCudaHarrisState ();
  gst_video_info_init (&self->state->info);
  gst_cuda_fx_filter_set_mode (GST_CUDA_FX_FILTER (self), GST_CUDA_FX_FILTER_MODE_ANALYSIS);
}
