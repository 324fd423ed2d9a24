#include "gstcudafxsmoothing.h"

#include <algorithm>
#include <cmath>

double
GstCudaFxSmoothing::weight (GstBaseTransform * trans, GstBuffer * buffer,
    const GstVideoInfo * info, bool smooth, double time_constant, bool *restart_now)
{
  const GstClockTime rt = gst_segment_to_running_time (&trans->segment, GST_FORMAT_TIME,
      GST_BUFFER_PTS (buffer));
  GstClockTime dt = GST_CLOCK_TIME_NONE;
  if (GST_CLOCK_TIME_IS_VALID (rt) && GST_CLOCK_TIME_IS_VALID (last_running_time) &&
      rt > last_running_time)
    dt = rt - last_running_time;
  else if (GST_BUFFER_DURATION_IS_VALID (buffer))
    dt = GST_BUFFER_DURATION (buffer);
  else if (GST_VIDEO_INFO_FPS_N (info) > 0)
    dt = gst_util_uint64_scale_int (GST_SECOND, GST_VIDEO_INFO_FPS_D (info),
        GST_VIDEO_INFO_FPS_N (info));
  last_running_time = rt;
  if (GST_BUFFER_FLAG_IS_SET (buffer, GST_BUFFER_FLAG_DISCONT))
    restart_pending = true;
  *restart_now = restart_pending;
  restart_pending = false;
  if (!smooth || !GST_CLOCK_TIME_IS_VALID (dt))
    return 1.0;
  /* A weight of 0 would freeze the average (a step of 0 ns): the smallest
   * positive one instead. */
  const double w = -std::expm1 (-static_cast < double >(dt) / GST_SECOND / time_constant);
  return std::min (1.0, std::max (w, 1e-9));
}

void
GstCudaFxSmoothing::sink_event (GstEvent * event)
{
  switch (GST_EVENT_TYPE (event)) {
    case GST_EVENT_FLUSH_STOP:
    case GST_EVENT_STREAM_START:
      restart ();
      break;
    default:
      break;
  }
}
