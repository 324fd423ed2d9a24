#pragma once

#include <gst/video/gstvideoencoder.h>

G_BEGIN_DECLS

#define GST_TYPE_CUDA_DELTA_ENC (gst_cuda_delta_enc_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaDeltaEnc, gst_cuda_delta_enc, GST, CUDA_DELTA_ENC,
    GstVideoEncoder)


GST_ELEMENT_REGISTER_DECLARE (cudadeltaenc);

G_END_DECLS
