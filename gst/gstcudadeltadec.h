#pragma once

#include <gst/video/gstvideodecoder.h>

G_BEGIN_DECLS

#define GST_TYPE_CUDA_DELTA_DEC (gst_cuda_delta_dec_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaDeltaDec, gst_cuda_delta_dec, GST, CUDA_DELTA_DEC,
    GstVideoDecoder)

GST_ELEMENT_REGISTER_DECLARE (cudadeltadec);

G_END_DECLS
