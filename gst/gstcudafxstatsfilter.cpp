#include "gstcudafxstatsfilter.h"

#include "gstcudafxenums.h"
#include "gstcudafxsmoothing.h"

enum
{
  PROP_0,
  PROP_MODE,
  PROP_TIME_CONSTANT,
};

#define DEFAULT_MODE GST_CUDA_FX_STATS_FRAME
#define DEFAULT_TIME_CONSTANT 1.0

struct GstCudaFxStatsState
{
  /* properties, under the object lock */
  GstCudaFxStatsMode mode = DEFAULT_MODE;
  double time_constant = DEFAULT_TIME_CONSTANT;

  /* streaming thread */
  GstVideoInfo info;
  GstCudaFxSmoothing smoothing;
  double weight = 1.0;
  bool restart = true;
};

typedef struct
{
  GstCudaFxStatsState *state;
} GstCudaFxStatsFilterPrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_PRIVATE (GstCudaFxStatsFilter, gst_cuda_fx_stats_filter,
    GST_TYPE_CUDA_FX_FILTER);

static GstCudaFxStatsState *
get_state (GstCudaFxStatsFilter * self)
{
  return static_cast < GstCudaFxStatsFilterPrivate * >
      (gst_cuda_fx_stats_filter_get_instance_private (self))->state;
}

double
gst_cuda_fx_stats_filter_weight (GstCudaFxStatsFilter * self, bool *restart)
{
  GstCudaFxStatsState *st = get_state (self);
  *restart = st->restart;
  return st->weight;
}

static void
gst_cuda_fx_stats_filter_before_transform (GstBaseTransform * trans, GstBuffer * buffer)
{
  /* The base class first: controlled properties take this buffer's values. */
  GST_BASE_TRANSFORM_CLASS (gst_cuda_fx_stats_filter_parent_class)->before_transform (trans,
      buffer);
  GstCudaFxStatsFilter *self = GST_CUDA_FX_STATS_FILTER (trans);
  GstCudaFxStatsState *st = get_state (self);
  GST_OBJECT_LOCK (self);
  const bool smooth = st->mode == GST_CUDA_FX_STATS_SMOOTH;
  const double tau = st->time_constant;
  GST_OBJECT_UNLOCK (self);
  st->weight = st->smoothing.weight (trans, buffer, &st->info, smooth, tau, &st->restart);
  GST_LOG_OBJECT (self, "weight %.6f%s", st->weight, st->restart ? " (restart)" : "");
}

static gboolean
gst_cuda_fx_stats_filter_set_caps (GstBaseTransform * trans, GstCaps * incaps,
    GstCaps * outcaps)
{
  GstCudaFxStatsState *st = get_state (GST_CUDA_FX_STATS_FILTER (trans));
  if (!gst_video_info_from_caps (&st->info, incaps))
    gst_video_info_init (&st->info);
  st->smoothing.restart ();
  return GST_BASE_TRANSFORM_CLASS (gst_cuda_fx_stats_filter_parent_class)->set_caps (trans,
      incaps, outcaps);
}

static gboolean
gst_cuda_fx_stats_filter_sink_event (GstBaseTransform * trans, GstEvent * event)
{
  get_state (GST_CUDA_FX_STATS_FILTER (trans))->smoothing.sink_event (event);
  return GST_BASE_TRANSFORM_CLASS (gst_cuda_fx_stats_filter_parent_class)->sink_event (trans,
      event);
}

static gboolean
gst_cuda_fx_stats_filter_start (GstBaseTransform * trans)
{
  get_state (GST_CUDA_FX_STATS_FILTER (trans))->smoothing.restart ();
  return GST_BASE_TRANSFORM_CLASS (gst_cuda_fx_stats_filter_parent_class)->start (trans);
}

static void
gst_cuda_fx_stats_filter_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCudaFxStatsState *st = get_state (GST_CUDA_FX_STATS_FILTER (object));
  GST_OBJECT_LOCK (object);
  switch (prop_id) {
    case PROP_MODE:
      st->mode = static_cast < GstCudaFxStatsMode > (g_value_get_enum (value));
      break;
    case PROP_TIME_CONSTANT:
      st->time_constant = g_value_get_double (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (object);
}

static void
gst_cuda_fx_stats_filter_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstCudaFxStatsState *st = get_state (GST_CUDA_FX_STATS_FILTER (object));
  GST_OBJECT_LOCK (object);
  switch (prop_id) {
    case PROP_MODE:
      g_value_set_enum (value, st->mode);
      break;
    case PROP_TIME_CONSTANT:
      g_value_set_double (value, st->time_constant);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (object);
}

static void
gst_cuda_fx_stats_filter_finalize (GObject * object)
{
  GstCudaFxStatsFilterPrivate *priv = static_cast < GstCudaFxStatsFilterPrivate * >
      (gst_cuda_fx_stats_filter_get_instance_private (GST_CUDA_FX_STATS_FILTER (object)));
  delete priv->state;
  priv->state = nullptr;
  G_OBJECT_CLASS (gst_cuda_fx_stats_filter_parent_class)->finalize (object);
}

static void
gst_cuda_fx_stats_filter_class_init (GstCudaFxStatsFilterClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  const GParamFlags flags = static_cast < GParamFlags > (G_PARAM_READWRITE |
      G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING | GST_PARAM_CONTROLLABLE);

  gobject_class->set_property = gst_cuda_fx_stats_filter_set_property;
  gobject_class->get_property = gst_cuda_fx_stats_filter_get_property;
  gobject_class->finalize = gst_cuda_fx_stats_filter_finalize;

  g_object_class_install_property (gobject_class, PROP_MODE,
      g_param_spec_enum ("mode", "Mode", "Map each frame by its own statistics, or by "
          "statistics averaged over time", GST_TYPE_CUDA_FX_STATS_MODE, DEFAULT_MODE, flags));
  g_object_class_install_property (gobject_class, PROP_TIME_CONSTANT,
      g_param_spec_double ("time-constant", "Time constant",
          "mode=smooth: seconds in which the averaged statistics cover 63 % of a change",
          0.001, 3600.0, DEFAULT_TIME_CONSTANT, flags));

  trans_class->before_transform = GST_DEBUG_FUNCPTR (gst_cuda_fx_stats_filter_before_transform);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_cuda_fx_stats_filter_set_caps);
  trans_class->sink_event = GST_DEBUG_FUNCPTR (gst_cuda_fx_stats_filter_sink_event);
  trans_class->start = GST_DEBUG_FUNCPTR (gst_cuda_fx_stats_filter_start);
}

static void
gst_cuda_fx_stats_filter_init (GstCudaFxStatsFilter * self)
{
  GstCudaFxStatsFilterPrivate *priv = static_cast < GstCudaFxStatsFilterPrivate * >
      (gst_cuda_fx_stats_filter_get_instance_private (self));
  priv->state = new GstCudaFxStatsState ();
  gst_video_info_init (&priv->state->info);
  gst_cuda_fx_filter_set_mode (GST_CUDA_FX_FILTER (self), GST_CUDA_FX_FILTER_MODE_IN_PLACE);
}
