/* GstCudaFxStatsFilter: the base class of the in-place filters that map a
 * frame by its own statistics (cudagreyworld, cudaautocontrast). On top of
 * GstCudaFxFilter (in-place mode) it owns `mode` (frame | smooth) and
 * `time-constant`, and the running average of gstcudafxsmoothing.h: the
 * weight of each buffer, computed before it is processed, and the restarts
 * (start, flush, new stream, new caps, DISCONT). A subclass implements
 * setup/process_ip/teardown as any filter and asks, in process_ip, for the
 * buffer's weight and whether its op must forget its kept statistics. */
#pragma once

#include "gstcudafxfilter.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_FX_STATS_FILTER (gst_cuda_fx_stats_filter_get_type ())
G_DECLARE_DERIVABLE_TYPE (GstCudaFxStatsFilter, gst_cuda_fx_stats_filter, GST,
    CUDA_FX_STATS_FILTER, GstCudaFxFilter)

struct _GstCudaFxStatsFilterClass
{
  GstCudaFxFilterClass parent_class;
  gpointer _reserved[GST_PADDING];
};

/* This buffer's share in the averaged statistics (1 in frame mode) and, in
 * *restart, whether the op must forget its kept statistics before it. Valid
 * in process_ip (set in before_transform). */
double gst_cuda_fx_stats_filter_weight (GstCudaFxStatsFilter * self, bool *restart);

G_END_DECLS
