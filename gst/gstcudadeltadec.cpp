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
 * sender as a PLI.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 udpsrc port=5004 caps="application/x-rtp,media=application,clock-rate=90000,encoding-name=X-GST" ! rtpgstdepay ! cudadeltadec ! videoconvert ! autovideosink
 * ]| Receives the stream of the cudadeltaenc example.
 */
#include "gstcudadeltadec.h"

#include <cstring>
#include <memory>
#include <string>

#include "cudafx/delta.hpp"
#include "gstcudadeltacaps.h"
#include "gstcudafxfilter.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_delta_dec_debug);
#define GST_CAT_DEFAULT gst_cuda_delta_dec_debug

/* Keyframe requests: at most one every half second. */
#define DEFAULT_MIN_FORCE_KEY_UNIT_INTERVAL (GST_SECOND / 2)

struct GstCudaDeltaDecState
{
  std::unique_ptr < cudafx::DeltaDecoder > decoder;
  GstVideoCodecState *output = nullptr;
  guint64 dropped = 0;
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
static GstStaticPadTemplate src_template = GST_STATIC_PAD_TEMPLATE ("src",
    GST_PAD_SRC, GST_PAD_ALWAYS,
    GST_STATIC_CAPS (GST_VIDEO_CAPS_MAKE (GST_CUDA_DELTA_FORMATS)));

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
      !gst_structure_get_int (s, "height", &height) || version != 1) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT, ("Incomplete delta stream caps"),
        ("%" GST_PTR_FORMAT, state->caps));
    return FALSE;
  }
  const GstVideoFormat vf = gst_video_format_from_string (format);
  if (st->output)
    gst_video_codec_state_unref (st->output);
  st->output = gst_video_decoder_set_output_state (decoder, vf, width, height, state);
  cudafx::ImageDesc desc;
  if (!gst_cuda_fx_desc_from_info (&st->output->info, &desc)) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT, ("Unsupported format %s", format), (nullptr));
    return FALSE;
  }
  const cudafx::Status status = cudafx::DeltaDecoder::create (desc, &st->decoder);
  if (!status.is_ok ()) {
    GST_ELEMENT_ERROR (self, STREAM, FORMAT, ("%s", status.message ().c_str ()), (nullptr));
    return FALSE;
  }
  return gst_video_decoder_negotiate (decoder);
}

static GstFlowReturn
drop (GstCudaDeltaDec * self, GstVideoCodecFrame * frame, const std::string & why)
{
  GstCudaDeltaDecState *st = self->state;
  st->dropped++;
  GST_WARNING_OBJECT (self, "dropping frame %u: %s", frame->system_frame_number, why.c_str ());
  /* Asks upstream for a keyframe, throttled by min-force-key-unit-interval. */
  gst_video_decoder_request_sync_point (GST_VIDEO_DECODER (self), frame,
      static_cast < GstVideoDecoderRequestSyncPointFlags > (0));
  return gst_video_decoder_drop_frame (GST_VIDEO_DECODER (self), frame);
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
  if (r != cudafx::DeltaDecodeResult::Frame)
    return drop (self, frame, error);

  const GstFlowReturn ret = gst_video_decoder_allocate_output_frame (decoder, frame);
  if (ret != GST_FLOW_OK) {
    gst_video_decoder_drop_frame (decoder, frame);
    return ret;
  }
  GstVideoFrame out;
  if (!gst_video_frame_map (&out, &st->output->info, frame->output_buffer, GST_MAP_WRITE)) {
    gst_video_decoder_drop_frame (decoder, frame);
    GST_ELEMENT_ERROR (self, STREAM, DECODE, ("Cannot map the output frame"), (nullptr));
    return GST_FLOW_ERROR;
  }
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
  if (st->decoder->last_info ().keyframe)
    GST_VIDEO_CODEC_FRAME_SET_SYNC_POINT (frame);
  return gst_video_decoder_finish_frame (decoder, frame);
}

static gboolean
gst_cuda_delta_dec_stop (GstVideoDecoder * decoder)
{
  GstCudaDeltaDecState *st = GST_CUDA_DELTA_DEC (decoder)->state;
  st->decoder.reset ();
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
  gst_element_class_add_static_pad_template (element_class, &sink_template);
  gst_element_class_add_static_pad_template (element_class, &src_template);
  gst_element_class_set_static_metadata (element_class, "Delta frame decoder",
      "Codec/Decoder/Video", "Decoder of cudadeltaenc's closed-loop frame deltas",
      "gst-cudafx developers");
  dec_class->set_format = GST_DEBUG_FUNCPTR (gst_cuda_delta_dec_set_format);
  dec_class->handle_frame = GST_DEBUG_FUNCPTR (gst_cuda_delta_dec_handle_frame);
  dec_class->stop = GST_DEBUG_FUNCPTR (gst_cuda_delta_dec_stop);
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
}
