/* The cudafx plugin: GPU video filters with CPU fallbacks. */
#include <gst/gst.h>

#include "gstcudafxconfig.h"
#include "gstcudagaussian.h"

static gboolean
plugin_init (GstPlugin * plugin)
{
  gboolean ok = FALSE;
  ok |= GST_ELEMENT_REGISTER (cudagaussian, plugin);
  return ok;
}

GST_PLUGIN_DEFINE (GST_VERSION_MAJOR, GST_VERSION_MINOR, cudafx,
    "GPU video processing (CUDA) with CPU fallbacks", plugin_init,
    CUDAFX_VERSION, "LGPL", "gst-cudafx", "Unknown package origin")
