/**
 * SECTION:element-cudaconvolve
 * @title: cudaconvolve
 *
 * 2D convolution with a user kernel (as cv::filter2D: correlation, the
 * kernel not flipped) on a CUDA device or on the CPU, same bytes on both.
 * #GstCudaConvolve:kernel is a string of rows, "1 2 1; 2 4 2; 1 2 1", odd
 * by odd up to 31x31 (or #GstCudaConvolve:kernel-array, a square kernel as
 * a GStreamer array). Each value becomes the kernel's sum over its
 * neighbourhood divided by #GstCudaConvolve:divisor (0: the sum of the taps)
 * plus #GstCudaConvolve:offset, rounded and saturated. Integer kernels,
 * divisors and offsets are computed exactly (a kernel that is a column
 * times a row runs as two passes); others in float with the rounding of
 * cudafx/convolve.hpp.
 *
 * RGB formats: the colour bytes (alpha and padding copied). GRAY8 and YUV:
 * the luma plane, and the chroma planes too with
 * #GstCudaConvolve:filter-chroma.
 *
 * ## Example launch lines
 * |[
 * gst-launch-1.0 videotestsrc ! video/x-raw,format=RGBA ! cudaconvolve kernel="0 -1 0; -1 5 -1; 0 -1 0" ! videoconvert ! autovideosink
 * ]| Sharpens.
 * |[
 * gst-launch-1.0 videotestsrc ! video/x-raw,format=NV12 ! cudaconvolve kernel="-1 0 1; -2 0 2; -1 0 1" divisor=1 offset=128 ! videoconvert ! autovideosink
 * ]| Horizontal Sobel on the luma, mid-grey for flat areas.
 */
#include "gstcudaconvolve.h"

#include <memory>
#include <string>

#include "cudafx/convolve.hpp"
#include "gstcudafxenums.h"
#include "gstcudafxpending.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_convolve_debug);
#define GST_CAT_DEFAULT gst_cuda_convolve_debug

enum
{
  PROP_0,
  PROP_KERNEL,
  PROP_KERNEL_ARRAY,
  PROP_DIVISOR,
  PROP_OFFSET,
  PROP_ANCHOR_X,
  PROP_ANCHOR_Y,
  PROP_BORDER_MODE,
  PROP_FILTER_CHROMA,
};

#define DEFAULT_KERNEL "0 0 0; 0 1 0; 0 0 0"
#define DEFAULT_BORDER_MODE GST_CUDA_FX_BORDER_REPLICATE

struct GstCudaConvolveState
{
  /* properties, under the object lock (kernel: the text form of params') */
  std::string kernel = DEFAULT_KERNEL;
  GstCudaFxPending < cudafx::ConvolveParams > params;

  /* streaming thread */
  std::unique_ptr < cudafx::ConvolveOp > op;
};

struct _GstCudaConvolve
{
  GstCudaFxFilter parent;
  GstCudaConvolveState *state;
};

G_DEFINE_TYPE (GstCudaConvolve, gst_cuda_convolve, GST_TYPE_CUDA_FX_FILTER);
GST_ELEMENT_REGISTER_DEFINE (cudaconvolve, "cudaconvolve", GST_RANK_NONE,
    GST_TYPE_CUDA_CONVOLVE);

static cudafx::Status
gst_cuda_convolve_setup (GstCudaFxFilter * filter, const GstCudaFxFilterConfig & config)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE (filter);
  return cudafx::ConvolveOp::create (config.backend, config.in,
      self->state->params.take (self), &self->state->op);
}

static cudafx::Status
gst_cuda_convolve_process (GstCudaFxFilter * filter, const cudafx::ImageView & src,
    const cudafx::ImageView & dst, cudafx::StreamHandle stream)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE (filter);
  cudafx::ConvolveParams p;
  if (self->state->params.take_if_changed (self, &p))
    CUDAFX_TRY (self->state->op->set_params (p));
  return self->state->op->submit (stream, src, dst);
}

static void
gst_cuda_convolve_teardown (GstCudaFxFilter * filter)
{
  GST_CUDA_CONVOLVE (filter)->state->op.reset ();
}

/* The kernel's text form of `p` (rows by "; "), for the `kernel` property
 * after the kernel came as an array. */
static std::string
kernel_text (const cudafx::ConvolveParams & p)
{
  std::string t;
  for (int i = 0; i < p.height; i++) {
    for (int j = 0; j < p.width; j++) {
      gchar buf[G_ASCII_DTOSTR_BUF_SIZE];
      t += g_ascii_dtostr (buf, sizeof buf, p.taps[i * p.width + j]);
      t += j + 1 < p.width ? " " : "";
    }
    t += i + 1 < p.height ? "; " : "";
  }
  return t;
}

/* A square kernel from a GstValueArray of numbers (row-major). */
static cudafx::Status
kernel_from_array (const GValue * value, cudafx::ConvolveParams * out)
{
  const guint n = gst_value_array_get_size (value);
  guint side = 1;
  while (side * side < n)
    side++;
  if (n == 0 || side * side != n)
    return cudafx::Status::invalid ("kernel-array: " + std::to_string (n) +
        " taps are no square kernel");
  out->width = out->height = static_cast < int >(side);
  out->taps.clear ();
  for (guint i = 0; i < n; i++) {
    const GValue *v = gst_value_array_get_value (value, i);
    GValue d = G_VALUE_INIT;
    g_value_init (&d, G_TYPE_DOUBLE);
    if (!g_value_transform (v, &d))
      return cudafx::Status::invalid ("kernel-array: tap " + std::to_string (i) +
          " is not a number");
    out->taps.push_back (g_value_get_double (&d));
    g_value_unset (&d);
  }
  return cudafx::Status::ok ();
}

static void
gst_cuda_convolve_set_property (GObject * object, guint prop_id,
    const GValue * value, GParamSpec * pspec)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE (object);
  GstCudaConvolveState *st = self->state;
  if (prop_id == PROP_KERNEL || prop_id == PROP_KERNEL_ARRAY) {
    /* Parsed here, so a bad kernel is refused at once and the old one kept. */
    cudafx::ConvolveParams parsed;
    cudafx::Status s;
    if (prop_id == PROP_KERNEL) {
      const gchar *text = g_value_get_string (value);
      s = cudafx::parse_convolve_kernel (text ? text : "", &parsed);
    } else {
      s = kernel_from_array (value, &parsed);
    }
    cudafx::ConvolvePlan plan;
    if (s.is_ok ())   /* its shape and taps, on any image */
      s = cudafx::plan_convolve (cudafx::ImageDesc { cudafx::PixelFormat::GRAY8, 1, 1 },
          parsed, &plan);
    if (!s.is_ok ()) {
      g_warning ("cudaconvolve: %s; kernel unchanged", s.message ().c_str ());
      return;
    }
    GST_OBJECT_LOCK (self);
    st->kernel = kernel_text (parsed);
    st->params.value.width = parsed.width;
    st->params.value.height = parsed.height;
    st->params.value.taps = parsed.taps;
    st->params.changed = true;
    GST_OBJECT_UNLOCK (self);
    return;
  }
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_DIVISOR:
      st->params.value.divisor = g_value_get_double (value);
      break;
    case PROP_OFFSET:
      st->params.value.offset = g_value_get_double (value);
      break;
    case PROP_ANCHOR_X:
      st->params.value.anchor_x = g_value_get_int (value);
      break;
    case PROP_ANCHOR_Y:
      st->params.value.anchor_y = g_value_get_int (value);
      break;
    case PROP_BORDER_MODE:
      st->params.value.border = gst_cuda_fx_border_to_op (static_cast < GstCudaFxBorderMode >
          (g_value_get_enum (value)));
      break;
    case PROP_FILTER_CHROMA:
      st->params.value.filter_chroma = g_value_get_boolean (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      GST_OBJECT_UNLOCK (self);
      return;
  }
  st->params.changed = true;
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cuda_convolve_get_property (GObject * object, guint prop_id,
    GValue * value, GParamSpec * pspec)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE (object);
  GstCudaConvolveState *st = self->state;
  GST_OBJECT_LOCK (self);
  switch (prop_id) {
    case PROP_KERNEL:
      g_value_set_string (value, st->kernel.c_str ());
      break;
    case PROP_KERNEL_ARRAY:
      for (double t : st->params.value.taps) {
        GValue v = G_VALUE_INIT;
        g_value_init (&v, G_TYPE_DOUBLE);
        g_value_set_double (&v, t);
        gst_value_array_append_and_take_value (value, &v);
      }
      break;
    case PROP_DIVISOR:
      g_value_set_double (value, st->params.value.divisor);
      break;
    case PROP_OFFSET:
      g_value_set_double (value, st->params.value.offset);
      break;
    case PROP_ANCHOR_X:
      g_value_set_int (value, st->params.value.anchor_x);
      break;
    case PROP_ANCHOR_Y:
      g_value_set_int (value, st->params.value.anchor_y);
      break;
    case PROP_BORDER_MODE:
      g_value_set_enum (value, gst_cuda_fx_border_from_op (st->params.value.border));
      break;
    case PROP_FILTER_CHROMA:
      g_value_set_boolean (value, st->params.value.filter_chroma);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
      break;
  }
  GST_OBJECT_UNLOCK (self);
}

static void
gst_cuda_convolve_finalize (GObject * object)
{
  GstCudaConvolve *self = GST_CUDA_CONVOLVE (object);
  delete self->state;
  self->state = nullptr;
  G_OBJECT_CLASS (gst_cuda_convolve_parent_class)->finalize (object);
}

static void
gst_cuda_convolve_class_init (GstCudaConvolveClass * klass)
{
  GObjectClass *gobject_class = G_OBJECT_CLASS (klass);
  GstElementClass *element_class = GST_ELEMENT_CLASS (klass);
  GstCudaFxFilterClass *filter_class = GST_CUDA_FX_FILTER_CLASS (klass);
  const GParamFlags flags = static_cast < GParamFlags > (G_PARAM_READWRITE |
      G_PARAM_STATIC_STRINGS | GST_PARAM_MUTABLE_PLAYING);
  const GParamFlags controllable = static_cast < GParamFlags > (flags |
      GST_PARAM_CONTROLLABLE);

  gobject_class->set_property = gst_cuda_convolve_set_property;
  gobject_class->get_property = gst_cuda_convolve_get_property;
  gobject_class->finalize = gst_cuda_convolve_finalize;

  g_object_class_install_property (gobject_class, PROP_KERNEL,
      g_param_spec_string ("kernel", "Kernel", "Rows of taps: \"1 2 1; 2 4 2; 1 2 1\" "
          "(rows by ';', taps by spaces or commas), odd by odd, up to 31x31",
          DEFAULT_KERNEL, flags));
  g_object_class_install_property (gobject_class, PROP_KERNEL_ARRAY,
      gst_param_spec_array ("kernel-array", "Kernel array", "The kernel as a GStreamer "
          "array of numbers, row-major, square: \"<1, 2, 1, 2, 4, 2, 1, 2, 1>\" (the same "
          "kernel as `kernel`, which shows it as text)", g_param_spec_double ("tap", "Tap",
              "One tap", -G_MAXDOUBLE, G_MAXDOUBLE, 0.0, static_cast < GParamFlags >
              (G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS)), flags));
  g_object_class_install_property (gobject_class, PROP_DIVISOR,
      g_param_spec_double ("divisor", "Divisor", "The sums are divided by this (0: by the "
          "sum of the taps, or 1 when that is 0)", -G_MAXDOUBLE, G_MAXDOUBLE, 0.0,
          controllable));
  g_object_class_install_property (gobject_class, PROP_OFFSET,
      g_param_spec_double ("offset", "Offset", "Added after the division", -1e6, 1e6, 0.0,
          controllable));
  g_object_class_install_property (gobject_class, PROP_ANCHOR_X,
      g_param_spec_int ("anchor-x", "Anchor X", "Kernel column over the output pixel "
          "(-1: the centre)", -1, cudafx::kConvolveMaxSize - 1, -1, flags));
  g_object_class_install_property (gobject_class, PROP_ANCHOR_Y,
      g_param_spec_int ("anchor-y", "Anchor Y", "Kernel row over the output pixel "
          "(-1: the centre)", -1, cudafx::kConvolveMaxSize - 1, -1, flags));
  g_object_class_install_property (gobject_class, PROP_BORDER_MODE,
      g_param_spec_enum ("border-mode", "Border mode", "Where pixels outside the frame come "
          "from", GST_TYPE_CUDA_FX_BORDER_MODE, DEFAULT_BORDER_MODE, flags));
  g_object_class_install_property (gobject_class, PROP_FILTER_CHROMA,
      g_param_spec_boolean ("filter-chroma", "Filter chroma", "YUV: filter the chroma planes "
          "too, with the same kernel in chroma pixels (else they are copied)", FALSE, flags));

  gst_element_class_set_static_metadata (element_class, "CUDA convolution",
      "Filter/Effect/Video", "2D convolution with a user kernel on a CUDA device or the CPU",
      "gst-cudafx developers");
  gst_cuda_fx_filter_class_add_pad_templates (filter_class, GST_CUDA_FX_CUDA_FORMATS,
      GST_CUDA_FX_SYSTEM_FORMATS);
  filter_class->setup = GST_DEBUG_FUNCPTR (gst_cuda_convolve_setup);
  filter_class->process = GST_DEBUG_FUNCPTR (gst_cuda_convolve_process);
  filter_class->teardown = GST_DEBUG_FUNCPTR (gst_cuda_convolve_teardown);
  static const gchar *const kept_tags[] = { GST_META_TAG_VIDEO_SIZE_STR,
    GST_META_TAG_VIDEO_ORIENTATION_STR, nullptr
  };
  filter_class->kept_meta_tags = kept_tags;

  GST_DEBUG_CATEGORY_INIT (gst_cuda_convolve_debug, "cudaconvolve", 0, "CUDA convolution");
}

static void
gst_cuda_convolve_init (GstCudaConvolve * self)
{
  self->state = new GstCudaConvolveState ();
  (void) cudafx::parse_convolve_kernel (DEFAULT_KERNEL, &self->state->params.value);
}
