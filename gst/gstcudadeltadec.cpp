/**
 * SECTION:element-cudadeltadec
 * @title: cudadeltadec
 *
 * Decodes the stream of cudadeltaenc. Every packet is validated before use
 * (sizes, checksums, format, tile bitmap; docs/delta-format.md). A damaged
 * packet, a gap in the frame counter, a DISCONT from the transport or a
 * reconstruction that fails its checksum never produces a wrong frame: the
 * frame is dropped, a keyframe is requested upstream (at most every
 * #GstVideoDecoder:min-force-key-unit-interval) and decoding resumes at the
 * next keyframe. Through rtpbin with RTCP feedback the request reaches the
 * sender as a PLI. After a flush (FLUSH_STOP, as in a flushing seek) the
 * decoder also waits for a keyframe: what follows does not continue what
 * came before, so a delta frame right after it is dropped and a keyframe
 * requested. New caps (another size or format) start a new decoder, which
 * starts at a keyframe (cudadeltaenc sends one after its caps change).
 *
 * Two kinds of dropped packets are told apart. A packet that is valid but
 * cannot be applied because its reference is missing (decoding has not
 * reached a keyframe yet: at the start, after a gap in the frame counter, a
 * DISCONT, a flush or an earlier bad packet) is normal recovery and never an
 * error. A packet that fails validation (truncated or oversized, bad magic,
 * unsupported version, a checksum mismatch, a format or size other than the
 * caps', a payload that does not decode, a reconstruction checksum that
 * differs) is undecodable: the first of a run posts a WARNING naming the
 * cause, and more than #GstVideoDecoder:max-errors of them in a row (no frame
 * decoded in between) post an ERROR naming the cause and stop the stream
 * (GST_VIDEO_DECODER_ERROR: a decoded frame, a flush or a restart clears the
 * count). This element sets max-errors to 10 (GstVideoDecoder's own default,
 * -1, which gst-inspect still shows, tolerates any number); -1 only ever
 * warns. A failure of the backend itself (a CUDA error) is an ERROR at once.
 *
 * With the CUDA backend (#GstCudaDeltaDec:backend, auto by default) the
 * reconstruction lives on the GPU: packets are validated and decompressed on
 * the CPU, applied and checked on the device. Frames go out in CUDA memory
 * (memory:CUDAMemory, all formats but GRAY8) when downstream takes it, else
 * in system memory (pinned when the element allocates it). Both backends
 * decode to the same frames.
 *
 * With #GstCudaDeltaDec:overlap (off by default) on the CUDA backend with
 * frames out in system memory, each frame is downloaded while the next one
 * decodes, at one frame of latency (reported in the latency query): a frame
 * goes out when the next has been decoded, or at EOS, a drain or new caps.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 udpsrc port=5004 caps="application/x-rtp,media=application,clock-rate=90000,encoding-name=X-GST" ! rtpgstdepay ! cudadeltadec ! videoconvert ! autovideosink
 * ]| Receives the stream of the cudadeltaenc example.
 * |[
 * gst-launch-1.0 udpsrc port=5004 caps="application/x-rtp,media=application,clock-rate=90000,encoding-name=X-GST" ! rtpgstdepay ! cudadeltadec backend=cuda ! cudadownload ! videoconvert ! autovideosink
 * ]| The same, decoding on the GPU into CUDA memory.
 */
#include "gstcudadeltadec.h"

#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "cudafx/delta.hpp"
#include "gstcudadeltacaps.h"
#include "gstcudafxcodecoverlap.h"
#include "gstcudafxdevice.h"
#include "gstcudafxpinnedallocator.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_delta_dec_debug);
#define GST_CAT_DEFAULT gst_cuda_delta_dec_debug

/* Keyframe requests: at most one every half second. */
#define DEFAULT_MIN_FORCE_KEY_UNIT_INTERVAL (GST_SECOND / 2)
/* Undecodable packets in a row before the stream fails (max-errors). */
#define DEFAULT_MAX_ERRORS 10
#define DEFAULT_OVERLAP FALSE

#define PROP_OVERLAP 0x1101

struct GstCudaDeltaDecState
{
  /* the backend and cuda-device-id settings (under the object lock), and
   * from start to stop the device */
  GstCudaFxDevice dev;

  /* streaming thread; a decoder of the backend chosen at start */
  std::unique_ptr < cudafx::DeltaDecoderBase > decoder;
  cudafx::ImageDesc desc;
  GstVideoCodecState *output = nullptr;
  bool out_cuda = false;        /* negotiated memory:CUDAMemory downstream */
  guint64 dropped = 0;
  /* undecodable packets since the last decoded frame, flush or start (the
   * base class keeps its own count for max-errors; this one says when a
   * run begins, to warn once a run) */
  guint undecodable = 0;
  /* frames dropped since the decoder was last whole: the next frame it
   * outputs posts "cudadeltadec-resynced" */
  bool lost = false;
  /* overlap: the setting (under the object lock), and from negotiate whether
   * frames go out one behind (CUDA backend, system memory out); the frame
   * whose download runs waits in `behind_frame` (its output mapped) */
  gboolean overlap = DEFAULT_OVERLAP;
  bool overlapping = false;
  GstCudaFxDownloadBehind behind;
  struct Behind
  {
    GstVideoCodecFrame *frame;  /* ours to finish */
    GstVideoFrame out;          /* mapped while its download runs */
    int slot;
  };
  std::optional < Behind > behind_frame;
};

struct _GstCudaDeltaDec
{
  GstVideoDecoder parent;
  GstCudaDeltaDecState *state;
};

G_DEFINE_TYPE (GstCudaDeltaDec, gst_cuda_delta_dec, GST_TYPE_VIDEO_DECODER);
GST_ELEMENT_REGISTER_DEFINE (cudadeltadec, "cudadeltadec", GST_RANK_NONE,
    GST_TYPE_CUDA_DELTA_DEC);

static GstStaticPadTemplate sink_template = GST_STATIC_PAD_TEMPLATE ("sink",
    GST_PAD_SINK, GST_PAD_ALWAYS, GST_STATIC_CAPS (GST_CUDA_DELTA_CAPS));
#if HAVE_GSTCUDA
#define SRC_CAPS \
  GST_VIDEO_CAPS_MAKE_WITH_FEATURES (GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, \
      GST_CUDA_DELTA_CUDA_FORMATS) "; " GST_VIDEO_CAPS_MAKE (GST_CUDA_DELTA_FORMATS)
#else
#define SRC_CAPS GST_VIDEO_CAPS_MAKE (GST_CUDA_DELTA_FORMATS)
#endif
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS, GST_STATIC_CAPS (SRC_CAPS));

/* The decoder holds CUDA memory on the CUDA backend: freed in the context. */
static void
release_decoder (GstCudaDeltaDecState * st)
{
  if (st->dev.cuda () && (st->decoder || st->overlapping)) {
    GstCudaFxDevice::Scope scope (st->dev);
    st->decoder.reset ();
    st->behind.release ();
  }
  st->decoder.reset ();
}

/* overlap: a frame whose download was queued, once it is done, goes out. */
static GstFlowReturn
finish_behind (GstCudaDeltaDec * self, GstCudaDeltaDecState::Behind b)
{
  GstCudaDeltaDecState *st = self->state;
  cudafx::Status s;
  {
    GstCudaFxDevice::Scope scope (st->dev);
    s = scope.status ();
    if (s.is_ok ())
      s = st->behind.finish (b.slot);
  }
  gst_video_frame_unmap (&b.out);
  if (!s.is_ok ()) {
    gst_video_decoder_drop_frame (GST_VIDEO_DECODER (self), b.frame);
    GST_ELEMENT_ERROR (self, STREAM, DECODE, ("%s", s.message ().c_str ()), (nullptr));
    return GST_FLOW_ERROR;
  }
  return gst_video_decoder_finish_frame (GST_VIDEO_DECODER (self), b.frame);
}

/* overlap: the frame kept back, if any, out (EOS, drain, new caps). */
static GstFlowReturn
finish_behind (GstCudaDeltaDec * self)
{
  GstCudaDeltaDecState *st = self->state;
  if (!st->behind_frame)
    return GST_FLOW_OK;
  const GstCudaDeltaDecState::Behind b = *st->behind_frame;
  st->behind_frame.reset ();
  return finish_behind (self, b);
}

/* overlap: the frame whose download runs dropped (flush, stop), after it. */
static void
discard_behind (GstCudaDeltaDec * self)
{
  GstCudaDeltaDecState *st = self->state;
  if (!st->behind_frame)
    return;
  {
    GstCudaFxDevice::Scope scope (st->dev);
    (void) st->behind.finish (st->behind_frame->slot);
  }
  gst_video_frame_unmap (&st->behind_frame->out);
  gst_video_codec_frame_unref (st->behind_frame->frame);
  st->behind_frame.reset ();
}

static gboolean
gst_cuda_delta_dec_set_format (GstVideoDecoder * decoder, GstVideoCodecState * state)
{
  GstCudaDeltaDec *self = GST_CUDA_DELTA_DEC (decoder);
  GstCudaDeltaDecState *st = self->state;
  const GstStructure *s = gst_caps_get_structure (state->caps, 0);
  const gchar *format = gst_structure_get_string (s, "format");
  gint width = 0, height = 0, version = 0;
  gst_structure_get_int (s, "version", &version);
  if (!format || !gst_structure_get_int (s, "width", &width) ||
      !gst_structure_get_int (s, "height", &height) ||
      (version != cudafx::kDeltaVersion && version != cudafx::kDeltaVersion3)) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT, ("Incomplete delta stream caps"),
        ("%" GST_PTR_FORMAT, state->caps));
    return FALSE;
  }
  const GstVideoFormat vf = gst_video_format_from_string (format);
  /* the frame still downloading belongs to the old caps: out first */
  (void) finish_behind (self);
  if (st->output)
    gst_video_codec_state_unref (st->output);
  st->output = gst_video_decoder_set_output_state (decoder, vf, width, height, state);
  cudafx::ImageDesc desc;
  if (!gst_cuda_fx_desc_from_info (&st->output->info, &desc)) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT, ("Unsupported format %s", format), (nullptr));
    return FALSE;
  }
  release_decoder (st);
  st->desc = desc;
  cudafx::Status status;
  if (st->dev.cuda ()) {
    GstCudaFxDevice::Scope scope (st->dev);
    status = scope.status ();
    std::unique_ptr < cudafx::DeltaDecoderCuda > d;
    if (status.is_ok ())
      status = cudafx::DeltaDecoderCuda::create (desc, st->dev.stream (), &d);
    st->decoder = std::move (d);
  } else {
    std::unique_ptr < cudafx::DeltaDecoder > d;
    status = cudafx::DeltaDecoder::create (desc, &d);
    st->decoder = std::move (d);
  }
  if (!status.is_ok ()) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT, ("%s", status.message ().c_str ()), (nullptr));
    return FALSE;
  }
  return gst_video_decoder_negotiate (decoder);
}

/* Every frame not output: counted, and the next one output says the
 * decoder is whole again ("cudadeltadec-resynced"). */
static GstFlowReturn
discard (GstCudaDeltaDec * self, GstVideoCodecFrame * frame)
{
  GstCudaDeltaDecState *st = self->state;
  st->dropped++;
  st->lost = true;
  return gst_video_decoder_drop_frame (GST_VIDEO_DECODER (self), frame);
}

/* A delta frame of an intra-refresh stream applied while the decoder
 * rebuilds its tiles: not output, and no keyframe asked for (the sweep
 * makes the decoder whole). */
static GstFlowReturn
drop_refreshing (GstCudaDeltaDec * self, GstVideoCodecFrame * frame, const std::string & why)
{
  GST_DEBUG_OBJECT (self, "not output, frame %u: %s", frame->system_frame_number, why.c_str ());
  return discard (self, frame);
}

static GstFlowReturn
drop (GstCudaDeltaDec * self, GstVideoCodecFrame * frame, const std::string & why)
{
  GstCudaDeltaDecState *st = self->state;
  GST_WARNING_OBJECT (self, "dropping frame %u: %s", frame->system_frame_number, why.c_str ());
  /* Asks upstream for a keyframe, throttled by min-force-key-unit-interval;
   * not on a stream with intra refresh, whose sweep makes the decoder whole
   * (a keyframe there would bring back the spike refresh avoids). */
  if (!st->decoder || !st->decoder->refresh_stream ())
    gst_video_decoder_request_sync_point (GST_VIDEO_DECODER (self), frame,
        static_cast < GstVideoDecoderRequestSyncPointFlags > (0));
  return discard (self, frame);
}

/* A packet that failed validation: dropped, and a keyframe requested, as
 * any drop; the first of a run is a warning, and once more than max-errors
 * come in a row GST_VIDEO_DECODER_ERROR posts the error and returns
 * GST_FLOW_ERROR. */
static GstFlowReturn
drop_undecodable (GstCudaDeltaDec * self, GstVideoCodecFrame * frame, const std::string & why)
{
  GstCudaDeltaDecState *st = self->state;
  const guint32 number = frame->system_frame_number;
  drop (self, frame, why);
  if (st->undecodable++ == 0)
    GST_ELEMENT_WARNING (self, STREAM, DECODE, ("%s", why.c_str ()),
        ("packet %u cannot be decoded and was dropped; more than max-errors (%d) "
            "such packets in a row are an error", number,
            gst_video_decoder_get_max_errors (GST_VIDEO_DECODER (self))));
  GstFlowReturn ret = GST_FLOW_OK;
  GST_VIDEO_DECODER_ERROR (self, 1, STREAM, DECODE, ("%s", why.c_str ()),
      ("%u undecodable packets in a row, more than max-errors (%d)", st->undecodable,
          gst_video_decoder_get_max_errors (GST_VIDEO_DECODER (self))), ret);
  return ret;
}

static cudafx::Status
output_cpu (GstCudaDeltaDec * self, GstVideoCodecFrame * frame)
{
  GstCudaDeltaDecState *st = self->state;
  GstVideoFrame out;
  bool on_device = false;
  CUDAFX_TRY (gst_cuda_fx_map_frame (st->dev, &out, &st->output->info, frame->output_buffer,
          GST_MAP_WRITE, &on_device));
  const cudafx::ImageView & rec = st->decoder->reconstruction ();
  const cudafx::DeltaLayout & layout = st->decoder->layout ();
  for (int i = 0; i < layout.n_planes; i++) {
    const cudafx::DeltaPlaneLayout & p = layout.planes[i];
    for (int y = 0; y < p.height; y++)
      memcpy (static_cast < uint8_t * >(GST_VIDEO_FRAME_PLANE_DATA (&out, i)) +
          static_cast < size_t > (y) * GST_VIDEO_FRAME_PLANE_STRIDE (&out, i),
          rec.data[i] + static_cast < size_t > (y) * rec.pitch[i], p.row_bytes);
  }
  gst_video_frame_unmap (&out);
  return cudafx::Status::ok ();
}

/* The device reconstruction into the output buffer (CUDA memory of our
 * context in place, else host memory), synchronised before it goes out:
 * libgstcuda's memory carries no stream. */
static cudafx::Status
output_cuda (GstCudaDeltaDec * self, GstVideoCodecFrame * frame)
{
  GstCudaDeltaDecState *st = self->state;
  GstCudaFxDevice::Scope scope (st->dev);
  CUDAFX_TRY (scope.status ());
  GstVideoFrame out;
  bool on_device = false;
  CUDAFX_TRY (gst_cuda_fx_map_frame (st->dev, &out, &st->output->info, frame->output_buffer,
          GST_MAP_WRITE, &on_device));
  cudafx::Status s = cudafx::copy_image_async (gst_cuda_fx_view_of_frame (&out, st->desc),
      st->decoder->reconstruction (), st->dev.stream ());
  const cudafx::Status sync = st->dev.synchronize ();
  if (s.is_ok ())
    s = sync;
  gst_video_frame_unmap (&out);
  return s;
}

/* overlap: the reconstruction's download into `frame`'s output queued
 * (beside the next frame's decoding) and `frame` kept back; the frame kept
 * back before it goes out. *kept: FALSE where the output buffer is not in
 * system memory (the caller outputs it at once). */
static cudafx::Status
output_behind (GstCudaDeltaDec * self, GstVideoCodecFrame * frame, bool *kept)
{
  GstCudaDeltaDecState *st = self->state;
  *kept = false;
  GstCudaFxDevice::Scope scope (st->dev);
  CUDAFX_TRY (scope.status ());
  GstCudaDeltaDecState::Behind b { frame, {}, 0 };
  bool on_device = false;
  CUDAFX_TRY (gst_cuda_fx_map_frame (st->dev, &b.out, &st->output->info, frame->output_buffer,
          GST_MAP_WRITE, &on_device));
  if (on_device) {
    gst_video_frame_unmap (&b.out);
    return cudafx::Status::ok ();
  }
  const cudafx::Status s = st->behind.download (st->decoder->reconstruction (),
      gst_cuda_fx_view_of_frame (&b.out, st->desc), st->dev.stream (), &b.slot);
  if (!s.is_ok ()) {
    (void) st->dev.synchronize ();
    (void) st->behind.synchronize ();
    gst_video_frame_unmap (&b.out);
    return s;
  }
  st->behind_frame = b;
  *kept = true;
  return s;
}

static GstFlowReturn
gst_cuda_delta_dec_handle_frame (GstVideoDecoder * decoder, GstVideoCodecFrame * frame)
{
  GstCudaDeltaDec *self = GST_CUDA_DELTA_DEC (decoder);
  GstCudaDeltaDecState *st = self->state;
  if (!st->decoder) {
    gst_video_decoder_drop_frame (decoder, frame);
    return GST_FLOW_NOT_NEGOTIATED;
  }
  if (GST_BUFFER_FLAG_IS_SET (frame->input_buffer, GST_BUFFER_FLAG_DISCONT))
    st->decoder->discont ();

  GstMapInfo map;
  if (!gst_buffer_map (frame->input_buffer, &map, GST_MAP_READ))
    return drop (self, frame, "cannot map the input buffer");
  std::string error;
  const cudafx::DeltaDecodeResult r = st->decoder->decode (map.data, map.size, &error);
  gst_buffer_unmap (frame->input_buffer, &map);
  /* overlap: the frame before this one was downloaded while this one
   * decoded; it goes out after this one's download is queued, or now where
   * this one has none */
  std::optional < GstCudaDeltaDecState::Behind > before;
  before.swap (st->behind_frame);
  if (before && r != cudafx::DeltaDecodeResult::Frame) {
    const GstFlowReturn ret = finish_behind (self, *before);
    before.reset ();
    if (ret != GST_FLOW_OK) {
      gst_video_decoder_drop_frame (decoder, frame);
      return ret;
    }
  }
  if (r == cudafx::DeltaDecodeResult::Failed) {
    gst_video_decoder_drop_frame (decoder, frame);
    GST_ELEMENT_ERROR (self, STREAM, DECODE, ("%s", error.c_str ()), (nullptr));
    return GST_FLOW_ERROR;
  }
  if (r == cudafx::DeltaDecodeResult::Corrupt)
    return drop_undecodable (self, frame, error);
  if (r == cudafx::DeltaDecodeResult::Refreshing)
    return drop_refreshing (self, frame, error);
  if (r != cudafx::DeltaDecodeResult::Frame)
    return drop (self, frame, error);

  /* Allocating may renegotiate (downstream asked to reconfigure) and push
   * new caps at once: the frame kept back goes out under the caps it was
   * made for, first. */
  if (before && gst_pad_needs_reconfigure (GST_VIDEO_DECODER_SRC_PAD (decoder))) {
    const GstFlowReturn before_ret = finish_behind (self, *before);
    before.reset ();
    if (before_ret != GST_FLOW_OK) {
      gst_video_decoder_drop_frame (decoder, frame);
      return before_ret;
    }
  }
  const GstFlowReturn ret = gst_video_decoder_allocate_output_frame (decoder, frame);
  if (ret != GST_FLOW_OK) {
    if (before)
      (void) finish_behind (self, *before);
    gst_video_decoder_drop_frame (decoder, frame);
    return ret;
  }
  bool kept = false;
  cudafx::Status s;
  if (st->overlapping)
    s = output_behind (self, frame, &kept);
  if (s.is_ok () && !kept)
    s = st->dev.cuda ()? output_cuda (self, frame) : output_cpu (self, frame);
  if (!s.is_ok ()) {
    if (before)
      (void) finish_behind (self, *before);
    gst_video_decoder_drop_frame (decoder, frame);
    GST_ELEMENT_ERROR (self, STREAM, DECODE, ("%s", s.message ().c_str ()), (nullptr));
    return GST_FLOW_ERROR;
  }
  if (st->decoder->last_info ().keyframe)
    GST_VIDEO_CODEC_FRAME_SET_SYNC_POINT (frame);
  st->undecodable = 0;
  if (st->lost) {
    st->lost = false;
    gst_element_post_message (GST_ELEMENT (self),
        gst_message_new_element (GST_OBJECT (self),
            gst_structure_new ("cudadeltadec-resynced",
                "frame", G_TYPE_UINT, st->decoder->last_info ().counter,
                "via", G_TYPE_STRING, st->decoder->refreshed ()? "intra-refresh" : "keyframe",
                nullptr)));
  }
  const GstFlowReturn before_ret = before ? finish_behind (self, *before) : GST_FLOW_OK;
  if (kept)
    return before_ret;
  const GstFlowReturn frame_ret = gst_video_decoder_finish_frame (decoder, frame);
  return before_ret != GST_FLOW_OK ? before_ret : frame_ret;
}

/* EOS (finish) and the base class's drains (drain): the frame kept back
 * out. */
static GstFlowReturn
gst_cuda_delta_dec_finish (GstVideoDecoder * decoder)
{
  return finish_behind (GST_CUDA_DELTA_DEC (decoder));
}

/* A GAP goes downstream at once (GstVideoDecoder drains on it only in
 * trick modes): the frame kept back goes first, keeping the order. */
static gboolean
gst_cuda_delta_dec_sink_event (GstVideoDecoder * decoder, GstEvent * event)
{
  if (GST_EVENT_TYPE (event) == GST_EVENT_GAP)
    (void) finish_behind (GST_CUDA_DELTA_DEC (decoder));
  return GST_VIDEO_DECODER_CLASS (gst_cuda_delta_dec_parent_class)->sink_event (decoder, event);
}

/* A flush (FLUSH_STOP, or reverse playback's discont): what follows does
 * not continue what came before, so decoding resumes at a keyframe. The
 * base class clears its error count. */
static gboolean
gst_cuda_delta_dec_flush (GstVideoDecoder * decoder)
{
  GstCudaDeltaDecState *st = GST_CUDA_DELTA_DEC (decoder)->state;
  discard_behind (GST_CUDA_DELTA_DEC (decoder));
  if (st->decoder)
    st->decoder->discont ();
  st->undecodable = 0;
  return TRUE;
}

static gboolean
gst_cuda_delta_dec_start (GstVideoDecoder * decoder)
{
  GstCudaDeltaDec *self = GST_CUDA_DELTA_DEC (decoder);
  GstCudaDeltaDecState *st = self->state;
  st->undecodable = 0;
  return st->dev.start (GST_ELEMENT (self));
}

/* CUDA memory out when the backend is CUDA, the format has it and
 * downstream says it takes it (a caps structure with the feature, as
 * cudadownload's; not merely ANY caps, as nvcodec's decoders decide);
 * system memory otherwise. */
static gboolean
gst_cuda_delta_dec_negotiate (GstVideoDecoder * decoder)
{
  GstCudaDeltaDecState *st = GST_CUDA_DELTA_DEC (decoder)->state;
  GstVideoCodecState *out = gst_video_decoder_get_output_state (decoder);
  if (!out)
    return FALSE;
  if (out->caps)
    gst_caps_unref (out->caps);
  out->caps = gst_video_info_to_caps (&out->info);
  st->out_cuda = false;
#if HAVE_GSTCUDA
  if (st->dev.cuda () && GST_VIDEO_INFO_FORMAT (&out->info) != GST_VIDEO_FORMAT_GRAY8) {
    GstCaps *cuda_caps = gst_caps_copy (out->caps);
    gst_caps_set_features (cuda_caps, 0,
        gst_caps_features_new (GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY, nullptr));
    GstCaps *peer = gst_pad_peer_query_caps (GST_VIDEO_DECODER_SRC_PAD (decoder), nullptr);
    for (guint i = 0; peer && i < gst_caps_get_size (peer) && !st->out_cuda; i++) {
      GstCapsFeatures *f = gst_caps_get_features (peer, i);
      if (!f || gst_caps_features_is_any (f) ||
          !gst_caps_features_contains (f, GST_CAPS_FEATURE_MEMORY_CUDA_MEMORY))
        continue;
      /* the fields alone (format, size), against ours in system memory */
      GstCaps *fields = gst_caps_new_full (gst_structure_copy (gst_caps_get_structure (peer,
                  i)), nullptr);
      st->out_cuda = gst_caps_can_intersect (fields, out->caps);
      gst_caps_unref (fields);
    }
    if (st->out_cuda)
      gst_caps_replace (&out->caps, cuda_caps);
    if (peer)
      gst_caps_unref (peer);
    gst_caps_unref (cuda_caps);
  }
#endif
  gst_caps_replace (&out->allocation_caps, out->caps);
  GST_OBJECT_LOCK (decoder);
  const bool overlap = st->overlap;
  GST_OBJECT_UNLOCK (decoder);
  const bool overlapping = overlap && st->dev.cuda () && !st->out_cuda;
  if (overlapping != st->overlapping)
    GST_INFO_OBJECT (decoder, "frames %s", overlapping ?
        "downloaded behind: one frame of latency" : "out as they decode");
  /* A frame kept back stays so: negotiation may run inside handle_frame
   * (allocating or finishing a frame), where pushing it would reorder the
   * frames; handle_frame puts it out whatever the setting. */
  st->overlapping = overlapping;
  /* one frame of latency with overlap (a frame leaves when the next has
   * decoded), none otherwise */
  GstClockTime frame_dur = 0;
  if (overlapping && GST_VIDEO_INFO_FPS_N (&out->info) > 0)
    frame_dur = gst_util_uint64_scale (GST_SECOND, GST_VIDEO_INFO_FPS_D (&out->info),
        GST_VIDEO_INFO_FPS_N (&out->info));
  gst_video_decoder_set_latency (decoder, frame_dur, frame_dur);
  gst_video_codec_state_unref (out);
  return GST_VIDEO_DECODER_CLASS (gst_cuda_delta_dec_parent_class)->negotiate (decoder);
}

/* Output buffers: a CUDA pool of our context for CUDA memory; pinned
 * system memory on the CUDA backend (the download runs at full speed);
 * downstream's or a plain pool otherwise. */
static gboolean
gst_cuda_delta_dec_decide_allocation (GstVideoDecoder * decoder, GstQuery * query)
{
  GstCudaDeltaDecState *st = GST_CUDA_DELTA_DEC (decoder)->state;
  GstCaps *caps = nullptr;
  gst_query_parse_allocation (query, &caps, nullptr);
  GstVideoInfo info;
  if (!caps || !gst_video_info_from_caps (&info, caps))
    return FALSE;
  guint size = GST_VIDEO_INFO_SIZE (&info), min = 0, max = 0;
  GstBufferPool *pool = nullptr;
  if (st->dev.cuda () && gst_cuda_fx_caps_are_cuda (caps)) {
    pool = st->dev.new_cuda_pool (caps, &size, min, max);
  } else if (st->dev.cuda () && st->dev.pinned ()) {
    pool = gst_cuda_fx_pinned_pool_new (st->dev.pinned (), caps, size, min, max);
  } else {
    return GST_VIDEO_DECODER_CLASS (gst_cuda_delta_dec_parent_class)->decide_allocation
        (decoder, query);
  }
  if (!pool)
    return FALSE;
  if (gst_query_get_n_allocation_pools (query) > 0)
    gst_query_set_nth_allocation_pool (query, 0, pool, size, min, max);
  else
    gst_query_add_allocation_pool (query, pool, size, min, max);
  gst_object_unref (pool);
  return TRUE;
}

static void
gst_cuda_delta_dec_set_context (GstElement * element, GstContext * context)
{
  GstCudaDeltaDecState *st = GST_CUDA_DELTA_DEC (element)->state;
  st->dev.set_context (element, context);
  GST_ELEMENT_CLASS (gst_cuda_delta_dec_parent_class)->set_context (element, context);
}

static gboolean
gst_cuda_delta_dec_sink_query (GstVideoDecoder * decoder, GstQuery * query)
{
  if (GST_CUDA_DELTA_DEC (decoder)->state->dev.handle_context_query (GST_ELEMENT (decoder),
          query))
    return TRUE;
  return GST_VIDEO_DECODER_CLASS (gst_cuda_delta_dec_parent_class)->sink_query (decoder,
      query);
}

static gboolean
gst_cuda_delta_dec_src_query (GstVideoDecoder * decoder, GstQuery * query)
{
  if (GST_CUDA_DELTA_DEC (decoder)->state->dev.handle_context_query (GST_ELEMENT (decoder),
          query))
    return TRUE;
  return GST_VIDEO_DECODER_CLASS (gst_cuda_delta_dec_parent_class)->src_query (decoder,
      query);
}

static void
gst_cuda_delta_dec_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCudaDeltaDecState *st = GST_CUDA_DELTA_DEC (object)->state;
  if (prop_id == PROP_OVERLAP) {
    GST_OBJECT_LOCK (object);
    st->overlap = g_value_get_boolean (value);
    GST_OBJECT_UNLOCK (object);
  } else if (!st->dev.set_property (object, prop_id, value)) {
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
  }
}

static void
gst_cuda_delta_dec_get_property (GObject * object, guint prop_id, GValue * value,
    GParamSpec * pspec)
{
  GstCudaDeltaDecState *st = GST_CUDA_DELTA_DEC (object)->state;
  if (prop_id == PROP_OVERLAP) {
    GST_OBJECT_LOCK (object);
    g_value_set_boolean (value, st->overlap);
    GST_OBJECT_UNLOCK (object);
  } else if (!st->dev.get_property (object, prop_id, value)) {
    G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
  }
}

static gboolean
gst_cuda_delta_dec_stop (GstVideoDecoder * decoder)
{
  GstCudaDeltaDecState *st = GST_CUDA_DELTA_DEC (decoder)->state;
  discard_behind (GST_CUDA_DELTA_DEC (decoder));
  release_decoder (st);
  st->overlapping = false;
  st->dev.stop ();
  if (st->output)
    gst_video_codec_state_unref (st->output);
  st->output = nullptr;
  return TRUE;
}

static void
gst_cuda_delta_dec_finalize (GObject * object)
{
  GstCudaDeltaDec *self = GST_CUDA_DELTA_DEC (object);
  delete self->state;
  self->state = nullptr;
  G_OBJECT_CLASS (gst_cuda_delta_dec_parent_class)->finalize (object);
}

static void
gst_cuda_delta_dec_class_init (GstCudaDeltaDecClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstVideoDecoderClass *dec_class = GST_VIDEO_DECODER_CLASS (klass);

  gobject_class->finalize = gst_cuda_delta_dec_finalize;
  gobject_class->set_property = gst_cuda_delta_dec_set_property;
  gobject_class->get_property = gst_cuda_delta_dec_get_property;
  gst_cuda_fx_install_device_properties (gobject_class);
  g_object_class_install_property (gobject_class, PROP_OVERLAP,
      g_param_spec_boolean ("overlap", "Overlap downloads",
          "With the CUDA backend and frames out in system memory: download each "
          "frame while the next one decodes, at one frame of latency (reported): "
          "a frame goes out when the next has decoded, or at EOS, a drain or new "
          "caps. Taken at negotiation",
          DEFAULT_OVERLAP, static_cast < GParamFlags > (G_PARAM_READWRITE |
              G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING)));
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class, "Delta frame decoder",
      "Codec/Decoder/Video", "Decoder of cudadeltaenc's closed-loop frame deltas",
      "gst-cudafx developers");
  dec_class->set_format = GST_DEBUG_FUNCPTR (gst_cuda_delta_dec_set_format);
  dec_class->handle_frame = GST_DEBUG_FUNCPTR (gst_cuda_delta_dec_handle_frame);
  dec_class->start = GST_DEBUG_FUNCPTR (gst_cuda_delta_dec_start);
  dec_class->stop = GST_DEBUG_FUNCPTR (gst_cuda_delta_dec_stop);
  dec_class->flush = GST_DEBUG_FUNCPTR (gst_cuda_delta_dec_flush);
  dec_class->finish = GST_DEBUG_FUNCPTR (gst_cuda_delta_dec_finish);
  dec_class->drain = GST_DEBUG_FUNCPTR (gst_cuda_delta_dec_finish);
  dec_class->sink_event = GST_DEBUG_FUNCPTR (gst_cuda_delta_dec_sink_event);
  dec_class->negotiate = GST_DEBUG_FUNCPTR (gst_cuda_delta_dec_negotiate);
  dec_class->decide_allocation = GST_DEBUG_FUNCPTR (gst_cuda_delta_dec_decide_allocation);
  dec_class->sink_query = GST_DEBUG_FUNCPTR (gst_cuda_delta_dec_sink_query);
  dec_class->src_query = GST_DEBUG_FUNCPTR (gst_cuda_delta_dec_src_query);
  element_class->set_context = GST_DEBUG_FUNCPTR (gst_cuda_delta_dec_set_context);
  GST_DEBUG_CATEGORY_INIT (gst_cuda_delta_dec_debug, "cudadeltadec", 0,
      "Delta frame decoder");
}

static void
gst_cuda_delta_dec_init (GstCudaDeltaDec * self)
{
  self->state = new GstCudaDeltaDecState ();
  /* Each packet is one whole frame. */
  gst_video_decoder_set_packetized (GST_VIDEO_DECODER (self), TRUE);
  g_object_set (self, "min-force-key-unit-interval",
      (guint64) DEFAULT_MIN_FORCE_KEY_UNIT_INTERVAL, nullptr);
  gst_video_decoder_set_max_errors (GST_VIDEO_DECODER (self), DEFAULT_MAX_ERRORS);
}
