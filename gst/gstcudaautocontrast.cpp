/**
 * SECTION:element-cudaautocontrast
 * @title: cudaautocontrast
 *
 * Auto-contrast on a CUDA device or on the CPU (same result bit for bit),
 * in place: the levels are stretched so that the darkest values (past
 * #GstCudaAutoContrast:clip-low percent of them) become 0 and the brightest
 * (past #GstCudaAutoContrast:clip-high percent) 255. RGB formats are
 * stretched per colour channel or, with channels=luma, all three by the
 * levels of the luma (hue kept); GRAY8 and the YUV formats on the luma
 * plane (chroma kept). The exact rule is in cudafx/autocontrast.hpp.
 *
 * With #GstCudaFxStatsFilter:mode=smooth the levels are an exponential
 * average over time (as cudagreyworld's means), so a live camera's
 * contrast does not pump from frame to frame.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 v4l2src ! videoconvert ! video/x-raw,format=NV12 ! cudaautocontrast mode=smooth clip-low=1 clip-high=1 ! videoconvert ! autovideosink
 * ]| Stretches a camera's luma, the levels averaged over a second.
 * |[
 * gst-launch-1.0 filesrc location=photo.jpg ! jpegdec ! videoconvert ! video/x-raw,format=RGB ! cudaautocontrast channels=luma ! videoconvert ! pngenc ! filesink location=stretched.png
 * ]| Stretches a photo, keeping its hues.
 */
#include "gstcudaautocontrast.h"

#include <memory>

#include "cudafx/autocontrast.hpp"
#include "gstcudafxenums.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_auto_contrast_debug);
#define GST_CAT_DEFAULT gst_cuda_auto_contrast_debug

enum
{
  PROP_0,
  PROP_CLIP_LOW,
  PROP_CLIP_HIGH,
  PROP_CHANNELS,
};

#define DEFAULT_CLIP 0.5
#define MAX_CLIP 49.99          /* the two together stay below 100 % */
#define DEFAULT_CHANNELS GST_CUDA_AUTO_CONTRAST_PER_CHANNEL

struct GstCudaAutoContrastState
{
  /* properties, under the object lock */
  double clip_low = DEFAULT_CLIP, clip_high = DEFAULT_CLIP;
  GstCudaAutoContrastChannels channels = DEFAULT_CHANNELS;

  /* streaming thread */
  std::unique_ptr < cudafx::AutoContrastOp > op;
  cudafx::AutoContrastParams params;    /* this buffer's, from before_transform */
};

struct _GstCudaAutoContrast
{
  GstCudaFxStatsFilter parent;
  GstCudaAutoContrastState *state;
};

G_DEFINE_TYPE (GstCudaAutoContrast, gst_cuda_auto_contrast, GST_TYPE_CUDA_FX_STATS_FILTER);
GST_ELEMENT_REGISTER_DEFINE (cudaautocontrast, "cudaautocontrast", GST_RANK_NONE,
    GST_TYPE_CUDA_AUTO_CONTRAST);

static cudafx::Status
gst_cuda_auto_contrast_setup (GstCudaFxFilter * filter, const GstCudaFxFilterConfig & config)
{
  return cudafx::AutoContrastOp::create (config.backend, config.in,
      &GST_CUDA_AUTO_CONTRAST (filter)->state->op);
}

/* This buffer's parameters, taken once (a property set meanwhile applies
 * from the next buffer on). */
static void
gst_cuda_auto_contrast_before_transform (GstBaseTransform * trans, GstBuffer * buffer)
{
  GST_BASE_TRANSFORM_CLASS (gst_cuda_auto_contrast_parent_class)->before_transform (trans,
      buffer);
  GstCudaAutoContrast *self = GST_CUDA_AUTO_CONTRAST (trans);
  GstCudaAutoContrastState *st = self->state;
  GST_OBJECT_LOCK (self);
  st->params.clip_low = st->clip_low;
  st->params.clip_high = st->clip_high;
  st->params.luma = st->channels == GST_CUDA_AUTO_CONTRAST_LUMA;
  GST_OBJECT_UNLOCK (self);
}

static cudafx::Status
gst_cuda_auto_contrast_process_ip (GstCudaFxFilter * filter, const cudafx::ImageView & frame,
    cudafx::StreamHandle stream)
{
  GstCudaAutoContrastState *st = GST_CUDA_AUTO_CONTRAST (filter)->state;
  bool restart = false;
  const double weight = gst_cuda_fx_stats_filter_weight (GST_CUDA_FX_STATS_FILTER (filter),
      &restart);
  if (restart)
    st->op->reset ();
  return st->op->submit (stream, frame, st->params, weight);
}

static void
gst_cuda_auto_contrast_teardown (GstCudaFxFilter * filter)
{
  GST_CUDA_AUTO_CONTRAST (filter)->state->op.reset ();
}

static void
gst_cuda_auto_contrast_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCudaAutoContrast *self = GST_CUDA_AUTO_CONTRAST (object);
  GstCudaAutoContrastState *st = self->state;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_CLIP_LOW:
      st->clip_low = g_value_get_double (value);
      break;
    case PROP_CLIP_HIGH:
      st->clip_high = g_value_get_double (value);
      break;
    case PROP_CHANNELS:
      st->channels = static_cast < GstCudaAutoContrastChannels > (g_value_get_enum (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cuda_auto_contrast_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstCudaAutoContrast *self = GST_CUDA_AUTO_CONTRAST (object);
  GstCudaAutoContrastState *st = self->state;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_CLIP_LOW:
      g_value_set_double (value, st->clip_low);
      break;
    case PROP_CLIP_HIGH:
      g_value_set_double (value, st->clip_high);
      break;
    case PROP_CHANNELS:
      g_value_set_enum (value, st->channels);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cuda_auto_contrast_finalize (GObject * object)
{
  GstCudaAutoContrast *self = GST_CUDA_AUTO_CONTRAST (object);
  delete self->state;
  self->state = nullptr;
  G_OBJECT_CLASS (gst_cuda_auto_contrast_parent_class)->finalize (object);
}

static void
gst_cuda_auto_contrast_class_init (GstCudaAutoContrastClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GstCudaFxFilterClass *filter_class = GST_CUDA_FX_FILTER_CLASS (klass);
  const GParamFlags flags = static_cast < GParamFlags > (G_PARAM_READWRITE |
      G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING | GST_PARAM_CONTROLLABLE);

  gobject_class->set_property = gst_cuda_auto_contrast_set_property;
  gobject_class->get_property = gst_cuda_auto_contrast_get_property;
  gobject_class->finalize = gst_cuda_auto_contrast_finalize;

  g_object_class_install_property (gobject_class, PROP_CLIP_LOW,
      g_param_spec_double ("clip-low", "Clip low", "Percent of the values left below the "
          "low level (they become 0)", 0.0, MAX_CLIP, DEFAULT_CLIP, flags));
  g_object_class_install_property (gobject_class, PROP_CLIP_HIGH,
      g_param_spec_double ("clip-high", "Clip high", "Percent of the values left above the "
          "high level (they become 255)", 0.0, MAX_CLIP, DEFAULT_CLIP, flags));
  g_object_class_install_property (gobject_class, PROP_CHANNELS,
      g_param_spec_enum ("channels", "Channels", "RGB formats: each colour channel by its "
          "own levels, or all three by the luma's (GRAY8 and YUV: always the luma plane)",
          GST_TYPE_CUDA_AUTO_CONTRAST_CHANNELS, DEFAULT_CHANNELS, flags));

  gst_element_class_set_static_metadata (element_class, "CUDA auto contrast",
      "Filter/Effect/Video", "Histogram level stretch on a CUDA device or the CPU",
      "gst-cudafx developers");
  gst_cuda_fx_filter_class_add_pad_templates (filter_class, GST_CUDA_FX_CUDA_FORMATS,
      GST_CUDA_FX_SYSTEM_FORMATS);
  trans_class->before_transform = GST_DEBUG_FUNCPTR (gst_cuda_auto_contrast_before_transform);
  filter_class->setup = GST_DEBUG_FUNCPTR (gst_cuda_auto_contrast_setup);
  filter_class->process_ip = GST_DEBUG_FUNCPTR (gst_cuda_auto_contrast_process_ip);
  filter_class->teardown = GST_DEBUG_FUNCPTR (gst_cuda_auto_contrast_teardown);

  GST_DEBUG_CATEGORY_INIT (gst_cuda_auto_contrast_debug, "cudaautocontrast", 0,
      "CUDA auto contrast");
}

static void
gst_cuda_auto_contrast_init (GstCudaAutoContrast * self)
{
  self->state = new GstCudaAutoContrastState ();
}
