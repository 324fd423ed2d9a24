/* GstCudaFxFilter: see gstcudafxfilter.h. */
#include "gstcudafxfilter.h"

#include <atomic>
#include <cstring>
#include <optional>

#include "gstcudafxoverlap.h"
#include "gstcudafxpinnedallocator.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_fx_filter_debug);
#define GST_CAT_DEFAULT gst_cuda_fx_filter_debug


/* C++ state lives behind a pointer: GObject instance memory is raw. */
struct GstCudaFxFilterState
{
  /* the backend and cuda-device-id settings (under the object lock), and
   * from start to stop the device */
  GstCudaFxDevice dev;

  /* the mode, under the object lock; set by the subclass or a property */
  GstCudaFxFilterMode mode = GST_CUDA_FX_FILTER_MODE_TRANSFORM;

  /* `memory-mode` (under the object lock), and from start to stop whether
   * the CUDA backend maps frames in system memory instead of copying them
   * (mapped, or auto on an integrated GPU) */
  GstCudaFxMemoryMode memory_setting = GST_CUDA_FX_MEMORY_AUTO;
  bool mapped = false;
  bool told_unmappable = false;  /* the copy fallback was logged */

  /* streaming thread, from set_caps */
  GstVideoInfo in_info, out_info;
  cudafx::ImageDesc in_desc, out_desc;
  bool have_caps = false;
  bool same_info = false;       /* the pads' video infos and memories equal */
  bool in_cuda_memory = false;  /* the sink caps have memory:CUDAMemory */
  bool configured = false;      /* the op is built, for configured_mode */
  GstCudaFxFilterMode configured_mode = GST_CUDA_FX_FILTER_MODE_TRANSFORM;
  cudafx::DeviceBuffer staging_in, staging_out;
  /* IN_PLACE with the CUDA backend and a frame that is not writable (a tee,
   * an application holding it): the frame is read from `ip_source` and
   * written into a buffer of `copy_pool` (pinned, or CUDA memory), through
   * the device, instead of GstBaseTransform's copy into pageable memory (a
   * full-frame memcpy into freshly faulted pages, then uploads and
   * downloads at the pageable rate: 35 instead of 540 2160p frames/s) or
   * into newly allocated device memory. */
  GstBufferPool *copy_pool = nullptr;
  GstBuffer *ip_source = nullptr;

  /* `overlap` (under the object lock), and from set_caps whether TRANSFORM
   * frames overlap on the bus (gstcudafxoverlap.h): the CUDA backend, system
   * memory on both pads, copied, a known frame rate, no `finish`. Read by
   * latency queries from other threads. */
  bool overlap_setting = false;
  bool overlap_caps = false;    /* the caps allow it (set_caps) */
  std::atomic < bool > overlap { false };
  std::atomic < GstClockTime > frame_duration { 0 };   /* for the latency query */
  GstCudaFxOverlap frames;
  GstBuffer *ready = nullptr;   /* given out by the next generate_output */
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

/* Template caps for `cuda_formats` in CUDA memory (when libgstcuda is there
 * and the list is not NULL) and `system_formats` in system memory, each
 * first with `extra_feature` when one is given. */
static GstCaps *
template_caps (const gchar * cuda_formats, const gchar * system_formats,
    const gchar * extra_feature)
{
  GString *s = g_string_new (nullptr);
  auto add =[s](const gchar * features, const gchar * formats) {
    g_string_append_printf (s, "%svideo/x-raw%s%s%s, format = (string) %s, width = "
        GST_VIDEO_SIZE_RANGE ", height = " GST_VIDEO_SIZE_RANGE ", framerate = "
        GST_VIDEO_FPS_RANGE, s->len ? "; " : "", features ? "(" : "",
        features ? features : "", features ? ")" : "", formats);
  };
#if HAVE_GSTCUDA
  if (cuda_formats && extra_feature) {
    gchar *both = g_strdup_printf ("%s, %s", GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, extra_feature);
    add (both, cuda_formats);
    g_free (both);
  }
  if (cuda_formats)
    add (GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, cuda_formats);
#else
  (void) cuda_formats;
#endif
  if (extra_feature) {
    gchar *both = g_strdup_printf ("%s, %s", GST_CAPS_FEATURE_MEMORY_SYSTEM_MEMORY, extra_feature);
    add (both, system_formats);
    g_free (both);
  }
  add (nullptr, system_formats);
  GstCaps *caps = gst_caps_from_string (s->str);
  g_string_free (s, TRUE);
  return caps;
}

void
gst_cuda_fx_filter_class_add_pad_templates_full (GstCudaFxFilterClass * klass,
    const gchar * sink_cuda_formats, const gchar * sink_system_formats,
    const gchar * src_cuda_formats, const gchar * src_system_formats,
    const gchar * extra_feature)
{
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstCaps *sink = template_caps (sink_cuda_formats, sink_system_formats, extra_feature);
  GstCaps *src = template_caps (src_cuda_formats, src_system_formats, nullptr);
  gst_element_class_add_pad_template (element_class,
      gst_pad_template_new ("sink", GST_PAD_SINK, GST_PAD_ALWAYS, sink));
  gst_element_class_add_pad_template (element_class,
      gst_pad_template_new ("src", GST_PAD_SRC, GST_PAD_ALWAYS, src));
  gst_caps_unref (sink);
  gst_caps_unref (src);
}

void
gst_cuda_fx_filter_class_add_pad_templates (GstCudaFxFilterClass * klass,
    const gchar * cuda_formats, const gchar * system_formats)
{
  gst_cuda_fx_filter_class_add_pad_templates_full (klass, cuda_formats, system_formats,
      cuda_formats, system_formats, nullptr);
}

/* `f` (may be NULL: system memory) with its memory feature replaced by
 * `memory`; the other features kept. */
static GstCapsFeatures *
features_in_memory (const GstCapsFeatures * f, const gchar * memory)
{
  GstCapsFeatures *out = gst_caps_features_new_empty ();
  for (guint i = 0; f && i < gst_caps_features_get_size (f); i++) {
    const gchar *name = gst_caps_features_get_nth (f, i);
    if (!g_str_has_prefix (name, "memory:"))
      gst_caps_features_add (out, name);
  }
  /* System memory with no other feature is the empty set, as in templates. */
  if (strcmp (memory, GST_CAPS_FEATURE_MEMORY_SYSTEM_MEMORY) != 0 ||
      gst_caps_features_get_size (out) > 0)
    gst_caps_features_add (out, memory);
  return out;
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
    const gchar *own = cuda ? GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY :
        GST_CAPS_FEATURE_MEMORY_SYSTEM_MEMORY;
    const gchar *swapped = cuda ? GST_CAPS_FEATURE_MEMORY_SYSTEM_MEMORY :
        GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY;
    same = gst_caps_merge_structure_full (same, gst_structure_copy (s),
        features_in_memory (f, own));
    other = gst_caps_merge_structure_full (other, gst_structure_copy (s),
        features_in_memory (f, swapped));
#else
    same = gst_caps_merge_structure_full (same, gst_structure_copy (s),
        features_in_memory (f, GST_CAPS_FEATURE_MEMORY_SYSTEM_MEMORY));
#endif
  }
  return gst_caps_merge (same, other);
}

GstCaps *
gst_cuda_fx_caps_free_format (GstCaps * caps)
{
  caps = gst_caps_make_writable (caps);
  for (guint i = 0; i < gst_caps_get_size (caps); i++)
    gst_structure_remove_fields (gst_caps_get_structure (caps, i), "format", "colorimetry",
        "chroma-site", nullptr);
  return gst_caps_simplify (caps);
}

static GstCudaFxFilterMode
current_mode (GstCudaFxFilter * self)
{
  GST_OBJECT_LOCK (self);
  const GstCudaFxFilterMode m = get_state (self)->mode;
  GST_OBJECT_UNLOCK (self);
  return m;
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
  /* A frame that is processed in place or passed through keeps its memory. */
  GstCaps *result = current_mode (self) == GST_CUDA_FX_FILTER_MODE_TRANSFORM ?
      gst_cuda_fx_filter_caps_any_memory (video) : gst_caps_ref (video);
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

/* Downstream may list system memory first although it takes CUDA memory as
 * well (nvcodec's cudadownload does): the output keeps the input's memory
 * whenever downstream accepts it, so a chain stays on the GPU (or in host
 * memory) instead of copying at every element. Takes `othercaps`. */
static GstCaps *
input_memory_first (GstCaps * caps, GstCaps * othercaps)
{
  const gboolean in_cuda = gst_cuda_fx_caps_are_cuda (caps);
  GstCaps *first = gst_caps_new_empty ();
  GstCaps *rest = gst_caps_new_empty ();
  for (guint i = 0; i < gst_caps_get_size (othercaps); i++) {
    GstCapsFeatures *f = gst_caps_get_features (othercaps, i);
#if HAVE_GSTCUDA
    const gboolean cuda = f && gst_caps_features_contains (f, GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY);
#else
    const gboolean cuda = FALSE;
#endif
    gst_caps_append_structure_full (cuda == in_cuda ? first : rest,
        gst_structure_copy (gst_caps_get_structure (othercaps, i)),
        f ? gst_caps_features_copy (f) : nullptr);
  }
  gst_caps_unref (othercaps);
  gst_caps_append (first, rest);
  return first;
}

static GstCaps *
gst_cuda_fx_filter_fixate_caps (GstBaseTransform * trans, GstPadDirection direction,
    GstCaps * caps, GstCaps * othercaps)
{
  GstCudaFxFilter *self = GST_CUDA_FX_FILTER (trans);
  GstCudaFxFilterClass *klass = GST_CUDA_FX_FILTER_GET_CLASS (self);
  othercaps = input_memory_first (caps, othercaps);
  GST_DEBUG_OBJECT (self, "fixating %" GST_PTR_FORMAT, othercaps);
  if (klass->fixate_video_caps)
    return klass->fixate_video_caps (self, direction, caps, othercaps);
  return GST_BASE_TRANSFORM_CLASS (gst_cuda_fx_filter_parent_class)->fixate_caps (trans,
      direction, caps, othercaps);
}

/* ---- context ---- */

static void
gst_cuda_fx_filter_set_context (GstElement * element, GstContext * context)
{
  GstCudaFxFilterState *st = get_state (GST_CUDA_FX_FILTER (element));
  st->dev.set_context (element, context);
  GST_ELEMENT_CLASS (gst_cuda_fx_filter_parent_class)->set_context (element, context);
}

static GstFlowReturn drain_in_flight (GstCudaFxFilter * self);

static gboolean
gst_cuda_fx_filter_query (GstBaseTransform * trans, GstPadDirection direction,
    GstQuery * query)
{
  GstCudaFxFilterState *st = get_state (GST_CUDA_FX_FILTER (trans));
  if (st->dev.handle_context_query (GST_ELEMENT (trans), query))
    return TRUE;
  /* upstream wants every buffer it gave back (before it frees or changes
   * its pool): the frames in flight go out first (a serialized query: the
   * streaming thread) */
  if (direction == GST_PAD_SINK && GST_QUERY_TYPE (query) == GST_QUERY_DRAIN)
    (void) drain_in_flight (GST_CUDA_FX_FILTER (trans));
  if (!GST_BASE_TRANSFORM_CLASS (gst_cuda_fx_filter_parent_class)->query (trans, direction,
          query))
    return FALSE;
  /* overlapped frames: a frame leaves when the next comes, one frame later */
  if (direction == GST_PAD_SRC && GST_QUERY_TYPE (query) == GST_QUERY_LATENCY && st->overlap) {
    gboolean live;
    GstClockTime min, max;
    gst_query_parse_latency (query, &live, &min, &max);
    const GstClockTime frame = st->frame_duration;
    min += frame;
    if (GST_CLOCK_TIME_IS_VALID (max))
      max += frame;
    gst_query_set_latency (query, live, min, max);
  }
  return TRUE;
}

/* ---- overlapped frames ---- */

/* Frames in flight dropped (a flush, stop): the device done with them. */
static void
discard_in_flight (GstCudaFxFilter * self)
{
  GstCudaFxFilterState *st = get_state (self);
  gst_clear_buffer (&st->ready);
  if (st->frames.in_flight () == 0)
    return;
  GstCudaFxDevice::Scope scope (st->dev);
  st->frames.discard ();
}

/* The oldest frame in flight, finished, in *out (NULL when none); an
 * element error on failure. */
static GstFlowReturn
finish_in_flight (GstCudaFxFilter * self, GstBuffer ** out)
{
  GstCudaFxFilterState *st = get_state (self);
  *out = nullptr;
  if (st->frames.in_flight () == 0)
    return GST_FLOW_OK;
  GstCudaFxDevice::Scope scope (st->dev);
  cudafx::Status s = scope.status ();
  if (s.is_ok ())
    s = st->frames.finish_oldest (out);
  if (!s.is_ok ()) {
    GST_ELEMENT_ERROR (self, STREAM, FAILED, ("Processing failed: %s", s.message ().c_str ()),
        (nullptr));
    return GST_FLOW_ERROR;
  }
  return GST_FLOW_OK;
}

/* Every frame in flight finished and pushed, in order, before what comes
 * next (a serialized event, new caps). */
static GstFlowReturn
drain_in_flight (GstCudaFxFilter * self)
{
  GstCudaFxFilterState *st = get_state (self);
  GstFlowReturn ret = GST_FLOW_OK;
  while (st->frames.in_flight () > 0 || st->ready) {
    GstBuffer *buf = nullptr;
    if (st->frames.in_flight () > 0) {
      const GstFlowReturn r = finish_in_flight (self, &buf);
      if (r != GST_FLOW_OK) {
        discard_in_flight (self);
        return r;
      }
    } else {
      buf = st->ready;
      st->ready = nullptr;
    }
    if (buf && ret == GST_FLOW_OK)
      ret = gst_pad_push (GST_BASE_TRANSFORM_SRC_PAD (self), buf);
    else
      gst_clear_buffer (&buf);
  }
  return ret;
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
    st->frames.release ();
    klass->teardown (self);
    st->staging_in.reset ();
    st->staging_out.reset ();
  } else {
    klass->teardown (self);
  }
  st->configured = false;
}

static void
release_copy_pool (GstCudaFxFilterState * st)
{
  if (st->copy_pool) {
    gst_buffer_pool_set_active (st->copy_pool, FALSE);
    gst_clear_object (&st->copy_pool);
  }
  gst_clear_buffer (&st->ip_source);
}

static gboolean
gst_cuda_fx_filter_start (GstBaseTransform * trans)
{
  GstCudaFxFilter *self = GST_CUDA_FX_FILTER (trans);
  GstCudaFxFilterState *st = get_state (self);
  if (!st->dev.start (GST_ELEMENT (self)))
    return FALSE;
  GST_OBJECT_LOCK (self);
  const GstCudaFxMemoryMode setting = st->memory_setting;
  GST_OBJECT_UNLOCK (self);
  st->mapped = false;
  st->told_unmappable = false;
  if (st->dev.cuda () && setting != GST_CUDA_FX_MEMORY_COPY) {
    bool integrated = false;
    if (setting == GST_CUDA_FX_MEMORY_AUTO) {
      GstCudaFxDevice::Scope scope (st->dev);
      if (scope.status ().is_ok ())
        (void) cudafx::cuda_device_integrated (&integrated);
    }
    st->mapped = setting == GST_CUDA_FX_MEMORY_MAPPED || integrated;
  }
  GST_INFO_OBJECT (self, "frames in system memory are %s", st->mapped ? "mapped" : "copied");
  return TRUE;
}

static gboolean
gst_cuda_fx_filter_stop (GstBaseTransform * trans)
{
  GstCudaFxFilter *self = GST_CUDA_FX_FILTER (trans);
  discard_in_flight (self);
  get_state (self)->overlap = false;
  get_state (self)->overlap_caps = false;
  release_op (self);
  release_copy_pool (get_state (self));
  get_state (self)->have_caps = false;
  get_state (self)->dev.stop ();
  return TRUE;
}

/* ---- caps set and mode ---- */

/* GstBaseTransform's flags for `mode`: TRANSFORM writes a new buffer (or
 * passes through where the class allows it), IN_PLACE writes into the
 * incoming one, ANALYSIS passes it through and looks at it in transform_ip. */
static void
apply_mode_flags (GstCudaFxFilter * self, GstCudaFxFilterMode mode, bool same_info)
{
  GstBaseTransform *trans = GST_BASE_TRANSFORM (self);
  GstCudaFxFilterClass *klass = GST_CUDA_FX_FILTER_GET_CLASS (self);
  switch (mode) {
    case GST_CUDA_FX_FILTER_MODE_TRANSFORM:
      gst_base_transform_set_in_place (trans, FALSE);
      gst_base_transform_set_passthrough (trans, klass->passthrough_on_same_info && same_info);
      break;
    case GST_CUDA_FX_FILTER_MODE_IN_PLACE:
      gst_base_transform_set_passthrough (trans, FALSE);
      gst_base_transform_set_in_place (trans, TRUE);
      break;
    case GST_CUDA_FX_FILTER_MODE_ANALYSIS:
      gst_base_transform_set_in_place (trans, TRUE);
      gst_base_transform_set_passthrough (trans, TRUE);
      break;
  }
}

/* Builds the op for the caps of set_caps and `mode` (the old one released
 * first). An element error is posted on failure. */
static gboolean
configure_op (GstCudaFxFilter * self, GstCudaFxFilterMode mode)
{
  GstCudaFxFilterState *st = get_state (self);
  GstCudaFxFilterClass *klass = GST_CUDA_FX_FILTER_GET_CLASS (self);
  release_op (self);
  if (mode == GST_CUDA_FX_FILTER_MODE_TRANSFORM && klass->passthrough_on_same_info &&
      st->same_info) {
    /* Buffers never reach transform(): no op to build. */
    GST_DEBUG_OBJECT (self, "passthrough");
    return TRUE;
  }
  if (mode != GST_CUDA_FX_FILTER_MODE_TRANSFORM && !st->same_info) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("The in-place and analysis modes need the same format, size and memory on both pads"),
        (nullptr));
    return FALSE;
  }
  GstCudaFxFilterConfig config;
  config.in_info = &st->in_info;
  config.out_info = &st->out_info;
  config.in = st->in_desc;
  config.out = st->out_desc;
  config.backend = st->dev.backend ();
  config.mode = mode;
  cudafx::Status s;
  if (st->dev.cuda ()) {
    GstCudaFxDevice::Scope scope (st->dev);
    s = scope.status ();
    if (s.is_ok ())
      s = klass->setup (self, config);
  } else {
    s = klass->setup (self, config);
  }
  if (!s.is_ok ()) {
    GST_ELEMENT_ERROR (self, LIBRARY, SETTINGS, ("%s", s.message ().c_str ()),
        ("%s -> %s", gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (&st->in_info)),
            gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (&st->out_info))));
    return FALSE;
  }
  st->configured = true;
  st->configured_mode = mode;
  GST_DEBUG_OBJECT (self, "configured: mode %d, backend %s", mode,
      st->dev.cuda ()? "cuda" : "cpu");
  return TRUE;
}

/* Whether frames overlap now: the caps allow it (set_caps), TRANSFORM, not
 * passthrough. A latency message when that, or the frame duration with
 * new caps, changed. Any thread (set_mode). */
static void
update_overlap (GstCudaFxFilter * self, GstCudaFxFilterMode mode, bool new_caps)
{
  GstCudaFxFilterState *st = get_state (self);
  GstCudaFxFilterClass *klass = GST_CUDA_FX_FILTER_GET_CLASS (self);
  const bool overlap = st->overlap_caps && mode == GST_CUDA_FX_FILTER_MODE_TRANSFORM &&
      !(klass->passthrough_on_same_info && st->same_info);
  if (st->overlap.exchange (overlap) != overlap || (overlap && new_caps)) {
    GST_INFO_OBJECT (self, "frames %s", overlap ? "overlap: one frame of latency" :
        "do not overlap");
    gst_element_post_message (GST_ELEMENT (self), gst_message_new_latency (GST_OBJECT (self)));
  }
}

static gboolean
gst_cuda_fx_filter_set_caps (GstBaseTransform * trans, GstCaps * incaps,
    GstCaps * outcaps)
{
  GstCudaFxFilter *self = GST_CUDA_FX_FILTER (trans);
  GstCudaFxFilterState *st = get_state (self);

  /* frames of the old caps go first (new caps from upstream were drained
   * by sink_event; a reconfiguration by the element comes here directly) */
  (void) drain_in_flight (self);
  release_op (self);
  st->have_caps = false;
  if (!gst_video_info_from_caps (&st->in_info, incaps) ||
      !gst_video_info_from_caps (&st->out_info, outcaps) ||
      !gst_cuda_fx_desc_from_info (&st->in_info, &st->in_desc) ||
      !gst_cuda_fx_desc_from_info (&st->out_info, &st->out_desc)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("Unsupported caps"),
        ("in %" GST_PTR_FORMAT ", out %" GST_PTR_FORMAT, incaps, outcaps));
    return FALSE;
  }
  /* A spatial filter across the fields of an interlaced frame mixes two
   * instants: refused, with the fix in the message. */
  if (GST_VIDEO_INFO_IS_INTERLACED (&st->in_info)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION,
        ("Interlaced video is not supported: deinterlace it first (deinterlace, yadif)"),
        ("caps %" GST_PTR_FORMAT, incaps));
    return FALSE;
  }
  st->in_cuda_memory = gst_cuda_fx_caps_are_cuda (incaps);
  st->same_info = st->in_cuda_memory == gst_cuda_fx_caps_are_cuda (outcaps) &&
      gst_video_info_is_equal (&st->in_info, &st->out_info);
  release_copy_pool (st);   /* its buffers were of the old caps */
  st->have_caps = true;
  GST_OBJECT_LOCK (self);
  const bool want_overlap = st->overlap_setting;
  GST_OBJECT_UNLOCK (self);
  st->overlap_caps = want_overlap && st->dev.cuda () && !st->mapped && !st->in_cuda_memory &&
      !gst_cuda_fx_caps_are_cuda (outcaps) && GST_VIDEO_INFO_FPS_N (&st->in_info) > 0 &&
      GST_VIDEO_INFO_FPS_D (&st->in_info) > 0 &&
      !GST_CUDA_FX_FILTER_GET_CLASS (self)->finish;
  if (st->overlap_caps)
    st->frame_duration = gst_util_uint64_scale_int (GST_SECOND,
        GST_VIDEO_INFO_FPS_D (&st->in_info), GST_VIDEO_INFO_FPS_N (&st->in_info));
  const GstCudaFxFilterMode mode = current_mode (self);
  apply_mode_flags (self, mode, st->same_info);
  update_overlap (self, mode, true);
  return configure_op (self, mode);
}

void
gst_cuda_fx_filter_set_mode (GstCudaFxFilter * self, GstCudaFxFilterMode mode)
{
  GstCudaFxFilterState *st = get_state (self);
  GST_OBJECT_LOCK (self);
  const bool changed = st->mode != mode;
  st->mode = mode;
  GST_OBJECT_UNLOCK (self);
  if (!changed)
    return;
  /* Flags now, so that the next buffer takes the new path; the op follows
   * in the streaming thread (the buffer functions compare the modes), and
   * the output pool is decided again. */
  apply_mode_flags (self, mode, st->same_info);
  update_overlap (self, mode, false);
  gst_base_transform_reconfigure_src (GST_BASE_TRANSFORM (self));
}

GstCudaFxFilterMode
gst_cuda_fx_filter_get_mode (GstCudaFxFilter * self)
{
  return current_mode (self);
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
  if (!decide_query) {
    /* Passthrough (the analysis mode): the query went downstream and our
     * buffers are downstream's. Where downstream offered no pool (fakesink,
     * appsink, most encoders) and this element uploads every system-memory
     * frame to the GPU, the pinned pool is offered: the upload then runs at
     * the pinned rate (~50 GB/s) instead of the pageable one (~12 GB/s), the
     * difference between 140 and over 500 2160p frames/s in cudaharris.
     * A pool from downstream is kept: its memory may be what it needs. */
    if (st->dev.cuda () && gst_query_get_n_allocation_pools (query) == 0)
      return st->dev.propose_allocation (GST_ELEMENT (self), query, false);
    return TRUE;
  }
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
  if (st->overlap) {
    /* a frame in flight holds one output buffer more */
    min += 1;
    if (max)
      max += 1;
  }

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

/* ---- per buffer ---- */

static GstFlowReturn
flow_error (GstCudaFxFilter * self, const char *what, const cudafx::Status & s)
{
  GST_ELEMENT_ERROR (self, STREAM, FAILED, ("%s: %s", what, s.message ().c_str ()),
      (nullptr));
  return GST_FLOW_ERROR;
}

/* Controlled properties follow the stream time (gstvideoflip.c's rule). */
static void
gst_cuda_fx_filter_before_transform (GstBaseTransform * trans, GstBuffer * buffer)
{
  if (trans->segment.format != GST_FORMAT_TIME)
    return;
  const GstClockTime stream_time = gst_segment_to_stream_time (&trans->segment,
      GST_FORMAT_TIME, GST_BUFFER_PTS (buffer));
  if (GST_CLOCK_TIME_IS_VALID (stream_time))
    gst_object_sync_values (GST_OBJECT (trans), stream_time);
}

/* The op for the current mode, rebuilt when the mode changed while playing. */
static gboolean
ensure_op (GstCudaFxFilter * self, GstCudaFxFilterMode mode)
{
  GstCudaFxFilterState *st = get_state (self);
  if (st->configured && st->configured_mode == mode)
    return TRUE;
  if (!st->have_caps) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("No caps were negotiated"), (nullptr));
    return FALSE;
  }
  return configure_op (self, mode);
}

/* Whether every memory of `buf` comes from a pinned allocator of ours
 * (pinned_alloc: the device reads it at its host addresses). */
static bool
all_pinned (GstBuffer * buf)
{
  const guint n = gst_buffer_n_memory (buf);
  for (guint i = 0; i < n; i++)
    if (!gst_cuda_fx_is_pinned_memory (gst_buffer_peek_memory (buf, i)))
      return false;
  return n > 0;
}

/* With the mapped memory mode, `host` (a frame of `buf` in system memory)
 * as the kernels see it in place, in *view; false where the memory cannot
 * be mapped (the caller copies, as with memory-mode=copy; said once in the
 * log) or the mode is copy. */
static bool
map_host_frame (GstCudaFxFilter * self, cudafx::HostMapping * mapping,
    const cudafx::ImageView & host, GstBuffer * buf, cudafx::ImageView * view)
{
  GstCudaFxFilterState *st = get_state (self);
  if (!st->mapped)
    return false;
  const cudafx::Status s = mapping->map (host, all_pinned (buf), view);
  if (!s.is_ok () && !st->told_unmappable) {
    GST_INFO_OBJECT (self, "copying a frame that cannot be mapped: %s", s.message ().c_str ());
    st->told_unmappable = true;
  }
  return s.is_ok ();
}

/* One buffer through the op, in one of three shapes:
 *  - TRANSFORM: `outbuf` set, `write` false: `inbuf` is read, `outbuf`
 *    written;
 *  - IN_PLACE or ANALYSIS: `outbuf` NULL: `inbuf` is the frame, written
 *    when `write`;
 *  - IN_PLACE of a frame that may not be written (see copy_pool): `outbuf`
 *    set and `write` true: `inbuf` is only read, and the op runs in place on
 *    a device image that holds a copy of it (`outbuf`'s own CUDA memory, or
 *    the staging image, downloaded into `outbuf`).
 * With the CUDA backend a frame in host memory (or in CUDA memory of another
 * context) goes through a device staging image, and the stream is
 * synchronised once, before the frames are unmapped. */
static cudafx::Status
run_buffer (GstCudaFxFilter * self, GstBuffer * inbuf, GstBuffer * outbuf, bool write)
{
  GstCudaFxFilterState *st = get_state (self);
  GstCudaFxFilterClass *klass = GST_CUDA_FX_FILTER_GET_CLASS (self);
  const bool cuda = st->dev.cuda ();
  const bool from_shared = outbuf && write;
  if (from_shared && !cuda)
    return cudafx::Status::error (cudafx::StatusCode::Internal,
        "a shared frame is copied through the device only with the CUDA backend");
  std::optional < GstCudaFxDevice::Scope > scope;
  if (cuda) {
    scope.emplace (st->dev);
    CUDAFX_TRY (scope->status ());
  }
  /* released after the synchronisation (declared after the scope: released
   * before it, in the context) */
  cudafx::HostMapping map_in, map_out;
  const cudafx::StreamHandle stream = cuda ? st->dev.stream () : nullptr;
  const gint64 t0 = g_get_monotonic_time ();

  GstVideoFrame in, out;
  bool in_dev = false, out_dev = false;
  CUDAFX_TRY (gst_cuda_fx_map_frame (st->dev, &in, &st->in_info, inbuf,
          write && !outbuf ? GST_MAP_READWRITE : GST_MAP_READ, &in_dev));
  /* in place, `outbuf` is a frame of the input's caps */
  const GstVideoInfo *out_info = from_shared ? &st->in_info : &st->out_info;
  const cudafx::ImageDesc & out_desc = from_shared ? st->in_desc : st->out_desc;
  cudafx::Status s;
  if (outbuf) {
    s = gst_cuda_fx_map_frame (st->dev, &out, out_info, outbuf, GST_MAP_WRITE, &out_dev);
    if (!s.is_ok ()) {
      gst_video_frame_unmap (&in);
      return s;
    }
  }
  const cudafx::ImageView host_in = gst_cuda_fx_view_of_frame (&in, st->in_desc);
  cudafx::ImageView src = host_in;
  const bool on_host = !outbuf && write && cuda && !in_dev && klass->process_ip_host;
  const bool in_mapped = cuda && !in_dev && !on_host && map_host_frame (self, &map_in, host_in,
      inbuf, &src);
  if (on_host) {
    s = klass->process_ip_host (self, host_in);
  } else if (cuda && !in_dev && !in_mapped) {
    s = GstCudaFxDevice::staging_view (st->staging_in, host_in, &src, stream);
    if (s.is_ok ())
      s = cudafx::copy_image_async (src, host_in, stream);
  }
  const char *path = "";
  bool out_mapped = false;
  if (from_shared) {
    const cudafx::ImageView host_out = gst_cuda_fx_view_of_frame (&out, out_desc);
    cudafx::ImageView mapped_out;
    if (!out_dev && in_mapped)
      out_mapped = map_host_frame (self, &map_out, host_out, outbuf, &mapped_out);
    if (out_mapped) {
      /* both mapped: the frame copied into the new buffer where it is, then
       * the op in place on it */
      path = ", mapped";
      if (s.is_ok ())
        s = cudafx::copy_image_async (mapped_out, src, stream);
      if (s.is_ok ())
        s = klass->process_ip (self, mapped_out, stream);
    } else if (out_dev) {
      /* a device copy into the new buffer, then the op in place on it */
      path = ", device copy";
      if (s.is_ok ())
        s = cudafx::copy_image_async (host_out, src, stream);
      if (s.is_ok ())
        s = klass->process_ip (self, host_out, stream);
    } else if (in_dev) {
      /* the op would write the shared frame itself: never */
      s = cudafx::Status::error (cudafx::StatusCode::Internal,
          "a shared frame in CUDA memory needs a CUDA-memory buffer for the result");
    } else {
      /* the staging copy is ours: the op in place on it, then downloaded */
      path = ", through the staging image";
      if (s.is_ok ())
        s = klass->process_ip (self, src, stream);
      if (s.is_ok ())
        s = cudafx::copy_image_async (host_out, src, stream);
    }
  } else if (outbuf) {
    const cudafx::ImageView host_out = gst_cuda_fx_view_of_frame (&out, out_desc);
    cudafx::ImageView dst = host_out;
    if (cuda && !out_dev)
      out_mapped = map_host_frame (self, &map_out, host_out, outbuf, &dst);
    if (s.is_ok () && cuda && !out_dev && !out_mapped)
      s = GstCudaFxDevice::staging_view (st->staging_out, host_out, &dst, stream);
    if (s.is_ok ())
      s = klass->process (self, src, dst, stream);
    if (s.is_ok () && cuda && !out_dev && !out_mapped)
      s = cudafx::copy_image_async (host_out, dst, stream);
  } else if (!on_host) {
    if (s.is_ok ())
      s = klass->process_ip (self, src, stream);
    if (s.is_ok () && write && cuda && !in_dev && !in_mapped)
      s = cudafx::copy_image_async (host_in, src, stream);
  }
  /* The one synchronisation of this buffer, also after a failure: queued
   * work may still use the frames. */
  const gint64 t1 = g_get_monotonic_time ();
  if (cuda) {
    const cudafx::Status sync = st->dev.synchronize ();
    if (s.is_ok ())
      s = sync;
  }
  if (outbuf)
    gst_video_frame_unmap (&out);
  gst_video_frame_unmap (&in);
  map_out.release ();
  map_in.release ();
  GST_LOG_OBJECT (self, "%s: %" G_GINT64_FORMAT " us to queue, %" G_GINT64_FORMAT
      " us to finish (in %s, out %s%s)", from_shared ? "shared frame" : "buffer", t1 - t0,
      g_get_monotonic_time () - t1, in_dev ? "device" : in_mapped ? "host-mapped" : "host",
      outbuf ? (out_dev ? "device" : out_mapped ? "host-mapped" : "host") : "in place", path);
  if (s.is_ok () && klass->finish)
    s = klass->finish (self, outbuf ? outbuf : inbuf);
  return s;
}

/* TRANSFORM with overlapped frames: `outbuf`'s frame queued (upload, op,
 * download; see gstcudafxoverlap.h) and left in flight; generate_output
 * gives it out later. *queued false: a frame in device memory after all,
 * for run_buffer. */
static cudafx::Status
run_overlapped (GstCudaFxFilter * self, GstBuffer * inbuf, GstBuffer * outbuf, bool *queued)
{
  GstCudaFxFilterState *st = get_state (self);
  GstCudaFxFilterClass *klass = GST_CUDA_FX_FILTER_GET_CLASS (self);
  *queued = false;
  GstCudaFxDevice::Scope scope (st->dev);
  CUDAFX_TRY (scope.status ());
  GstVideoFrame in, out;
  bool in_dev = false, out_dev = false;
  CUDAFX_TRY (gst_cuda_fx_map_frame (st->dev, &in, &st->in_info, inbuf, GST_MAP_READ, &in_dev));
  cudafx::Status s = gst_cuda_fx_map_frame (st->dev, &out, &st->out_info, outbuf, GST_MAP_WRITE,
      &out_dev);
  if (!s.is_ok ()) {
    gst_video_frame_unmap (&in);
    return s;
  }
  if (in_dev || out_dev) {
    gst_video_frame_unmap (&out);
    gst_video_frame_unmap (&in);
    return cudafx::Status::ok ();
  }
  *queued = true;
  return st->frames.queue (st->dev.stream (), &in, gst_cuda_fx_view_of_frame (&in, st->in_desc),
      &out, gst_cuda_fx_view_of_frame (&out, st->out_desc),
      [self, klass] (const cudafx::ImageView & src, const cudafx::ImageView & dst,
          cudafx::StreamHandle stream) {
        return klass->process (self, src, dst, stream);
      });
}

static GstFlowReturn
gst_cuda_fx_filter_transform (GstBaseTransform * trans, GstBuffer * inbuf,
    GstBuffer * outbuf)
{
  GstCudaFxFilter *self = GST_CUDA_FX_FILTER (trans);
  if (!ensure_op (self, GST_CUDA_FX_FILTER_MODE_TRANSFORM))
    return GST_FLOW_NOT_NEGOTIATED;
  if (get_state (self)->overlap) {
    bool queued = false;
    const cudafx::Status s = run_overlapped (self, inbuf, outbuf, &queued);
    if (queued || !s.is_ok ())
      return s.is_ok ()? GST_FLOW_OK : flow_error (self, "Processing failed", s);
  }
  const cudafx::Status s = run_buffer (self, inbuf, outbuf, false);
  return s.is_ok ()? GST_FLOW_OK : flow_error (self, "Processing failed", s);
}

static GstFlowReturn
gst_cuda_fx_filter_transform_ip (GstBaseTransform * trans, GstBuffer * buffer)
{
  GstCudaFxFilter *self = GST_CUDA_FX_FILTER (trans);
  const GstCudaFxFilterMode mode = current_mode (self);
  /* TRANSFORM passes through here only when the pads agree (nothing to do). */
  if (mode == GST_CUDA_FX_FILTER_MODE_TRANSFORM)
    return GST_FLOW_OK;
  if (!ensure_op (self, mode))
    return GST_FLOW_NOT_NEGOTIATED;
  GstCudaFxFilterState *st = get_state (self);
  if (st->ip_source) {          /* see prepare_output_buffer */
    GstBuffer *from = st->ip_source;
    st->ip_source = nullptr;
    const cudafx::Status s = run_buffer (self, from, buffer, true);
    gst_buffer_unref (from);
    return s.is_ok ()? GST_FLOW_OK : flow_error (self, "Processing failed", s);
  }
  const cudafx::Status s = run_buffer (self, buffer, nullptr,
      mode == GST_CUDA_FX_FILTER_MODE_IN_PLACE);
  return s.is_ok ()? GST_FLOW_OK : flow_error (self, "Processing failed", s);
}

/* With overlapped frames the buffer GstBaseTransform just made is left in
 * flight and the one before it is given out (after its download); a
 * buffer made at once (not overlapped) waits behind those in flight. */
static GstFlowReturn
gst_cuda_fx_filter_generate_output (GstBaseTransform * trans, GstBuffer ** outbuf)
{
  GstCudaFxFilter *self = GST_CUDA_FX_FILTER (trans);
  GstCudaFxFilterState *st = get_state (self);
  *outbuf = nullptr;
  if (st->ready) {
    *outbuf = st->ready;
    st->ready = nullptr;
    return GST_FLOW_OK;
  }
  if (st->frames.in_flight () > 0 && !st->overlap) {
    /* the mode changed under frames in flight: they go first */
    const GstFlowReturn r = drain_in_flight (self);
    if (r != GST_FLOW_OK)
      return r;
  }
  const size_t before = st->frames.in_flight ();
  GstBuffer *made = nullptr;
  const GstFlowReturn ret =
      GST_BASE_TRANSFORM_CLASS (gst_cuda_fx_filter_parent_class)->generate_output (trans,
      &made);
  if (ret != GST_FLOW_OK) {
    gst_clear_buffer (&made);
    return ret;
  }
  if (st->frames.in_flight () > before) {
    gst_clear_buffer (&made);   /* in flight holds it */
    return st->frames.in_flight () > 1 ? finish_in_flight (self, outbuf) : GST_FLOW_OK;
  }
  if (!made || st->frames.in_flight () == 0) {
    *outbuf = made;
    return GST_FLOW_OK;
  }
  st->ready = made;
  return finish_in_flight (self, outbuf);
}

/* Frames in flight leave before any serialized event (EOS, segment, caps,
 * gap...), so that events and buffers keep their order; a flush drops
 * them. */
static gboolean
gst_cuda_fx_filter_sink_event (GstBaseTransform * trans, GstEvent * event)
{
  GstCudaFxFilter *self = GST_CUDA_FX_FILTER (trans);
  if (GST_EVENT_TYPE (event) == GST_EVENT_FLUSH_STOP)
    discard_in_flight (self);
  else if (GST_EVENT_IS_SERIALIZED (event))
    (void) drain_in_flight (self);
  return GST_BASE_TRANSFORM_CLASS (gst_cuda_fx_filter_parent_class)->sink_event (trans, event);
}

/* The pool of copy_pool's buffers for the negotiated input, made and
 * activated on first use: CUDA memory of our context when the caps name
 * CUDA memory, else pinned host memory. FALSE after posting an error. */
static gboolean
ensure_copy_pool (GstCudaFxFilter * self)
{
  GstCudaFxFilterState *st = get_state (self);
  if (st->copy_pool)
    return TRUE;
  GstCaps *caps = gst_video_info_to_caps (&st->in_info);
  guint size = GST_VIDEO_INFO_SIZE (&st->in_info);
  if (st->in_cuda_memory) {
    gst_caps_set_features (caps, 0, gst_caps_features_new ("memory:CUDAMemory", nullptr));
    st->copy_pool = st->dev.new_cuda_pool (caps, &size, 0, 0);
  } else if (st->dev.pinned ()) {
    st->copy_pool = gst_cuda_fx_pinned_pool_new (st->dev.pinned (), caps, size, 0, 0);
  }
  gst_caps_unref (caps);
  if (!st->copy_pool || !gst_buffer_pool_set_active (st->copy_pool, TRUE)) {
    gst_clear_object (&st->copy_pool);
    GST_ELEMENT_ERROR (self, RESOURCE, NO_SPACE_LEFT,
        ("Cannot create a buffer pool for the output"), (nullptr));
    return FALSE;
  }
  GST_DEBUG_OBJECT (self, "shared frames go into a %s pool",
      st->in_cuda_memory ? "CUDA" : "pinned");
  return TRUE;
}

/* Whether the op may write `buf`'s pixels where they are: the buffer and
 * every memory in it writable. A source that timestamps a buffer it shares
 * (appsrc, basesrc's make_writable) hands on a new, writable GstBuffer over
 * the same memory: mapping that for writing made GStreamer copy the memory
 * into a fresh allocation every frame (a cuMemAlloc and a copy in CUDA
 * memory: ~0.1 ms of a 2160p frame, measured as the first in-place
 * element's cost in bench_chain). */
static bool
pixels_writable (GstBuffer * buf)
{
  if (!gst_buffer_is_writable (buf))
    return false;
  for (guint i = 0, n = gst_buffer_n_memory (buf); i < n; i++)
    if (!gst_memory_is_writable (gst_buffer_peek_memory (buf, i)))
      return false;
  return true;
}

/* ANALYSIS passes the incoming buffer through; a subclass that attaches
 * metas in `finish` gets it with writable metadata: the same buffer when
 * nobody else holds it, else a new GstBuffer that shares its memory (the
 * pixels are never copied). */
static GstFlowReturn
gst_cuda_fx_filter_prepare_output_buffer (GstBaseTransform * trans, GstBuffer * inbuf,
    GstBuffer ** outbuf)
{
  GstCudaFxFilter *self = GST_CUDA_FX_FILTER (trans);
  GstCudaFxFilterClass *klass = GST_CUDA_FX_FILTER_GET_CLASS (trans);
  GstCudaFxFilterState *st = get_state (self);
  const GstCudaFxFilterMode mode = current_mode (self);
  if (mode == GST_CUDA_FX_FILTER_MODE_ANALYSIS &&
      gst_base_transform_is_passthrough (trans) && klass->finish) {
    *outbuf = gst_buffer_is_writable (inbuf) ? inbuf : gst_buffer_copy (inbuf);
    return GST_FLOW_OK;
  }
  /* IN_PLACE, a frame we may not write, the CUDA backend: the result goes
   * into a buffer of ours (see copy_pool) in the memory the caps name:
   * pinned for system memory, from a CUDA pool of our context for CUDA
   * memory, also when the frame is CUDA memory of another context or
   * device (GstBaseTransform would copy the frame into newly allocated
   * memory of the frame's own kind: a cuMemAlloc a frame, or pageable
   * memory). Classes that work on host frames themselves (process_ip_host)
   * keep the default copy of system-memory frames. */
  if (mode == GST_CUDA_FX_FILTER_MODE_IN_PLACE && st->have_caps &&
      !pixels_writable (inbuf) && st->dev.cuda () && klass->process_ip &&
      (st->in_cuda_memory || (st->dev.pinned () && !klass->process_ip_host))) {
    if (!ensure_copy_pool (self))
      return GST_FLOW_ERROR;
    GstBuffer *out = nullptr;
    const gint64 t0 = g_get_monotonic_time ();
    const GstFlowReturn ret = gst_buffer_pool_acquire_buffer (st->copy_pool, &out, nullptr);
    if (ret != GST_FLOW_OK)
      return ret;
    GST_LOG_OBJECT (self, "shared frame: %" G_GINT64_FORMAT " us to acquire a buffer",
        g_get_monotonic_time () - t0);
    /* timestamps, flags and metas, as gst_buffer_make_writable would, but
     * not the video meta: the pool's buffer has its own */
    gst_buffer_copy_into (out, inbuf,
        static_cast < GstBufferCopyFlags > (GST_BUFFER_COPY_FLAGS | GST_BUFFER_COPY_TIMESTAMPS),
        0, -1);
    gst_buffer_foreach_meta (inbuf,[](GstBuffer * from, GstMeta ** meta, gpointer to)->gboolean {
          const GstMetaInfo *info = (*meta)->info;
          if (info->api != GST_VIDEO_META_API_TYPE && info->transform_func) {
            GstMetaTransformCopy copy = { FALSE, 0, static_cast < gsize > (-1) };
            info->transform_func (static_cast < GstBuffer * >(to), *meta, from,
                _gst_meta_transform_copy, &copy);
          }
          return TRUE;
        }, out);
    gst_buffer_replace (&st->ip_source, inbuf);
    *outbuf = out;
    return GST_FLOW_OK;
  }
  return GST_BASE_TRANSFORM_CLASS (gst_cuda_fx_filter_parent_class)->prepare_output_buffer
      (trans, inbuf, outbuf);
}

/* TRANSFORM's new buffer keeps the metas that stay true of it: untagged
 * ones and those whose every tag is "video" or in the class's
 * kept_meta_tags. */
static gboolean
gst_cuda_fx_filter_transform_meta (GstBaseTransform * trans, GstBuffer * outbuf,
    GstMeta * meta, GstBuffer * inbuf)
{
  GstCudaFxFilterClass *klass = GST_CUDA_FX_FILTER_GET_CLASS (trans);
  (void) outbuf;
  (void) inbuf;
  const gchar *const *tags = gst_meta_api_type_get_tags (meta->info->api);
  for (; tags && *tags; tags++) {
    if (strcmp (*tags, GST_META_TAG_VIDEO_STR) == 0)
      continue;
    bool kept = false;
    for (const gchar * const *k = klass->kept_meta_tags; k && *k && !kept; k++)
      kept = strcmp (*tags, *k) == 0;
    if (!kept)
      return FALSE;
  }
  return TRUE;
}

/* ---- properties and type ---- */

/* above the device's ids (GST_CUDA_FX_DEVICE_PROP_*) and any element's own */
#define PROP_MEMORY_MODE 0x1100
#define PROP_OVERLAP 0x1101

static void
gst_cuda_fx_filter_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCudaFxFilterState *st = get_state (GST_CUDA_FX_FILTER (object));
  if (prop_id == PROP_MEMORY_MODE) {
    GST_OBJECT_LOCK (object);
    st->memory_setting = static_cast < GstCudaFxMemoryMode > (g_value_get_enum (value));
    GST_OBJECT_UNLOCK (object);
  } else if (prop_id == PROP_OVERLAP) {
    GST_OBJECT_LOCK (object);
    st->overlap_setting = g_value_get_boolean (value);
    GST_OBJECT_UNLOCK (object);
  } else if (!st->dev.set_property (object, prop_id, value)) {
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
  }
}

static void
gst_cuda_fx_filter_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstCudaFxFilterState *st = get_state (GST_CUDA_FX_FILTER (object));
  if (prop_id == PROP_MEMORY_MODE) {
    GST_OBJECT_LOCK (object);
    g_value_set_enum (value, st->memory_setting);
    GST_OBJECT_UNLOCK (object);
  } else if (prop_id == PROP_OVERLAP) {
    GST_OBJECT_LOCK (object);
    g_value_set_boolean (value, st->overlap_setting);
    GST_OBJECT_UNLOCK (object);
  } else if (!st->dev.get_property (object, prop_id, value)) {
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
  }
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
  g_object_class_install_property (gobject_class, PROP_MEMORY_MODE,
      g_param_spec_enum ("memory-mode", "Memory mode",
          "How the CUDA backend reads and writes frames in system memory: "
          "copy (through device memory), mapped (the kernels read and write "
          "them where they are: zero-copy, for integrated GPUs such as "
          "Jetson's; memory that cannot be mapped is copied) or auto (mapped "
          "on an integrated GPU, else copy). Read at start",
          GST_TYPE_CUDA_FX_MEMORY_MODE, GST_CUDA_FX_MEMORY_AUTO,
          static_cast < GParamFlags > (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
              GST_PARAM_MUTABLE_READY)));

  g_object_class_install_property (gobject_class, PROP_OVERLAP,
      g_param_spec_boolean ("overlap", "Overlap frames",
          "With the CUDA backend and frames in system memory on both pads (a "
          "transform, not in place): upload each frame while the one before "
          "downloads (the bus is full duplex), for up to twice the frame "
          "rate, at one frame of latency (reported): a frame leaves when the "
          "next arrives, or at EOS or any other serialized event. Taken when "
          "caps are set",
          FALSE, static_cast < GParamFlags > (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
              GST_PARAM_MUTABLE_PLAYING)));

  element_class->set_context = GST_DEBUG_FUNCPTR (gst_cuda_fx_filter_set_context);

  trans_class->passthrough_on_same_caps = FALSE;
  trans_class->transform_caps = GST_DEBUG_FUNCPTR (gst_cuda_fx_filter_transform_caps);
  trans_class->fixate_caps = GST_DEBUG_FUNCPTR (gst_cuda_fx_filter_fixate_caps);
  trans_class->start = GST_DEBUG_FUNCPTR (gst_cuda_fx_filter_start);
  trans_class->stop = GST_DEBUG_FUNCPTR (gst_cuda_fx_filter_stop);
  trans_class->set_caps = GST_DEBUG_FUNCPTR (gst_cuda_fx_filter_set_caps);
  trans_class->query = GST_DEBUG_FUNCPTR (gst_cuda_fx_filter_query);
  trans_class->propose_allocation =
      GST_DEBUG_FUNCPTR (gst_cuda_fx_filter_propose_allocation);
  trans_class->decide_allocation =
      GST_DEBUG_FUNCPTR (gst_cuda_fx_filter_decide_allocation);
  trans_class->transform = GST_DEBUG_FUNCPTR (gst_cuda_fx_filter_transform);
  trans_class->transform_ip = GST_DEBUG_FUNCPTR (gst_cuda_fx_filter_transform_ip);
  trans_class->transform_ip_on_passthrough = TRUE;
  trans_class->prepare_output_buffer =
      GST_DEBUG_FUNCPTR (gst_cuda_fx_filter_prepare_output_buffer);
  trans_class->before_transform = GST_DEBUG_FUNCPTR (gst_cuda_fx_filter_before_transform);
  trans_class->transform_meta = GST_DEBUG_FUNCPTR (gst_cuda_fx_filter_transform_meta);
  trans_class->generate_output = GST_DEBUG_FUNCPTR (gst_cuda_fx_filter_generate_output);
  trans_class->sink_event = GST_DEBUG_FUNCPTR (gst_cuda_fx_filter_sink_event);

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
