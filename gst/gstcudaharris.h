#pragma once

#include "gstcudafxfilter.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_HARRIS (gst_cuda_harris_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaHarris, gst_cuda_harris, GST, CUDA_HARRIS, GstCudaFxFilter)

GST_ELEMENT_REGISTER_DECLARE (cudaharris);

G_END_DECLS
