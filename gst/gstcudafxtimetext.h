/* The strings cudatextoverlay shows for times: timeoverlay's format for
 * stream times (H:MM:SS.mmm, hours unbounded, milliseconds truncated; ""
 * for GST_CLOCK_TIME_NONE), GstVideoTimeCode's for time codes, and the
 * wall clock through a strftime-style format (GDateTime's, as clockoverlay's
 * time-format), and how they join the element's text. */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include <string>

std::string gst_cuda_fx_format_stream_time (GstClockTime time);

/* "" when the buffer has no GstVideoTimeCodeMeta. */
std::string gst_cuda_fx_format_time_code (GstBuffer * buffer);

/* The local time `now` through `format`; "" when the format is empty or
 * invalid (GDateTime refuses it). */
std::string gst_cuda_fx_format_clock (GDateTime * now, const char *format);

/* text, time and clock joined by single spaces in that order (empty parts
 * left out), or time and clock first when `time_first`. */
std::string gst_cuda_fx_join_text (const std::string & text, const std::string & time,
    const std::string & clock, bool time_first);
