#pragma once

#include "gstcudafxstatsfilter.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_GREY_WORLD (gst_cuda_grey_world_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaGreyWorld, gst_cuda_grey_world, GST, CUDA_GREY_WORLD,
    GstCudaFxStatsFilter)

GST_ELEMENT_REGISTER_DECLARE (cudagreyworld);

G_END_DECLS
