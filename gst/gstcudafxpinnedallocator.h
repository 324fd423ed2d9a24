/* GstCudaFxPinnedAllocator: system memory that is page-locked (CUDA pinned,
 * portable), so that host<->device copies of it run asynchronously at full
 * bus speed. Buffers from it are ordinary system memory to every other
 * element. */
#pragma once

#include <gst/gst.h>

#include "gstcudafxconfig.h"

G_BEGIN_DECLS

#define GST_TYPE_CUDA_FX_PINNED_ALLOCATOR (gst_cuda_fx_pinned_allocator_get_type ())
G_DECLARE_FINAL_TYPE (GstCudaFxPinnedAllocator, gst_cuda_fx_pinned_allocator,
    GST, CUDA_FX_PINNED_ALLOCATOR, GstAllocator)

#define GST_CUDA_FX_PINNED_MEMORY_TYPE "CudaFxPinnedMemory"

/* `context` (a GstCudaContext, may be NULL) is made current around every CUDA
 * call; without one, `device_id`'s primary context is. */
GstAllocator *gst_cuda_fx_pinned_allocator_new (GstObject * context,
    gint device_id);

gboolean gst_cuda_fx_is_pinned_memory (GstMemory * mem);

/* A video buffer pool allocating from `allocator`, with video meta. */
GstBufferPool *gst_cuda_fx_pinned_pool_new (GstAllocator * allocator,
    GstCaps * caps, guint size, guint min_buffers, guint max_buffers);

G_END_DECLS
