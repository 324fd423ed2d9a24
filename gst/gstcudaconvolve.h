#pragma once

#include "gstcudafxfilter.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_CONVOLVE (gst_cuda_convolve_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaConvolve, gst_cuda_convolve, GST, CUDA_CONVOLVE, GstCudaFxFilter)

GST_ELEMENT_REGISTER_DECLARE (cudaconvolve);

G_END_DECLS
