/* Timed text for cudatextoverlay's text_sink pad: text buffers queued by the
 * text pad's streaming thread, taken by the video pad's for each frame, as
 * textoverlay matches them -- a text is shown on every frame whose running
 * time overlaps its own [start, end) (an unstamped text from now until the
 * next one, a text without duration until the next one starts), and with
 * `wait` the video waits for the text stream to catch up: while no queued
 * text reaches past the frame's start, until the text stream ends, flushes,
 * or the element stops. Thread-safe; every wait ends on flush(). */
#pragma once

#include <gst/gst.h>

#include <deque>
#include <string>

class GstCudaFxTimedText
{
public:
  GstCudaFxTimedText ();
  ~GstCudaFxTimedText ();
  GstCudaFxTimedText (const GstCudaFxTimedText &) = delete;
  GstCudaFxTimedText & operator= (const GstCudaFxTimedText &) = delete;

  /* Text pad: a text in running time (GST_CLOCK_TIME_NONE start: shown at
   * once; NONE end: until the next text starts). Blocks while `kMaxQueued`
   * texts wait to be shown, until one is taken or flush(); false when
   * flushing (the buffer is dropped). */
  bool push (GstClockTime start, GstClockTime end, const std::string & markup);
  /* The text stream ended: frames stop waiting for it. */
  void end_of_stream ();
  /* Wakes every waiter and refuses texts until resume() (flushes, stop). */
  void flush ();
  /* After a flush: empty, not ended, accepting texts again. */
  void resume ();

  /* Video pad: the text for a frame [start, end) in running time (end NONE:
   * start + 1 ns), "" for none; waits as described when `wait`. */
  std::string take (GstClockTime start, GstClockTime end, bool wait);

  static constexpr size_t kMaxQueued = 16;

private:
  struct Entry
  {
    GstClockTime start, end;
    std::string markup;
  };
  GMutex lock_;
  GCond cond_;
  std::deque < Entry > queue_;
  bool eos_ = false;
  bool flushing_ = false;
};
