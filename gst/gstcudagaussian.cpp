/**
 * SECTION:element-cudagaussian
 * @title: cudagaussian
 *
 * Gaussian blur, separable, of any sigma up to 42 (255 taps an axis), on a
 * CUDA device or on the CPU (same result bit for bit). Every channel is
 * filtered, alpha included; in planar and semi-planar formats each plane is
 * filtered, the subsampled chroma planes with sigma scaled down by their
 * subsampling so that the blur is the same in image pixels.
 *
 * Taps are exp(-k²/2σ²), normalised, over a radius of ceil(3σ) unless
 * #GstCudaGaussian:kernel-size is given. Pixels outside the frame come
 * from #GstCudaGaussian:border-mode.
 *
 * Frames in system memory are copied to the device through pinned memory;
 * frames in memory:CUDAMemory (from cudaupload or another cudafx element)
 * stay on the device.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 videotestsrc ! video/x-raw,format=RGBA ! cudagaussian sigma=3 ! videoconvert ! autovideosink
 * ]| Blurs in system memory (CUDA when a device is usable, else the CPU).
 * |[
 * gst-launch-1.0 videotestsrc ! cudaupload ! "video/x-raw(memory:CUDAMemory)" ! cudagaussian sigma=1.1 kernel-size=5 ! cudadownload ! videoconvert ! autovideosink
 * ]| Blurs frames that stay in CUDA memory between cudaupload and cudadownload.
 * |[
 * gst-launch-1.0 filesrc location=photo.jpg ! jpegdec ! videoconvert ! cudagaussian sigma=8 border-mode=reflect-101 backend=cpu ! videoconvert ! pngenc ! filesink location=blurred.png
 * ]| Blurs a photo on the CPU backend.
 */
#include "gstcudagaussian.h"

#include <memory>

#include "cudafx/gaussian.hpp"
#include "gstcudafxpending.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_gaussian_debug);
#define GST_CAT_DEFAULT gst_cuda_gaussian_debug

enum
{
  PROP_0,
  PROP_SIGMA,
  PROP_SIGMA_Y,
  PROP_KERNEL_SIZE,
  PROP_BORDER_MODE,
};

#define DEFAULT_SIGMA 1.0
#define DEFAULT_SIGMA_Y 0.0
#define DEFAULT_KERNEL_SIZE 0
#define DEFAULT_BORDER_MODE GST_CUDA_FX_BORDER_REPLICATE
/* 3 * 42 = 126 <= cudafx::kGaussianMaxRadius */
#define MIN_SIGMA 0.05
#define MAX_SIGMA 42.0

struct GstCudaGaussianState
{
  /* properties, under the object lock */
  GstCudaFxPending < cudafx::GaussianParams > params;

  /* streaming thread */
  std::unique_ptr < cudafx::GaussianOp > op;
};

struct _GstCudaGaussian
{
  GstCudaFxFilter parent;
  GstCudaGaussianState *state;
};

G_DEFINE_TYPE (GstCudaGaussian, gst_cuda_gaussian, GST_TYPE_CUDA_FX_FILTER);
GST_ELEMENT_REGISTER_DEFINE (cudagaussian, "cudagaussian", GST_RANK_NONE,
    GST_TYPE_CUDA_GAUSSIAN);

static cudafx::Status
gst_cuda_gaussian_setup (GstCudaFxFilter * filter, const GstCudaFxFilterConfig & config)
{
  GstCudaGaussian *self = GST_CUDA_GAUSSIAN (filter);
  return cudafx::GaussianOp::create (config.backend, config.in,
      self->state->params.take (self), &self->state->op);
}

static cudafx::Status
gst_cuda_gaussian_process (GstCudaFxFilter * filter, const cudafx::ImageView & src,
    const cudafx::ImageView & dst, cudafx::StreamHandle stream)
{
  GstCudaGaussian *self = GST_CUDA_GAUSSIAN (filter);
  cudafx::GaussianParams p;
  if (self->state->params.take_if_changed (self, &p)) {
    GST_DEBUG_OBJECT (self, "new parameters: sigma %g/%g, kernel %d, border %d",
        p.sigma_x, p.sigma_y, p.kernel_size_x, static_cast < int >(p.border));
    CUDAFX_TRY (self->state->op->set_params (p));
  }
  return self->state->op->submit (stream, src, dst);
}

static void
gst_cuda_gaussian_teardown (GstCudaFxFilter * filter)
{
  GST_CUDA_GAUSSIAN (filter)->state->op.reset ();
}

static void
gst_cuda_gaussian_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCudaGaussian *self = GST_CUDA_GAUSSIAN (object);
  cudafx::GaussianParams & p = self->state->params.value;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_SIGMA:
      p.sigma_x = g_value_get_double (value);
      break;
    case PROP_SIGMA_Y:
      p.sigma_y = g_value_get_double (value);
      break;
    case PROP_KERNEL_SIZE:{
      const gint k = g_value_get_int (value);
      if (k != 0 && k % 2 == 0) {
        GST_OBJECT_UNLOCK (self);
        g_warning ("cudagaussian: kernel-size must be 0 or odd, %d ignored", k);
        return;
      }
      p.kernel_size_x = p.kernel_size_y = k;
      break;
    }
    case PROP_BORDER_MODE:
      p.border = gst_cuda_fx_border_to_op (static_cast < GstCudaFxBorderMode > (g_value_get_enum (value)));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      GST_OBJECT_UNLOCK (self);
      return;
  }
  self->state->params.changed = true;
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cuda_gaussian_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstCudaGaussian *self = GST_CUDA_GAUSSIAN (object);
  const cudafx::GaussianParams & p = self->state->params.value;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_SIGMA:
      g_value_set_double (value, p.sigma_x);
      break;
    case PROP_SIGMA_Y:
      g_value_set_double (value, p.sigma_y);
      break;
    case PROP_KERNEL_SIZE:
      g_value_set_int (value, p.kernel_size_x);
      break;
    case PROP_BORDER_MODE:
      g_value_set_enum (value, gst_cuda_fx_border_from_op (p.border));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cuda_gaussian_finalize (GObject * object)
{
  GstCudaGaussian *self = GST_CUDA_GAUSSIAN (object);
  delete self->state;
  self->state = nullptr;
  G_OBJECT_CLASS (gst_cuda_gaussian_parent_class)->finalize (object);
}

static void
gst_cuda_gaussian_class_init (GstCudaGaussianClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstCudaFxFilterClass *filter_class = GST_CUDA_FX_FILTER_CLASS (klass);
  const GParamFlags flags = static_cast < GParamFlags > (G_PARAM_READWRITE |
      G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING | GST_PARAM_CONTROLLABLE);

  gobject_class->set_property = gst_cuda_gaussian_set_property;
  gobject_class->get_property = gst_cuda_gaussian_get_property;
  gobject_class->finalize = gst_cuda_gaussian_finalize;

  g_object_class_install_property (gobject_class, PROP_SIGMA,
      g_param_spec_double ("sigma", "Sigma",
          "Standard deviation of the Gaussian in pixels (horizontal, and "
          "vertical unless sigma-y is set)", MIN_SIGMA, MAX_SIGMA, DEFAULT_SIGMA,
          flags));
  g_object_class_install_property (gobject_class, PROP_SIGMA_Y,
      g_param_spec_double ("sigma-y", "Sigma Y",
          "Vertical standard deviation in pixels (0: same as sigma)", 0.0,
          MAX_SIGMA, DEFAULT_SIGMA_Y, flags));
  g_object_class_install_property (gobject_class, PROP_KERNEL_SIZE,
      g_param_spec_int ("kernel-size", "Kernel size",
          "Taps per axis, odd (0: 2*ceil(3*sigma)+1)", 0,
          2 * cudafx::kGaussianMaxRadius + 1, DEFAULT_KERNEL_SIZE, flags));
  g_object_class_install_property (gobject_class, PROP_BORDER_MODE,
      g_param_spec_enum ("border-mode", "Border mode",
          "Where pixels outside the frame come from", GST_TYPE_CUDA_FX_BORDER_MODE,
          DEFAULT_BORDER_MODE, flags));

  gst_element_class_set_static_metadata (element_class, "CUDA Gaussian blur",
      "Filter/Effect/Video", "Separable Gaussian blur of any sigma on a CUDA "
      "device or the CPU", "gst-cudafx developers");
  gst_cuda_fx_filter_class_add_pad_templates (filter_class, GST_CUDA_FX_CUDA_FORMATS,
      GST_CUDA_FX_SYSTEM_FORMATS);

  filter_class->setup = GST_DEBUG_FUNCPTR (gst_cuda_gaussian_setup);
  filter_class->process = GST_DEBUG_FUNCPTR (gst_cuda_gaussian_process);
  filter_class->teardown = GST_DEBUG_FUNCPTR (gst_cuda_gaussian_teardown);
  /* A blur keeps the geometry: region metas stay true of its output. */
  static const gchar *const kept_tags[] = { GST_META_TAG_VIDEO_SIZE_STR,
    GST_META_TAG_VIDEO_ORIENTATION_STR, nullptr
  };
  filter_class->kept_meta_tags = kept_tags;

  GST_DEBUG_CATEGORY_INIT (gst_cuda_gaussian_debug, "cudagaussian", 0,
      "CUDA Gaussian blur");
}

static void
gst_cuda_gaussian_init (GstCudaGaussian * self)
{
  self->state = new GstCudaGaussianState ();
  cudafx::GaussianParams & p = self->state->params.value;
  p.sigma_x = DEFAULT_SIGMA;
  p.sigma_y = DEFAULT_SIGMA_Y;
  p.kernel_size_x = p.kernel_size_y = DEFAULT_KERNEL_SIZE;
  p.border = gst_cuda_fx_border_to_op (DEFAULT_BORDER_MODE);
}
