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
 * With #GstCudaFxStatsFilter:mode=smooth the means are an exponential average
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

GST_DEBUG_CATEGORY_STATIC (gst_cuda_grey_world_debug);
#define GST_CAT_DEFAULT gst_cuda_grey_world_debug

struct GstCudaGreyWorldState
{
  std::unique_ptr < cudafx::GreyWorldOp > op;   /* streaming thread */
};

struct _GstCudaGreyWorld
{
  GstCudaFxStatsFilter parent;
  GstCudaGreyWorldState *state;
};

G_DEFINE_TYPE (GstCudaGreyWorld, gst_cuda_grey_world, GST_TYPE_CUDA_FX_STATS_FILTER);
GST_ELEMENT_REGISTER_DEFINE (cudagreyworld, "cudagreyworld", GST_RANK_NONE,
    GST_TYPE_CUDA_GREY_WORLD);

static cudafx::Status
gst_cuda_grey_world_setup (GstCudaFxFilter * filter, const GstCudaFxFilterConfig & config)
{
  return cudafx::GreyWorldOp::create (config.backend, config.in,
      &GST_CUDA_GREY_WORLD (filter)->state->op);
}

static cudafx::Status
gst_cuda_grey_world_process_ip (GstCudaFxFilter * filter, const cudafx::ImageView & frame,
    cudafx::StreamHandle stream)
{
  cudafx::GreyWorldOp & op = *GST_CUDA_GREY_WORLD (filter)->state->op;
  bool restart = false;
  const double weight = gst_cuda_fx_stats_filter_weight (GST_CUDA_FX_STATS_FILTER (filter),
      &restart);
  if (restart)
    op.reset ();
  return op.submit (stream, frame, weight);
}

static void
gst_cuda_grey_world_teardown (GstCudaFxFilter * filter)
{
  GST_CUDA_GREY_WORLD (filter)->state->op.reset ();
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
  GstCudaFxFilterClass *filter_class = GST_CUDA_FX_FILTER_CLASS (klass);

  gobject_class->finalize = gst_cuda_grey_world_finalize;
  gst_element_class_set_static_metadata (element_class, "CUDA grey-world white balance",
      "Filter/Effect/Video", "Grey-world white balance on a CUDA device or the CPU",
      "gst-cudafx developers");
  /* GRAY8 has no colour to balance. */
  gst_cuda_fx_filter_class_add_pad_templates (filter_class, GST_CUDA_FX_CUDA_FORMATS,
      GST_CUDA_FX_CUDA_FORMATS);
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
}
