/* GstCudaFxFilter: see gstcudafxfilter.h. */
#include "gstcudafxfilter.h"

#include "gstcudafxpinnedallocator.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_fx_filter_debug);
#define GST_CAT_DEFAULT gst_cuda_fx_filter_debug


/* C++ state lives behind a pointer: GObject instance memory is raw. */
struct GstCudaFxFilterState
{
  /* the backend and cuda-device-id settings (under the object lock), and
   * from start to stop the device */
  GstCudaFxDevice dev;

  /* from set_caps */
  GstVideoInfo in_info, out_info;
  cudafx::ImageDesc in_desc, out_desc;
  bool in_cuda = false, out_cuda = false;
  bool configured = false;
  cudafx::DeviceBuffer staging_in, staging_out;
};

typedef struct
{
  GstCudaFxFilterState *state;
} GstCudaFxFilterPrivate;

G_DEFINE_ABSTRACT_TYPE_WITH_CODE (GstCudaFxFilter, gst_cuda_fx_filter,
    GST_TYPE_BASE_TRANSFORM, G_ADD_PRIVATE (GstCudaFxFilter);
    GST_DEBUG_CATEGORY_INIT (gst_cuda_fx_filter_debug, "cudafxfilter", 0,
        "cudafx base filter"));

static GstCudaFxFilterState *
get_state (GstCudaFxFilter * self)
{
  return static_cast < GstCudaFxFilterPrivate * >
      (gst_cuda_fx_filter_get_instance_private (self))->state;
}

/* ---- caps ---- */

void
gst_cuda_fx_filter_class_add_pad_templates (GstCudaFxFilterClass * klass,
    const gchar * cuda_formats, const gchar * system_formats)
{
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  gchar *s;
#if HAVE_GSTCUDA
  s = g_strdup_printf ("video/x-raw(" GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY
      "), format = (string) %s, width = " GST_VIDEO_SIZE_RANGE ", height = "
      GST_VIDEO_SIZE_RANGE ", framerate = " GST_VIDEO_FPS_RANGE
      "; video/x-raw, format = (string) %s, width = " GST_VIDEO_SIZE_RANGE
      ", height = " GST_VIDEO_SIZE_RANGE ", framerate = " GST_VIDEO_FPS_RANGE,
      cuda_formats, system_formats);
#else
  (void) cuda_formats;
  s = g_strdup_printf ("video/x-raw, format = (string) %s, width = "
      GST_VIDEO_SIZE_RANGE ", height = " GST_VIDEO_SIZE_RANGE ", framerate = "
      GST_VIDEO_FPS_RANGE, system_formats);
#endif
  GstCaps *caps = gst_caps_from_string (s);
  g_free (s);
  gst_element_class_add_pad_template (element_class,
      gst_pad_template_new ("sink", GST_PAD_SINK, GST_PAD_ALWAYS, caps));
  gst_element_class_add_pad_template (element_class,
      gst_pad_template_new ("src", GST_PAD_SRC, GST_PAD_ALWAYS, caps));
  gst_caps_unref (caps);
}

GstCaps *
gst_cuda_fx_filter_caps_any_memory (GstCaps * caps)
{
  /* Each structure in its own memory first, then the other: a filter keeps
   * the memory its input arrived in when downstream accepts both. */
  GstCaps *same = gst_caps_new_empty ();
  GstCaps *other = gst_caps_new_empty ();
  for (guint i = 0; i < gst_caps_get_size (caps); i++) {
    GstCapsFeatures *f = gst_caps_get_features (caps, i);
    const GstStructure *s = gst_caps_get_structure (caps, i);
    if (f && gst_caps_features_is_any (f)) {
      same = gst_caps_merge_structure_full (same, gst_structure_copy (s),
          gst_caps_features_copy (f));
      continue;
    }
#if HAVE_GSTCUDA
    const gboolean cuda = f && gst_caps_features_contains (f,
        GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY);
    GstCapsFeatures *cuda_f =
        gst_caps_features_new (GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, nullptr);
    GstCapsFeatures *sys_f = gst_caps_features_new_empty ();
    same = gst_caps_merge_structure_full (same, gst_structure_copy (s),
        cuda ? cuda_f : sys_f);
    other = gst_caps_merge_structure_full (other, gst_structure_copy (s),
        cuda ? sys_f : cuda_f);
#else
    same = gst_caps_merge_structure_full (same, gst_structure_copy (s),
        gst_caps_features_new_empty ());
#endif
  }
  return gst_caps_merge (same, other);
}

static GstCaps *
gst_cuda_fx_filter_transform_caps (GstBaseTransform * trans,
    GstPadDirection direction, GstCaps * caps, GstCaps * filter)
{
  GstCudaFxFilter *self = GST_CUDA_FX_FILTER (trans);
  GstCudaFxFilterState *st = get_state (self);
  GstCudaFxFilterClass *klass = GST_CUDA_FX_FILTER_GET_CLASS (self);
  GstCaps *video = klass->transform_video_caps ?
      klass->transform_video_caps (self, direction, caps) : gst_caps_ref (caps);
  GstCaps *result = gst_cuda_fx_filter_caps_any_memory (video);
  gst_caps_unref (video);
  if (st->dev.started () && !st->dev.cuda ())
    result = gst_cuda_fx_caps_drop_cuda_memory (result);
  GstPad *other = direction == GST_PAD_SINK ? trans->srcpad : trans->sinkpad;
  GstCaps *templ = gst_pad_get_pad_template_caps (other);
  GstCaps *tmp = gst_caps_intersect_full (result, templ, GST_CAPS_INTERSECT_FIRST);
  gst_caps_unref (result);
  gst_caps_unref (templ);
  result = tmp;
  if (filter) {
    tmp = gst_caps_intersect_full (filter, result, GST_CAPS_INTERSECT_FIRST);
    gst_caps_unref (result);
    result = tmp;
  }
  GST_DEBUG_OBJECT (trans, "%" GST_PTR_FORMAT " -> %" GST_PTR_FORMAT, caps, result);
  return result;
}

/* ---- context ---- */

static void
gst_cuda_fx_filter_set_context (GstElement * element, GstContext * context)
{
  GstCudaFxFilterState *st = get_state (GST_CUDA_FX_FILTER (element));
  st->dev.set_context (element, context);
  GST_ELEMENT_CLASS (gst_cuda_fx_filter_parent_class)->set_context (element, context);
}

static gboolean
gst_cuda_fx_filter_query (GstBaseTransform * trans, GstPadDirection direction,
    GstQuery * query)
{
  if (get_state (GST_CUDA_FX_FILTER (trans))->dev.handle_context_query (GST_ELEMENT (trans),
          query))
    return TRUE;
  return GST_BASE_TRANSFORM_CLASS (gst_cuda_fx_filter_parent_class)->query
      (trans, direction, query);
}

/* ---- start / stop ---- */

static void
release_op (GstCudaFxFilter * self)
{
  GstCudaFxFilterState *st = get_state (self);
  GstCudaFxFilterClass *klass = GST_CUDA_FX_FILTER_GET_CLASS (self);
  if (!st->configured)
    return;
  if (st->dev.cuda ()) {
    GstCudaFxDevice::Scope scope (st->dev);
    klass->teardown (self);
    st->staging_in.reset ();
    st->staging_out.reset ();
  } else {
    klass->teardown (self);
  }
  st->configured = false;
}

static gboolean
gst_cuda_fx_filter_start (GstBaseTransform * trans)
{
  GstCudaFxFilter *self = GST_CUDA_FX_FILTER (trans);
  GstCudaFxFilterState *st = get_state (self);
  return st->dev.start (GST_ELEMENT (self));
}

static gboolean
gst_cuda_fx_filter_stop (GstBaseTransform * trans)
{
  GstCudaFxFilter *self = GST_CUDA_FX_FILTER (trans);
  release_op (self);
  get_state (self)->dev.stop ();
  return TRUE;
}

/* ---- caps set ---- */

static gboolean
gst_cuda_fx_filter_set_caps (GstBaseTransform * trans, GstCaps * incaps,
    GstCaps * outcaps)
{
  GstCudaFxFilter *self = GST_CUDA_FX_FILTER (trans);
  GstCudaFxFilterState *st = get_state (self);
  GstCudaFxFilterClass *klass = GST_CUDA_FX_FILTER_GET_CLASS (self);

  release_op (self);
  if (!gst_video_info_from_caps (&st->in_info, incaps) ||
      !gst_video_info_from_caps (&st->out_info, outcaps) ||
      !gst_cuda_fx_desc_from_info (&st->in_info, &st->in_desc) ||
      !gst_cuda_fx_desc_from_info (&st->out_info, &st->out_desc)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("Unsupported caps"),
        ("in %" GST_PTR_FORMAT ", out %" GST_PTR_FORMAT, incaps, outcaps));
    return FALSE;
  }
  st->in_cuda = gst_cuda_fx_caps_are_cuda (incaps);
  st->out_cuda = gst_cuda_fx_caps_are_cuda (outcaps);
  const gboolean passthrough = klass->passthrough_on_same_info &&
      st->in_cuda == st->out_cuda && gst_video_info_is_equal (&st->in_info, &st->out_info);
  gst_base_transform_set_passthrough (trans, passthrough);
  if (passthrough) {
    /* Buffers never reach transform(): no op to build. */
    GST_DEBUG_OBJECT (self, "passthrough");
    return TRUE;
  }

  cudafx::Status s;
  if (st->dev.cuda ()) {
    GstCudaFxDevice::Scope scope (st->dev);
    s = scope.status ();
    if (s.is_ok ())
      s = klass->setup (self, &st->in_info, &st->out_info, st->dev.backend ());
  } else {
    s = klass->setup (self, &st->in_info, &st->out_info, st->dev.backend ());
  }
  if (!s.is_ok ()) {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS, ("%s", s.message ().c_str ()),
        ("caps %" GST_PTR_FORMAT, incaps));
    return FALSE;
  }
  st->configured = true;
  GST_DEBUG_OBJECT (self, "configured: %s -> %s, backend %s",
      st->in_cuda ? "cuda" : "system", st->out_cuda ? "cuda" : "system",
      st->dev.cuda ()? "cuda" : "cpu");
  return TRUE;
}

/* ---- allocation ---- */

static gboolean
gst_cuda_fx_filter_propose_allocation (GstBaseTransform * trans,
    GstQuery * decide_query, GstQuery * query)
{
  GstCudaFxFilter *self = GST_CUDA_FX_FILTER (trans);
  GstCudaFxFilterState *st = get_state (self);
  if (!GST_BASE_TRANSFORM_CLASS (gst_cuda_fx_filter_parent_class)->propose_allocation
      (trans, decide_query, query))
    return FALSE;
  if (!decide_query)            /* passthrough: the query went downstream */
    return TRUE;
  return st->dev.propose_allocation (GST_ELEMENT (self), query);
}

static gboolean
gst_cuda_fx_filter_decide_allocation (GstBaseTransform * trans, GstQuery * query)
{
  GstCudaFxFilter *self = GST_CUDA_FX_FILTER (trans);
  GstCudaFxFilterState *st = get_state (self);
  GstCaps *outcaps;
  GstVideoInfo info;
  GstBufferPool *pool = nullptr;
  guint size = 0, min = 0, max = 0;

  gst_query_parse_allocation (query, &outcaps, nullptr);
  if (!outcaps || !gst_video_info_from_caps (&info, outcaps))
    return FALSE;
  const gboolean update = gst_query_get_n_allocation_pools (query) > 0;
  if (update)
    gst_query_parse_nth_allocation_pool (query, 0, &pool, &size, &min, &max);
  size = MAX (size, (guint) GST_VIDEO_INFO_SIZE (&info));

  bool configured = false;        /* made and configured here */
  if (gst_cuda_fx_caps_are_cuda (outcaps)) {
#if HAVE_GSTCUDA
    /* Downstream's CUDA pool only if it is of our context. */
    if (pool && (!GST_IS_CUDA_BUFFER_POOL (pool) || !st->dev.context () ||
            GST_CUDA_BUFFER_POOL_CAST (pool)->context !=
            GST_CUDA_CONTEXT (st->dev.context ())))
      gst_clear_object (&pool);
    if (!pool) {
      pool = st->dev.new_cuda_pool (outcaps, &size, min, max);
      configured = true;
    }
#endif
  } else if (st->dev.cuda () && st->dev.pinned ()) {
    /* Results are copied device->host: into pinned memory, always. */
    gst_clear_object (&pool);
    pool = gst_cuda_fx_pinned_pool_new (st->dev.pinned (), outcaps, size, min, max);
    configured = true;
  } else if (!pool) {
    pool = gst_video_buffer_pool_new ();
  }
  if (!pool) {
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
        ("Cannot create an output buffer pool"), ("caps %" GST_PTR_FORMAT, outcaps));
    return FALSE;
  }
  if (!configured) {
    GstStructure *config = gst_buffer_pool_get_config (pool);
    gst_buffer_pool_config_set_params (config, outcaps, size, min, max);
    gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    if (!gst_buffer_pool_set_config (pool, config)) {
      /* A pool may refuse and amend the config; take its amendment. */
      config = gst_buffer_pool_get_config (pool);
      if (!gst_buffer_pool_config_validate_params (config, outcaps, size, min, max)
          || !gst_buffer_pool_set_config (pool, config)) {
        gst_object_unref (pool);
        GST_ELEMENT_ERROR (self, RESOURCE, SETTINGS,
            ("Cannot configure the output buffer pool"), (nullptr));
        return FALSE;
      }
    }
  }
  if (update)
    gst_query_set_nth_allocation_pool (query, 0, pool, size, min, max);
  else
    gst_query_add_allocation_pool (query, pool, size, min, max);
  gst_object_unref (pool);
  /* No chaining up: GstBaseTransform's default would set the allocator of
   * the query's allocation params (downstream's, or plain system memory) on
   * the pool, replacing the pinned one. */
  return TRUE;
}

/* ---- per frame ---- */

static GstFlowReturn
flow_error (GstCudaFxFilter * self, const char *what, const cudafx::Status & s)
{
  GST_ELEMENT_ERROR (self, STREAM, FAILED, ("%s: %s", what, s.message ().c_str ()),
      (nullptr));
  return GST_FLOW_ERROR;
}

static GstFlowReturn
transform_cpu (GstCudaFxFilter * self, GstBuffer * inbuf, GstBuffer * outbuf)
{
  GstCudaFxFilterState *st = get_state (self);
  GstCudaFxFilterClass *klass = GST_CUDA_FX_FILTER_GET_CLASS (self);
  GstVideoFrame in, out;
  if (!gst_video_frame_map (&in, &st->in_info, inbuf, GST_MAP_READ))
    return flow_error (self, "cannot map input", cudafx::Status::invalid ("map failed"));
  if (!gst_video_frame_map (&out, &st->out_info, outbuf, GST_MAP_WRITE)) {
    gst_video_frame_unmap (&in);
    return flow_error (self, "cannot map output", cudafx::Status::invalid ("map failed"));
  }
  const cudafx::Status s = klass->process (self, gst_cuda_fx_view_of_frame (&in, st->in_desc),
      gst_cuda_fx_view_of_frame (&out, st->out_desc), nullptr);
  gst_video_frame_unmap (&out);
  gst_video_frame_unmap (&in);
  return s.is_ok ()? GST_FLOW_OK : flow_error (self, "processing failed", s);
}

static GstFlowReturn
transform_cuda (GstCudaFxFilter * self, GstBuffer * inbuf, GstBuffer * outbuf)
{
  GstCudaFxFilterState *st = get_state (self);
  GstCudaFxFilterClass *klass = GST_CUDA_FX_FILTER_GET_CLASS (self);
  GstCudaFxDevice::Scope scope (st->dev);
  if (!scope.status ().is_ok ())
    return flow_error (self, "CUDA context", scope.status ());

  const gint64 t0 = g_get_monotonic_time ();
  GstVideoFrame in, out;
  bool in_dev = false, out_dev = false;
  cudafx::Status m = gst_cuda_fx_map_frame (st->dev, &in, &st->in_info, inbuf, GST_MAP_READ,
      &in_dev);
  if (!m.is_ok ())
    return flow_error (self, "Cannot map the input", m);
  m = gst_cuda_fx_map_frame (st->dev, &out, &st->out_info, outbuf, GST_MAP_WRITE, &out_dev);
  if (!m.is_ok ()) {
    gst_video_frame_unmap (&in);
    return flow_error (self, "Cannot map the output", m);
  }

  const cudafx::StreamHandle stream = st->dev.stream ();
  cudafx::ImageView src = gst_cuda_fx_view_of_frame (&in, st->in_desc);
  cudafx::ImageView dst = gst_cuda_fx_view_of_frame (&out, st->out_desc);
  const cudafx::ImageView host_out = dst;
  cudafx::Status s;
  if (!in_dev) {
    cudafx::ImageView staged;
    s = GstCudaFxDevice::staging_view (st->staging_in, src, &staged, stream);
    if (s.is_ok ())
      s = cudafx::copy_image_async (staged, src, stream);
    src = staged;
  }
  if (s.is_ok () && !out_dev)
    s = GstCudaFxDevice::staging_view (st->staging_out, host_out, &dst, stream);
  if (s.is_ok ())
    s = klass->process (self, src, dst, stream);
  if (s.is_ok () && !out_dev)
    s = cudafx::copy_image_async (host_out, dst, stream);
  /* The one synchronisation of this buffer: the input may be unmapped and the
   * output pushed only once the stream has finished with them. */
  const gint64 t1 = g_get_monotonic_time ();
  const cudafx::Status sync = st->dev.synchronize ();
  const gint64 t2 = g_get_monotonic_time ();
  if (s.is_ok ())
    s = sync;
  gst_video_frame_unmap (&out);
  gst_video_frame_unmap (&in);
  GST_LOG_OBJECT (self, "frame: %" G_GINT64_FORMAT " us to queue, %" G_GINT64_FORMAT
      " us to finish, %" G_GINT64_FORMAT " us to unmap (in %s, out %s)", t1 - t0, t2 - t1,
      g_get_monotonic_time () - t2, in_dev ? "device" : "host", out_dev ? "device" : "host");
  return s.is_ok ()? GST_FLOW_OK : flow_error (self, "CUDA processing failed", s);
}

static GstFlowReturn
gst_cuda_fx_filter_transform (GstBaseTransform * trans, GstBuffer * inbuf,
    GstBuffer * outbuf)
{
  GstCudaFxFilter *self = GST_CUDA_FX_FILTER (trans);
  GstCudaFxFilterState *st = get_state (self);
  if (!st->configured) {
    GST_ELEMENT_ERROR (self, CORE, NOT_IMPLEMENTED, ("No caps were negotiated"),
        (nullptr));
    return GST_FLOW_NOT_NEGOTIATED;
  }
  if (st->dev.cuda ())
    return transform_cuda (self, inbuf, outbuf);
  return transform_cpu (self, inbuf, outbuf);
}

/* ---- properties and type ---- */

static void
gst_cuda_fx_filter_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  if (!get_state (GST_CUDA_FX_FILTER (object))->dev.set_property (object, prop_id, value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
gst_cuda_fx_filter_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  if (!get_state (GST_CUDA_FX_FILTER (object))->dev.get_property (object, prop_id, value))
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
}

static void
gst_cuda_fx_filter_finalize (GObject * object)
{
  GstCudaFxFilterPrivate *priv = static_cast < GstCudaFxFilterPrivate * >
      (gst_cuda_fx_filter_get_instance_private (GST_CUDA_FX_FILTER (object)));
  delete priv->state;
  priv->state = nullptr;
  G_OBJECT_CLASS (gst_cuda_fx_filter_parent_class)->finalize (object);
}

static void
gst_cuda_fx_filter_class_init (GstCudaFxFilterClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);

  gobject_class->set_property = gst_cuda_fx_filter_set_property;
  gobject_class->get_property = gst_cuda_fx_filter_get_property;
  gobject_class->finalize = gst_cuda_fx_filter_finalize;

  gst_cuda_fx_install_device_properties (gobject_class);

  element_class->set_context = GST_DEBUG_FUNCPTR (gst_cuda_fx_filter_set_context);

  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->transform_caps = GST_DEBUG_FUNCPTR (gst_cuda_fx_filter_transform_caps);
  trans_class->start = GST_DEBUG_FUNCPTR (gst_cuda_fx_filter_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_cuda_fx_filter_stop);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_cuda_fx_filter_set_caps);
  trans_class->query = GST_DEBUG_FUNCPTR (gst_cuda_fx_filter_query);
  trans_class->propose_allocation =
      GST_DEBUG_FUNCPTR (gst_cuda_fx_filter_propose_allocation);
  trans_class->decide_allocation =
      GST_DEBUG_FUNCPTR (gst_cuda_fx_filter_decide_allocation);
  trans_class->transform = GST_DEBUG_FUNCPTR (gst_cuda_fx_filter_transform);

  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_FX_FILTER, (GstPluginAPIFlags) 0);
}

static void
gst_cuda_fx_filter_init (GstCudaFxFilter * self)
{
  GstCudaFxFilterPrivate *priv = static_cast < GstCudaFxFilterPrivate * >
      (gst_cuda_fx_filter_get_instance_private (self));
  priv->state = new GstCudaFxFilterState ();
  gst_video_info_init (&priv->state->in_info);
  gst_video_info_init (&priv->state->out_info);
}

cudafx::Backend
gst_cuda_fx_filter_get_backend (GstCudaFxFilter * self)
{
  return get_state (self)->dev.backend ();
}
