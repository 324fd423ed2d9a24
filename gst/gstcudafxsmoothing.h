/* The running average over time of the elements that balance or stretch a
 * frame by its statistics (cudagreyworld, cudaautocontrast; mode=smooth):
 * each frame moves the kept statistics by
 *   w = 1 - exp(-dt / time-constant),
 * dt the running time since the previous frame, else the buffer's duration,
 * else the caps' frame duration (none of them: w = 1). The average restarts
 * (its next frame taken as it is) at start, after a flush, at a new stream,
 * at new caps and at a DISCONT buffer. */
#pragma once

#include <gst/base/gstbasetransform.h>
#include <gst/video/video.h>

struct GstCudaFxSmoothing
{
  /* The next frame starts the average afresh. */
  void restart ()
  {
    restart_pending = true;
    last_running_time = GST_CLOCK_TIME_NONE;
  }

  /* Called once a buffer (before_transform): its weight, 1 unless `smooth`.
   * *restart_now: the op must forget its kept statistics before this
   * frame. */
  double weight (GstBaseTransform * trans, GstBuffer * buffer, const GstVideoInfo * info,
      bool smooth, double time_constant, bool *restart_now);

  /* Restarts on the events that end a stream of related frames. */
  void sink_event (GstEvent * event);

private:
  bool restart_pending = true;
  GstClockTime last_running_time = GST_CLOCK_TIME_NONE;
};
