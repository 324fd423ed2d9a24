#include "gstcudafxpinnedallocator.h"

#include <gst/video/video.h>

#include "cudafx/cuda_resources.hpp"
#include "gstcudafxcontext.h"

GST_DEBUG_CATEGORY_STATIC (gst_cuda_fx_pinned_debug);
#define GST_CAT_DEFAULT gst_cuda_fx_pinned_debug

struct _GstCudaFxPinnedAllocator
{
  GstAllocator parent;
  GstObject *context;           /* GstCudaContext or NULL */
  gint device_id;
};

/* A block of pinned memory, or a sub-range of one (shared memories keep
 * their parent alive and never free the block). */
typedef struct
{
  GstMemory mem;
  guint8 *data;
} GstCudaFxPinnedMemory;

G_DEFINE_TYPE (GstCudaFxPinnedAllocator, gst_cuda_fx_pinned_allocator,
    GST_TYPE_ALLOCATOR);

static GstMemory *
pinned_alloc (GstAllocator * allocator, gsize size, GstAllocationParams * params)
{
  GstCudaFxPinnedAllocator *self = GST_CUDA_FX_PINNED_ALLOCATOR (allocator);
  const gsize align = params->align | 63;       /* at least 64-byte aligned */
  const gsize maxsize = size + params->prefix + params->padding;
  void *block = nullptr;
  cudafx::Status s;
  {
    GstCudaFxContextScope scope (self->context, self->device_id);
    s = scope.status ();
    if (s.is_ok ())
      s = cudafx::pinned_alloc (maxsize + align, &block);
  }
  if (!s.is_ok ()) {
    GST_ERROR_OBJECT (self, "cannot allocate %" G_GSIZE_FORMAT
        " bytes of pinned memory: %s", maxsize, s.message ().c_str ());
    return nullptr;
  }
  GstCudaFxPinnedMemory *mem = g_new0 (GstCudaFxPinnedMemory, 1);
  guint8 *data = static_cast < guint8 * >(block);
  const gsize shift = (align + 1 - (reinterpret_cast < guintptr > (data) & align)) & align;
  mem->data = static_cast < guint8 * >(block);
  gst_memory_init (GST_MEMORY_CAST (mem), params->flags, allocator, nullptr,
      maxsize + align, align, shift + params->prefix, size);
  if ((params->flags & GST_MEMORY_FLAG_ZERO_PREFIXED) && params->prefix)
    memset (data + shift, 0, params->prefix);
  if ((params->flags & GST_MEMORY_FLAG_ZERO_PADDED) && params->padding)
    memset (data + shift + params->prefix + size, 0, params->padding);
  return GST_MEMORY_CAST (mem);
}

static void
pinned_free (GstAllocator * allocator, GstMemory * memory)
{
  GstCudaFxPinnedAllocator *self = GST_CUDA_FX_PINNED_ALLOCATOR (allocator);
  GstCudaFxPinnedMemory *mem = reinterpret_cast < GstCudaFxPinnedMemory * >(memory);
  if (!memory->parent) {
    GstCudaFxContextScope scope (self->context, self->device_id);
    cudafx::pinned_free (mem->data);
  }
  g_free (mem);
}

static gpointer
pinned_map (GstMemory * memory, gsize, GstMapFlags)
{
  return reinterpret_cast < GstCudaFxPinnedMemory * >(memory)->data;
}

static void
pinned_unmap (GstMemory *)
{
}

static GstMemory *
pinned_share (GstMemory * memory, gssize offset, gssize size)
{
  GstCudaFxPinnedMemory *src = reinterpret_cast < GstCudaFxPinnedMemory * >(memory);
  GstMemory *parent = memory->parent ? memory->parent : memory;
  if (size == -1)
    size = memory->size - offset;
  GstCudaFxPinnedMemory *sub = g_new0 (GstCudaFxPinnedMemory, 1);
  sub->data = src->data;
  gst_memory_init (GST_MEMORY_CAST (sub),
      static_cast < GstMemoryFlags >
      (GST_MINI_OBJECT_FLAGS (parent) | GST_MINI_OBJECT_FLAG_LOCK_READONLY),
      memory->allocator, parent, memory->maxsize, memory->align,
      memory->offset + offset, size);
  return GST_MEMORY_CAST (sub);
}

static gboolean
pinned_is_span (GstMemory * a, GstMemory * b, gsize * offset)
{
  GstCudaFxPinnedMemory *ma = reinterpret_cast < GstCudaFxPinnedMemory * >(a);
  GstCudaFxPinnedMemory *mb = reinterpret_cast < GstCudaFxPinnedMemory * >(b);
  if (offset)
    *offset = a->offset - (a->parent ? a->parent->offset : 0);
  return ma->data == mb->data && a->offset + a->size == b->offset;
}

static void
gst_cuda_fx_pinned_allocator_finalize (GObject * object)
{
  GstCudaFxPinnedAllocator *self = GST_CUDA_FX_PINNED_ALLOCATOR (object);
  gst_clear_object (&self->context);
  G_OBJECT_CLASS (gst_cuda_fx_pinned_allocator_parent_class)->finalize (object);
}

static void
gst_cuda_fx_pinned_allocator_class_init (GstCudaFxPinnedAllocatorClass * klass)
{
  GstAllocatorClass *alloc_class = GST_ALLOCATOR_CLASS (klass);
  G_OBJECT_CLASS (klass)->finalize = gst_cuda_fx_pinned_allocator_finalize;
  alloc_class->alloc = pinned_alloc;
  alloc_class->free = pinned_free;
  GST_DEBUG_CATEGORY_INIT (gst_cuda_fx_pinned_debug, "cudafxpinned", 0,
      "cudafx pinned host memory");
}

static void
gst_cuda_fx_pinned_allocator_init (GstCudaFxPinnedAllocator * self)
{
  GstAllocator *alloc = GST_ALLOCATOR_CAST (self);
  alloc->mem_type = GST_CUDA_FX_PINNED_MEMORY_TYPE;
  alloc->mem_map = pinned_map;
  alloc->mem_unmap = pinned_unmap;
  alloc->mem_share = pinned_share;
  alloc->mem_is_span = pinned_is_span;
  /* mem_copy stays the default: a copy into system memory */
  self->device_id = 0;
}

GstAllocator *
gst_cuda_fx_pinned_allocator_new (GstObject * context, gint device_id)
{
  GstCudaFxPinnedAllocator *self = GST_CUDA_FX_PINNED_ALLOCATOR
      (g_object_new (GST_TYPE_CUDA_FX_PINNED_ALLOCATOR, nullptr));
  gst_object_ref_sink (self);
  self->context = context ? GST_OBJECT (gst_object_ref (context)) : nullptr;
  self->device_id = device_id < 0 ? 0 : device_id;
  return GST_ALLOCATOR_CAST (self);
}

gboolean
gst_cuda_fx_is_pinned_memory (GstMemory * mem)
{
  return mem && mem->allocator && GST_IS_CUDA_FX_PINNED_ALLOCATOR (mem->allocator);
}

GstBufferPool *
gst_cuda_fx_pinned_pool_new (GstAllocator * allocator, GstCaps * caps,
    guint size, guint min_buffers, guint max_buffers)
{
  GstBufferPool *pool = gst_video_buffer_pool_new ();
  GstStructure *config = gst_buffer_pool_get_config (pool);
  gst_buffer_pool_config_set_params (config, caps, size, min_buffers, max_buffers);
  gst_buffer_pool_config_set_allocator (config, allocator, nullptr);
  gst_buffer_pool_config_add_option (config, GST_BUFFER_POOL_OPTION_VIDEO_META);
  if (!gst_buffer_pool_set_config (pool, config)) {
    gst_object_unref (pool);
    return nullptr;
  }
  return pool;
}
