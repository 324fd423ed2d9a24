/* GstCudaFxDevice: see gstcudafxdevice.h. */
#include "gstcudafxdevice.h"

#include <string>

#include "gstcudafxpinnedallocator.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_fx_device_debug);
#define GST_CAT_DEFAULT gst_cuda_fx_device_debug

/* Row alignment of the device staging images: a multiple of 16 keeps every
 * row start aligned for the kernels' 16-byte loads. */
#define STAGING_ROW_ALIGN 256


static void
ensure_debug_category (void)
{
  static gsize done = 0;
  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (gst_cuda_fx_device_debug, "cudafxdevice", 0,
        "cudafx CUDA device handling");
    g_once_init_leave (&done, 1);
  }
}

void
gst_cuda_fx_install_device_properties (GObjectClass * klass)
{
  const GParamFlags ready = static_cast < GParamFlags > (G_PARAM_READWRITE |
      G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_READY);
  g_object_class_install_property (klass, GST_CUDA_FX_DEVICE_PROP_BACKEND,
      g_param_spec_enum ("backend", "Backend",
          "Where frames are processed: auto (CUDA when a device is usable, "
          "else the CPU, with a warning), cuda (fail to start without a "
          "device) or cpu. Read at start",
          GST_TYPE_CUDA_FX_BACKEND, GST_CUDA_FX_DEFAULT_BACKEND, ready));
  g_object_class_install_property (klass, GST_CUDA_FX_DEVICE_PROP_CUDA_DEVICE_ID,
      g_param_spec_int ("cuda-device-id", "CUDA device id",
          "CUDA device to use (-1: any; a context shared by neighbouring "
          "elements wins). Read at start",
          -1, G_MAXINT, GST_CUDA_FX_DEFAULT_DEVICE_ID, ready));
}

bool
GstCudaFxDevice::set_property (GObject * object, guint prop_id, const GValue * value)
{
  if (prop_id != GST_CUDA_FX_DEVICE_PROP_BACKEND &&
      prop_id != GST_CUDA_FX_DEVICE_PROP_CUDA_DEVICE_ID)
    return false;
  GST_OBJECT_LOCK (object);
  if (prop_id == GST_CUDA_FX_DEVICE_PROP_BACKEND)
    backend_setting = static_cast < GstCudaFxBackend > (g_value_get_enum (value));
  else
    device_id_setting = g_value_get_int (value);
  GST_OBJECT_UNLOCK (object);
  return true;
}

bool
GstCudaFxDevice::get_property (GObject * object, guint prop_id, GValue * value)
{
  if (prop_id != GST_CUDA_FX_DEVICE_PROP_BACKEND &&
      prop_id != GST_CUDA_FX_DEVICE_PROP_CUDA_DEVICE_ID)
    return false;
  GST_OBJECT_LOCK (object);
  if (prop_id == GST_CUDA_FX_DEVICE_PROP_BACKEND)
    g_value_set_enum (value, backend_setting);
  else
    g_value_set_int (value, device_id_setting);
  GST_OBJECT_UNLOCK (object);
  return true;
}

GstCudaFxDevice::~GstCudaFxDevice ()
{
  stop ();
}

gboolean
GstCudaFxDevice::start (GstElement * element)
{
  ensure_debug_category ();
  GST_OBJECT_LOCK (element);
  const GstCudaFxBackend wanted = backend_setting;
  const gint device_id = device_id_setting;
  GST_OBJECT_UNLOCK (element);
  backend_ = cudafx::Backend::Cpu;
  started_ = true;
  if (wanted == GST_CUDA_FX_BACKEND_CPU) {
    GST_INFO_OBJECT (element, "backend: cpu (asked for)");
    return TRUE;
  }

  gint actual = -1;
  cudafx::Status s = gst_cuda_fx_open_device (element, device_id, &context_, &actual);
  if (s.is_ok ()) {
    GstCudaFxContextScope scope (context_, actual);
    s = scope.status ();
    if (s.is_ok ())
      s = stream_.create ();
  }
  if (!s.is_ok ()) {
    gst_clear_object (&context_);
    /* A cuda-device-id that names no device is a mistake in the pipeline,
     * not a machine without a GPU: an error with backend=auto too. */
    if (s.code () == cudafx::StatusCode::InvalidArgument) {
      GST_ELEMENT_ERROR (element, RESOURCE, SETTINGS, ("%s", s.message ().c_str ()),
          ("backend=%s", wanted == GST_CUDA_FX_BACKEND_CUDA ? "cuda" : "auto"));
      started_ = false;
      return FALSE;
    }
    if (wanted == GST_CUDA_FX_BACKEND_CUDA) {
      GST_ELEMENT_ERROR (element, RESOURCE, NOT_FOUND,
          ("backend=cuda but no usable CUDA device: %s", s.message ().c_str ()),
          ("cuda-device-id=%d", device_id));
      started_ = false;
      return FALSE;
    }
    GST_ELEMENT_WARNING (element, RESOURCE, NOT_FOUND,
        ("No usable CUDA device, running on the CPU: %s", s.message ().c_str ()),
        ("backend=auto, cuda-device-id=%d", device_id));
    return TRUE;
  }
  backend_ = cudafx::Backend::Cuda;
  device_id_ = actual;
  pinned_ = gst_cuda_fx_pinned_allocator_new (context_, actual);
  GST_INFO_OBJECT (element, "backend: cuda, device %d", actual);
  return TRUE;
}

void
GstCudaFxDevice::stop ()
{
  if (stream_) {
    Scope scope (*this);
    stream_.reset ();
  }
  gst_clear_object (&pinned_);
  gst_clear_object (&context_);
  backend_ = cudafx::Backend::Cpu;
  device_id_ = -1;
  started_ = false;
}

void
GstCudaFxDevice::set_context (GstElement * element, GstContext * context)
{
#if HAVE_GSTCUDA
  GST_OBJECT_LOCK (element);
  const gint device_id = device_id_setting;
  GST_OBJECT_UNLOCK (element);
  GstCudaContext *ctx = context_ ? GST_CUDA_CONTEXT (context_) : nullptr;
  gst_cuda_handle_set_context (element, context, device_id, &ctx);
  context_ = ctx ? GST_OBJECT (ctx) : nullptr;
#else
  (void) element;
  (void) context;
#endif
}

gboolean
GstCudaFxDevice::handle_context_query (GstElement * element, GstQuery * query)
{
#if HAVE_GSTCUDA
  return GST_QUERY_TYPE (query) == GST_QUERY_CONTEXT && context_ &&
      gst_cuda_handle_context_query (element, query, GST_CUDA_CONTEXT (context_));
#else
  (void) element;
  (void) query;
  return FALSE;
#endif
}

bool
GstCudaFxDevice::is_our_cuda (GstBuffer * buffer) const
{
#if HAVE_GSTCUDA
  if (!context_ || gst_buffer_n_memory (buffer) == 0)
    return false;
  GstMemory *mem = gst_buffer_peek_memory (buffer, 0);
  return gst_is_cuda_memory (mem) &&
      GST_CUDA_MEMORY_CAST (mem)->context == GST_CUDA_CONTEXT (context_);
#else
  (void) buffer;
  return false;
#endif
}

GstBufferPool *
GstCudaFxDevice::new_cuda_pool (GstCaps * caps, guint * size, guint min, guint max)
{
#if HAVE_GSTCUDA
  if (!context_)
    return nullptr;
  GstBufferPool *pool = gst_cuda_buffer_pool_new (GST_CUDA_CONTEXT (context_));
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
#else
  (void) caps;
  (void) size;
  (void) min;
  (void) max;
  return nullptr;
#endif
}

gboolean
GstCudaFxDevice::propose_allocation (GstElement * element, GstQuery * query,
    bool add_video_meta)
{
  GstCaps *caps = nullptr;
  gboolean need_pool = FALSE;
  GstVideoInfo info;
  gst_query_parse_allocation (query, &caps, &need_pool);
  if (!caps || !gst_video_info_from_caps (&info, caps))
    return FALSE;
  if (add_video_meta)
    gst_query_add_allocation_meta (query, GST_VIDEO_META_API_TYPE, nullptr);
  if (!need_pool)
    return TRUE;
  guint size = GST_VIDEO_INFO_SIZE (&info);
  const gboolean cuda_caps = gst_cuda_fx_caps_are_cuda (caps);
  GstBufferPool *pool = nullptr;
  if (cuda_caps)
    pool = new_cuda_pool (caps, &size, 0, 0);
  if (!pool && !cuda_caps && pinned_) {
    pool = gst_cuda_fx_pinned_pool_new (pinned_, caps, size, 0, 0);
    GstAllocationParams params;
    gst_allocation_params_init (&params);
    params.align = 63;
    gst_query_add_allocation_param (query, pinned_, &params);
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
  GST_DEBUG_OBJECT (element, "proposing %" GST_PTR_FORMAT " for %" GST_PTR_FORMAT, pool, caps);
  gst_query_add_allocation_pool (query, pool, size, 0, 0);
  gst_object_unref (pool);
  return TRUE;
}

cudafx::Status
GstCudaFxDevice::staging_view (cudafx::DeviceBuffer & buf, const cudafx::ImageView & host,
    cudafx::ImageView * view, cudafx::StreamHandle stream)
{
  /* Host pitches that keep rows 16-byte aligned are kept (one linear copy a
   * plane); others give rows aligned to STAGING_ROW_ALIGN. */
  size_t pitches[cudafx::kMaxPlanes] = { 0, 0, 0 };
  for (int i = 0; i < cudafx::kMaxPlanes; i++)
    pitches[i] = host.pitch[i] % 16 == 0 ? host.pitch[i] : 0;
  const size_t total = cudafx::packed_size (host.desc, STAGING_ROW_ALIGN, pitches);
  if (buf.size () < total) {
    CUDAFX_TRY (buf.allocate (total));
    CUDAFX_TRY (cudafx::fill_bytes_async (buf.get (), 0, total, stream));
  }
  *view = cudafx::packed_view (host.desc, buf.bytes (), STAGING_ROW_ALIGN, pitches);
  return cudafx::Status::ok ();
}

gboolean
gst_cuda_fx_caps_are_cuda (GstCaps * caps)
{
#if HAVE_GSTCUDA
  GstCapsFeatures *f = gst_caps_get_features (caps, 0);
  return f && gst_caps_features_contains (f, GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY);
#else
  (void) caps;
  return FALSE;
#endif
}

GstCaps *
gst_cuda_fx_caps_drop_cuda_memory (GstCaps * caps)
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

cudafx::ImageView
gst_cuda_fx_view_of_frame (const GstVideoFrame * frame, const cudafx::ImageDesc & desc)
{
  cudafx::ImageView v;
  v.desc = desc;
  for (guint i = 0; i < GST_VIDEO_FRAME_N_PLANES (frame) && i < cudafx::kMaxPlanes; i++) {
    v.data[i] = static_cast < uint8_t * >(GST_VIDEO_FRAME_PLANE_DATA (frame, i));
    v.pitch[i] = GST_VIDEO_FRAME_PLANE_STRIDE (frame, i);
  }
  return v;
}

cudafx::Status
gst_cuda_fx_check_frame_layout (const GstVideoInfo * info, GstBuffer * buffer)
{
  const gsize size = gst_buffer_get_size (buffer);
  const GstVideoMeta *meta = gst_buffer_get_video_meta (buffer);
  if (!meta) {
    if (size < GST_VIDEO_INFO_SIZE (info))
      return cudafx::Status::invalid ("buffer of " + std::to_string (size) +
          " bytes is smaller than a frame (" + std::to_string (GST_VIDEO_INFO_SIZE (info)) + ")");
    return cudafx::Status::ok ();
  }
  cudafx::ImageDesc desc;
  if (meta->format != GST_VIDEO_INFO_FORMAT (info) ||
      (gint) meta->width != GST_VIDEO_INFO_WIDTH (info) ||
      (gint) meta->height != GST_VIDEO_INFO_HEIGHT (info) ||
      !gst_cuda_fx_desc_from_info (info, &desc))
    return cudafx::Status::invalid (std::string ("video meta describes a ") +
        gst_video_format_to_string (meta->format) + " " + std::to_string (meta->width) + "x" +
        std::to_string (meta->height) + " frame, the caps a " +
        gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (info)) + " " +
        std::to_string (GST_VIDEO_INFO_WIDTH (info)) + "x" +
        std::to_string (GST_VIDEO_INFO_HEIGHT (info)) + " one");
  const cudafx::FormatInfo & fi = cudafx::format_info (desc.format);
  if (meta->n_planes < (guint) fi.n_planes)
    return cudafx::Status::invalid ("video meta has " + std::to_string (meta->n_planes) +
        " planes, the format " + std::to_string (fi.n_planes));
  for (int i = 0; i < fi.n_planes; i++) {
    const size_t row = static_cast < size_t > (cudafx::plane_width (fi, i, desc.width)) *
        fi.planes[i].channels;
    const size_t rows = cudafx::plane_height (fi, i, desc.height);
    const gint stride = meta->stride[i];
    if (stride < 0 || static_cast < size_t > (stride) < row)
      return cudafx::Status::invalid ("video meta plane " + std::to_string (i) + " stride " +
          std::to_string (stride) + " is smaller than its row of " + std::to_string (row) +
          " bytes");
    /* offset + the last row's end, without overflow: the fields are a
     * sender's */
    const gsize offset = meta->offset[i];
    const unsigned long long span = static_cast < unsigned long long > (stride) * (rows - 1) + row;
    if (offset > size || span > size - offset)
      return cudafx::Status::invalid ("video meta plane " + std::to_string (i) + " ends at byte " +
          std::to_string (static_cast < unsigned long long > (offset) + span) +
          ", past the end of the " + std::to_string (size) +
          "-byte buffer");
  }
  return cudafx::Status::ok ();
}

cudafx::Status
gst_cuda_fx_map_frame (const GstCudaFxDevice & dev, GstVideoFrame * frame,
    const GstVideoInfo * info, GstBuffer * buffer, GstMapFlags flags, bool *on_device)
{
  CUDAFX_TRY (gst_cuda_fx_check_frame_layout (info, buffer));
  *on_device = dev.is_our_cuda (buffer);
#if HAVE_GSTCUDA
  if (*on_device)
    flags = static_cast < GstMapFlags > (flags | GST_MAP_CUDA);
#endif
  if (!gst_video_frame_map (frame, info, buffer, flags))
    return cudafx::Status::invalid (*on_device ? "cannot map the CUDA memory of the frame" :
        "cannot map the frame");
  return cudafx::Status::ok ();
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
