/**
 * SECTION:element-cudadeltaenc
 * @title: cudadeltaenc
 *
 * Encodes video as a closed-loop thresholded frame delta in 64-byte x
 * 16-row tiles. With #GstCudaDeltaEnc:compression=predictive (the default,
 * bitstream version 4) a tile whose bytes are all within
 * #GstCudaDeltaEnc:threshold of what the decoder last reconstructed is
 * skipped, and any other is predicted from that reconstruction or from its
 * own pixels, its errors quantised in steps of 2 x threshold + 1, keyframes
 * included, and each frame is rANS-coded with tables of its own; rans, zstd
 * and none write version 3 (residuals of the changed bytes, raw keyframes).
 * The encoder keeps the decoder's
 * reconstruction as its reference, so every decoded byte stays within the
 * threshold of its source on every frame; threshold 0 is lossless. Streams
 * over RTP with rtpgstpay; cudadeltadec decodes. The format is documented in
 * docs/delta-format.md. The first frame is a keyframe, and so is the first
 * after new caps (another size or format), after a flush (FLUSH_STOP, as in
 * a flushing seek: the decoder drops its reference there) and after a
 * restart (NULL or READY and back).
 *
 * With the CUDA backend (#GstCudaDeltaEnc:backend, auto by default) the
 * residuals, the reference and the reconstruction checksum stay on the GPU;
 * frames come in CUDA memory (memory:CUDAMemory, shared with nvcodec's
 * cudaupload and other elements of the same CUDA context) or in system
 * memory, for which the encoder proposes a pinned pool upstream. The packet
 * is packed and compressed on the CPU exactly as by the CPU backend: both
 * give the same bytes.
 *
 * With #GstCudaDeltaEnc:overlap (off by default) on the CUDA backend, a
 * frame's packet goes out one frame late (reported in the latency query),
 * when the next frame arrives, or at EOS, new caps or a drain: with
 * compression=predictive each frame's entropy coding runs beside the next
 * frame's motion search and prediction on the GPU (and, for frames in
 * system memory, each frame's upload beside the frame before); with the
 * other compressions each frame in system memory is uploaded while the one
 * before it is encoded. The packets are the same bytes either way.
 *
 * With #GstCudaDeltaEnc:post-stats (off by default: an application that
 * never reads its bus would keep every message), the encoder posts an element
 * message "cudadeltaenc-stats" at most every #GstCudaDeltaEnc:stats-interval
 * milliseconds (1000 by default; 0: every frame), measured on the frames'
 * timestamps (the monotonic clock for frames without one), with the fields
 * frame (guint64), keyframe (gboolean), changed-fraction (gdouble) and
 * payload-bytes (guint) of the frame that posts it and bitrate (gdouble,
 * bits/s over the last second, counting every frame).
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 videotestsrc is-live=true ! video/x-raw,format=I420,width=640,height=480 ! cudadeltaenc threshold=10 key-int-max=60 ! rtpgstpay config-interval=1 ! udpsink host=127.0.0.1 port=5004
 * ]| Sends a test stream over RTP/UDP.
 * |[
 * gst-launch-1.0 videotestsrc num-buffers=100 ! cudadeltaenc threshold=0 ! cudadeltadec ! videoconvert ! autovideosink
 * ]| A lossless round trip in one pipeline.
 * |[
 * gst-launch-1.0 videotestsrc ! video/x-raw,format=NV12,width=3840,height=2160 ! cudaupload ! "video/x-raw(memory:CUDAMemory)" ! cudadeltaenc backend=cuda threshold=4 ! rtpgstpay ! udpsink host=127.0.0.1 port=5004
 * ]| Frames already in CUDA memory, encoded on the GPU.
 */
#include "gstcudadeltaenc.h"

#include <memory>
#include <optional>
#include <vector>

#include "cudafx/delta.hpp"
#include "gstcudadeltacaps.h"
#include "gstcudafxcodecoverlap.h"
#include "gstcudafxdevice.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_delta_enc_debug);
#define GST_CAT_DEFAULT gst_cuda_delta_enc_debug

enum
{
  PROP_0,
  PROP_THRESHOLD,
  PROP_KEY_INT_MAX,
  PROP_COMPRESSION,
  PROP_ZSTD_LEVEL,
  PROP_POST_STATS,
  PROP_STATS_INTERVAL,
  PROP_INTRA_REFRESH,
  PROP_OVERLAP,
  PROP_MOTION_SEARCH,
};

#define DEFAULT_THRESHOLD 4
#define DEFAULT_KEY_INT_MAX 0
#define DEFAULT_COMPRESSION GST_CUDA_DELTA_COMPRESSION_PREDICTIVE
#define DEFAULT_ZSTD_LEVEL 3
#define DEFAULT_POST_STATS FALSE
#define DEFAULT_STATS_INTERVAL 1000
#define DEFAULT_INTRA_REFRESH FALSE
#define DEFAULT_OVERLAP FALSE
#define DEFAULT_MOTION_SEARCH TRUE
/* The sweep of intra-refresh=true when key-int-max is 0. */
#define DEFAULT_REFRESH_PERIOD 30

struct GstCudaDeltaEncState
{
  /* properties, under the object lock */
  guint threshold = DEFAULT_THRESHOLD;
  guint key_int_max = DEFAULT_KEY_INT_MAX;
  GstCudaDeltaCompression compression = DEFAULT_COMPRESSION;
  gint zstd_level = DEFAULT_ZSTD_LEVEL;
  gboolean post_stats = DEFAULT_POST_STATS;
  guint stats_interval = DEFAULT_STATS_INTERVAL;       /* ms */
  gboolean intra_refresh = DEFAULT_INTRA_REFRESH;
  gboolean overlap = DEFAULT_OVERLAP;
  gboolean motion_search = DEFAULT_MOTION_SEARCH;
  /* the backend and cuda-device-id settings (under the object lock), and
   * from start to stop the device */
  GstCudaFxDevice dev;

  /* streaming thread; one encoder, of the backend chosen at start */
  std::unique_ptr < cudafx::DeltaEncoder > encoder;
  std::unique_ptr < cudafx::DeltaEncoderCuda > cuda_encoder;
  cudafx::DeviceBuffer staging;   /* device copy of system-memory frames */
  /* overlap: set_format decides (CUDA backend, system memory in); a frame
   * uploaded ahead waits in `held` (its input mapped) for the next one */
  bool overlapping = false;
  GstCudaFxUploadAhead ahead;
  struct Held
  {
    GstVideoCodecFrame *frame;  /* ours to finish */
    GstVideoFrame vframe;       /* the input, mapped while its upload runs */
    cudafx::ImageView device;   /* its copy on the device */
    int slot;
    /* read as it arrived (frame_settings) */
    cudafx::DeltaEncodeSettings settings;
    bool want_stats;
    guint stats_interval;
  };
  std::optional < Held > held;
  /* overlap with compression=predictive: the encoder pipelined
   * (DeltaEncoderCuda::submit), the frame submitted last waiting here for
   * its packet, which comes with the next submission (or the encoder's
   * flush) */
  struct Submitted
  {
    GstVideoCodecFrame *frame;  /* ours to finish */
    GstVideoFrame vframe;       /* the input, mapped until its prediction is done */
    int slot;                   /* its upload slot; -1: read in place (CUDA memory) */
    bool want_stats;
    guint stats_interval;
  };
  std::optional < Submitted > submitted;
  bool fresh = true;            /* the encoder has had no frame: its first is a keyframe */
  cudafx::ImageDesc desc;
  GstVideoCodecState *input = nullptr;
  /* The CUDA encoder leaves a packet's coded lanes in its pinned memory
   * (tail): they are copied once, into the output buffer. */
  cudafx::DeltaPacketParts packet;
  guint64 frames = 0;
  guint since_key = 0;
  bool key_next = false;        /* after a flush: the next frame is a keyframe */
  gint caps_version = 0;        /* the format version the source caps say */
  /* running bitrate: bytes of the frames within the last second */
  std::vector < std::pair < GstClockTime, guint >> window;
  guint64 window_bytes = 0;
  /* time of the last stats message, GST_CLOCK_TIME_NONE: none yet */
  GstClockTime last_stats = GST_CLOCK_TIME_NONE;
};

struct _GstCudaDeltaEnc
{
  GstVideoEncoder parent;
  GstCudaDeltaEncState *state;
};

G_DEFINE_TYPE (GstCudaDeltaEnc, gst_cuda_delta_enc, GST_TYPE_VIDEO_ENCODER);
GST_ELEMENT_REGISTER_DEFINE (cudadeltaenc, "cudadeltaenc", GST_RANK_NONE,
    GST_TYPE_CUDA_DELTA_ENC);

#if HAVE_GSTCUDA
#define SINK_CAPS \
  GST_VIDEO_CAPS_MAKE_WITH_FEATURES (GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, \
      GST_CUDA_DELTA_CUDA_FORMATS) "; " GST_VIDEO_CAPS_MAKE (GST_CUDA_DELTA_FORMATS)
#else
#define SINK_CAPS GST_VIDEO_CAPS_MAKE (GST_CUDA_DELTA_FORMATS)
#endif
static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS (SINK_CAPS));
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS (GST_CUDA_DELTA_CAPS));

/* The encoders and the staging buffer hold CUDA memory: freed in the
 * context. */
static void
release_encoders (GstCudaDeltaEncState * st)
{
  st->encoder.reset ();
  if (st->cuda_encoder || st->staging.size () > 0 || st->overlapping) {
    GstCudaFxDevice::Scope scope (st->dev);
    st->cuda_encoder.reset ();
    st->staging.reset ();
    st->ahead.release ();
  }
  st->overlapping = false;
}

static GstFlowReturn encode_held (GstCudaDeltaEnc * self);
static GstFlowReturn flush_submitted (GstCudaDeltaEnc * self);
static void discard_submitted (GstCudaDeltaEnc * self);

/* The source caps for the input's format and the bitstream's version (4
 * for compression=predictive, 3 for the others): at set_format, and again
 * when `compression` moves between the two while PLAYING. */
static void
set_output_caps (GstCudaDeltaEnc * self, gint version)
{
  GstCudaDeltaEncState *st = self->state;
  const GstVideoInfo *info = &st->input->info;
  GstCaps *caps = gst_caps_new_simple (GST_CUDA_DELTA_MEDIA_TYPE,
      "version", G_TYPE_INT, version,
      "format", G_TYPE_STRING, gst_video_format_to_string (GST_VIDEO_INFO_FORMAT (info)),
      "width", G_TYPE_INT, GST_VIDEO_INFO_WIDTH (info),
      "height", G_TYPE_INT, GST_VIDEO_INFO_HEIGHT (info),
      "framerate", GST_TYPE_FRACTION, GST_VIDEO_INFO_FPS_N (info),
      GST_VIDEO_INFO_FPS_D (info), nullptr);
  GstVideoCodecState *out =
      gst_video_encoder_set_output_state (GST_VIDEO_ENCODER (self), caps, st->input);
  /* No multiview fields: GstVideoEncoder would add the input's
   * (multiview-mode=mono from videotestsrc and most sources) with a
   * GstVideoMultiviewFlagsSet, a type of libgstvideo's that a receiver
   * parsing the caps string (rtpgstdepay behind rtspsrc) knows only once
   * something in its process has registered it: on the GPU machine the
   * RTSP clients' depayloader rejected the caps and the stream stalled.
   * The codec codes each frame as one picture; every field left is a
   * plain string, number or fraction. */
  GST_VIDEO_INFO_MULTIVIEW_MODE (&out->info) = GST_VIDEO_MULTIVIEW_MODE_NONE;
  gst_video_codec_state_unref (out);
  st->caps_version = version;
}

static gboolean
gst_cuda_delta_enc_set_format (GstVideoEncoder * encoder, GstVideoCodecState * state)
{
  GstCudaDeltaEnc *self = GST_CUDA_DELTA_ENC (encoder);
  GstCudaDeltaEncState *st = self->state;
  cudafx::ImageDesc desc;
  if (!gst_cuda_fx_desc_from_info (&state->info, &desc)) {
    GST_ELEMENT_ERROR (self, CORE, NEGOTIATION, ("Unsupported format"), (nullptr));
    return FALSE;
  }
  /* The frame held back belongs to the old caps: encoded with them. */
  (void) encode_held (self);
  (void) flush_submitted (self);
  /* A new encoder: its first frame is a keyframe, as a caps change needs. */
  release_encoders (st);
  cudafx::Status s;
  if (st->dev.cuda ()) {
    GstCudaFxDevice::Scope scope (st->dev);
    s = scope.status ();
    if (s.is_ok ())
      s = cudafx::DeltaEncoderCuda::create (desc, &st->cuda_encoder);
  } else {
    s = cudafx::DeltaEncoder::create (desc, &st->encoder);
  }
  st->desc = desc;
  if (!s.is_ok ()) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT, ("%s", s.message ().c_str ()), (nullptr));
    return FALSE;
  }
  if (st->input)
    gst_video_codec_state_unref (st->input);
  st->input = gst_video_codec_state_ref (state);
  st->since_key = 0;
  st->fresh = true;

  GST_OBJECT_LOCK (self);
  const GstCudaDeltaCompression compression = st->compression;
  const bool overlap = st->overlap;
  GST_OBJECT_UNLOCK (self);
  st->overlapping = overlap && st->dev.cuda ();
  GST_INFO_OBJECT (self, "frames %s", st->overlapping ?
      "overlapped: one frame of latency" : "encoded as they come");
  set_output_caps (self,
      cudafx::delta_format_version (gst_cuda_delta_compression_to_op (compression)));

  /* Encoding is per frame, no reordering: at most one frame of latency, and
   * at least one with overlap (a frame leaves when the next comes). */
  GstClockTime frame_dur = GST_CLOCK_TIME_NONE;
  if (GST_VIDEO_INFO_FPS_N (&state->info) > 0)
    frame_dur = gst_util_uint64_scale (GST_SECOND, GST_VIDEO_INFO_FPS_D (&state->info),
        GST_VIDEO_INFO_FPS_N (&state->info));
  gst_video_encoder_set_latency (encoder,
      st->overlapping && GST_CLOCK_TIME_IS_VALID (frame_dur) ? frame_dur : 0, frame_dur);
  return gst_video_encoder_negotiate (encoder);
}

/* Counts every frame into the bitrate window; posts a message when the
 * interval has passed since the last one (on the frames' timestamps, or the
 * monotonic clock without them; time that goes back, as after a seek,
 * posts at once). */
static void
post_stats (GstCudaDeltaEnc * self, GstVideoCodecFrame * frame,
    const cudafx::DeltaEncodeStats & stats, guint interval_ms)
{
  GstCudaDeltaEncState *st = self->state;
  const GstClockTime ts = frame->pts;
  st->window.emplace_back (ts, static_cast < guint > (stats.packet_bytes));
  st->window_bytes += stats.packet_bytes;
  if (GST_CLOCK_TIME_IS_VALID (ts)) {
    while (st->window.size () > 1 && GST_CLOCK_TIME_IS_VALID (st->window.front ().first) &&
        ts - st->window.front ().first >= GST_SECOND) {
      st->window_bytes -= st->window.front ().second;
      st->window.erase (st->window.begin ());
    }
  } else if (st->window.size () > 30) {
    st->window_bytes -= st->window.front ().second;
    st->window.erase (st->window.begin ());
  }
  const GstClockTime now = GST_CLOCK_TIME_IS_VALID (ts) ? ts :
      static_cast < GstClockTime > (g_get_monotonic_time ()) * GST_USECOND;
  if (GST_CLOCK_TIME_IS_VALID (st->last_stats) && now >= st->last_stats &&
      now - st->last_stats < static_cast < GstClockTime > (interval_ms) * GST_MSECOND)
    return;
  st->last_stats = now;
  const double frame_bytes = static_cast < double >(st->cuda_encoder ?
      st->cuda_encoder->layout ().frame_bytes : st->encoder->layout ().frame_bytes);
  GstStructure *s = gst_structure_new ("cudadeltaenc-stats",
      "frame", G_TYPE_UINT64, st->frames,
      "keyframe", G_TYPE_BOOLEAN, stats.keyframe,
      "changed-fraction", G_TYPE_DOUBLE, stats.changed_bytes / frame_bytes,
      "payload-bytes", G_TYPE_UINT, static_cast < guint > (stats.packet_bytes),
      "moved-tiles", G_TYPE_UINT, static_cast < guint > (stats.moved_tiles),
      /* the window holds (at most) the last second */
      "bitrate", G_TYPE_DOUBLE, 8.0 * st->window_bytes, nullptr);
  gst_element_post_message (GST_ELEMENT (self),
      gst_message_new_element (GST_OBJECT (self), s));
}

static cudafx::Status
encode_cpu (GstCudaDeltaEnc * self, GstVideoCodecFrame * frame,
    const cudafx::DeltaEncodeSettings & settings, cudafx::DeltaEncodeStats * stats)
{
  GstCudaDeltaEncState *st = self->state;
  GstVideoFrame vframe;
  bool on_device = false;
  CUDAFX_TRY (gst_cuda_fx_map_frame (st->dev, &vframe, &st->input->info, frame->input_buffer,
          GST_MAP_READ, &on_device));
  st->packet.tail = nullptr;
  st->packet.tail_size = 0;
  const cudafx::Status s = st->encoder->encode (gst_cuda_fx_view_of_frame (&vframe, st->desc),
      settings, &st->packet.head, stats);
  gst_video_frame_unmap (&vframe);
  return s;
}

/* A frame uploaded ahead (overlap) is encoded from its device copy, after
 * its upload. Otherwise frames in our CUDA memory are read in place and
 * frames in system memory are copied to a device staging image first, on
 * the same stream. The encoder synchronises the stream once, before it
 * returns, so the input can be unmapped and released after. */
static cudafx::Status
encode_cuda (GstCudaDeltaEnc * self, GstVideoCodecFrame * frame,
    const cudafx::DeltaEncodeSettings & settings, cudafx::DeltaEncodeStats * stats,
    const GstCudaDeltaEncState::Held * held)
{
  GstCudaDeltaEncState *st = self->state;
  GstCudaFxDevice::Scope scope (st->dev);
  CUDAFX_TRY (scope.status ());
  if (held) {
    cudafx::Status s = st->ahead.wait (held->slot, st->dev.stream ());
    if (s.is_ok ())
      s = st->cuda_encoder->encode (held->device, settings, st->dev.stream (), &st->packet,
          stats);
    if (s.is_ok ())
      s = st->ahead.consumed (held->slot, st->dev.stream ());
    if (!s.is_ok ())
      (void) st->dev.synchronize ();
    return s;
  }
  GstVideoFrame vframe;
  bool on_device = false;
  CUDAFX_TRY (gst_cuda_fx_map_frame (st->dev, &vframe, &st->input->info, frame->input_buffer,
          GST_MAP_READ, &on_device));
  cudafx::ImageView view = gst_cuda_fx_view_of_frame (&vframe, st->desc);
  cudafx::Status s;
  if (!on_device) {
    cudafx::ImageView staged;
    s = GstCudaFxDevice::staging_view (st->staging, view, &staged, st->dev.stream ());
    if (s.is_ok ())
      s = cudafx::copy_image_async (staged, view, st->dev.stream ());
    view = staged;
  }
  if (s.is_ok ())
    s = st->cuda_encoder->encode (view, settings, st->dev.stream (), &st->packet, stats);
  if (!s.is_ok ())
    (void) st->dev.synchronize ();  /* queued work may still read the frame */
  gst_video_frame_unmap (&vframe);
  return s;
}

/* The settings for `frame`, read as it arrives (a property changed while
 * PLAYING applies from the next frame pushed, with overlap too), and the
 * keyframe count moved on as the encoder will code it (a keyframe when
 * forced or the encoder's first). Called after the frames before it went
 * out (a new bitstream version's caps follow their packets). `chosen`:
 * the compression the caller read to pick its path (read once, so that a
 * property set meanwhile from another thread cannot split the two). FALSE:
 * the new caps another version needs were refused. */
static bool
frame_settings (GstCudaDeltaEnc * self, GstVideoCodecFrame * frame,
    cudafx::DeltaEncodeSettings * settings, bool *want_stats, guint * stats_interval,
    std::optional < GstCudaDeltaCompression > chosen = std::nullopt)
{
  GstCudaDeltaEncState *st = self->state;
  GST_OBJECT_LOCK (self);
  settings->threshold = static_cast < int >(st->threshold);
  settings->compression = gst_cuda_delta_compression_to_op (chosen ? *chosen : st->compression);
  settings->zstd_level = st->zstd_level;
  settings->motion_search = st->motion_search;
  const guint key_int_max = st->key_int_max;
  /* Intra refresh replaces the periodic keyframes of format 4. */
  const bool refresh = st->intra_refresh &&
      settings->compression == cudafx::DeltaCompression::Predictive;
  if (refresh)
    settings->refresh_period = key_int_max > 0 ?
        static_cast < int >(MIN (key_int_max, 65535u)) : DEFAULT_REFRESH_PERIOD;
  /* A keyframe on every frame: keyframes coded for their own size. */
  settings->keyframes_only = !refresh && key_int_max == 1;
  *want_stats = st->post_stats;
  *stats_interval = st->stats_interval;
  GST_OBJECT_UNLOCK (self);
  settings->force_keyframe = GST_VIDEO_CODEC_FRAME_IS_FORCE_KEYFRAME (frame) ||
      st->key_next || (!refresh && key_int_max > 0 && st->since_key >= key_int_max);
  /* Another bitstream version: new caps, and a keyframe to start it. */
  const gint version = cudafx::delta_format_version (settings->compression);
  if (version != st->caps_version) {
    set_output_caps (self, version);
    if (!gst_video_encoder_negotiate (GST_VIDEO_ENCODER (self)))
      return false;
    settings->force_keyframe = true;
  }
  if (settings->force_keyframe || st->fresh) {
    st->since_key = 1;
    st->key_next = false;
  } else {
    st->since_key++;
  }
  st->fresh = false;
  return true;
}

/* `frame`'s packet (st->packet) into its output buffer, and `frame`
 * finished. */
static GstFlowReturn
finish_packet (GstCudaDeltaEnc * self, GstVideoCodecFrame * frame,
    const cudafx::DeltaEncodeStats & stats, bool want_stats, guint stats_interval)
{
  GstVideoEncoder *encoder = GST_VIDEO_ENCODER (self);
  GstCudaDeltaEncState *st = self->state;
  const cudafx::DeltaPacketParts & packet = st->packet;
  frame->output_buffer = gst_video_encoder_allocate_output_buffer (encoder, packet.size ());
  gst_buffer_fill (frame->output_buffer, 0, packet.head.data (), packet.head.size ());
  if (packet.tail_size > 0)
    gst_buffer_fill (frame->output_buffer, packet.head.size (), packet.tail, packet.tail_size);
  if (stats.keyframe)
    GST_VIDEO_CODEC_FRAME_SET_SYNC_POINT (frame);
  else
    GST_VIDEO_CODEC_FRAME_UNSET_SYNC_POINT (frame);
  if (want_stats)
    post_stats (self, frame, stats, stats_interval);
  st->frames++;
  return gst_video_encoder_finish_frame (encoder, frame);
}

/* Encodes `frame` (from `held`'s device copy, with the settings it arrived
 * with, where it was uploaded ahead) and finishes it; `chosen` as for
 * frame_settings. */
static GstFlowReturn
encode_frame (GstCudaDeltaEnc * self, GstVideoCodecFrame * frame,
    const GstCudaDeltaEncState::Held * held,
    std::optional < GstCudaDeltaCompression > chosen = std::nullopt)
{
  GstVideoEncoder *encoder = GST_VIDEO_ENCODER (self);
  GstCudaDeltaEncState *st = self->state;
  cudafx::DeltaEncodeSettings settings;
  bool want_stats = false;
  guint stats_interval = 0;
  if (held) {
    settings = held->settings;
    want_stats = held->want_stats;
    stats_interval = held->stats_interval;
  } else if (!frame_settings (self, frame, &settings, &want_stats, &stats_interval, chosen)) {
    gst_video_encoder_finish_frame (encoder, frame);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  cudafx::DeltaEncodeStats stats;
  const cudafx::Status s = st->cuda_encoder ? encode_cuda (self, frame, settings, &stats, held) :
      encode_cpu (self, frame, settings, &stats);
  if (!s.is_ok ()) {
    GST_ELEMENT_ERROR (self, STREAM, ENCODE, ("%s", s.message ().c_str ()), (nullptr));
    gst_video_encoder_finish_frame (encoder, frame);
    return GST_FLOW_ERROR;
  }
  return finish_packet (self, frame, stats, want_stats, stats_interval);
}

/* The input of a submitted frame let go once its prediction is done (its
 * upload with it). */
static void
release_submitted_input (GstCudaDeltaEnc * self, GstCudaDeltaEncState::Submitted * sub)
{
  GstCudaDeltaEncState *st = self->state;
  if (sub->slot >= 0) {
    GstCudaFxDevice::Scope scope (st->dev);
    (void) st->ahead.finish (sub->slot);
  }
  gst_video_frame_unmap (&sub->vframe);
}

/* overlap, compression=predictive: `frame` submitted to the pipelined
 * encoder (uploaded first on the upload stream where it is in system
 * memory, read in place in CUDA memory); the frame submitted before it
 * comes back coded and is finished. */
static GstFlowReturn
submit_frame (GstCudaDeltaEnc * self, GstVideoCodecFrame * frame)
{
  GstVideoEncoder *encoder = GST_VIDEO_ENCODER (self);
  GstCudaDeltaEncState *st = self->state;
  GstCudaDeltaEncState::Submitted sub { frame, GstVideoFrame (), -1, false, 0 };
  cudafx::DeltaEncodeSettings settings;
  if (!frame_settings (self, frame, &settings, &sub.want_stats, &sub.stats_interval,
          GST_CUDA_DELTA_COMPRESSION_PREDICTIVE)) {
    gst_video_encoder_finish_frame (encoder, frame);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  cudafx::DeltaEncodeStats stats;
  bool got = false;
  cudafx::Status s;
  {
    GstCudaFxDevice::Scope scope (st->dev);
    s = scope.status ();
    bool on_device = false;
    if (s.is_ok ())
      s = gst_cuda_fx_map_frame (st->dev, &sub.vframe, &st->input->info, frame->input_buffer,
          GST_MAP_READ, &on_device);
    if (s.is_ok ()) {
      const cudafx::ImageView mapped = gst_cuda_fx_view_of_frame (&sub.vframe, st->desc);
      cudafx::ImageView view = mapped;
      if (!on_device) {
        s = st->ahead.upload (mapped, &view, &sub.slot);
        if (s.is_ok ())
          s = st->ahead.wait (sub.slot, st->dev.stream ());
      }
      if (s.is_ok ())
        s = st->cuda_encoder->submit (view, settings, st->dev.stream (), &st->packet, &got,
            &stats);
      if (s.is_ok () && sub.slot >= 0)
        s = st->ahead.consumed (sub.slot, st->dev.stream ());
      if (!s.is_ok ()) {
        /* queued work may still read the frames */
        (void) st->dev.synchronize ();
        (void) st->ahead.synchronize ();
        gst_video_frame_unmap (&sub.vframe);
      }
    }
  }
  if (!s.is_ok ()) {
    /* the frames in flight are lost (the encoder starts again at a
     * keyframe): both finished without output */
    GST_ELEMENT_ERROR (self, STREAM, ENCODE, ("%s", s.message ().c_str ()), (nullptr));
    gst_video_encoder_finish_frame (encoder, frame);
    if (st->submitted) {
      GstCudaDeltaEncState::Submitted before = *st->submitted;
      st->submitted.reset ();
      release_submitted_input (self, &before);
      gst_video_encoder_finish_frame (encoder, before.frame);
    }
    st->key_next = true;
    return GST_FLOW_ERROR;
  }
  std::optional < GstCudaDeltaEncState::Submitted > before = st->submitted;
  st->submitted = sub;
  if (!before)
    return GST_FLOW_OK;
  release_submitted_input (self, &*before);
  if (!got) {                   /* cannot be: a frame was submitted */
    GST_ELEMENT_ERROR (self, STREAM, ENCODE, ("the pipelined encoder lost a frame"), (nullptr));
    gst_video_encoder_finish_frame (encoder, before->frame);
    return GST_FLOW_ERROR;
  }
  return finish_packet (self, before->frame, stats, before->want_stats, before->stats_interval);
}

/* The frame submitted last, if any, coded (the encoder flushed) and
 * finished: at EOS, new caps, drains and before a frame of another
 * compression. */
static GstFlowReturn
flush_submitted (GstCudaDeltaEnc * self)
{
  GstCudaDeltaEncState *st = self->state;
  if (!st->submitted)
    return GST_FLOW_OK;
  GstCudaDeltaEncState::Submitted sub = *st->submitted;
  st->submitted.reset ();
  cudafx::DeltaEncodeStats stats;
  bool got = false;
  cudafx::Status s;
  {
    GstCudaFxDevice::Scope scope (st->dev);
    s = scope.status ();
    if (s.is_ok ())
      s = st->cuda_encoder->flush (&st->packet, &got, &stats);
  }
  release_submitted_input (self, &sub);
  if (s.is_ok () && !got)
    s = cudafx::Status::error (cudafx::StatusCode::Internal,
        "the pipelined encoder lost a frame");
  if (!s.is_ok ()) {
    st->key_next = true;
    GST_ELEMENT_ERROR (self, STREAM, ENCODE, ("%s", s.message ().c_str ()), (nullptr));
    gst_video_encoder_finish_frame (GST_VIDEO_ENCODER (self), sub.frame);
    return GST_FLOW_ERROR;
  }
  return finish_packet (self, sub.frame, stats, sub.want_stats, sub.stats_interval);
}

/* The frame submitted last dropped (flush, stop, an error): the encoder's
 * pipeline emptied (its packet thrown away; a keyframe follows a flush),
 * the input let go. */
static void
discard_submitted (GstCudaDeltaEnc * self)
{
  GstCudaDeltaEncState *st = self->state;
  if (!st->submitted)
    return;
  GstCudaDeltaEncState::Submitted sub = *st->submitted;
  st->submitted.reset ();
  if (st->cuda_encoder) {
    GstCudaFxDevice::Scope scope (st->dev);
    cudafx::DeltaPacketParts unused;
    bool got = false;
    (void) st->cuda_encoder->flush (&unused, &got);
    (void) st->dev.synchronize ();
  }
  release_submitted_input (self, &sub);
  gst_video_codec_frame_unref (sub.frame);
}

/* The frame held back (overlap), if any, encoded and finished: when the
 * next frame's upload is queued, and at EOS, new caps and drains. */
static GstFlowReturn
encode_held (GstCudaDeltaEnc * self)
{
  GstCudaDeltaEncState *st = self->state;
  if (!st->held)
    return GST_FLOW_OK;
  GstCudaDeltaEncState::Held h = *st->held;
  st->held.reset ();
  const GstFlowReturn ret = encode_frame (self, h.frame, &h);
  {
    /* the device is done with the input (encode_frame may have returned
     * before encoding it) */
    GstCudaFxDevice::Scope scope (st->dev);
    (void) st->ahead.finish (h.slot);
  }
  gst_video_frame_unmap (&h.vframe);
  return ret;
}

/* The frame held back dropped (flush, stop), after its upload. */
static void
discard_held (GstCudaDeltaEnc * self)
{
  GstCudaDeltaEncState *st = self->state;
  if (!st->held)
    return;
  {
    GstCudaFxDevice::Scope scope (st->dev);
    (void) st->ahead.finish (st->held->slot);
  }
  gst_video_frame_unmap (&st->held->vframe);
  gst_video_codec_frame_unref (st->held->frame);
  st->held.reset ();
}

/* overlap: `frame` mapped and its upload queued (*held); FALSE where it
 * is not in system memory (it is then encoded at once). */
static cudafx::Status
upload_ahead (GstCudaDeltaEnc * self, GstVideoCodecFrame * frame,
    GstCudaDeltaEncState::Held * held, bool *staged)
{
  GstCudaDeltaEncState *st = self->state;
  *staged = false;
  GstCudaFxDevice::Scope scope (st->dev);
  CUDAFX_TRY (scope.status ());
  bool on_device = false;
  CUDAFX_TRY (gst_cuda_fx_map_frame (st->dev, &held->vframe, &st->input->info,
          frame->input_buffer, GST_MAP_READ, &on_device));
  if (on_device) {
    gst_video_frame_unmap (&held->vframe);
    return cudafx::Status::ok ();
  }
  const cudafx::Status s = st->ahead.upload (gst_cuda_fx_view_of_frame (&held->vframe, st->desc),
      &held->device, &held->slot);
  if (!s.is_ok ()) {
    (void) st->ahead.synchronize ();
    gst_video_frame_unmap (&held->vframe);
    return s;
  }
  held->frame = frame;
  *staged = true;
  return s;
}

static GstFlowReturn
gst_cuda_delta_enc_handle_frame (GstVideoEncoder * encoder, GstVideoCodecFrame * frame)
{
  GstCudaDeltaEnc *self = GST_CUDA_DELTA_ENC (encoder);
  GstCudaDeltaEncState *st = self->state;
  if (!st->encoder && !st->cuda_encoder) {
    gst_video_encoder_finish_frame (encoder, frame);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  if (!st->overlapping)
    return encode_frame (self, frame, nullptr);
  GST_OBJECT_LOCK (self);
  const GstCudaDeltaCompression compression = st->compression;
  GST_OBJECT_UNLOCK (self);
  if (compression == GST_CUDA_DELTA_COMPRESSION_PREDICTIVE) {
    /* a frame of another compression held back goes first */
    const GstFlowReturn ret = encode_held (self);
    if (ret != GST_FLOW_OK) {
      gst_video_encoder_finish_frame (encoder, frame);
      return ret;
    }
    return submit_frame (self, frame);
  }
  const GstFlowReturn before = flush_submitted (self);
  if (before != GST_FLOW_OK) {
    gst_video_encoder_finish_frame (encoder, frame);
    return before;
  }

  /* This frame's upload first, so that it runs while the frame before it
   * is encoded. */
  GstCudaDeltaEncState::Held next;
  bool staged = false;
  const cudafx::Status s = upload_ahead (self, frame, &next, &staged);
  if (!s.is_ok ()) {
    GST_ELEMENT_ERROR (self, STREAM, ENCODE, ("%s", s.message ().c_str ()), (nullptr));
    gst_video_encoder_finish_frame (encoder, frame);
    return GST_FLOW_ERROR;
  }
  GstFlowReturn ret = encode_held (self);
  if (!staged) {
    if (ret == GST_FLOW_OK)
      return encode_frame (self, frame, nullptr, compression);
    gst_video_encoder_finish_frame (encoder, frame);
    return ret;
  }
  if (!frame_settings (self, frame, &next.settings, &next.want_stats, &next.stats_interval,
          compression)) {
    {
      GstCudaFxDevice::Scope scope (st->dev);
      (void) st->ahead.finish (next.slot);
    }
    gst_video_frame_unmap (&next.vframe);
    gst_video_encoder_finish_frame (encoder, frame);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  st->held = next;
  return ret;
}

/* EOS: the frame held back goes out. */
static GstFlowReturn
gst_cuda_delta_enc_finish (GstVideoEncoder * encoder)
{
  const GstFlowReturn ret = encode_held (GST_CUDA_DELTA_ENC (encoder));
  const GstFlowReturn submitted = flush_submitted (GST_CUDA_DELTA_ENC (encoder));
  return ret != GST_FLOW_OK ? ret : submitted;
}

/* A flush (FLUSH_STOP): downstream's decoder drops its reference, so the
 * next frame is a keyframe. The statistics start over. */
static gboolean
gst_cuda_delta_enc_flush (GstVideoEncoder * encoder)
{
  GstCudaDeltaEncState *st = GST_CUDA_DELTA_ENC (encoder)->state;
  discard_held (GST_CUDA_DELTA_ENC (encoder));
  discard_submitted (GST_CUDA_DELTA_ENC (encoder));
  st->key_next = true;
  st->window.clear ();
  st->window_bytes = 0;
  st->last_stats = GST_CLOCK_TIME_NONE;
  return TRUE;
}

static gboolean
gst_cuda_delta_enc_start (GstVideoEncoder * encoder)
{
  GstCudaDeltaEnc *self = GST_CUDA_DELTA_ENC (encoder);
  GstCudaDeltaEncState *st = self->state;
  return st->dev.start (GST_ELEMENT (self));
}

/* Upstream's caps, less CUDA memory once the CPU backend is chosen. */
static GstCaps *
gst_cuda_delta_enc_getcaps (GstVideoEncoder * encoder, GstCaps * filter)
{
  GstCudaDeltaEncState *st = GST_CUDA_DELTA_ENC (encoder)->state;
  GstCaps *caps = gst_video_encoder_proxy_getcaps (encoder, nullptr, filter);
  if (!st->dev.started () || st->dev.cuda () || !caps)
    return caps;
  return gst_cuda_fx_caps_drop_cuda_memory (caps);
}

static gboolean
gst_cuda_delta_enc_propose_allocation (GstVideoEncoder * encoder, GstQuery * query)
{
  return GST_CUDA_DELTA_ENC (encoder)->state->dev.propose_allocation (GST_ELEMENT (encoder),
      query);
}

static void
gst_cuda_delta_enc_set_context (GstElement * element, GstContext * context)
{
  GstCudaDeltaEncState *st = GST_CUDA_DELTA_ENC (element)->state;
  st->dev.set_context (element, context);
  GST_ELEMENT_CLASS (gst_cuda_delta_enc_parent_class)->set_context (element, context);
}

static gboolean
gst_cuda_delta_enc_sink_query (GstVideoEncoder * encoder, GstQuery * query)
{
  if (GST_CUDA_DELTA_ENC (encoder)->state->dev.handle_context_query (GST_ELEMENT (encoder),
          query))
    return TRUE;
  /* upstream wants its buffers back (a serialized query: the streaming
   * thread): the frame held back goes out first */
  if (GST_QUERY_TYPE (query) == GST_QUERY_DRAIN) {
    (void) encode_held (GST_CUDA_DELTA_ENC (encoder));
    (void) flush_submitted (GST_CUDA_DELTA_ENC (encoder));
  }
  return GST_VIDEO_ENCODER_CLASS (gst_cuda_delta_enc_parent_class)->sink_query (encoder,
      query);
}

static gboolean
gst_cuda_delta_enc_src_query (GstVideoEncoder * encoder, GstQuery * query)
{
  if (GST_CUDA_DELTA_ENC (encoder)->state->dev.handle_context_query (GST_ELEMENT (encoder),
          query))
    return TRUE;
  return GST_VIDEO_ENCODER_CLASS (gst_cuda_delta_enc_parent_class)->src_query (encoder,
      query);
}

static gboolean
gst_cuda_delta_enc_stop (GstVideoEncoder * encoder)
{
  GstCudaDeltaEncState *st = GST_CUDA_DELTA_ENC (encoder)->state;
  discard_held (GST_CUDA_DELTA_ENC (encoder));
  discard_submitted (GST_CUDA_DELTA_ENC (encoder));
  release_encoders (st);
  st->dev.stop ();
  if (st->input)
    gst_video_codec_state_unref (st->input);
  st->input = nullptr;
  st->frames = 0;
  st->key_next = false;
  st->window.clear ();
  st->window_bytes = 0;
  st->last_stats = GST_CLOCK_TIME_NONE;
  return TRUE;
}

static void
gst_cuda_delta_enc_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCudaDeltaEncState *st = GST_CUDA_DELTA_ENC (object)->state;
  if (st->dev.set_property (object, prop_id, value))
    return;
  GST_OBJECT_LOCK (object);
  switch (prop_id) {
    case PROP_THRESHOLD:
      st->threshold = g_value_get_uint (value);
      break;
    case PROP_KEY_INT_MAX:
      st->key_int_max = g_value_get_uint (value);
      break;
    case PROP_COMPRESSION:
      st->compression = static_cast < GstCudaDeltaCompression > (g_value_get_enum (value));
      break;
    case PROP_ZSTD_LEVEL:
      st->zstd_level = g_value_get_int (value);
      break;
    case PROP_POST_STATS:
      st->post_stats = g_value_get_boolean (value);
      break;
    case PROP_STATS_INTERVAL:
      st->stats_interval = g_value_get_uint (value);
      break;
    case PROP_INTRA_REFRESH:
      st->intra_refresh = g_value_get_boolean (value);
      break;
    case PROP_OVERLAP:
      st->overlap = g_value_get_boolean (value);
      break;
    case PROP_MOTION_SEARCH:
      st->motion_search = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (object);
}

static void
gst_cuda_delta_enc_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstCudaDeltaEncState *st = GST_CUDA_DELTA_ENC (object)->state;
  if (st->dev.get_property (object, prop_id, value))
    return;
  GST_OBJECT_LOCK (object);
  switch (prop_id) {
    case PROP_THRESHOLD:
      g_value_set_uint (value, st->threshold);
      break;
    case PROP_KEY_INT_MAX:
      g_value_set_uint (value, st->key_int_max);
      break;
    case PROP_COMPRESSION:
      g_value_set_enum (value, st->compression);
      break;
    case PROP_ZSTD_LEVEL:
      g_value_set_int (value, st->zstd_level);
      break;
    case PROP_POST_STATS:
      g_value_set_boolean (value, st->post_stats);
      break;
    case PROP_STATS_INTERVAL:
      g_value_set_uint (value, st->stats_interval);
      break;
    case PROP_INTRA_REFRESH:
      g_value_set_boolean (value, st->intra_refresh);
      break;
    case PROP_OVERLAP:
      g_value_set_boolean (value, st->overlap);
      break;
    case PROP_MOTION_SEARCH:
      g_value_set_boolean (value, st->motion_search);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (object);
}

static void
gst_cuda_delta_enc_finalize (GObject * object)
{
  GstCudaDeltaEnc *self = GST_CUDA_DELTA_ENC (object);
  delete self->state;
  self->state = nullptr;
  G_OBJECT_CLASS (gst_cuda_delta_enc_parent_class)->finalize (object);
}

static void
gst_cuda_delta_enc_class_init (GstCudaDeltaEncClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstVideoEncoderClass *enc_class = GST_VIDEO_ENCODER_CLASS (klass);
  const GParamFlags playing = static_cast < GParamFlags > (G_PARAM_READWRITE |
      G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);

  gobject_class->set_property = gst_cuda_delta_enc_set_property;
  gobject_class->get_property = gst_cuda_delta_enc_get_property;
  gobject_class->finalize = gst_cuda_delta_enc_finalize;

  g_object_class_install_property (gobject_class, PROP_THRESHOLD,
      g_param_spec_uint ("threshold", "Threshold",
          "A byte is sent when it differs from the decoder's copy by more than "
          "this; every decoded byte stays within it of its source (0: lossless)",
          0, 255, DEFAULT_THRESHOLD, playing));
  g_object_class_install_property (gobject_class, PROP_KEY_INT_MAX,
      g_param_spec_uint ("key-int-max", "Maximum keyframe interval",
          "A keyframe at least every this many frames (0: only the first, on "
          "request and on caps changes)", 0, G_MAXINT, DEFAULT_KEY_INT_MAX, playing));
  g_object_class_install_property (gobject_class, PROP_COMPRESSION,
      g_param_spec_enum ("compression", "Compression",
          "Entropy stage applied to each packet's payload",
          GST_TYPE_CUDA_DELTA_COMPRESSION, DEFAULT_COMPRESSION, playing));
  g_object_class_install_property (gobject_class, PROP_ZSTD_LEVEL,
      g_param_spec_int ("zstd-level", "zstd level",
          "zstd compression level (higher: smaller and slower), also for the "
          "keyframes of compression=rans", 1, 19,
          DEFAULT_ZSTD_LEVEL, playing));
  g_object_class_install_property (gobject_class, PROP_POST_STATS,
      g_param_spec_boolean ("post-stats", "Post statistics",
          "Post \"cudadeltaenc-stats\" element messages (at most one every "
          "stats-interval)", DEFAULT_POST_STATS, playing));
  g_object_class_install_property (gobject_class, PROP_STATS_INTERVAL,
      g_param_spec_uint ("stats-interval", "Statistics interval",
          "Least time between two statistics messages, in milliseconds of the "
          "frames' timestamps (0: every frame)", 0, G_MAXINT,
          DEFAULT_STATS_INTERVAL, playing));
  g_object_class_install_property (gobject_class, PROP_INTRA_REFRESH,
      g_param_spec_boolean ("intra-refresh", "Intra refresh",
          "Instead of periodic keyframes, code a band of tile rows without "
          "temporal prediction in every frame, sweeping the frame in key-int-max "
          "frames (30 when key-int-max is 0), so that a receiver that joins or "
          "loses a packet is whole again after one sweep, without keyframe "
          "spikes (compression=predictive only; keyframes on request still)",
          DEFAULT_INTRA_REFRESH, playing));
  g_object_class_install_property (gobject_class, PROP_OVERLAP,
      g_param_spec_boolean ("overlap", "Overlap uploads",
          "With the CUDA backend and frames in system memory: upload each frame "
          "while the one before it is encoded, at one frame of latency "
          "(reported): a frame is encoded when the next arrives, or at EOS, new "
          "caps or a drain. Taken when caps are set",
          DEFAULT_OVERLAP, playing));
  g_object_class_install_property (gobject_class, PROP_MOTION_SEARCH,
      g_param_spec_boolean ("motion-search", "Motion search",
          "Search each changed tile's motion in the frame before and code it "
          "moved where that is cheaper (compression=predictive, without "
          "intra-refresh; the decoder needs nothing set)",
          DEFAULT_MOTION_SEARCH, playing));
  gst_cuda_fx_install_device_properties (gobject_class);

  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class, "Delta frame encoder",
      "Codec/Encoder/Video", "Closed-loop thresholded frame-delta encoder",
      "gst-cudafx developers");

  enc_class->set_format = GST_DEBUG_FUNCPTR (gst_cuda_delta_enc_set_format);
  enc_class->handle_frame = GST_DEBUG_FUNCPTR (gst_cuda_delta_enc_handle_frame);
  enc_class->start = GST_DEBUG_FUNCPTR (gst_cuda_delta_enc_start);
  enc_class->stop = GST_DEBUG_FUNCPTR (gst_cuda_delta_enc_stop);
  enc_class->flush = GST_DEBUG_FUNCPTR (gst_cuda_delta_enc_flush);
  enc_class->finish = GST_DEBUG_FUNCPTR (gst_cuda_delta_enc_finish);
  enc_class->getcaps = GST_DEBUG_FUNCPTR (gst_cuda_delta_enc_getcaps);
  enc_class->propose_allocation = GST_DEBUG_FUNCPTR (gst_cuda_delta_enc_propose_allocation);
  enc_class->sink_query = GST_DEBUG_FUNCPTR (gst_cuda_delta_enc_sink_query);
  enc_class->src_query = GST_DEBUG_FUNCPTR (gst_cuda_delta_enc_src_query);
  element_class->set_context = GST_DEBUG_FUNCPTR (gst_cuda_delta_enc_set_context);

  GST_DEBUG_CATEGORY_INIT (gst_cuda_delta_enc_debug, "cudadeltaenc", 0,
      "Delta frame encoder");
}

static void
gst_cuda_delta_enc_init (GstCudaDeltaEnc * self)
{
  self->state = new GstCudaDeltaEncState ();
}
