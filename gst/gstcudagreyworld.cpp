/**
 * SECTION:element-cudagreyworld
 * @title: cudagreyworld
 *
 * Grey-world white balance on a CUDA device or on the CPU (same result bit
 * for bit), in place: the colour channels are scaled so that their means
 * over the frame become equal (a scene is assumed to average to grey).
 * A channel with next to no light (mean <= 0.05) is lifted by the grey
 * level instead of scaled. In I420, NV12 and Y444 the chroma planes are
 * shifted so that U and V average 128 (neutral); luma is kept. Alpha and
 * padding bytes are kept. The exact rule is in cudafx/greyworld.hpp.
 *
 * With #GstCudaGreyWorld:mode=smooth the means are an exponential average
 * over time: each frame moves them by 1 - exp(-dt / time-constant), dt the
 * running time since the previous frame (or the frame's duration, or the
 * caps' frame duration), so the balance of a live camera follows the scene
 * without flickering. The average starts afresh after a flush, a new
 * stream, new caps or a discontinuity.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 v4l2src ! videoconvert ! video/x-raw,format=NV12 ! cudagreyworld mode=smooth time-constant=2 ! videoconvert ! autovideosink
 * ]| Balances a camera, smoothed over about two seconds.
 * |[
 * gst-launch-1.0 filesrc location=photo.jpg ! jpegdec ! videoconvert ! video/x-raw,format=RGB ! cudagreyworld ! videoconvert ! pngenc ! filesink location=balanced.png
 * ]| Balances a photo.
 */
#include "gstcudagreyworld.h"

#include <memory>

#include "cudafx/greyworld.hpp"
#include "gstcudafxenums.h"
#include "gstcudafxsmoothing.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_grey_world_debug);
#define GST_CAT_DEFAULT gst_cuda_grey_world_debug

enum
{
  PROP_0,
  PROP_MODE,
  PROP_TIME_CONSTANT,
};

#define DEFAULT_MODE GST_CUDA_FX_STATS_FRAME
#define DEFAULT_TIME_CONSTANT 1.0
#define MIN_TIME_CONSTANT 0.001
#define MAX_TIME_CONSTANT 3600.0

struct GstCudaGreyWorldState
{
  /* properties, under the object lock */
  GstCudaFxStatsMode mode = DEFAULT_MODE;
  double time_constant = DEFAULT_TIME_CONSTANT;

  /* streaming thread */
  std::unique_ptr < cudafx::GreyWorldOp > op;
  GstVideoInfo info;
  GstCudaFxSmoothing smoothing;
  double weight = 1.0;          /* this buffer's, from before_transform */
  bool restart = true;          /* this buffer starts the average afresh */
};

struct _GstCudaGreyWorld
{
  GstCudaFxFilter parent;
  GstCudaGreyWorldState *state;
};

G_DEFINE_TYPE (GstCudaGreyWorld, gst_cuda_grey_world, GST_TYPE_CUDA_FX_FILTER);
GST_ELEMENT_REGISTER_DEFINE (cudagreyworld, "cudagreyworld", GST_RANK_NONE,
    GST_TYPE_CUDA_GREY_WORLD);

static cudafx::Status
gst_cuda_grey_world_setup (GstCudaFxFilter * filter, const GstCudaFxFilterConfig & config)
{
  GstCudaGreyWorldState *st = GST_CUDA_GREY_WORLD (filter)->state;
  st->info = *config.in_info;
  st->smoothing.restart ();
  return cudafx::GreyWorldOp::create (config.backend, config.in, &st->op);
}

/* This buffer's share in the averaged means (gstcudafxsmoothing.h). */
static void
gst_cuda_grey_world_before_transform (GstBaseTransform * trans, GstBuffer * buffer)
{
  /* The base class first: controlled properties take this buffer's values. */
  GST_BASE_TRANSFORM_CLASS (gst_cuda_grey_world_parent_class)->before_transform (trans, buffer);
  GstCudaGreyWorld *self = GST_CUDA_GREY_WORLD (trans);
  GstCudaGreyWorldState *st = self->state;
  GST_OBJECT_LOCK (self);
  const bool smooth = st->mode == GST_CUDA_FX_STATS_SMOOTH;
  const double tau = st->time_constant;
  GST_OBJECT_UNLOCK (self);
  st->weight = st->smoothing.weight (trans, buffer, &st->info, smooth, tau, &st->restart);
  GST_LOG_OBJECT (self, "weight %.6f%s", st->weight, st->restart ? " (restart)" : "");
}

static cudafx::Status
gst_cuda_grey_world_process_ip (GstCudaFxFilter * filter, const cudafx::ImageView & frame,
    cudafx::StreamHandle stream)
{
  GstCudaGreyWorldState *st = GST_CUDA_GREY_WORLD (filter)->state;
  if (st->restart)
    st->op->reset ();
  return st->op->submit (stream, frame, st->weight);
}

static void
gst_cuda_grey_world_teardown (GstCudaFxFilter * filter)
{
  GST_CUDA_GREY_WORLD (filter)->state->op.reset ();
}

static gboolean
gst_cuda_grey_world_sink_event (GstBaseTransform * trans, GstEvent * event)
{
  GST_CUDA_GREY_WORLD (trans)->state->smoothing.sink_event (event);
  return GST_BASE_TRANSFORM_CLASS (gst_cuda_grey_world_parent_class)->sink_event (trans, event);
}

static gboolean
gst_cuda_grey_world_start (GstBaseTransform * trans)
{
  GST_CUDA_GREY_WORLD (trans)->state->smoothing.restart ();
  return GST_BASE_TRANSFORM_CLASS (gst_cuda_grey_world_parent_class)->start (trans);
}

static void
gst_cuda_grey_world_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCudaGreyWorld *self = GST_CUDA_GREY_WORLD (object);
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_MODE:
      self->state->mode = static_cast < GstCudaFxStatsMode > (g_value_get_enum (value));
      break;
    case PROP_TIME_CONSTANT:
      self->state->time_constant = g_value_get_double (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cuda_grey_world_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstCudaGreyWorld *self = GST_CUDA_GREY_WORLD (object);
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_MODE:
      g_value_set_enum (value, self->state->mode);
      break;
    case PROP_TIME_CONSTANT:
      g_value_set_double (value, self->state->time_constant);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cuda_grey_world_finalize (GObject * object)
{
  GstCudaGreyWorld *self = GST_CUDA_GREY_WORLD (object);
  delete self->state;
  self->state = nullptr;
  G_OBJECT_CLASS (gst_cuda_grey_world_parent_class)->finalize (object);
}

static void
gst_cuda_grey_world_class_init (GstCudaGreyWorldClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GstCudaFxFilterClass *filter_class = GST_CUDA_FX_FILTER_CLASS (klass);
  const GParamFlags flags = static_cast < GParamFlags > (G_PARAM_READWRITE |
      G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING | GST_PARAM_CONTROLLABLE);

  gobject_class->set_property = gst_cuda_grey_world_set_property;
  gobject_class->get_property = gst_cuda_grey_world_get_property;
  gobject_class->finalize = gst_cuda_grey_world_finalize;

  g_object_class_install_property (gobject_class, PROP_MODE,
      g_param_spec_enum ("mode", "Mode", "Balance each frame by its own means, or by "
          "means averaged over time", GST_TYPE_CUDA_FX_STATS_MODE, DEFAULT_MODE, flags));
  g_object_class_install_property (gobject_class, PROP_TIME_CONSTANT,
      g_param_spec_double ("time-constant", "Time constant",
          "mode=smooth: seconds in which the averaged means cover 63 % of a change",
          MIN_TIME_CONSTANT, MAX_TIME_CONSTANT, DEFAULT_TIME_CONSTANT, flags));

  gst_element_class_set_static_metadata (element_class, "CUDA grey-world white balance",
      "Filter/Effect/Video", "Grey-world white balance on a CUDA device or the CPU",
      "gst-cudafx developers");
  /* GRAY8 has no colour to balance. */
  gst_cuda_fx_filter_class_add_pad_templates (filter_class, GST_CUDA_FX_CUDA_FORMATS,
      GST_CUDA_FX_CUDA_FORMATS);

  trans_class->before_transform = GST_DEBUG_FUNCPTR (gst_cuda_grey_world_before_transform);
  trans_class->sink_event = GST_DEBUG_FUNCPTR (gst_cuda_grey_world_sink_event);
  trans_class->start = GST_DEBUG_FUNCPTR (gst_cuda_grey_world_start);
  filter_class->setup = GST_DEBUG_FUNCPTR (gst_cuda_grey_world_setup);
  filter_class->process_ip = GST_DEBUG_FUNCPTR (gst_cuda_grey_world_process_ip);
  filter_class->teardown = GST_DEBUG_FUNCPTR (gst_cuda_grey_world_teardown);

  GST_DEBUG_CATEGORY_INIT (gst_cuda_grey_world_debug, "cudagreyworld", 0,
      "CUDA grey-world white balance");
}

static void
gst_cuda_grey_world_init (GstCudaGreyWorld * self)
{
  self->state = new GstCudaGreyWorldState ();
  gst_video_info_init (&self->state->info);
  gst_cuda_fx_filter_set_mode (GST_CUDA_FX_FILTER (self), GST_CUDA_FX_FILTER_MODE_IN_PLACE);
}
