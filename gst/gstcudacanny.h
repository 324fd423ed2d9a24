#pragma once

#include "gstcudafxfilter.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_CANNY (gst_cuda_canny_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaCanny, gst_cuda_canny, GST, CUDA_CANNY, GstCudaFxFilter)

GST_ELEMENT_REGISTER_DECLARE (cudacanny);

G_END_DECLS
