/* The cudafx plugin: GPU video filters with CPU fallbacks. */
#include <gst/gst.h>

#include "gstcudafxconfig.h"
#include "gstcudadeltadec.h"
#include "gstcudadeltaenc.h"
#include "gstcudaautocontrast.h"
#include "gstcudacanny.h"
#include "gstcudaconvolve.h"
#include "gstcudagaussian.h"
#include "gstcudagreyworld.h"
#include "gstcudaharris.h"
#include "gstcudaupscale.h"
#if HAVE_TEXT
#include "gstcudatextoverlay.h"
#endif
#if HAVE_GSTCUDA
#include <gst/cuda/gstcudamemory.h>
#endif

static gboolean
plugin_init (GstPlugin * plugin)
{
  gboolean ok = FALSE;
#if HAVE_GSTCUDA
  /* Registers libgstcuda's allocator: CUDA buffer pools fail without it
   * when no nvcodec element was loaded before ours. */
  gst_cuda_memory_init_once ();
#endif
  ok |= GST_ELEMENT_REGISTER (cudagaussian, plugin);
  ok |= GST_ELEMENT_REGISTER (cudaupscale, plugin);
  ok |= GST_ELEMENT_REGISTER (cudaharris, plugin);
  ok |= GST_ELEMENT_REGISTER (cudagreyworld, plugin);
  ok |= GST_ELEMENT_REGISTER (cudaautocontrast, plugin);
  ok |= GST_ELEMENT_REGISTER (cudaconvolve, plugin);
  ok |= GST_ELEMENT_REGISTER (cudacanny, plugin);
  ok |= GST_ELEMENT_REGISTER (cudadeltaenc, plugin);
  ok |= GST_ELEMENT_REGISTER (cudadeltadec, plugin);
#if HAVE_TEXT
  ok |= GST_ELEMENT_REGISTER (cudatextoverlay, plugin);
#endif
  return ok;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, cudafx,
    "GPU video processing (CUDA) with CPU fallbacks", plugin_init,
    CUDAFX_VERSION, "LGPL", "gst-cudafx", "Unknown package origin")
