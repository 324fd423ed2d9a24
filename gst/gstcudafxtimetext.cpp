#include "gstcudafxtimetext.h"

#include <vector>

std::string
gst_cuda_fx_format_stream_time (GstClockTime time)
{
  if (!GST_CLOCK_TIME_IS_VALID (time))
    return std::string ();
  const guint64 hours = time / (GST_SECOND * 3600);
  const guint mins = (guint) ((time / (GST_SECOND * 60)) % 60);
  const guint secs = (guint) ((time / GST_SECOND) % 60);
  const guint msecs = (guint) ((time % GST_SECOND) / GST_MSECOND);
  gchar *s = g_strdup_printf ("%" G_GUINT64_FORMAT ":%02u:%02u.%03u", hours, mins, secs, msecs);
  std::string out = s;
  g_free (s);
  return out;
}

std::string
gst_cuda_fx_format_time_code (GstBuffer * buffer)
{
  GstVideoTimeCodeMeta *meta = buffer ? gst_buffer_get_video_time_code_meta (buffer) : nullptr;
  if (!meta)
    return std::string ();
  gchar *s = gst_video_time_code_to_string (&meta->tc);
  std::string out = s ? s : "";
  g_free (s);
  return out;
}

std::string
gst_cuda_fx_format_clock (GDateTime * now, const char *format)
{
  if (!now || !format || !*format)
    return std::string ();
  gchar *s = g_date_time_format (now, format);
  std::string out = s ? s : "";
  g_free (s);
  return out;
}

std::string
gst_cuda_fx_join_text (const std::string & text, const std::string & time,
    const std::string & clock, bool time_first)
{
  const std::vector < const std::string * >parts = time_first ?
      std::vector < const std::string * >{&time, &clock, &text} :
      std::vector < const std::string * >{&text, &time, &clock};
  std::string out;
  for (const std::string * p : parts) {
    if (p->empty ())
      continue;
    if (!out.empty ())
      out += ' ';
    out += *p;
  }
  return out;
}
