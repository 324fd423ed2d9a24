/* Parameters that property setters change under the element's object lock
 * and the streaming thread takes, whole, when they have changed: one copy a
 * change, never half of one (cudagaussian, cudaconvolve, cudacanny). */
#pragma once

#include <gst/gst.h>

template < class T > struct GstCudaFxPending
{
  /* Setters hold the object lock while they change it, then set `changed`. */
  T value {};
  bool changed = false;

  /* The streaming thread: a copy, `changed` cleared. */
  T take (gpointer element)
  {
    GST_OBJECT_LOCK (element);
    T v = value;
    changed = false;
    GST_OBJECT_UNLOCK (element);
    return v;
  }

  /* The streaming thread: true and a copy in *out when changed since the
   * last take. */
  bool take_if_changed (gpointer element, T * out)
  {
    GST_OBJECT_LOCK (element);
    const bool c = changed;
    if (c)
      *out = value;
    changed = false;
    GST_OBJECT_UNLOCK (element);
    return c;
  }
};
