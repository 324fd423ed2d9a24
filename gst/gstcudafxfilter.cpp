/* GstCudaFxFilter: see gstcudafxfilter.h. */
#include "gstcudafxfilter.h"

#include "gstcudafxcontext.h"
#include "gstcudafxpinnedallocator.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_fx_filter_debug);
#define GST_CAT_DEFAULT gst_cuda_fx_filter_debug

enum
{
  PROP_0,
  PROP_BACKEND,
  PROP_CUDA_DEVICE_ID,
};

#define DEFAULT_BACKEND GST_CUDA_FX_BACKEND_AUTO
#define DEFAULT_CUDA_DEVICE_ID -1

/* Row alignment of the device staging images: a multiple of 16 keeps every
 * row start aligned for the kernels' 16-byte loads. */
#define STAGING_ROW_ALIGN 256

/* C++ state lives behind a pointer: GObject instance memory is raw. */
struct GstCudaFxFilterState
{
  /* properties, under the object lock */
  GstCudaFxBackend backend_setting = DEFAULT_BACKEND;
  gint device_id_setting = DEFAULT_CUDA_DEVICE_ID;

  /* from start to stop */
  cudafx::Backend backend = cudafx::Backend::Cpu;
  GstObject *context = nullptr;         /* GstCudaContext, with libgstcuda */
  gint device_id = -1;
  cudafx::CudaStream stream;
  GstAllocator *pinned = nullptr;

  /* from set_caps */
  GstVideoInfo in_info, out_info;
  cudafx::ImageDesc in_desc, out_desc;
  bool in_cuda = false, out_cuda = false;
  bool configured = false;
  cudafx::DeviceBuffer staging_in, staging_out;
  bool started = false;
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

GType
gst_cuda_fx_backend_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_CUDA_FX_BACKEND_AUTO, "CUDA when a device is usable, else CPU",
        "auto"},
    {GST_CUDA_FX_BACKEND_CUDA, "CUDA; fail to start without a usable device",
        "cuda"},
    {GST_CUDA_FX_BACKEND_CPU, "CPU (multi-threaded)", "cpu"},
    {0, nullptr, nullptr},
  };
  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstCudaFxBackend", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

gboolean
gst_cuda_fx_desc_from_info (const GstVideoInfo * info, cudafx::ImageDesc * desc)
{
  cudafx::PixelFormat f;
  if (!cudafx::format_from_name (gst_video_format_to_string
          (GST_VIDEO_INFO_FORMAT (info)), &f))
    return FALSE;
  desc->format = f;
  desc->width = GST_VIDEO_INFO_WIDTH (info);
  desc->height = GST_VIDEO_INFO_HEIGHT (info);
  return TRUE;
}

static cudafx::ImageView
view_of_frame (const GstVideoFrame * frame, const cudafx::ImageDesc & desc)
{
  cudafx::ImageView v;
  v.desc = desc;
  for (guint i = 0; i < GST_VIDEO_FRAME_N_PLANES (frame) && i < cudafx::kMaxPlanes; i++) {
    v.data[i] = static_cast < uint8_t * >(GST_VIDEO_FRAME_PLANE_DATA (frame, i));
    v.pitch[i] = GST_VIDEO_FRAME_PLANE_STRIDE (frame, i);
  }
  return v;
}

static gboolean
caps_are_cuda (GstCaps * caps)
{
#if HAVE_GSTCUDA
  GstCapsFeatures *f = gst_caps_get_features (caps, 0);
  return f && gst_caps_features_contains (f, GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY);
#else
  (void) caps;
  return FALSE;
#endif
}

/* Device memory we can use directly: CUDA memory of our own context. */
static gboolean
buffer_is_our_cuda (GstCudaFxFilterState * st, GstBuffer * buf)
{
#if HAVE_GSTCUDA
  if (!st->context || gst_buffer_n_memory (buf) == 0)
    return FALSE;
  GstMemory *mem = gst_buffer_peek_memory (buf, 0);
  return gst_is_cuda_memory (mem) &&
      GST_CUDA_MEMORY_CAST (mem)->context == GST_CUDA_CONTEXT (st->context);
#else
  (void) st;
  (void) buf;
  return FALSE;
#endif
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

/* The CPU backend has no CUDA context to use CUDAMemory with. */
static GstCaps *
drop_cuda_memory (GstCaps * caps)
{
#if HAVE_GSTCUDA
  GstCaps *out = gst_caps_new_empty ();
  for (guint i = 0; i < gst_caps_get_size (caps); i++) {
    GstCapsFeatures *f = gst_caps_get_features (caps, i);
    if (f && gst_caps_features_contains (f, GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY))
      continue;
    gst_caps_append_structure_full (out,
        gst_structure_copy (gst_caps_get_structure (caps, i)),
        f ? gst_caps_features_copy (f) : nullptr);
  }
  gst_caps_unref (caps);
  return out;
#else
  return caps;
#endif
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
  if (st->started && st->backend != cudafx::Backend::Cuda)
    result = drop_cuda_memory (result);
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
#if HAVE_GSTCUDA
  GstCudaFxFilterState *st = get_state (GST_CUDA_FX_FILTER (element));
  GST_OBJECT_LOCK (element);
  const gint device_id = st->device_id_setting;
  GST_OBJECT_UNLOCK (element);
  GstCudaContext *ctx = st->context ? GST_CUDA_CONTEXT (st->context) : nullptr;
  gst_cuda_handle_set_context (element, context, device_id, &ctx);
  st->context = ctx ? GST_OBJECT (ctx) : nullptr;
#endif
  GST_ELEMENT_CLASS (gst_cuda_fx_filter_parent_class)->set_context (element, context);
}

static gboolean
gst_cuda_fx_filter_query (GstBaseTransform * trans, GstPadDirection direction,
    GstQuery * query)
{
#if HAVE_GSTCUDA
  if (GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT) {
    GstCudaFxFilterState *st = get_state (GST_CUDA_FX_FILTER (trans));
    if (st->context && gst_cuda_handle_context_query (GST_ELEMENT (trans), query,
            GST_CUDA_CONTEXT (st->context)))
      return TRUE;
  }
#endif
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
  if (st->backend == cudafx::Backend::Cuda) {
    GstCudaFxContextScope scope (st->context, st->device_id);
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

  GST_OBJECT_LOCK (self);
  const GstCudaFxBackend wanted = st->backend_setting;
  const gint device_id = st->device_id_setting;
  GST_OBJECT_UNLOCK (self);

  st->backend = cudafx::Backend::Cpu;
  st->started = true;
  if (wanted == GST_CUDA_FX_BACKEND_CPU) {
    GST_INFO_OBJECT (self, "backend: cpu (asked for)");
    return TRUE;
  }

  gint actual = -1;
  cudafx::Status s = gst_cuda_fx_open_device (GST_ELEMENT (self), device_id,
      &st->context, &actual);
  if (s.is_ok ()) {
    GstCudaFxContextScope scope (st->context, actual);
    s = scope.status ();
    if (s.is_ok ())
      s = st->stream.create ();
  }
  if (!s.is_ok ()) {
    if (wanted == GST_CUDA_FX_BACKEND_CUDA) {
      GST_ELEMENT_ERROR (self, RESOURCE, NOT_FOUND,
          ("backend=cuda but no usable CUDA device: %s", s.message ().c_str ()),
          ("cuda-device-id=%d", device_id));
      gst_clear_object (&st->context);
      st->started = false;
      return FALSE;
    }
    GST_ELEMENT_WARNING (self, RESOURCE, NOT_FOUND,
        ("No usable CUDA device, running on the CPU: %s", s.message ().c_str ()),
        ("backend=auto, cuda-device-id=%d", device_id));
    gst_clear_object (&st->context);
    return TRUE;
  }
  st->backend = cudafx::Backend::Cuda;
  st->device_id = actual;
  st->pinned = gst_cuda_fx_pinned_allocator_new (st->context, actual);
  GST_INFO_OBJECT (self, "backend: cuda, device %d", actual);
  return TRUE;
}

static gboolean
gst_cuda_fx_filter_stop (GstBaseTransform * trans)
{
  GstCudaFxFilter *self = GST_CUDA_FX_FILTER (trans);
  GstCudaFxFilterState *st = get_state (self);
  release_op (self);
  if (st->stream) {
    GstCudaFxContextScope scope (st->context, st->device_id);
    st->stream.reset ();
  }
  gst_clear_object (&st->pinned);
  gst_clear_object (&st->context);
  st->backend = cudafx::Backend::Cpu;
  st->started = false;
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
  st->in_cuda = caps_are_cuda (incaps);
  st->out_cuda = caps_are_cuda (outcaps);
  const gboolean passthrough = klass->passthrough_on_same_info &&
      st->in_cuda == st->out_cuda && gst_video_info_is_equal (&st->in_info, &st->out_info);
  gst_base_transform_set_passthrough (trans, passthrough);
  if (passthrough) {
    /* Buffers never reach transform(): no op to build. */
    GST_DEBUG_OBJECT (self, "passthrough");
    return TRUE;
  }

  cudafx::Status s;
  if (st->backend == cudafx::Backend::Cuda) {
    GstCudaFxContextScope scope (st->context, st->device_id);
    s = scope.status ();
    if (s.is_ok ())
      s = klass->setup (self, &st->in_info, &st->out_info, st->backend);
  } else {
    s = klass->setup (self, &st->in_info, &st->out_info, st->backend);
  }
  if (!s.is_ok ()) {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS, ("%s", s.message ().c_str ()),
        ("caps %" GST_PTR_FORMAT, incaps));
    return FALSE;
  }
  st->configured = true;
  GST_DEBUG_OBJECT (self, "configured: %s -> %s, backend %s",
      st->in_cuda ? "cuda" : "system", st->out_cuda ? "cuda" : "system",
      st->backend == cudafx::Backend::Cuda ? "cuda" : "cpu");
  return TRUE;
}

/* ---- allocation ---- */

#if HAVE_GSTCUDA
static GstBufferPool *
new_cuda_pool (GstCudaFxFilterState * st, GstCaps * caps, guint * size,
    guint min, guint max)
{
  GstBufferPool *pool = gst_cuda_buffer_pool_new (GST_CUDA_CONTEXT (st->context));
  GstStructure *config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  gst_buffer_pool_config_set_params (config, caps, *size, min, max);
  if (!gst_buffer_pool_set_config (pool, config)) {
    gst_object_unref (pool);
    return nullptr;
  }
  /* The CUDA pool pads rows: read back the size it settled on. */
  config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_get_params (config, nullptr, size, nullptr, nullptr);
  gst_structure_free (config);
  return pool;
}
#endif

static gboolean
gst_cuda_fx_filter_propose_allocation (GstBaseTransform * trans,
    GstQuery * decide_query, GstQuery * query)
{
  GstCudaFxFilter *self = GST_CUDA_FX_FILTER (trans);
  GstCudaFxFilterState *st = get_state (self);
  GstCaps *caps;
  gboolean need_pool;
  GstVideoInfo info;

  if (!GST_BASE_TRANSFORM_CLASS (gst_cuda_fx_filter_parent_class)->propose_allocation
      (trans, decide_query, query))
    return FALSE;
  if (!decide_query)            /* passthrough: the query went downstream */
    return TRUE;

  gst_query_parse_allocation (query, &caps, &need_pool);
  if (!caps || !gst_video_info_from_caps (&info, caps))
    return FALSE;
  gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, nullptr);
  if (!need_pool)
    return TRUE;

  guint size = GST_VIDEO_INFO_SIZE (&info);
  GstBufferPool *pool = nullptr;
#if HAVE_GSTCUDA
  if (caps_are_cuda (caps) && st->context)
    pool = new_cuda_pool (st, caps, &size, 0, 0);
#endif
  if (!pool && !caps_are_cuda (caps) && st->pinned) {
    pool = gst_cuda_fx_pinned_pool_new (st->pinned, caps, size, 0, 0);
    GstAllocationParams params;
    gst_allocation_params_init (&params);
    params.align = 63;
    gst_query_add_allocation_param (query, st->pinned, &params);
  }
  if (!pool) {
    pool = gst_video_buffer_pool_new ();
    GstStructure *config = gst_buffer_pool_get_config (pool);
    gst_buffer_pool_config_set_params (config, caps, size, 0, 0);
    gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
    if (!gst_buffer_pool_set_config (pool, config))
      gst_clear_object (&pool);
  }
  if (!pool)
    return FALSE;
  GST_DEBUG_OBJECT (self, "proposing %" GST_PTR_FORMAT " for %" GST_PTR_FORMAT,
      pool, caps);
  gst_query_add_allocation_pool (query, pool, size, 0, 0);
  gst_object_unref (pool);
  return TRUE;
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
  if (caps_are_cuda (outcaps)) {
#if HAVE_GSTCUDA
    /* Downstream's CUDA pool only if it is of our context. */
    if (pool && (!GST_IS_CUDA_BUFFER_POOL (pool) ||
            GST_CUDA_BUFFER_POOL_CAST (pool)->context !=
            GST_CUDA_CONTEXT (st->context)))
      gst_clear_object (&pool);
    if (!pool && st->context) {
      pool = new_cuda_pool (st, outcaps, &size, min, max);
      configured = true;
    }
#endif
  } else if (st->backend == cudafx::Backend::Cuda && st->pinned) {
    /* Results are copied device->host: into pinned memory, always. */
    gst_clear_object (&pool);
    pool = gst_cuda_fx_pinned_pool_new (st->pinned, outcaps, size, min, max);
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
  const cudafx::Status s = klass->process (self, view_of_frame (&in, st->in_desc),
      view_of_frame (&out, st->out_desc), nullptr);
  gst_video_frame_unmap (&out);
  gst_video_frame_unmap (&in);
  return s.is_ok ()? GST_FLOW_OK : flow_error (self, "processing failed", s);
}

/* A device image for `host`'s frames. It takes the host frame's row pitches
 * when they keep rows 16-byte aligned, so that every copy between the two is
 * one linear copy; else rows aligned to STAGING_ROW_ALIGN. Allocated on the
 * first frame (and again only if a later frame needs more), never per frame. */
static cudafx::Status
ensure_staging (cudafx::DeviceBuffer & buf, const cudafx::ImageView & host,
    cudafx::ImageView * view)
{
  const cudafx::FormatInfo & fi = cudafx::format_info (host.desc.format);
  cudafx::ImageView v;
  v.desc = host.desc;
  size_t offsets[cudafx::kMaxPlanes] = { 0, 0, 0 };
  size_t total = 0;
  for (int i = 0; i < fi.n_planes; i++) {
    const cudafx::PlaneView p = host.plane (i);
    v.pitch[i] = p.pitch % 16 == 0 ? p.pitch :
        (p.row_bytes () + STAGING_ROW_ALIGN - 1) / STAGING_ROW_ALIGN * STAGING_ROW_ALIGN;
    offsets[i] = total;
    total += (v.pitch[i] * p.height + STAGING_ROW_ALIGN - 1) / STAGING_ROW_ALIGN *
        STAGING_ROW_ALIGN;
  }
  if (buf.size () < total)
    CUDAFX_TRY (buf.allocate (total));
  for (int i = 0; i < fi.n_planes; i++)
    v.data[i] = buf.bytes () + offsets[i];
  *view = v;
  return cudafx::Status::ok ();
}

static GstFlowReturn
transform_cuda (GstCudaFxFilter * self, GstBuffer * inbuf, GstBuffer * outbuf)
{
  GstCudaFxFilterState *st = get_state (self);
  GstCudaFxFilterClass *klass = GST_CUDA_FX_FILTER_GET_CLASS (self);
  GstCudaFxContextScope scope (st->context, st->device_id);
  if (!scope.status ().is_ok ())
    return flow_error (self, "CUDA context", scope.status ());

  const bool in_dev = buffer_is_our_cuda (st, inbuf);
  const bool out_dev = buffer_is_our_cuda (st, outbuf);
  GstMapFlags in_flags = GST_MAP_READ, out_flags = GST_MAP_WRITE;
#if HAVE_GSTCUDA
  if (in_dev)
    in_flags = static_cast < GstMapFlags > (in_flags | GST_MAP_CUDA);
  if (out_dev)
    out_flags = static_cast < GstMapFlags > (out_flags | GST_MAP_CUDA);
#endif
  const gint64 t0 = g_get_monotonic_time ();
  GstVideoFrame in, out;
  if (!gst_video_frame_map (&in, &st->in_info, inbuf, in_flags))
    return flow_error (self, "cannot map input", cudafx::Status::invalid ("map failed"));
  if (!gst_video_frame_map (&out, &st->out_info, outbuf, out_flags)) {
    gst_video_frame_unmap (&in);
    return flow_error (self, "cannot map output", cudafx::Status::invalid ("map failed"));
  }

  const cudafx::StreamHandle stream = st->stream.get ();
  cudafx::ImageView src = view_of_frame (&in, st->in_desc);
  cudafx::ImageView dst = view_of_frame (&out, st->out_desc);
  const cudafx::ImageView host_out = dst;
  cudafx::Status s;
  if (!in_dev) {
    cudafx::ImageView staged;
    s = ensure_staging (st->staging_in, src, &staged);
    if (s.is_ok ())
      s = cudafx::copy_image_async (staged, src, stream);
    src = staged;
  }
  if (s.is_ok () && !out_dev)
    s = ensure_staging (st->staging_out, host_out, &dst);
  if (s.is_ok ())
    s = klass->process (self, src, dst, stream);
  if (s.is_ok () && !out_dev)
    s = cudafx::copy_image_async (host_out, dst, stream);
  /* The one synchronisation of this buffer: the input may be unmapped and the
   * output pushed only once the stream has finished with them. */
  const gint64 t1 = g_get_monotonic_time ();
  const cudafx::Status sync = st->stream.synchronize ();
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
  if (st->backend == cudafx::Backend::Cuda)
    return transform_cuda (self, inbuf, outbuf);
  return transform_cpu (self, inbuf, outbuf);
}

/* ---- properties and type ---- */

static void
gst_cuda_fx_filter_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCudaFxFilterState *st = get_state (GST_CUDA_FX_FILTER (object));
  GST_OBJECT_LOCK (object);
  switch (prop_id) {
    case PROP_BACKEND:
      st->backend_setting = static_cast < GstCudaFxBackend > (g_value_get_enum (value));
      break;
    case PROP_CUDA_DEVICE_ID:
      st->device_id_setting = g_value_get_int (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (object);
}

static void
gst_cuda_fx_filter_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstCudaFxFilterState *st = get_state (GST_CUDA_FX_FILTER (object));
  GST_OBJECT_LOCK (object);
  switch (prop_id) {
    case PROP_BACKEND:
      g_value_set_enum (value, st->backend_setting);
      break;
    case PROP_CUDA_DEVICE_ID:
      g_value_set_int (value, st->device_id_setting);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (object);
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

  g_object_class_install_property (gobject_class, PROP_BACKEND,
      g_param_spec_enum ("backend", "Backend",
          "Where frames are processed: auto (CUDA when a device is usable, "
          "else the CPU, with a warning), cuda (fail to start without a "
          "device) or cpu. Read at start",
          GST_TYPE_CUDA_FX_BACKEND, DEFAULT_BACKEND,
          static_cast < GParamFlags > (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
              GST_PARAM_MUTABLE_READY)));
  g_object_class_install_property (gobject_class, PROP_CUDA_DEVICE_ID,
      g_param_spec_int ("cuda-device-id", "CUDA device id",
          "CUDA device to use (-1: any; a context shared by neighbouring "
          "elements wins). Read at start",
          -1, G_MAXINT, DEFAULT_CUDA_DEVICE_ID,
          static_cast < GParamFlags > (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
              GST_PARAM_MUTABLE_READY)));

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
  gst_type_mark_as_plugin_api (GST_TYPE_CUDA_FX_BACKEND, (GstPluginAPIFlags) 0);
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
  return get_state (self)->backend;
}
