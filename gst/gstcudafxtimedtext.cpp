#include "gstcudafxtimedtext.h"

namespace {

/* A text without a start is shown from the beginning; one without an end
 * lasts until the next one starts (or for ever). */
GstClockTime
start_of (GstClockTime start)
{
  return GST_CLOCK_TIME_IS_VALID (start) ? start : 0;
}

}  // namespace

GstCudaFxTimedText::GstCudaFxTimedText ()
{
  g_mutex_init (&lock_);
  g_cond_init (&cond_);
}

GstCudaFxTimedText::~GstCudaFxTimedText ()
{
  g_cond_clear (&cond_);
  g_mutex_clear (&lock_);
}

bool
GstCudaFxTimedText::push (GstClockTime start, GstClockTime end, const std::string & markup)
{
  g_mutex_lock (&lock_);
  while (!flushing_ && queue_.size () >= kMaxQueued)
    g_cond_wait (&cond_, &lock_);
  const bool ok = !flushing_;
  if (ok) {
    queue_.push_back ({start, end, markup});
    g_cond_broadcast (&cond_);
  }
  g_mutex_unlock (&lock_);
  return ok;
}

void
GstCudaFxTimedText::end_of_stream ()
{
  g_mutex_lock (&lock_);
  eos_ = true;
  g_cond_broadcast (&cond_);
  g_mutex_unlock (&lock_);
}

void
GstCudaFxTimedText::flush ()
{
  g_mutex_lock (&lock_);
  flushing_ = true;
  queue_.clear ();
  g_cond_broadcast (&cond_);
  g_mutex_unlock (&lock_);
}

void
GstCudaFxTimedText::resume ()
{
  g_mutex_lock (&lock_);
  flushing_ = false;
  eos_ = false;
  queue_.clear ();
  g_cond_broadcast (&cond_);
  g_mutex_unlock (&lock_);
}

std::string
GstCudaFxTimedText::take (GstClockTime start, GstClockTime end, bool wait)
{
  if (!GST_CLOCK_TIME_IS_VALID (start))
    start = 0;
  if (!GST_CLOCK_TIME_IS_VALID (end) || end <= start)
    end = start + 1;
  std::string out;
  g_mutex_lock (&lock_);
  for (;;) {
    if (flushing_)
      break;
    /* Texts that ended before this frame: gone (and room for the pusher). */
    bool dropped = false;
    while (!queue_.empty ()) {
      const Entry & f = queue_.front ();
      const GstClockTime f_end = GST_CLOCK_TIME_IS_VALID (f.end) ? f.end :
          queue_.size () > 1 ? start_of (queue_[1].start) : GST_CLOCK_TIME_NONE;
      if (!GST_CLOCK_TIME_IS_VALID (f_end) || f_end > start)
        break;
      queue_.pop_front ();
      dropped = true;
    }
    if (dropped)
      g_cond_broadcast (&cond_);
    if (!queue_.empty ()) {
      /* The earliest text left reaches past the frame's start: shown if it
       * has begun by the frame's end, else the frame has none (and need not
       * wait: the text stream is ahead). */
      const Entry & f = queue_.front ();
      if (start_of (f.start) < end)
        out = f.markup;
      break;
    }
    if (eos_ || !wait)
      break;
    g_cond_wait (&cond_, &lock_);
  }
  g_mutex_unlock (&lock_);
  return out;
}
