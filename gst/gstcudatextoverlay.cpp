/**
 * SECTION:element-cudatextoverlay
 * @title: cudatextoverlay
 *
 * Text, times and clocks, and the overlay rectangles of upstream elements,
 * blended onto video on a CUDA device (or on the CPU: the same bytes): what
 * textoverlay, timeoverlay and clockoverlay do, without taking frames in
 * memory:CUDAMemory back to the host.
 *
 * The text is Pango markup rendered with Cairo as textoverlay renders it
 * (#GstCudaTextOverlay:font-desc, outline, shadow, wrapping, the same
 * placement properties), into a premultiplied image that is rendered and
 * uploaded again only when the string or a property changes; every frame
 * then costs one blend of the text's rectangle (cudafx/overlay_blend.hpp:
 * premultiplied "over", converted to the frame's matrix and range for YUV).
 * #GstCudaTextOverlay:time-mode adds a timestamp or time code as
 * timeoverlay does, #GstCudaTextOverlay:clock the wall clock as
 * clockoverlay does. Rectangles of a GstVideoOverlayCompositionMeta
 * (subtitles, logos) are blended first and the meta removed: the element
 * offers meta:GstVideoOverlayComposition upstream, so those elements need
 * no CPU blend either.
 *
 * A changing time or clock on plain one-line text is drawn from a glyph
 * atlas (every character rendered once, on property changes): a new string
 * costs no Pango rendering and no upload, only the glyphs' blends.
 *
 * The text_sink pad takes timed text (text/x-raw, pango-markup or utf8,
 * from subparse or any subtitle source): a text is shown on the frames its
 * time overlaps, instead of the text property; with
 * #GstCudaTextOverlay:wait-text frames wait for the text stream to reach
 * them, as textoverlay's do.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 videotestsrc ! video/x-raw,format=NV12,width=1920,height=1080 ! cudaupload ! "video/x-raw(memory:CUDAMemory)" ! cudatextoverlay text="Camera 1" time-mode=running-time valignment=top halignment=left font-desc="Sans 24" ! cudadownload ! autovideosink
 * ]| Stamps a label and the running time on frames in CUDA memory.
 */
#include "gstcudatextoverlay.h"
#include "gstcudafxcolorimetry.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cudafx/cuda_resources.hpp"
#include "cudafx/overlay_blend.hpp"
#include "cudafx/shade.hpp"
#include "gstcudafxenums.h"
#include "gstcudafxglyphatlas.h"
#include "gstcudafxtextrender.h"
#include "gstcudafxtimedtext.h"
#include "gstcudafxtimetext.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_text_overlay_debug);
#define GST_CAT_DEFAULT gst_cuda_text_overlay_debug

enum
{
  PROP_0,
  PROP_TEXT,
  PROP_FONT_DESC,
  PROP_HALIGNMENT,
  PROP_VALIGNMENT,
  PROP_XPAD,
  PROP_YPAD,
  PROP_DELTAX,
  PROP_DELTAY,
  PROP_XPOS,
  PROP_YPOS,
  PROP_LINE_ALIGNMENT,
  PROP_WRAP_MODE,
  PROP_COLOR,
  PROP_OUTLINE_COLOR,
  PROP_DRAW_OUTLINE,
  PROP_DRAW_SHADOW,
  PROP_AUTO_RESIZE,
  PROP_SILENT,
  PROP_TIME_MODE,
  PROP_CLOCK,
  PROP_TIME_FORMAT,
  PROP_TIME_FIRST,
  PROP_SHADED_BACKGROUND,
  PROP_SHADING_VALUE,
  PROP_WAIT_TEXT,
};

/* Timed text (subtitles), as textoverlay's text_sink pad takes it. */
static GstStaticPadTemplate text_sink_template = GST_STATIC_PAD_TEMPLATE ("text_sink",
    GST_PAD_SINK, GST_PAD_ALWAYS,
    GST_STATIC_CAPS ("text/x-raw, format = (string) { pango-markup, utf8 }"));

/* textoverlay's defaults. */
#define DEFAULT_FONT_DESC ""
#define DEFAULT_XPAD 25
#define DEFAULT_YPAD 25
#define DEFAULT_XPOS 0.5
#define DEFAULT_YPOS 0.5
#define DEFAULT_TIME_FORMAT "%H:%M:%S"
#define DEFAULT_SHADING_VALUE 80
/* textoverlay's shaded box: the text's rectangle and this margin. */
#define SHADING_MARGIN 6
/* textoverlay's auto-resize scales fonts as if the frame were this wide. */
#define SCALE_BASIS 640.0

struct GstCudaTextOverlaySettings
{
  std::string text;
  std::string font_desc = DEFAULT_FONT_DESC;
  GstCudaTextHAlign halign = GST_CUDA_TEXT_HALIGN_CENTER;
  GstCudaTextVAlign valign = GST_CUDA_TEXT_VALIGN_BASELINE;
  gint xpad = DEFAULT_XPAD, ypad = DEFAULT_YPAD, deltax = 0, deltay = 0;
  gdouble xpos = DEFAULT_XPOS, ypos = DEFAULT_YPOS;
  GstCudaTextLineAlign line_align = GST_CUDA_TEXT_LINE_ALIGN_CENTER;
  GstCudaTextWrapMode wrap_mode = GST_CUDA_TEXT_WRAP_WORD_CHAR;
  guint color = 0xffffffff, outline_color = 0xff000000;
  gboolean draw_outline = TRUE, draw_shadow = TRUE, auto_resize = TRUE, silent = FALSE;
  GstCudaTextTimeMode time_mode = GST_CUDA_TEXT_TIME_NONE;
  gboolean clock = FALSE, time_first = FALSE;
  gboolean shaded_background = FALSE;
  guint shading_value = DEFAULT_SHADING_VALUE;
  gboolean wait_text = TRUE;
  std::string time_format = DEFAULT_TIME_FORMAT;
  guint64 version = 0;          /* bumped on every change */
};

/* An image to blend: host pixels (kept alive until the frame's work is
 * done) and, on the CUDA backend, their copy on the device. */
struct GstCudaTextOverlayImage
{
  const uint8_t *host = nullptr;
  size_t pitch = 0;
  int width = 0, height = 0, x = 0, y = 0;
  cudafx::DeviceBuffer device;
};

struct GstCudaTextOverlayState
{
  GstCudaTextOverlaySettings settings;

  /* the text pad: its texts, and (under the object lock) its segment and
   * whether its buffers are markup */
  GstPad *text_pad = nullptr;
  GstCudaFxTimedText timed;
  GstSegment text_segment;
  bool text_is_markup = true;

  /* streaming thread */
  GstCudaFxTextRenderer renderer;
  GstVideoInfo info;
  cudafx::Backend backend = cudafx::Backend::Cpu;
  cudafx::OverlayColorimetry colour;
  /* the current frame (before_transform): the settings, taken once so that
   * a property set meanwhile applies from the next frame on, not halfway
   * through this one; its text as markup, and as plain characters when the
   * atlas can draw it (else empty) */
  GstCudaTextOverlaySettings frame;
  std::string frame_text;
  std::string frame_plain;
  /* the rendered text: from which string and settings, and where */
  std::string rendered_text;
  guint64 rendered_version = G_MAXUINT64;
  GstCudaFxTextImage text;
  GstCudaTextOverlayImage text_image;
  bool text_uploaded = false;
  /* upstream rectangles of the current frame, their pixel buffers held */
  GstVideoOverlayComposition *composition = nullptr;
  std::vector < GstBuffer * >rect_buffers;
  std::vector < GstMapInfo > rect_maps;
  /* device copies of upstream rectangles, by rectangle seqnum */
  std::map < guint, std::unique_ptr < GstCudaTextOverlayImage >> rect_cache;
  GstClockTime first_running_time = GST_CLOCK_TIME_NONE;
  /* changing strings (times, clocks): glyphs rendered once */
  GstCudaFxGlyphAtlas atlas;
  guint64 atlas_version = G_MAXUINT64;
  int atlas_frame_width = 0;
  GstCudaTextOverlayImage atlas_image;
  bool atlas_uploaded = false;
  GstCudaFxComposedText composed;
  std::vector < cudafx::OverlayPlacement > placements;
};

struct _GstCudaTextOverlay
{
  GstCudaFxFilter parent;
  GstCudaTextOverlayState *state;
};

G_DEFINE_TYPE (GstCudaTextOverlay, gst_cuda_text_overlay, GST_TYPE_CUDA_FX_FILTER);
GST_ELEMENT_REGISTER_DEFINE (cudatextoverlay, "cudatextoverlay", GST_RANK_NONE,
    GST_TYPE_CUDA_TEXT_OVERLAY);

static GstCudaTextOverlaySettings
copy_settings (GstCudaTextOverlay * self)
{
  GST_OBJECT_LOCK (self);
  GstCudaTextOverlaySettings s = self->state->settings;
  GST_OBJECT_UNLOCK (self);
  return s;
}

static void
release_rectangles (GstCudaTextOverlayState * st)
{
  for (size_t i = 0; i < st->rect_buffers.size (); i++) {
    gst_buffer_unmap (st->rect_buffers[i], &st->rect_maps[i]);
    gst_buffer_unref (st->rect_buffers[i]);
  }
  st->rect_buffers.clear ();
  st->rect_maps.clear ();
  if (st->composition)
    gst_video_overlay_composition_unref (st->composition);
  st->composition = nullptr;
}

static cudafx::Status
gst_cuda_text_overlay_setup (GstCudaFxFilter * filter, const GstCudaFxFilterConfig & config)
{
  GstCudaTextOverlayState *st = GST_CUDA_TEXT_OVERLAY (filter)->state;
  st->info = *config.in_info;
  st->backend = config.backend;
  st->colour = gst_cuda_fx_overlay_colorimetry (config.in_info);
  static const uint8_t probe[4] = { 0, 0, 0, 0 };
  CUDAFX_TRY (cudafx::check_overlay (config.in, cudafx::OverlayImage { probe, 4, 1, 1 },
          st->colour));
  /* A new size or format places and scales the text anew. */
  st->rendered_version = G_MAXUINT64;
  st->text_uploaded = false;
  st->atlas_version = G_MAXUINT64;
  st->atlas_uploaded = false;
  st->rect_cache.clear ();
  return cudafx::Status::ok ();
}

static void
gst_cuda_text_overlay_teardown (GstCudaFxFilter * filter)
{
  GstCudaTextOverlayState *st = GST_CUDA_TEXT_OVERLAY (filter)->state;
  st->text_image.device = cudafx::DeviceBuffer ();
  st->text_uploaded = false;
  st->atlas_image.device = cudafx::DeviceBuffer ();
  st->atlas_uploaded = false;
  st->rect_cache.clear ();
  release_rectangles (st);
}

/* The string this frame shows: `text` (the property's, or the text pad's),
 * with the time and the clock as the properties ask (escaped: they are not
 * markup). */
static std::string
frame_text (GstCudaTextOverlay * self, const GstCudaTextOverlaySettings & s,
    const std::string & text, GstBuffer * buffer)
{
  GstBaseTransform *trans = GST_BASE_TRANSFORM (self);
  GstCudaTextOverlayState *st = self->state;
  std::string time;
  const GstClockTime pts = GST_BUFFER_PTS (buffer);
  switch (s.time_mode) {
    case GST_CUDA_TEXT_TIME_BUFFER:
      time = gst_cuda_fx_format_stream_time (pts);
      break;
    case GST_CUDA_TEXT_TIME_STREAM:
      time = gst_cuda_fx_format_stream_time (gst_segment_to_stream_time (&trans->segment,
              GST_FORMAT_TIME, pts));
      break;
    case GST_CUDA_TEXT_TIME_RUNNING:
      time = gst_cuda_fx_format_stream_time (gst_segment_to_running_time (&trans->segment,
              GST_FORMAT_TIME, pts));
      break;
    case GST_CUDA_TEXT_TIME_ELAPSED_RUNNING:{
      const GstClockTime rt = gst_segment_to_running_time (&trans->segment, GST_FORMAT_TIME, pts);
      if (GST_CLOCK_TIME_IS_VALID (rt) && !GST_CLOCK_TIME_IS_VALID (st->first_running_time))
        st->first_running_time = rt;
      if (GST_CLOCK_TIME_IS_VALID (rt) && rt >= st->first_running_time)
        time = gst_cuda_fx_format_stream_time (rt - st->first_running_time);
      break;
    }
    case GST_CUDA_TEXT_TIME_CODE:
      time = gst_cuda_fx_format_time_code (buffer);
      break;
    default:
      break;
  }
  std::string clock;
  if (s.clock) {
    GDateTime *now = g_date_time_new_now_local ();
    clock = gst_cuda_fx_format_clock (now, s.time_format.c_str ());
    g_date_time_unref (now);
  }
  auto escape =[](const std::string & v) {
    gchar *e = g_markup_escape_text (v.c_str (), -1);
    std::string out = e;
    g_free (e);
    return out;
  };
  /* The atlas draws plain single-line text: the text property without
   * markup characters or line breaks, and a time or clock that changes. */
  const bool changing = s.time_mode != GST_CUDA_TEXT_TIME_NONE || s.clock;
  const bool plain = text.find_first_of ("<&\n") == std::string::npos;
  const std::string joined = gst_cuda_fx_join_text (text, time, clock, s.time_first);
  st->frame_plain = changing && plain &&
      g_utf8_validate (joined.c_str (), -1, nullptr) ? joined : std::string ();
  return gst_cuda_fx_join_text (text, escape (time), escape (clock), s.time_first);
}

/* Per buffer, before the base class maps it: the string to show and the
 * upstream rectangles (their pixels at their render size, premultiplied,
 * global alpha applied). */
static gboolean
gst_cuda_text_overlay_prepare (GstCudaTextOverlay * self, GstBuffer * buffer)
{
  GstCudaTextOverlayState *st = self->state;
  st->frame = copy_settings (self);
  const GstCudaTextOverlaySettings & s = st->frame;
  release_rectangles (st);
  if (s.silent)
    return TRUE;
  std::string text = s.text;
  if (st->text_pad && gst_pad_is_linked (st->text_pad)) {
    /* The text pad's text for this frame's running time (waiting for the
     * text stream with wait-text, as textoverlay). */
    GstBaseTransform *trans = GST_BASE_TRANSFORM (self);
    const GstClockTime pts = GST_BUFFER_PTS (buffer);
    const GstClockTime dur = GST_BUFFER_DURATION (buffer);
    const GstClockTime start = gst_segment_to_running_time (&trans->segment, GST_FORMAT_TIME, pts);
    const GstClockTime end = GST_CLOCK_TIME_IS_VALID (pts) && GST_CLOCK_TIME_IS_VALID (dur) ?
        gst_segment_to_running_time (&trans->segment, GST_FORMAT_TIME, pts + dur) :
        GST_CLOCK_TIME_NONE;
    text = st->timed.take (start, end, s.wait_text);
  }
  st->frame_text = frame_text (self, s, text, buffer);
  GstVideoOverlayCompositionMeta *meta = gst_buffer_get_video_overlay_composition_meta (buffer);
  if (!meta || !meta->overlay)
    return TRUE;
  st->composition = gst_video_overlay_composition_ref (meta->overlay);
  const guint n = gst_video_overlay_composition_n_rectangles (st->composition);
  for (guint i = 0; i < n; i++) {
    GstVideoOverlayRectangle *rect = gst_video_overlay_composition_get_rectangle (st->composition, i);
    GstBuffer *pixels = gst_video_overlay_rectangle_get_pixels_argb (rect,
        GST_VIDEO_OVERLAY_FORMAT_FLAG_PREMULTIPLIED_ALPHA);
    GstMapInfo map;
    if (!pixels || !gst_buffer_map (pixels, &map, GST_MAP_READ)) {
      GST_ELEMENT_WARNING (self, STREAM, DECODE, ("An overlay rectangle has no pixels"),
          ("rectangle %u of %u skipped", i, n));
      continue;
    }
    st->rect_buffers.push_back (gst_buffer_ref (pixels));
    st->rect_maps.push_back (map);
  }
  return TRUE;
}

static void
gst_cuda_text_overlay_before_transform (GstBaseTransform * trans, GstBuffer * buffer)
{
  GST_BASE_TRANSFORM_CLASS (gst_cuda_text_overlay_parent_class)->before_transform (trans, buffer);
  gst_cuda_text_overlay_prepare (GST_CUDA_TEXT_OVERLAY (trans), buffer);
}

/* Where textoverlay puts a rendered text on a frame of w x h. */
static void
place_text (const GstCudaTextOverlaySettings & s, const GstCudaFxTextImage & img, int w, int h,
    int *x, int *y)
{
  const int lw = img.logical_width, lh = img.logical_height;
  int px = img.ink_x - img.logical_x;
  switch (s.halign) {
    case GST_CUDA_TEXT_HALIGN_LEFT:
      px = std::max (0, px + s.xpad);
      break;
    case GST_CUDA_TEXT_HALIGN_RIGHT:
      px = std::min (w - img.width, px + w - lw - s.xpad);
      break;
    case GST_CUDA_TEXT_HALIGN_POSITION:
      px = std::max (0, std::min (px + (int) (w * s.xpos) - lw / 2, w - img.width));
      break;
    case GST_CUDA_TEXT_HALIGN_ABSOLUTE:
      px = (int) ((w - img.width) * s.xpos);
      break;
    case GST_CUDA_TEXT_HALIGN_CENTER:
    default:
      px += (w - lw) / 2;
      break;
  }
  int py = img.ink_y - img.logical_y;
  switch (s.valign) {
    case GST_CUDA_TEXT_VALIGN_BOTTOM:
      py = std::min (h - img.height, py + h - lh - s.ypad);
      break;
    case GST_CUDA_TEXT_VALIGN_TOP:
      py = std::max (0, py + s.ypad);
      break;
    case GST_CUDA_TEXT_VALIGN_POSITION:
      py = std::max (0, std::min ((int) (h * s.ypos) - lh / 2, h - img.height));
      break;
    case GST_CUDA_TEXT_VALIGN_ABSOLUTE:
      py = (int) ((h - img.height) * s.ypos);
      break;
    case GST_CUDA_TEXT_VALIGN_CENTER:
      py = (h - lh) / 2;
      break;
    case GST_CUDA_TEXT_VALIGN_BASELINE:
    default:
      py += h - lh - s.ypad;
      break;
  }
  *x = px + s.deltax;
  *y = py + s.deltay;
}

/* The renderer's style for the settings on a frame `w` pixels wide. */
static GstCudaFxTextStyle
text_style (const GstCudaTextOverlaySettings & s, int w)
{
  GstCudaFxTextStyle style;
  style.font_desc = s.font_desc;
  style.color = s.color;
  style.outline_color = s.outline_color;
  style.draw_outline = s.draw_outline;
  style.draw_shadow = s.draw_shadow;
  style.line_alignment = s.line_align == GST_CUDA_TEXT_LINE_ALIGN_LEFT ? PANGO_ALIGN_LEFT :
      s.line_align == GST_CUDA_TEXT_LINE_ALIGN_RIGHT ? PANGO_ALIGN_RIGHT : PANGO_ALIGN_CENTER;
  style.wrap = s.wrap_mode != GST_CUDA_TEXT_WRAP_NONE;
  style.wrap_mode = s.wrap_mode == GST_CUDA_TEXT_WRAP_WORD ? PANGO_WRAP_WORD :
      s.wrap_mode == GST_CUDA_TEXT_WRAP_CHAR ? PANGO_WRAP_CHAR : PANGO_WRAP_WORD_CHAR;
  const bool padded_x = s.halign == GST_CUDA_TEXT_HALIGN_LEFT ||
      s.halign == GST_CUDA_TEXT_HALIGN_RIGHT;
  style.max_width = std::max (1, w - (padded_x ? s.xpad : 0));
  style.scale = s.auto_resize ? w / SCALE_BASIS : 1.0;
  return style;
}

/* Renders the frame's string when it or a property changed since the last
 * rendering; the device copy is made again then. */
static cudafx::Status
update_text (GstCudaTextOverlay * self)
{
  GstCudaTextOverlayState *st = self->state;
  const GstCudaTextOverlaySettings & s = st->frame;
  if (st->rendered_version == s.version && st->rendered_text == st->frame_text)
    return cudafx::Status::ok ();
  const int w = GST_VIDEO_INFO_WIDTH (&st->info), h = GST_VIDEO_INFO_HEIGHT (&st->info);
  const GstCudaFxTextStyle style = text_style (s, w);
  std::string error;
  if (!st->renderer.render (st->frame_text.c_str (), style, &st->text, &error))
    return cudafx::Status::error (cudafx::StatusCode::Internal, "text rendering: " + error);
  st->rendered_text = st->frame_text;
  st->rendered_version = s.version;
  GstCudaTextOverlayImage & img = st->text_image;
  img.host = st->text.pixels.data ();
  img.pitch = st->text.pitch;
  img.width = st->text.width;
  img.height = st->text.height;
  place_text (s, st->text, w, h, &img.x, &img.y);
  st->text_uploaded = false;
  GST_LOG_OBJECT (self, "rendered '%s': %dx%d at (%d, %d)", st->frame_text.c_str (),
      img.width, img.height, img.x, img.y);
  return cudafx::Status::ok ();
}

/* The pixels of `img` for `backend`: the host's, or on the CUDA backend its
 * device copy, made first unless `uploaded` says it is there. The host
 * pixels stay alive until the frame's work is done (the base class
 * synchronises before the buffer leaves). */
static cudafx::Status
pixels_for (cudafx::Backend backend, GstCudaTextOverlayImage & img, bool *uploaded,
    cudafx::StreamHandle stream, const uint8_t ** out)
{
  *out = img.host;
  if (backend != cudafx::Backend::Cuda)
    return cudafx::Status::ok ();
  if (!*uploaded) {
    const size_t bytes = img.pitch * static_cast < size_t > (img.height);
    if (img.device.size () < bytes)
      CUDAFX_TRY (img.device.allocate (bytes));
    CUDAFX_TRY (cudafx::copy_bytes_async (img.device.get (), img.host, bytes, stream));
    *uploaded = true;
  }
  *out = img.device.bytes ();
  return cudafx::Status::ok ();
}

/* Blends `img` at its place. */
static cudafx::Status
blend_image (GstCudaTextOverlayState * st, cudafx::Backend backend, GstCudaTextOverlayImage & img,
    bool *uploaded, const cudafx::ImageView & frame, cudafx::StreamHandle stream)
{
  if (img.width <= 0 || img.height <= 0)
    return cudafx::Status::ok ();
  cudafx::OverlayImage ov { nullptr, img.pitch, img.width, img.height };
  CUDAFX_TRY (pixels_for (backend, img, uploaded, stream, &ov.data));
  return cudafx::blend_overlay (backend, stream, frame, ov, img.x, img.y, st->colour);
}

/* The characters a changing time or clock needs, besides the text's. */
#define ATLAS_CHARSET "0123456789:;.-/ "

/* Lays the frame's plain string out from the glyph atlas (building the
 * atlas on a property change, a new frame width or a character it lacks):
 * no Pango, no upload. *used false: the string would wrap, the caller
 * renders it whole. Else its image's place and size on the frame. */
static cudafx::Status
layout_from_atlas (GstCudaTextOverlay * self, bool *used, int *x, int *y, int *w_out, int *h_out)
{
  GstCudaTextOverlayState *st = self->state;
  *used = false;
  const GstCudaTextOverlaySettings & s = st->frame;
  const int w = GST_VIDEO_INFO_WIDTH (&st->info), h = GST_VIDEO_INFO_HEIGHT (&st->info);
  const GstCudaFxTextStyle style = text_style (s, w);
  if (st->atlas_version != s.version || st->atlas_frame_width != w ||
      !st->atlas.covers (st->frame_plain)) {
    std::string error;
    if (!st->atlas.build (st->renderer, style, ATLAS_CHARSET + st->frame_plain, &error))
      return cudafx::Status::error (cudafx::StatusCode::Internal, "glyph atlas: " + error);
    st->atlas_version = s.version;
    st->atlas_frame_width = w;
    st->atlas_uploaded = false;
    GstCudaTextOverlayImage & img = st->atlas_image;
    img.host = st->atlas.pixels ().data ();
    img.pitch = st->atlas.pitch ();
    img.width = st->atlas.width ();
    img.height = st->atlas.height ();
    GST_DEBUG_OBJECT (self, "glyph atlas %dx%d", img.width, img.height);
  }
  st->atlas.compose (st->frame_plain, &st->composed);
  const GstCudaFxTextImage & m = st->composed.metrics;
  if (m.logical_width > style.max_width)
    return cudafx::Status::ok ();       /* would wrap */
  *used = true;
  *w_out = m.width;
  *h_out = m.height;
  if (!st->composed.glyphs.empty ())
    place_text (s, m, w, h, x, y);
  return cudafx::Status::ok ();
}

/* Blends the composed glyphs with their image's top-left at (x, y): one
 * call (one launch on the GPU) for up to kMaxOverlayPlacements glyphs, in
 * order, so overlapping neighbours blend as sequential calls would. */
static cudafx::Status
draw_from_atlas (GstCudaTextOverlay * self, cudafx::Backend backend,
    const cudafx::ImageView & frame, cudafx::StreamHandle stream, int x, int y)
{
  GstCudaTextOverlayState *st = self->state;
  if (st->composed.glyphs.empty ())
    return cudafx::Status::ok ();
  GstCudaTextOverlayImage & atlas = st->atlas_image;
  const uint8_t *base = nullptr;
  CUDAFX_TRY (pixels_for (backend, atlas, &st->atlas_uploaded, stream, &base));
  std::vector < cudafx::OverlayPlacement > & list = st->placements;
  list.clear ();
  for (const GstCudaFxGlyphPlacement & g : st->composed.glyphs)
    list.push_back ({g.src_x, g.src_y, g.width, g.height, x + g.x, y + g.y});
  const cudafx::OverlayImage ov { base, atlas.pitch, atlas.width, atlas.height };
  for (size_t i = 0; i < list.size (); i += cudafx::kMaxOverlayPlacements) {
    const int n = (int) std::min < size_t > (cudafx::kMaxOverlayPlacements, list.size () - i);
    CUDAFX_TRY (cudafx::blend_overlay_list (backend, stream, frame, ov, &list[i], n,
            st->colour));
  }
  return cudafx::Status::ok ();
}

static cudafx::Status
draw (GstCudaTextOverlay * self, cudafx::Backend backend, const cudafx::ImageView & frame,
    cudafx::StreamHandle stream)
{
  GstCudaTextOverlayState *st = self->state;
  if (st->frame.silent)
    return cudafx::Status::ok ();
  /* textoverlay's order: the shaded box, the upstream rectangles, the text
   * on top. The text is laid out first (rendering it, or composing it from
   * the atlas), for the box's place. */
  bool from_atlas = false;
  int tx = 0, ty = 0, tw = 0, th = 0;
  if (!st->frame_plain.empty ())
    CUDAFX_TRY (layout_from_atlas (self, &from_atlas, &tx, &ty, &tw, &th));
  if (!from_atlas) {
    CUDAFX_TRY (update_text (self));
    tx = st->text_image.x;
    ty = st->text_image.y;
    tw = st->text_image.width;
    th = st->text_image.height;
  }
  const GstCudaTextOverlaySettings & s = st->frame;
  if (s.shaded_background && tw > 0 && th > 0)
    CUDAFX_TRY (cudafx::shade_rect (backend, stream, frame, tx - SHADING_MARGIN,
            ty - SHADING_MARGIN, tw + 2 * SHADING_MARGIN, th + 2 * SHADING_MARGIN,
            (int) s.shading_value));
  if (st->composition) {
    std::map < guint, std::unique_ptr < GstCudaTextOverlayImage >> used;
    size_t m = 0;
    const guint n = gst_video_overlay_composition_n_rectangles (st->composition);
    for (guint i = 0; i < n && m < st->rect_maps.size (); i++) {
      GstVideoOverlayRectangle *rect =
          gst_video_overlay_composition_get_rectangle (st->composition, i);
      gint x, y;
      guint w, h;
      gst_video_overlay_rectangle_get_render_rectangle (rect, &x, &y, &w, &h);
      const GstVideoMeta *vmeta = gst_buffer_get_video_meta (st->rect_buffers[m]);
      const guint seqnum = gst_video_overlay_rectangle_get_seqnum (rect);
      auto cached = st->rect_cache.find (seqnum);
      std::unique_ptr < GstCudaTextOverlayImage > img = cached != st->rect_cache.end ()?
          std::move (cached->second) : std::make_unique < GstCudaTextOverlayImage > ();
      bool uploaded = cached != st->rect_cache.end () && backend == cudafx::Backend::Cuda;
      img->host = st->rect_maps[m].data;
      img->pitch = vmeta ? (size_t) vmeta->stride[0] : (size_t) w * 4;
      img->width = vmeta ? (int) vmeta->width : (int) w;
      img->height = vmeta ? (int) vmeta->height : (int) h;
      img->x = x;
      img->y = y;
      m++;
      CUDAFX_TRY (blend_image (st, backend, *img, &uploaded, frame, stream));
      used[seqnum] = std::move (img);
    }
    st->rect_cache = std::move (used);
  }
  if (from_atlas)
    return draw_from_atlas (self, backend, frame, stream, tx, ty);
  return blend_image (st, backend, st->text_image, &st->text_uploaded, frame, stream);
}

static cudafx::Status
gst_cuda_text_overlay_process_ip (GstCudaFxFilter * filter, const cudafx::ImageView & frame,
    cudafx::StreamHandle stream)
{
  GstCudaTextOverlay *self = GST_CUDA_TEXT_OVERLAY (filter);
  return draw (self, self->state->backend, frame, stream);
}

/* A frame in system memory with the CUDA backend: the text covers a small
 * part of it, and blending that part on the CPU costs less than taking the
 * whole frame to the device and back (2160p RGBA: ~1.3 ms of copies at the
 * pinned rate, against a few hundred microseconds to blend two lines of
 * text on one core). Frames in CUDA memory are blended on the GPU. */
static cudafx::Status
gst_cuda_text_overlay_process_ip_host (GstCudaFxFilter * filter, const cudafx::ImageView & frame)
{
  return draw (GST_CUDA_TEXT_OVERLAY (filter), cudafx::Backend::Cpu, frame, nullptr);
}

static cudafx::Status
gst_cuda_text_overlay_finish (GstCudaFxFilter * filter, GstBuffer * buffer)
{
  GstCudaTextOverlayState *st = GST_CUDA_TEXT_OVERLAY (filter)->state;
  /* The rectangles are in the pixels now: the meta would draw them twice. */
  if (st->composition) {
    GstVideoOverlayCompositionMeta *meta;
    while ((meta = gst_buffer_get_video_overlay_composition_meta (buffer)))
      gst_buffer_remove_video_overlay_composition_meta (buffer, meta);
  }
  release_rectangles (st);
  return cudafx::Status::ok ();
}

static gboolean
gst_cuda_text_overlay_propose_allocation (GstBaseTransform * trans, GstQuery * decide_query,
    GstQuery * query)
{
  if (!GST_BASE_TRANSFORM_CLASS (gst_cuda_text_overlay_parent_class)->propose_allocation (trans,
          decide_query, query))
    return FALSE;
  /* Upstream may attach its rectangles instead of blending them itself. */
  gst_query_add_allocation_meta (query, GST_VIDEO_OVERLAY_COMPOSITION_META_API_TYPE, nullptr);
  return TRUE;
}

static gboolean
gst_cuda_text_overlay_start (GstBaseTransform * trans)
{
  GST_CUDA_TEXT_OVERLAY (trans)->state->first_running_time = GST_CLOCK_TIME_NONE;
  return GST_BASE_TRANSFORM_CLASS (gst_cuda_text_overlay_parent_class)->start (trans);
}

/* ---- the text pad ---- */

static GstFlowReturn
gst_cuda_text_overlay_text_chain (GstPad * pad, GstObject * parent, GstBuffer * buffer)
{
  GstCudaTextOverlay *self = GST_CUDA_TEXT_OVERLAY (parent);
  GstCudaTextOverlayState *st = self->state;
  GST_OBJECT_LOCK (self);
  const GstSegment seg = st->text_segment;
  const bool markup = st->text_is_markup;
  GST_OBJECT_UNLOCK (self);
  GstClockTime start = GST_CLOCK_TIME_NONE, end = GST_CLOCK_TIME_NONE;
  const GstClockTime pts = GST_BUFFER_PTS (buffer), dur = GST_BUFFER_DURATION (buffer);
  if (GST_CLOCK_TIME_IS_VALID (pts)) {
    guint64 cstart = 0, cstop = 0;
    const GstClockTime stop = GST_CLOCK_TIME_IS_VALID (dur) ? pts + dur : GST_CLOCK_TIME_NONE;
    if (!gst_segment_clip (&seg, GST_FORMAT_TIME, pts, stop, &cstart, &cstop)) {
      gst_buffer_unref (buffer);      /* outside the segment: never shown */
      return GST_FLOW_OK;
    }
    start = gst_segment_to_running_time (&seg, GST_FORMAT_TIME, cstart);
    if (GST_CLOCK_TIME_IS_VALID (stop))
      end = gst_segment_to_running_time (&seg, GST_FORMAT_TIME, cstop);
  }
  GstMapInfo map;
  std::string text;
  if (gst_buffer_map (buffer, &map, GST_MAP_READ)) {
    text.assign (reinterpret_cast < const char *>(map.data), map.size);
    gst_buffer_unmap (buffer, &map);
  }
  gst_buffer_unref (buffer);
  /* Up to the first NUL; trailing line breaks do not make an empty line. */
  text = text.c_str ();
  while (!text.empty () && (text.back () == '\n' || text.back () == '\r'))
    text.pop_back ();
  if (!markup) {
    gchar *valid = g_utf8_make_valid (text.c_str (), -1);
    gchar *escaped = g_markup_escape_text (valid, -1);
    text = escaped;
    g_free (escaped);
    g_free (valid);
  }
  GST_LOG_OBJECT (pad, "text [%" GST_TIME_FORMAT ", %" GST_TIME_FORMAT "): %s",
      GST_TIME_ARGS (start), GST_TIME_ARGS (end), text.c_str ());
  return st->timed.push (start, end, text) ? GST_FLOW_OK : GST_FLOW_FLUSHING;
}

static gboolean
gst_cuda_text_overlay_text_event (GstPad *, GstObject * parent, GstEvent * event)
{
  GstCudaTextOverlay *self = GST_CUDA_TEXT_OVERLAY (parent);
  GstCudaTextOverlayState *st = self->state;
  gboolean ret = TRUE;
  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_CAPS:{
      GstCaps *caps;
      gst_event_parse_caps (event, &caps);
      const gchar *format = gst_structure_get_string (gst_caps_get_structure (caps, 0), "format");
      GST_OBJECT_LOCK (self);
      st->text_is_markup = !format || g_strcmp0 (format, "pango-markup") == 0;
      GST_OBJECT_UNLOCK (self);
      break;
    }
    case GST_EVENT_SEGMENT:{
      const GstSegment *seg;
      gst_event_parse_segment (event, &seg);
      if (seg->format == GST_FORMAT_TIME) {
        GST_OBJECT_LOCK (self);
        gst_segment_copy_into (seg, &st->text_segment);
        GST_OBJECT_UNLOCK (self);
      } else {
        GST_ELEMENT_WARNING (self, STREAM, FORMAT, ("The text stream's segment is not in time"),
            ("format %s", gst_format_get_name (seg->format)));
      }
      break;
    }
    case GST_EVENT_GAP:{
      /* No text for a while: frames there have none and need not wait. */
      GstClockTime ts, dur;
      gst_event_parse_gap (event, &ts, &dur);
      GST_OBJECT_LOCK (self);
      const GstSegment seg = st->text_segment;
      GST_OBJECT_UNLOCK (self);
      const GstClockTime start = gst_segment_to_running_time (&seg, GST_FORMAT_TIME, ts);
      const GstClockTime end = GST_CLOCK_TIME_IS_VALID (dur) ?
          gst_segment_to_running_time (&seg, GST_FORMAT_TIME, ts + dur) : start + 1;
      if (GST_CLOCK_TIME_IS_VALID (start))
        st->timed.push (start, end, std::string ());
      break;
    }
    case GST_EVENT_EOS:
      st->timed.end_of_stream ();
      break;
    case GST_EVENT_FLUSH_START:
      st->timed.flush ();
      break;
    case GST_EVENT_FLUSH_STOP:
      st->timed.resume ();
      GST_OBJECT_LOCK (self);
      gst_segment_init (&st->text_segment, GST_FORMAT_TIME);
      GST_OBJECT_UNLOCK (self);
      break;
    default:
      break;
  }
  /* The text stream ends here: none of its events go downstream. */
  gst_event_unref (event);
  return ret;
}

/* The video pad's flushes also end a wait for text (a seek). */
static gboolean
gst_cuda_text_overlay_sink_event (GstBaseTransform * trans, GstEvent * event)
{
  GstCudaTextOverlayState *st = GST_CUDA_TEXT_OVERLAY (trans)->state;
  const GstEventType type = GST_EVENT_TYPE (event);
  if (type == GST_EVENT_FLUSH_START)
    st->timed.flush ();
  const gboolean ret =
      GST_BASE_TRANSFORM_CLASS (gst_cuda_text_overlay_parent_class)->sink_event (trans, event);
  if (type == GST_EVENT_FLUSH_STOP)
    st->timed.resume ();
  return ret;
}

/* A video thread waiting for text must wake before the pads deactivate. */
static GstStateChangeReturn
gst_cuda_text_overlay_change_state (GstElement * element, GstStateChange transition)
{
  GstCudaTextOverlayState *st = GST_CUDA_TEXT_OVERLAY (element)->state;
  if (transition == GST_STATE_CHANGE_PAUSED_TO_READY)
    st->timed.flush ();
  if (transition == GST_STATE_CHANGE_READY_TO_PAUSED) {
    st->timed.resume ();
    GST_OBJECT_LOCK (element);
    gst_segment_init (&st->text_segment, GST_FORMAT_TIME);
    GST_OBJECT_UNLOCK (element);
  }
  return GST_ELEMENT_CLASS (gst_cuda_text_overlay_parent_class)->change_state (element, transition);
}

/* ---- properties ---- */

static void
gst_cuda_text_overlay_set_property (GObject * object, guint prop_id, const GValue * value,
    GParamSpec * pspec)
{
  GstCudaTextOverlay *self = GST_CUDA_TEXT_OVERLAY (object);
  GstCudaTextOverlaySettings & s = self->state->settings;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_TEXT:
      s.text = g_value_get_string (value) ? g_value_get_string (value) : "";
      break;
    case PROP_FONT_DESC:
      s.font_desc = g_value_get_string (value) ? g_value_get_string (value) : "";
      break;
    case PROP_HALIGNMENT:
      s.halign = (GstCudaTextHAlign) g_value_get_enum (value);
      break;
    case PROP_VALIGNMENT:
      s.valign = (GstCudaTextVAlign) g_value_get_enum (value);
      break;
    case PROP_XPAD:
      s.xpad = g_value_get_int (value);
      break;
    case PROP_YPAD:
      s.ypad = g_value_get_int (value);
      break;
    case PROP_DELTAX:
      s.deltax = g_value_get_int (value);
      break;
    case PROP_DELTAY:
      s.deltay = g_value_get_int (value);
      break;
    case PROP_XPOS:
      s.xpos = g_value_get_double (value);
      break;
    case PROP_YPOS:
      s.ypos = g_value_get_double (value);
      break;
    case PROP_LINE_ALIGNMENT:
      s.line_align = (GstCudaTextLineAlign) g_value_get_enum (value);
      break;
    case PROP_WRAP_MODE:
      s.wrap_mode = (GstCudaTextWrapMode) g_value_get_enum (value);
      break;
    case PROP_COLOR:
      s.color = g_value_get_uint (value);
      break;
    case PROP_OUTLINE_COLOR:
      s.outline_color = g_value_get_uint (value);
      break;
    case PROP_DRAW_OUTLINE:
      s.draw_outline = g_value_get_boolean (value);
      break;
    case PROP_DRAW_SHADOW:
      s.draw_shadow = g_value_get_boolean (value);
      break;
    case PROP_AUTO_RESIZE:
      s.auto_resize = g_value_get_boolean (value);
      break;
    case PROP_SILENT:
      s.silent = g_value_get_boolean (value);
      break;
    case PROP_TIME_MODE:
      s.time_mode = (GstCudaTextTimeMode) g_value_get_enum (value);
      break;
    case PROP_CLOCK:
      s.clock = g_value_get_boolean (value);
      break;
    case PROP_TIME_FORMAT:
      s.time_format = g_value_get_string (value) ? g_value_get_string (value) : "";
      break;
    case PROP_TIME_FIRST:
      s.time_first = g_value_get_boolean (value);
      break;
    case PROP_SHADED_BACKGROUND:
      s.shaded_background = g_value_get_boolean (value);
      break;
    case PROP_SHADING_VALUE:
      s.shading_value = g_value_get_uint (value);
      break;
    case PROP_WAIT_TEXT:
      s.wait_text = g_value_get_boolean (value);
      break;
    default:
      GST_OBJECT_UNLOCK (self);
      G_OBJECT_CLASS (gst_cuda_text_overlay_parent_class)->set_property (object, prop_id, value,
          pspec);
      return;
  }
  s.version++;
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cuda_text_overlay_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstCudaTextOverlay *self = GST_CUDA_TEXT_OVERLAY (object);
  const GstCudaTextOverlaySettings & s = self->state->settings;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_TEXT:
      g_value_set_string (value, s.text.c_str ());
      break;
    case PROP_FONT_DESC:
      g_value_set_string (value, s.font_desc.c_str ());
      break;
    case PROP_HALIGNMENT:
      g_value_set_enum (value, s.halign);
      break;
    case PROP_VALIGNMENT:
      g_value_set_enum (value, s.valign);
      break;
    case PROP_XPAD:
      g_value_set_int (value, s.xpad);
      break;
    case PROP_YPAD:
      g_value_set_int (value, s.ypad);
      break;
    case PROP_DELTAX:
      g_value_set_int (value, s.deltax);
      break;
    case PROP_DELTAY:
      g_value_set_int (value, s.deltay);
      break;
    case PROP_XPOS:
      g_value_set_double (value, s.xpos);
      break;
    case PROP_YPOS:
      g_value_set_double (value, s.ypos);
      break;
    case PROP_LINE_ALIGNMENT:
      g_value_set_enum (value, s.line_align);
      break;
    case PROP_WRAP_MODE:
      g_value_set_enum (value, s.wrap_mode);
      break;
    case PROP_COLOR:
      g_value_set_uint (value, s.color);
      break;
    case PROP_OUTLINE_COLOR:
      g_value_set_uint (value, s.outline_color);
      break;
    case PROP_DRAW_OUTLINE:
      g_value_set_boolean (value, s.draw_outline);
      break;
    case PROP_DRAW_SHADOW:
      g_value_set_boolean (value, s.draw_shadow);
      break;
    case PROP_AUTO_RESIZE:
      g_value_set_boolean (value, s.auto_resize);
      break;
    case PROP_SILENT:
      g_value_set_boolean (value, s.silent);
      break;
    case PROP_TIME_MODE:
      g_value_set_enum (value, s.time_mode);
      break;
    case PROP_CLOCK:
      g_value_set_boolean (value, s.clock);
      break;
    case PROP_TIME_FORMAT:
      g_value_set_string (value, s.time_format.c_str ());
      break;
    case PROP_TIME_FIRST:
      g_value_set_boolean (value, s.time_first);
      break;
    case PROP_SHADED_BACKGROUND:
      g_value_set_boolean (value, s.shaded_background);
      break;
    case PROP_SHADING_VALUE:
      g_value_set_uint (value, s.shading_value);
      break;
    case PROP_WAIT_TEXT:
      g_value_set_boolean (value, s.wait_text);
      break;
    default:
      GST_OBJECT_UNLOCK (self);
      G_OBJECT_CLASS (gst_cuda_text_overlay_parent_class)->get_property (object, prop_id, value,
          pspec);
      return;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cuda_text_overlay_finalize (GObject * object)
{
  GstCudaTextOverlay *self = GST_CUDA_TEXT_OVERLAY (object);
  release_rectangles (self->state);
  delete self->state;
  self->state = nullptr;
  G_OBJECT_CLASS (gst_cuda_text_overlay_parent_class)->finalize (object);
}

static void
gst_cuda_text_overlay_class_init (GstCudaTextOverlayClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstBaseTransformClass *trans_class = GST_BASE_TRANSFORM_CLASS (klass);
  GstCudaFxFilterClass *filter_class = GST_CUDA_FX_FILTER_CLASS (klass);
  const GParamFlags flags = static_cast < GParamFlags > (G_PARAM_READWRITE |
      G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING | GST_PARAM_CONTROLLABLE);

  gobject_class->set_property = gst_cuda_text_overlay_set_property;
  gobject_class->get_property = gst_cuda_text_overlay_get_property;
  gobject_class->finalize = gst_cuda_text_overlay_finalize;

  g_object_class_install_property (gobject_class, PROP_TEXT,
      g_param_spec_string ("text", "Text", "Text to show (Pango markup; text that is not valid "
          "markup is shown as written)", "", flags));
  g_object_class_install_property (gobject_class, PROP_FONT_DESC,
      g_param_spec_string ("font-desc", "Font description", "Pango font description, such as "
          "\"Sans Italic 24\" (empty: Sans 12)", DEFAULT_FONT_DESC, flags));
  g_object_class_install_property (gobject_class, PROP_HALIGNMENT,
      g_param_spec_enum ("halignment", "Horizontal alignment", "Horizontal placement of the "
          "text", GST_TYPE_CUDA_TEXT_HALIGN, GST_CUDA_TEXT_HALIGN_CENTER, flags));
  g_object_class_install_property (gobject_class, PROP_VALIGNMENT,
      g_param_spec_enum ("valignment", "Vertical alignment", "Vertical placement of the text",
          GST_TYPE_CUDA_TEXT_VALIGN, GST_CUDA_TEXT_VALIGN_BASELINE, flags));
  g_object_class_install_property (gobject_class, PROP_XPAD,
      g_param_spec_int ("xpad", "Horizontal padding", "Pixels from the left or right edge",
          0, G_MAXINT, DEFAULT_XPAD, flags));
  g_object_class_install_property (gobject_class, PROP_YPAD,
      g_param_spec_int ("ypad", "Vertical padding", "Pixels from the top or bottom edge",
          0, G_MAXINT, DEFAULT_YPAD, flags));
  g_object_class_install_property (gobject_class, PROP_DELTAX,
      g_param_spec_int ("deltax", "X shift", "Shift of the text to the right, in pixels",
          G_MININT, G_MAXINT, 0, flags));
  g_object_class_install_property (gobject_class, PROP_DELTAY,
      g_param_spec_int ("deltay", "Y shift", "Shift of the text down, in pixels",
          G_MININT, G_MAXINT, 0, flags));
  g_object_class_install_property (gobject_class, PROP_XPOS,
      g_param_spec_double ("xpos", "X position", "Horizontal position (0 left .. 1 right) with "
          "halignment=position or absolute", 0.0, 1.0, DEFAULT_XPOS, flags));
  g_object_class_install_property (gobject_class, PROP_YPOS,
      g_param_spec_double ("ypos", "Y position", "Vertical position (0 top .. 1 bottom) with "
          "valignment=position or absolute", 0.0, 1.0, DEFAULT_YPOS, flags));
  g_object_class_install_property (gobject_class, PROP_LINE_ALIGNMENT,
      g_param_spec_enum ("line-alignment", "Line alignment", "Alignment of the lines of the "
          "text to each other", GST_TYPE_CUDA_TEXT_LINE_ALIGN, GST_CUDA_TEXT_LINE_ALIGN_CENTER,
          flags));
  g_object_class_install_property (gobject_class, PROP_WRAP_MODE,
      g_param_spec_enum ("wrap-mode", "Wrap mode", "How text wider than the frame wraps",
          GST_TYPE_CUDA_TEXT_WRAP_MODE, GST_CUDA_TEXT_WRAP_WORD_CHAR, flags));
  g_object_class_install_property (gobject_class, PROP_COLOR,
      g_param_spec_uint ("color", "Colour", "Text colour, 0xAARRGGBB", 0, G_MAXUINT32,
          0xffffffff, flags));
  g_object_class_install_property (gobject_class, PROP_OUTLINE_COLOR,
      g_param_spec_uint ("outline-color", "Outline colour", "Outline colour, 0xAARRGGBB", 0,
          G_MAXUINT32, 0xff000000, flags));
  g_object_class_install_property (gobject_class, PROP_DRAW_OUTLINE,
      g_param_spec_boolean ("draw-outline", "Draw outline", "Outline the glyphs", TRUE, flags));
  g_object_class_install_property (gobject_class, PROP_DRAW_SHADOW,
      g_param_spec_boolean ("draw-shadow", "Draw shadow", "Cast a shadow", TRUE, flags));
  g_object_class_install_property (gobject_class, PROP_AUTO_RESIZE,
      g_param_spec_boolean ("auto-resize", "Auto resize", "Scale the font with the frame "
          "width (as if 640 pixels wide)", TRUE, flags));
  g_object_class_install_property (gobject_class, PROP_SILENT,
      g_param_spec_boolean ("silent", "Silent", "Draw nothing (frames and overlay metas pass "
          "unchanged)", FALSE, flags));
  g_object_class_install_property (gobject_class, PROP_TIME_MODE,
      g_param_spec_enum ("time-mode", "Time mode", "Which time to show with the text, as "
          "timeoverlay (H:MM:SS.mmm, or the time code)", GST_TYPE_CUDA_TEXT_TIME_MODE,
          GST_CUDA_TEXT_TIME_NONE, flags));
  g_object_class_install_property (gobject_class, PROP_CLOCK,
      g_param_spec_boolean ("clock", "Clock", "Show the local wall-clock time (time-format), as "
          "clockoverlay", FALSE, flags));
  g_object_class_install_property (gobject_class, PROP_TIME_FORMAT,
      g_param_spec_string ("time-format", "Time format", "Format of the clock "
          "(g_date_time_format, strftime-like)", DEFAULT_TIME_FORMAT, flags));
  g_object_class_install_property (gobject_class, PROP_TIME_FIRST,
      g_param_spec_boolean ("time-first", "Time first", "Show the time and clock before the "
          "text (else after it)", FALSE, flags));

  g_object_class_install_property (gobject_class, PROP_SHADED_BACKGROUND,
      g_param_spec_boolean ("shaded-background", "Shaded background", "Darken the box behind "
          "the text (its rectangle and 6 pixels around it)", FALSE, flags));
  g_object_class_install_property (gobject_class, PROP_SHADING_VALUE,
      g_param_spec_uint ("shading-value", "Shading value", "How much the shaded box is "
          "darkened (subtracted from luma, or from R, G, B)", 1, 255, DEFAULT_SHADING_VALUE,
          flags));

  g_object_class_install_property (gobject_class, PROP_WAIT_TEXT,
      g_param_spec_boolean ("wait-text", "Wait text", "With text_sink linked, hold each frame "
          "until the text stream has reached its time (else show what has arrived)", TRUE,
          flags));

  gst_element_class_set_static_metadata (element_class, "CUDA text overlay",
      "Filter/Editor/Video", "Text, times, clocks and upstream overlay rectangles blended on a "
      "CUDA device or the CPU", "gst-cudafx developers");
  gst_cuda_fx_filter_class_add_pad_templates_full (filter_class, GST_CUDA_FX_CUDA_FORMATS,
      GST_CUDA_FX_SYSTEM_FORMATS, GST_CUDA_FX_CUDA_FORMATS, GST_CUDA_FX_SYSTEM_FORMATS,
      GST_CAPS_FEATURE_META_GST_VIDEO_OVERLAY_COMPOSITION);

  gst_element_class_add_static_pad_template (element_class, &text_sink_template);
  element_class->change_state = GST_DEBUG_FUNCPTR (gst_cuda_text_overlay_change_state);
  trans_class->sink_event = GST_DEBUG_FUNCPTR (gst_cuda_text_overlay_sink_event);
  trans_class->start = GST_DEBUG_FUNCPTR (gst_cuda_text_overlay_start);
  trans_class->before_transform = GST_DEBUG_FUNCPTR (gst_cuda_text_overlay_before_transform);
  trans_class->propose_allocation = GST_DEBUG_FUNCPTR (gst_cuda_text_overlay_propose_allocation);
  filter_class->setup = GST_DEBUG_FUNCPTR (gst_cuda_text_overlay_setup);
  filter_class->process_ip = GST_DEBUG_FUNCPTR (gst_cuda_text_overlay_process_ip);
  filter_class->process_ip_host = GST_DEBUG_FUNCPTR (gst_cuda_text_overlay_process_ip_host);
  filter_class->finish = GST_DEBUG_FUNCPTR (gst_cuda_text_overlay_finish);
  filter_class->teardown = GST_DEBUG_FUNCPTR (gst_cuda_text_overlay_teardown);

  GST_DEBUG_CATEGORY_INIT (gst_cuda_text_overlay_debug, "cudatextoverlay", 0,
      "CUDA text overlay");
}

static void
gst_cuda_text_overlay_init (GstCudaTextOverlay * self)
{
  self->state = new GstCudaTextOverlayState ();
  gst_video_info_init (&self->state->info);
  gst_segment_init (&self->state->text_segment, GST_FORMAT_TIME);
  GstPad *pad = gst_pad_new_from_static_template (&text_sink_template, "text_sink");
  gst_pad_set_chain_function (pad, GST_DEBUG_FUNCPTR (gst_cuda_text_overlay_text_chain));
  gst_pad_set_event_function (pad, GST_DEBUG_FUNCPTR (gst_cuda_text_overlay_text_event));
  GST_PAD_SET_ACCEPT_TEMPLATE (pad);
  gst_element_add_pad (GST_ELEMENT (self), pad);
  self->state->text_pad = pad;
  gst_cuda_fx_filter_set_mode (GST_CUDA_FX_FILTER (self), GST_CUDA_FX_FILTER_MODE_IN_PLACE);
}
