/**
 * SECTION:element-cudaupscale
 * @title: cudaupscale
 *
 * Scales video, up or down, to any size: nearest-neighbour, bilinear or
 * bicubic (Keys, a = -0.75, as OpenCV's INTER_CUBIC), on a CUDA device or on
 * the CPU, with the same result bit for bit. Pixel centres are aligned
 * (as videoscale and cv::resize do); nearest-neighbour picks the sample
 * floor(x * in / out), as cv::resize's INTER_NEAREST does. Subsampled chroma
 * (I420, NV12) keeps its siting (the caps' chroma-site).
 *
 * The output size comes from caps negotiation, as with videoscale: put a
 * capsfilter with the size after the element. A free side keeps the display
 * aspect ratio, adjusting the pixel-aspect-ratio when both sizes are fixed.
 * #GstCudaUpscale:factor fixes the output to factor times the input instead.
 * Equal sizes in the same memory pass buffers through untouched.
 *
 * Frames in system memory are copied to the device through pinned memory;
 * frames in memory:CUDAMemory (from cudaupload or another cudafx element)
 * stay on the device.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 videotestsrc ! video/x-raw,format=RGBA,width=1920,height=1080 ! cudaupscale method=bicubic ! video/x-raw,width=3840,height=2160 ! fakesink
 * ]| Upscales 1080p to 2160p, bicubic.
 * |[
 * gst-launch-1.0 v4l2src ! videoconvert ! video/x-raw,format=RGBA ! cudaupscale factor=2 method=nearest-neighbour ! videoconvert ! autovideosink
 * ]| Doubles a camera's frames in each direction, the method of the
 * "Parallelized Nearest Neighbor Upscaler" report.
 * |[
 * gst-launch-1.0 videotestsrc ! cudaupload ! "video/x-raw(memory:CUDAMemory)" ! cudaupscale ! "video/x-raw(memory:CUDAMemory),width=1280,height=720" ! cudadownload ! autovideosink
 * ]| Scales frames that stay in CUDA memory.
 */
#include "gstcudaupscale.h"

#include <cmath>
#include <memory>
#include <string>

#include "cudafx/resize.hpp"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_upscale_debug);
#define GST_CAT_DEFAULT gst_cuda_upscale_debug

enum
{
  PROP_0,
  PROP_METHOD,
  PROP_FACTOR,
};

#define DEFAULT_METHOD GST_CUDA_UPSCALE_BILINEAR
#define DEFAULT_FACTOR 0.0
#define MAX_FACTOR 16.0

struct GstCudaUpscaleState
{
  /* properties, under the object lock */
  GstCudaUpscaleMethod method = DEFAULT_METHOD;
  gdouble factor = DEFAULT_FACTOR;
  bool method_changed = false;

  /* streaming thread: the op for the negotiated caps (its plan keeps the
   * sizes, formats and siting a new method needs) */
  std::unique_ptr < cudafx::ResizeOp > op;
  /* streaming thread, from set_caps: the negotiated video infos (region
   * metas are scaled from the one to the other) */
  GstVideoInfo in_info, out_info;

  /* under the object lock: the negotiated sizes (0 before caps), for
   * navigation events, which come from any thread; the negotiation error
   * last posted, so that a retry does not post it again */
  gint in_width = 0, in_height = 0, out_width = 0, out_height = 0;
  std::string posted_error;
};

struct _GstCudaUpscale
{
  GstCudaFxFilter parent;
  GstCudaUpscaleState *state;
};

G_DEFINE_TYPE (GstCudaUpscale, gst_cuda_upscale, GST_TYPE_CUDA_FX_FILTER);
GST_ELEMENT_REGISTER_DEFINE (cudaupscale, "cudaupscale", GST_RANK_NONE,
    GST_TYPE_CUDA_UPSCALE);

/* ---- caps ---- */

/* Maps an int field (fixed or range) of `s` through x -> round(x * f)
 * (forward) or to every x whose image is in the field (inverse), within the
 * op's size range; f = 0 frees the field. FALSE when nothing maps. */
static gboolean
map_size_field (GstStructure * s, const gchar * field, double f, bool inverse)
{
  const int min_size = 1, max_size = cudafx::kResizeMaxSize;
  const GValue *v = gst_structure_get_value (s, field);
  int lo, hi;
  if (v && G_VALUE_HOLDS_INT (v)) {
    lo = hi = g_value_get_int (v);
  } else if (v && GST_VALUE_HOLDS_INT_RANGE (v)) {
    lo = gst_value_get_int_range_min (v);
    hi = gst_value_get_int_range_max (v);
  } else {
    f = 0;
  }
  if (f <= 0) {
    gst_structure_set (s, field, GST_TYPE_INT_RANGE, min_size, max_size, nullptr);
    return TRUE;
  }
  auto image =[f](double x) {
    return (double) std::lround (x * f);
  };
  if (!inverse) {
    /* Sizes whose image falls outside the op's range have no output (a
     * fixed one fails negotiation) rather than a size that is not the
     * factor's. */
    const double a = image (lo), b = image (hi);
    if (a > max_size || b < min_size)
      return FALSE;
    lo = (int) MAX (a, min_size);
    hi = (int) MIN (b, max_size);
  } else {
    /* image() is monotonic: step in from estimates just outside. */
    const double t_lo = lo, t_hi = hi;
    double a = MAX (min_size, std::floor ((t_lo - 0.5) / f) - 1);
    double b = MIN (max_size, std::ceil ((t_hi + 0.5) / f) + 1);
    while (a <= b && image (a) < t_lo)
      a++;
    while (b >= a && image (b) > t_hi)
      b--;
    if (a > b)
      return FALSE;
    lo = (int) a;
    hi = (int) b;
  }
  if (lo == hi)
    gst_structure_set (s, field, G_TYPE_INT, lo, nullptr);
  else
    gst_structure_set (s, field, GST_TYPE_INT_RANGE, lo, hi, nullptr);
  return TRUE;
}

static GstCaps *
gst_cuda_upscale_transform_video_caps (GstCudaFxFilter * filter,
    GstPadDirection direction, GstCaps * caps)
{
  GstCudaUpscale *self = GST_CUDA_UPSCALE (filter);
  GST_OBJECT_LOCK (self);
  const gdouble factor = self->state->factor;
  GST_OBJECT_UNLOCK (self);

  GstCaps *ret = gst_caps_new_empty ();
  for (guint i = 0; i < gst_caps_get_size (caps); i++) {
    GstStructure *s = gst_structure_copy (gst_caps_get_structure (caps, i));
    GstCapsFeatures *f = gst_caps_get_features (caps, i);
    /* Sizes follow the factor, or are free; a free size frees the pixel
     * aspect ratio too (fixate_caps then keeps the display aspect ratio). */
    const bool inverse = direction == GST_PAD_SRC;
    if (!map_size_field (s, "width", factor, inverse) ||
        !map_size_field (s, "height", factor, inverse)) {
      gst_structure_free (s);
      continue;
    }
    if (factor <= 0 && gst_structure_has_field (s, "pixel-aspect-ratio"))
      gst_structure_set (s, "pixel-aspect-ratio", GST_TYPE_FRACTION_RANGE, 1,
          G_MAXINT, G_MAXINT, 1, nullptr);
    ret = gst_caps_merge_structure_full (ret, s, f ? gst_caps_features_copy (f) : nullptr);
  }
  GST_DEBUG_OBJECT (self, "%s %" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT,
      direction == GST_PAD_SINK ? "sink" : "src", caps, ret);
  return ret;
}

/* round(v * num / den) */
static gint
scale_round (gint v, gint num, gint den)
{
  if (den == 0)
    return v;
  return (gint) gst_util_uint64_scale_round ((guint64) v, (guint64) num, (guint64) den);
}

/* Fixes the free size or pixel-aspect-ratio of `outs` so that the display
 * aspect ratio of the input is kept, as videoscale does: both sizes fixed →
 * the pixel-aspect-ratio; one fixed → the other, with the pixel-aspect-ratio
 * kept as close to the input's as downstream allows; none → the input's
 * height and the width that keeps the ratio. */
static void
fixate_to_dar (GstCudaUpscale * self, GstStructure * ins, GstStructure * outs)
{
  gint from_w, from_h, from_par_n = 1, from_par_d = 1;
  if (!gst_structure_get_int (ins, "width", &from_w) ||
      !gst_structure_get_int (ins, "height", &from_h))
    return;
  gst_structure_get_fraction (ins, "pixel-aspect-ratio", &from_par_n, &from_par_d);
  gint dar_n, dar_d;
  if (!gst_util_fraction_multiply (from_w, from_h, from_par_n, from_par_d, &dar_n, &dar_d)) {
    GST_WARNING_OBJECT (self, "display aspect ratio overflows; not keeping it");
    return;
  }
  gint w = 0, h = 0;
  const gboolean w_fixed = gst_structure_get_int (outs, "width", &w);
  const gboolean h_fixed = gst_structure_get_int (outs, "height", &h);
  /* Downstream that does not say takes any pixel-aspect-ratio. */
  if (!gst_structure_has_field (outs, "pixel-aspect-ratio"))
    gst_structure_set (outs, "pixel-aspect-ratio", GST_TYPE_FRACTION_RANGE, 1, G_MAXINT,
        G_MAXINT, 1, nullptr);

  if (w_fixed && h_fixed) {
    /* par = dar * h / w */
    gint n, d;
    if (gst_util_fraction_multiply (dar_n, dar_d, h, w, &n, &d))
      gst_structure_fixate_field_nearest_fraction (outs, "pixel-aspect-ratio", n, d);
    return;
  }
  gint par_n = 1, par_d = 1;
  gst_structure_fixate_field_nearest_fraction (outs, "pixel-aspect-ratio", from_par_n,
      from_par_d);
  gst_structure_get_fraction (outs, "pixel-aspect-ratio", &par_n, &par_d);
  /* w * par_n / (h * par_d) = dar_n / dar_d */
  gint ratio_n, ratio_d;           /* w / h */
  if (!gst_util_fraction_multiply (dar_n, dar_d, par_d, par_n, &ratio_n, &ratio_d))
    return;
  if (w_fixed) {
    gst_structure_fixate_field_nearest_int (outs, "height", scale_round (w, ratio_d, ratio_n));
  } else if (h_fixed) {
    gst_structure_fixate_field_nearest_int (outs, "width", scale_round (h, ratio_n, ratio_d));
  } else {
    /* Keep the input's height if the width that goes with it is allowed,
     * else the width nearest the input's and the height that goes with it. */
    GstStructure *tmp = gst_structure_copy (outs);
    gst_structure_fixate_field_nearest_int (tmp, "height", from_h);
    gst_structure_get_int (tmp, "height", &h);
    const gint want_w = scale_round (h, ratio_n, ratio_d);
    gst_structure_fixate_field_nearest_int (tmp, "width", want_w);
    gst_structure_get_int (tmp, "width", &w);
    if (w == want_w) {
      gst_structure_set (outs, "width", G_TYPE_INT, w, "height", G_TYPE_INT, h, nullptr);
    } else {
      gst_structure_fixate_field_nearest_int (outs, "width", from_w);
      gst_structure_get_int (outs, "width", &w);
      gst_structure_fixate_field_nearest_int (outs, "height", scale_round (w, ratio_d, ratio_n));
    }
    gst_structure_free (tmp);
  }
}

static GstCaps *
gst_cuda_upscale_fixate_caps (GstCudaFxFilter * filter, GstPadDirection direction,
    GstCaps * caps, GstCaps * othercaps)
{
  GstCudaUpscale *self = GST_CUDA_UPSCALE (filter);
  othercaps = gst_caps_truncate (othercaps);
  othercaps = gst_caps_make_writable (othercaps);
  fixate_to_dar (self, gst_caps_get_structure (caps, 0),
      gst_caps_get_structure (othercaps, 0));
  othercaps = gst_caps_fixate (othercaps);
  GST_DEBUG_OBJECT (self, "fixated to %" GST_PTR_FORMAT " (%s)", othercaps,
      direction == GST_PAD_SINK ? "output" : "input");
  return othercaps;
}

/* ---- factor errors ---- */

static gdouble
current_factor (GstCudaUpscale * self)
{
  GST_OBJECT_LOCK (self);
  const gdouble factor = self->state->factor;
  GST_OBJECT_UNLOCK (self);
  return factor;
}

/* Why `factor` has no output for `caps`: "factor 16 makes 65536x1024 from
 * 4096x64: outside 1..32768" (the first structure's) when every structure
 * has a fixed size whose image (map_size_field's) is outside the op's
 * range; "" when the factor is not set, the caps have no structure, or one
 * has a size range or an image in range (a failure then has another
 * cause). */
static std::string
factor_misfit (gdouble factor, const GstCaps * caps)
{
  const int max_size = cudafx::kResizeMaxSize;
  std::string why;
  if (factor <= 0)
    return why;
  for (guint i = 0; i < gst_caps_get_size (caps); i++) {
    const GstStructure *s = gst_caps_get_structure (caps, i);
    gint w, h;
    if (!gst_structure_get_int (s, "width", &w) || !gst_structure_get_int (s, "height", &h))
      return "";
    const long ow = std::lround (w * factor), oh = std::lround (h * factor);
    if (ow >= 1 && ow <= max_size && oh >= 1 && oh <= max_size)
      return "";
    if (why.empty ()) {
      gchar *msg = g_strdup_printf ("factor %g makes %ldx%ld from %dx%d: outside 1..%d",
          factor, ow, oh, w, h, max_size);
      why = msg;
      g_free (msg);
    }
  }
  return why;
}

/* Posts the negotiation error `why` (of input `caps`) unless it was the last
 * one posted: negotiation may be retried with the same caps. */
static void
post_factor_error (GstCudaUpscale * self, const std::string & why, const GstCaps * caps)
{
  GST_OBJECT_LOCK (self);
  const bool again = self->state->posted_error == why;
  self->state->posted_error = why;
  GST_OBJECT_UNLOCK (self);
  if (again)
    return;
  GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("%s", why.c_str ()),
      ("input caps %" GST_PTR_FORMAT, caps));
}

/* transform_caps drops an input whose image under the factor is outside the
 * op's range, so negotiation fails without a word. Where the element is
 * told the input size while streaming it says why instead: upstream asking
 * with fixed sizes (a caps query; the caps of a caps event, which the pad
 * checks with an accept-caps query before the event reaches the element)
 * and a new factor for the current caps (submit_input_buffer, where the
 * reconfiguration fails). Not while linking: inactive pads, nothing decided
 * yet (a pipeline whose fixed sizes the factor cannot take does not link). */
static gboolean
gst_cuda_upscale_query (GstBaseTransform * trans, GstPadDirection direction,
    GstQuery * query)
{
  GstCudaUpscale *self = GST_CUDA_UPSCALE (trans);
  if (!GST_BASE_TRANSFORM_CLASS (gst_cuda_upscale_parent_class)->query (trans, direction,
          query))
    return FALSE;
  if (direction != GST_PAD_SINK || !GST_PAD_IS_ACTIVE (trans->sinkpad))
    return TRUE;
  GstCaps *caps = nullptr;
  bool refused = false;
  if (GST_QUERY_TYPE (query) == GST_QUERY_CAPS) {
    GstCaps *result = nullptr;
    gst_query_parse_caps (query, &caps);
    gst_query_parse_caps_result (query, &result);
    refused = caps && result && gst_caps_is_empty (result);
  } else if (GST_QUERY_TYPE (query) == GST_QUERY_ACCEPT_CAPS) {
    gboolean accepted = TRUE;
    gst_query_parse_accept_caps (query, &caps);
    gst_query_parse_accept_caps_result (query, &accepted);
    refused = caps && !accepted;
  }
  if (refused) {
    const std::string why = factor_misfit (current_factor (self), caps);
    if (!why.empty ())
      post_factor_error (self, why, caps);
  }
  return TRUE;
}

static GstFlowReturn
gst_cuda_upscale_submit_input_buffer (GstBaseTransform * trans, gboolean is_discont,
    GstBuffer * input)
{
  GstCudaUpscale *self = GST_CUDA_UPSCALE (trans);
  const GstFlowReturn ret =
      GST_BASE_TRANSFORM_CLASS (gst_cuda_upscale_parent_class)->submit_input_buffer (trans,
      is_discont, input);
  if (ret == GST_FLOW_NOT_NEGOTIATED) {
    GstCaps *caps = gst_pad_get_current_caps (trans->sinkpad);
    if (caps) {
      const std::string why = factor_misfit (current_factor (self), caps);
      if (!why.empty ())
        post_factor_error (self, why, caps);
      gst_caps_unref (caps);
    }
  }
  return ret;
}

/* ---- negotiated sizes: metas and navigation ---- */

static gboolean
gst_cuda_upscale_set_caps (GstBaseTransform * trans, GstCaps * incaps, GstCaps * outcaps)
{
  GstCudaUpscale *self = GST_CUDA_UPSCALE (trans);
  GstCudaUpscaleState *st = self->state;
  if (!GST_BASE_TRANSFORM_CLASS (gst_cuda_upscale_parent_class)->set_caps (trans, incaps,
          outcaps))
    return FALSE;
  /* The parent took both, so they parse. */
  gst_video_info_from_caps (&st->in_info, incaps);
  gst_video_info_from_caps (&st->out_info, outcaps);
  GST_OBJECT_LOCK (self);
  st->in_width = GST_VIDEO_INFO_WIDTH (&st->in_info);
  st->in_height = GST_VIDEO_INFO_HEIGHT (&st->in_info);
  st->out_width = GST_VIDEO_INFO_WIDTH (&st->out_info);
  st->out_height = GST_VIDEO_INFO_HEIGHT (&st->out_info);
  st->posted_error.clear ();
  GST_OBJECT_UNLOCK (self);
  return TRUE;
}

static gboolean
gst_cuda_upscale_stop (GstBaseTransform * trans)
{
  GstCudaUpscale *self = GST_CUDA_UPSCALE (trans);
  GST_OBJECT_LOCK (self);
  self->state->in_width = self->state->in_height = 0;
  self->state->out_width = self->state->out_height = 0;
  self->state->posted_error.clear ();
  GST_OBJECT_UNLOCK (self);
  return GST_BASE_TRANSFORM_CLASS (gst_cuda_upscale_parent_class)->stop (trans);
}

/* As videoconvertscale: a meta whose tags are all geometric ("video",
 * "size", "orientation") and include "size" (a region:
 * GstVideoRegionOfInterestMeta, ...) is scaled through its transform
 * function. The parent class keeps the rest that holds at any size (no tag,
 * "video", "orientation": scaling keeps the orientation) and drops what
 * does not ("colorspace", ...). */
static gboolean
gst_cuda_upscale_transform_meta (GstBaseTransform * trans, GstBuffer * outbuf,
    GstMeta * meta, GstBuffer * inbuf)
{
  GstCudaUpscaleState *st = GST_CUDA_UPSCALE (trans)->state;
  static const gchar *const geometry[] = { GST_META_TAG_VIDEO_STR,
    GST_META_TAG_VIDEO_SIZE_STR, GST_META_TAG_VIDEO_ORIENTATION_STR, nullptr
  };
  const GstMetaInfo *info = meta->info;
  bool scale = gst_meta_api_type_has_tag (info->api,
      g_quark_from_static_string (GST_META_TAG_VIDEO_SIZE_STR));
  for (const gchar * const *t = gst_meta_api_type_get_tags (info->api); scale && *t; t++)
    scale = g_strv_contains (geometry, *t);
  if (!scale)
    return GST_BASE_TRANSFORM_CLASS (gst_cuda_upscale_parent_class)->transform_meta (trans,
        outbuf, meta, inbuf);
  GstVideoMetaTransform sizes = { &st->in_info, &st->out_info };
  if (info->transform_func)
    info->transform_func (outbuf, meta, inbuf, gst_video_meta_transform_scale_get_quark (),
        &sizes);
  /* Scaled (or dropped where it cannot be): no copy on top. */
  return FALSE;
}

/* A navigation event's pointer coordinates: GStreamer 1.22's accessors, or
 * on 1.20 the fields they read and write (every pointer event has them). */
static gboolean
navigation_coordinates (GstEvent * event, gdouble * x, gdouble * y)
{
#if GST_CHECK_VERSION(1, 22, 0)
  return gst_navigation_event_get_coordinates (event, x, y);
#else
  const GstStructure *s = gst_event_get_structure (event);
  return s && gst_structure_get_double (s, "pointer_x", x) &&
      gst_structure_get_double (s, "pointer_y", y);
#endif
}

static void
set_navigation_coordinates (GstEvent * event, gdouble x, gdouble y)
{
#if GST_CHECK_VERSION(1, 22, 0)
  gst_navigation_event_set_coordinates (event, x, y);
#else
  gst_structure_set (gst_event_writable_structure (event), "pointer_x", G_TYPE_DOUBLE, x,
      "pointer_y", G_TYPE_DOUBLE, y, NULL);
#endif
}

/* Pointer coordinates of navigation events travelling upstream are in the
 * output's pixels: map them to the input's, as videoscale does. */
static gboolean
gst_cuda_upscale_src_event (GstBaseTransform * trans, GstEvent * event)
{
  GstCudaUpscale *self = GST_CUDA_UPSCALE (trans);
  GstCudaUpscaleState *st = self->state;
  gdouble x, y;
  if (GST_EVENT_TYPE (event) == GST_EVENT_NAVIGATION &&
      navigation_coordinates (event, &x, &y)) {
    GST_OBJECT_LOCK (self);
    const gint in_w = st->in_width, in_h = st->in_height;
    const gint out_w = st->out_width, out_h = st->out_height;
    GST_OBJECT_UNLOCK (self);
    if (out_w > 0 && out_h > 0 && (in_w != out_w || in_h != out_h)) {
      event = gst_event_make_writable (event);
      set_navigation_coordinates (event, x * in_w / out_w, y * in_h / out_h);
      GST_LOG_OBJECT (self, "navigation (%g, %g) -> (%g, %g)", x, y,
          x * in_w / out_w, y * in_h / out_h);
    }
  }
  return GST_BASE_TRANSFORM_CLASS (gst_cuda_upscale_parent_class)->src_event (trans, event);
}

/* ---- the op ---- */

/* The method property, taken: the op is built for it from now on. */
static cudafx::ResizeMethod
take_method (GstCudaUpscale * self)
{
  GST_OBJECT_LOCK (self);
  const cudafx::ResizeMethod m = gst_cuda_upscale_method_to_op (self->state->method);
  self->state->method_changed = false;
  GST_OBJECT_UNLOCK (self);
  return m;
}

/* Builds the op and replaces the current one only if that worked. */
static cudafx::Status
build_op (GstCudaUpscale * self, cudafx::Backend backend, const cudafx::ImageDesc & in,
    const cudafx::ImageDesc & out, const cudafx::ResizeParams & params)
{
  GST_DEBUG_OBJECT (self, "%dx%d -> %dx%d, %s", in.width, in.height, out.width,
      out.height, cudafx::resize_method_name (params.method));
  std::unique_ptr < cudafx::ResizeOp > op;
  CUDAFX_TRY (cudafx::ResizeOp::create (backend, in, out, params, &op));
  self->state->op = std::move (op);
  return cudafx::Status::ok ();
}

static cudafx::Status
gst_cuda_upscale_setup (GstCudaFxFilter * filter, const GstCudaFxFilterConfig & config)
{
  GstCudaUpscale *self = GST_CUDA_UPSCALE (filter);
  cudafx::ResizeParams params;
  params.method = take_method (self);
  const guint site = GST_VIDEO_INFO_CHROMA_SITE (config.in_info);
  params.chroma_cosited_h = (site & GST_VIDEO_CHROMA_SITE_H_COSITED) != 0;
  params.chroma_cosited_v = (site & GST_VIDEO_CHROMA_SITE_V_COSITED) != 0;
  return build_op (self, config.backend, config.in, config.out, params);
}

static cudafx::Status
gst_cuda_upscale_process (GstCudaFxFilter * filter, const cudafx::ImageView & src,
    const cudafx::ImageView & dst, cudafx::StreamHandle stream)
{
  GstCudaUpscale *self = GST_CUDA_UPSCALE (filter);
  GST_OBJECT_LOCK (self);
  const bool changed = self->state->method_changed;
  GST_OBJECT_UNLOCK (self);
  if (changed) {
    /* Copies: building replaces the op that holds them. */
    const cudafx::ResizeOp & op = *self->state->op;
    const cudafx::ImageDesc in = op.plan ().src, out = op.plan ().dst;
    cudafx::ResizeParams params = op.plan ().params;
    params.method = take_method (self);
    CUDAFX_TRY (build_op (self, op.backend (), in, out, params));
  }
  return self->state->op->submit (stream, src, dst);
}

static void
gst_cuda_upscale_teardown (GstCudaFxFilter * filter)
{
  GST_CUDA_UPSCALE (filter)->state->op.reset ();
}

/* ---- properties ---- */

static void
gst_cuda_upscale_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCudaUpscale *self = GST_CUDA_UPSCALE (object);
  GstCudaUpscaleState *st = self->state;
  bool reconfigure = false;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_METHOD:
      st->method = static_cast < GstCudaUpscaleMethod > (g_value_get_enum (value));
      st->method_changed = true;
      break;
    case PROP_FACTOR:
      reconfigure = st->factor != g_value_get_double (value);
      st->factor = g_value_get_double (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
  /* A new factor means new output caps: renegotiate before the next buffer. */
  if (reconfigure)
    gst_base_transform_reconfigure_src (GST_BASE_TRANSFORM (self));
}

static void
gst_cuda_upscale_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstCudaUpscale *self = GST_CUDA_UPSCALE (object);
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_METHOD:
      g_value_set_enum (value, self->state->method);
      break;
    case PROP_FACTOR:
      g_value_set_double (value, self->state->factor);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cuda_upscale_finalize (GObject * object)
{
  GstCudaUpscale *self = GST_CUDA_UPSCALE (object);
  delete self->state;
  self->state = nullptr;
  G_OBJECT_CLASS (gst_cuda_upscale_parent_class)->finalize (object);
}

static void
gst_cuda_upscale_class_init (GstCudaUpscaleClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GstCudaFxFilterClass *filter_class = GST_CUDA_FX_FILTER_CLASS (klass);
  const GParamFlags flags = static_cast < GParamFlags > (G_PARAM_READWRITE |
      G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  gobject_class->set_property = gst_cuda_upscale_set_property;
  gobject_class->get_property = gst_cuda_upscale_get_property;
  gobject_class->finalize = gst_cuda_upscale_finalize;

  g_object_class_install_property (gobject_class, PROP_METHOD,
      g_param_spec_enum ("method", "Method", "Interpolation method",
          GST_TYPE_CUDA_UPSCALE_METHOD, DEFAULT_METHOD, flags));
  g_object_class_install_property (gobject_class, PROP_FACTOR,
      g_param_spec_double ("factor", "Factor",
          "Output size as this multiple of the input size, both axes, rounded "
          "(0: from caps negotiation, as videoscale)", 0.0, MAX_FACTOR, DEFAULT_FACTOR,
          flags));

  gst_element_class_set_static_metadata (element_class, "CUDA video scaler",
      "Filter/Converter/Video/Scaler", "Nearest-neighbour, bilinear and bicubic "
      "scaling to any size on a CUDA device or the CPU", "gst-cudafx developers");
  gst_cuda_fx_filter_class_add_pad_templates (filter_class, GST_CUDA_FX_CUDA_FORMATS,
      GST_CUDA_FX_SYSTEM_FORMATS);

  /* Same size in the same memory: nothing to do. */
  filter_class->passthrough_on_same_info = TRUE;
  /* Region metas are scaled (transform_meta); orientation holds at any size. */
  static const gchar *const kept_meta_tags[] = { GST_META_TAG_VIDEO_ORIENTATION_STR, nullptr };
  filter_class->kept_meta_tags = kept_meta_tags;
  filter_class->fixate_video_caps = GST_DEBUG_FUNCPTR (gst_cuda_upscale_fixate_caps);
  trans_class->query = GST_DEBUG_FUNCPTR (gst_cuda_upscale_query);
  trans_class->submit_input_buffer =
      GST_DEBUG_FUNCPTR (gst_cuda_upscale_submit_input_buffer);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_cuda_upscale_set_caps);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_cuda_upscale_stop);
  trans_class->transform_meta = GST_DEBUG_FUNCPTR (gst_cuda_upscale_transform_meta);
  trans_class->src_event = GST_DEBUG_FUNCPTR (gst_cuda_upscale_src_event);

  filter_class->setup = GST_DEBUG_FUNCPTR (gst_cuda_upscale_setup);
  filter_class->process = GST_DEBUG_FUNCPTR (gst_cuda_upscale_process);
  filter_class->teardown = GST_DEBUG_FUNCPTR (gst_cuda_upscale_teardown);
  filter_class->transform_video_caps =
      GST_DEBUG_FUNCPTR (gst_cuda_upscale_transform_video_caps);

  GST_DEBUG_CATEGORY_INIT (gst_cuda_upscale_debug, "cudaupscale", 0, "CUDA video scaler");
}

static void
gst_cuda_upscale_init (GstCudaUpscale * self)
{
  self->state = new GstCudaUpscaleState ();
  gst_video_info_init (&self->state->in_info);
  gst_video_info_init (&self->state->out_info);
}
