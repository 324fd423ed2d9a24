/**
 * SECTION:element-cudacanny
 * @title: cudacanny
 *
 * Canny edges on a CUDA device or on the CPU: the edge map cv::Canny gives
 * for the same grey frame, thresholds, aperture and norm (the rule is in
 * cudafx/canny.hpp). The grey frame is the luma plane of GRAY8 and YUV, or
 * the BT.601 luma of RGB; #GstCudaCanny:blur-sigma blurs the frame first
 * (cudagaussian's op). Weak edges are kept where they connect to a strong
 * one through any path across the frame.
 *
 * #GstCudaCanny:mode=edges outputs the edge map as GRAY8 (255 on edges, in
 * system memory: CUDA memory has no GRAY8); mode=overlay outputs the frame
 * in its own format and memory with the edges blended over it in
 * #GstCudaCanny:color (converted by the frame's matrix and range).
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 v4l2src ! videoconvert ! video/x-raw,format=NV12 ! cudacanny low-threshold=40 high-threshold=120 ! videoconvert ! autovideosink
 * ]| The edge map of a camera.
 * |[
 * gst-launch-1.0 videotestsrc pattern=ball ! video/x-raw,format=RGBA ! cudaupload ! "video/x-raw(memory:CUDAMemory)" ! cudacanny mode=overlay color=0xffff0000 ! cudadownload ! videoconvert ! autovideosink
 * ]| Red edges over the frames, on the GPU.
 */
#include "gstcudacanny.h"

#include <memory>
#include <vector>

#include "cudafx/canny.hpp"
#include "cudafx/gaussian.hpp"
#include "cudafx/overlay_blend.hpp"
#include "gstcudafxcolorimetry.h"
#include "gstcudafxenums.h"
#include "gstcudafxpending.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_canny_debug);
#define GST_CAT_DEFAULT gst_cuda_canny_debug

enum
{
  PROP_0,
  PROP_LOW,
  PROP_HIGH,
  PROP_APERTURE,
  PROP_L2,
  PROP_BLUR_SIGMA,
  PROP_MODE,
  PROP_COLOR,
};

#define DEFAULT_LOW 50.0
#define DEFAULT_HIGH 150.0
#define DEFAULT_COLOR 0xff00ff00u

struct GstCudaCannySettings
{
  cudafx::CannyParams canny;
  double blur_sigma = 0.0;
  guint color = DEFAULT_COLOR;
};

struct GstCudaCannyState
{
  /* properties, under the object lock */
  GstCudaFxPending < GstCudaCannySettings > settings;
  GstCudaCannyMode mode = GST_CUDA_CANNY_EDGES;

  /* streaming thread */
  GstCudaCannySettings current;
  cudafx::Backend backend = cudafx::Backend::Cpu;
  cudafx::ImageDesc desc;
  cudafx::OverlayColorimetry colour;
  std::unique_ptr < cudafx::CannyOp > op;
  std::unique_ptr < cudafx::GaussianOp > blur;
  /* the blurred frame and the overlay: device memory for CUDA, else host */
  cudafx::DeviceBuffer device_frame, device_overlay;
  std::vector < uint8_t > host_frame, host_overlay;
};

struct _GstCudaCanny
{
  GstCudaFxFilter parent;
  GstCudaCannyState *state;
};

G_DEFINE_TYPE (GstCudaCanny, gst_cuda_canny, GST_TYPE_CUDA_FX_FILTER);
GST_ELEMENT_REGISTER_DEFINE (cudacanny, "cudacanny", GST_RANK_NONE, GST_TYPE_CUDA_CANNY);

static GstCudaCannyMode
get_mode (GstCudaCanny * self)
{
  GST_OBJECT_LOCK (self);
  const GstCudaCannyMode m = self->state->mode;
  GST_OBJECT_UNLOCK (self);
  return m;
}

/* edges: any input format gives GRAY8, and GRAY8 takes any input format;
 * overlay: the same caps. */
static GstCaps *
gst_cuda_canny_transform_video_caps (GstCudaFxFilter * filter, GstPadDirection direction,
    GstCaps * caps)
{
  if (get_mode (GST_CUDA_CANNY (filter)) == GST_CUDA_CANNY_OVERLAY)
    return gst_caps_ref (caps);
  GstCaps *ret = gst_cuda_fx_caps_free_format (gst_caps_copy (caps));
  if (direction == GST_PAD_SINK)
    gst_caps_set_simple (ret, "format", G_TYPE_STRING, "GRAY8", nullptr);
  return ret;
}

/* Makes the ops follow `next`: the Canny op built once, then given new
 * parameters (no new scratch); the blur (re)built when blur-sigma changes,
 * dropped at 0. */
static cudafx::Status
apply_settings (GstCudaCanny * self, const GstCudaCannySettings & next)
{
  GstCudaCannyState *st = self->state;
  if (st->op)
    CUDAFX_TRY (st->op->set_params (next.canny));
  else
    CUDAFX_TRY (cudafx::CannyOp::create (st->backend, st->desc, next.canny, &st->op));
  /* (setup drops the blur: a new size or format rebuilds it) */
  const bool blur_changed = next.blur_sigma != st->current.blur_sigma ||
      (next.blur_sigma > 0) != static_cast < bool > (st->blur);
  st->current = next;
  if (!blur_changed)
    return cudafx::Status::ok ();
  st->blur.reset ();
  if (next.blur_sigma > 0) {
    cudafx::GaussianParams g;
    g.sigma_x = next.blur_sigma;
    CUDAFX_TRY (cudafx::GaussianOp::create (st->backend, st->desc, g, &st->blur));
    const size_t bytes = cudafx::packed_size (st->desc);
    if (st->backend == cudafx::Backend::Cuda) {
      if (st->device_frame.size () < bytes)
        CUDAFX_TRY (st->device_frame.allocate (bytes));
    } else {
      st->host_frame.resize (bytes);
    }
  }
  return cudafx::Status::ok ();
}

static cudafx::Status
gst_cuda_canny_setup (GstCudaFxFilter * filter, const GstCudaFxFilterConfig & config)
{
  GstCudaCanny *self = GST_CUDA_CANNY (filter);
  GstCudaCannyState *st = self->state;
  st->backend = config.backend;
  st->desc = config.in;
  st->colour = gst_cuda_fx_overlay_colorimetry (config.in_info);
  st->op.reset ();              /* a new size or format: built anew */
  st->blur.reset ();
  CUDAFX_TRY (apply_settings (self, st->settings.take (self)));
  if (get_mode (self) == GST_CUDA_CANNY_OVERLAY) {
    /* a BGRA overlay of the frame's size */
    const size_t bytes = static_cast < size_t > (config.in.width) * config.in.height * 4;
    if (st->backend == cudafx::Backend::Cuda) {
      if (st->device_overlay.size () < bytes)
        CUDAFX_TRY (st->device_overlay.allocate (bytes));
    } else {
      st->host_overlay.resize (bytes);
    }
  }
  return cudafx::Status::ok ();
}

static cudafx::Status
gst_cuda_canny_process (GstCudaFxFilter * filter, const cudafx::ImageView & src,
    const cudafx::ImageView & dst, cudafx::StreamHandle stream)
{
  GstCudaCanny *self = GST_CUDA_CANNY (filter);
  GstCudaCannyState *st = self->state;
  const GstCudaCannyMode mode = get_mode (self);
  GstCudaCannySettings next;
  if (st->settings.take_if_changed (self, &next))
    CUDAFX_TRY (apply_settings (self, next));
  const bool cuda = st->backend == cudafx::Backend::Cuda;
  cudafx::ImageView frame = src;
  if (st->blur) {
    uint8_t *base = cuda ? st->device_frame.bytes () : st->host_frame.data ();
    frame = cudafx::packed_view (st->desc, base);
    CUDAFX_TRY (st->blur->submit (stream, src, frame));
  }
  if (mode == GST_CUDA_CANNY_EDGES)
    return st->op->submit (stream, frame, dst.plane (0));

  /* overlay: the frame, then the edges blended over it */
  if (cuda) {
    CUDAFX_TRY (cudafx::copy_image_async (dst, src, stream));
  } else {
    for (int p = 0; p < cudafx::format_info (st->desc.format).n_planes; p++)
      cudafx::copy_plane_host (dst.plane (p), src.plane (p));
  }
  uint8_t *ov = cuda ? st->device_overlay.bytes () : st->host_overlay.data ();
  const cudafx::PlaneView plane { ov, static_cast < size_t > (st->desc.width) * 4,
    st->desc.width, st->desc.height, 4 };
  CUDAFX_TRY (st->op->submit_overlay (stream, frame, plane, st->current.color));
  return cudafx::blend_overlay (st->backend, stream, dst, cudafx::OverlayImage { ov,
          plane.pitch, st->desc.width, st->desc.height }, 0, 0, st->colour);
}

static void
gst_cuda_canny_teardown (GstCudaFxFilter * filter)
{
  GstCudaCannyState *st = GST_CUDA_CANNY (filter)->state;
  st->op.reset ();
  st->blur.reset ();
  st->device_frame = cudafx::DeviceBuffer ();
  st->device_overlay = cudafx::DeviceBuffer ();
}

static void
gst_cuda_canny_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCudaCanny *self = GST_CUDA_CANNY (object);
  GstCudaCannySettings & s = self->state->settings.value;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_LOW:
      s.canny.low = g_value_get_double (value);
      break;
    case PROP_HIGH:
      s.canny.high = g_value_get_double (value);
      break;
    case PROP_APERTURE:{
      const gint a = g_value_get_int (value);
      if (a != 3 && a != 5 && a != 7) {
        GST_OBJECT_UNLOCK (self);
        g_warning ("cudacanny: aperture must be 3, 5 or 7, %d ignored", a);
        return;
      }
      s.canny.aperture = a;
      break;
    }
    case PROP_L2:
      s.canny.l2 = g_value_get_boolean (value);
      break;
    case PROP_BLUR_SIGMA:
      s.blur_sigma = g_value_get_double (value);
      break;
    case PROP_MODE:
      self->state->mode = static_cast < GstCudaCannyMode > (g_value_get_enum (value));
      break;
    case PROP_COLOR:
      s.color = g_value_get_uint (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      GST_OBJECT_UNLOCK (self);
      return;
  }
  self->state->settings.changed = true;
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cuda_canny_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstCudaCanny *self = GST_CUDA_CANNY (object);
  const GstCudaCannySettings & s = self->state->settings.value;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_LOW:
      g_value_set_double (value, s.canny.low);
      break;
    case PROP_HIGH:
      g_value_set_double (value, s.canny.high);
      break;
    case PROP_APERTURE:
      g_value_set_int (value, s.canny.aperture);
      break;
    case PROP_L2:
      g_value_set_boolean (value, s.canny.l2);
      break;
    case PROP_BLUR_SIGMA:
      g_value_set_double (value, s.blur_sigma);
      break;
    case PROP_MODE:
      g_value_set_enum (value, self->state->mode);
      break;
    case PROP_COLOR:
      g_value_set_uint (value, s.color);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cuda_canny_finalize (GObject * object)
{
  GstCudaCanny *self = GST_CUDA_CANNY (object);
  delete self->state;
  self->state = nullptr;
  G_OBJECT_CLASS (gst_cuda_canny_parent_class)->finalize (object);
}

static void
gst_cuda_canny_class_init (GstCudaCannyClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstCudaFxFilterClass *filter_class = GST_CUDA_FX_FILTER_CLASS (klass);
  const GParamFlags flags = static_cast < GParamFlags > (G_PARAM_READWRITE |
      G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  const GParamFlags controllable = static_cast < GParamFlags > (flags |
      GST_PARAM_CONTROLLABLE);
  const GParamFlags ready = static_cast < GParamFlags > (G_PARAM_READWRITE |
      G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);

  gobject_class->set_property = gst_cuda_canny_set_property;
  gobject_class->get_property = gst_cuda_canny_get_property;
  gobject_class->finalize = gst_cuda_canny_finalize;

  g_object_class_install_property (gobject_class, PROP_LOW,
      g_param_spec_double ("low-threshold", "Low threshold", "Gradient magnitude above which "
          "a maximum is a weak edge (kept when connected to a strong one)", 0.0, 1e6,
          DEFAULT_LOW, controllable));
  g_object_class_install_property (gobject_class, PROP_HIGH,
      g_param_spec_double ("high-threshold", "High threshold", "Gradient magnitude above "
          "which a maximum is a strong edge", 0.0, 1e6, DEFAULT_HIGH, controllable));
  g_object_class_install_property (gobject_class, PROP_APERTURE,
      g_param_spec_int ("aperture", "Aperture", "Sobel aperture: 3, 5 or 7", 3, 7, 3, flags));
  g_object_class_install_property (gobject_class, PROP_L2,
      g_param_spec_boolean ("l2-gradient", "L2 gradient", "Magnitude sqrt(dx²+dy²) (else "
          "|dx|+|dy|)", FALSE, flags));
  g_object_class_install_property (gobject_class, PROP_BLUR_SIGMA,
      g_param_spec_double ("blur-sigma", "Blur sigma", "Gaussian blur of the frame before "
          "the edges (0: none)", 0.0, 42.0, 0.0, flags));
  g_object_class_install_property (gobject_class, PROP_MODE,
      g_param_spec_enum ("mode", "Mode", "The edge map (GRAY8), or the frame with its edges "
          "drawn over it", GST_TYPE_CUDA_CANNY_MODE, GST_CUDA_CANNY_EDGES, ready));
  g_object_class_install_property (gobject_class, PROP_COLOR,
      g_param_spec_uint ("color", "Color", "mode=overlay: the edges' colour, ARGB "
          "(0xAARRGGBB; alpha blends them)", 0, G_MAXUINT32, DEFAULT_COLOR, controllable));

  gst_element_class_set_static_metadata (element_class, "CUDA Canny edges",
      "Filter/Effect/Video", "Canny edge detection on a CUDA device or the CPU",
      "gst-cudafx developers");
  /* GRAY8 out in system memory (mode=edges) or the input's format. */
  gst_cuda_fx_filter_class_add_pad_templates (filter_class, GST_CUDA_FX_CUDA_FORMATS,
      GST_CUDA_FX_SYSTEM_FORMATS);
  filter_class->setup = GST_DEBUG_FUNCPTR (gst_cuda_canny_setup);
  filter_class->process = GST_DEBUG_FUNCPTR (gst_cuda_canny_process);
  filter_class->teardown = GST_DEBUG_FUNCPTR (gst_cuda_canny_teardown);
  filter_class->transform_video_caps =
      GST_DEBUG_FUNCPTR (gst_cuda_canny_transform_video_caps);

  GST_DEBUG_CATEGORY_INIT (gst_cuda_canny_debug, "cudacanny", 0, "CUDA Canny edges");
}

static void
gst_cuda_canny_init (GstCudaCanny * self)
{
  self->state = new GstCudaCannyState ();
  self->state->settings.value.canny.low = DEFAULT_LOW;
  self->state->settings.value.canny.high = DEFAULT_HIGH;
}
