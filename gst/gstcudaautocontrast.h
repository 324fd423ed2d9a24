#pragma once

#include "gstcudafxstatsfilter.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_AUTO_CONTRAST (gst_cuda_auto_contrast_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaAutoContrast, gst_cuda_auto_contrast, GST, CUDA_AUTO_CONTRAST,
    GstCudaFxStatsFilter)

GST_ELEMENT_REGISTER_DECLARE (cudaautocontrast);

G_END_DECLS
