#include "gstcudafxoverlap.h"

#include "gstcudafxdevice.h"

void
GstCudaFxOverlap::release_frame (Frame & f)
{
  for (GstVideoFrame * v: {&f.in, &f.out}) {
    GstBuffer *buf = v->buffer;
    gst_video_frame_unmap (v);
    gst_buffer_unref (buf);
  }
}

GstCudaFxOverlap::~GstCudaFxOverlap ()
{
  /* The element discards and releases in its context (stop); only host
   * state can be left here. */
  for (Frame & f:frames_)
    release_frame (f);
}

cudafx::Status GstCudaFxOverlap::ensure_streams ()
{
  if (!up_)
    CUDAFX_TRY (up_.create ());
  if (!down_)
    CUDAFX_TRY (down_.create ());
  for (Slot & s:slots_) {
    for (std::optional < cudafx::CudaEvent > *e: {&s.uploaded, &s.computed, &s.downloaded}) {
      if (!*e)
        e->emplace ();
      CUDAFX_TRY ((*e)->create ());   /* idempotent: a failed one is tried again */
    }
  }
  return cudafx::Status::ok ();
}

cudafx::Status
GstCudaFxOverlap::queue (cudafx::StreamHandle stream, GstVideoFrame * in_frame,
    const cudafx::ImageView & host_in, GstVideoFrame * out_frame,
    const cudafx::ImageView & host_out, const Process & process)
{
  cudafx::Status s = ensure_streams ();
  const int k = next_;
  Slot & sl = slots_[k];
  cudafx::ImageView dev_in, dev_out;
  if (s.is_ok ())
    s = GstCudaFxDevice::staging_view (sl.in, host_in, &dev_in, up_.get ());
  if (s.is_ok ())
    s = GstCudaFxDevice::staging_view (sl.out, host_out, &dev_out, stream);
  /* The slot was last used two frames ago: its op must have read `in` and
   * its download read `out` before they are written again. */
  if (s.is_ok ())
    s = sl.computed->wait (up_.get ());
  if (s.is_ok ())
    s = cudafx::copy_image_async (dev_in, host_in, up_.get ());
  if (s.is_ok ())
    s = sl.uploaded->record (up_.get ());
  if (s.is_ok ())
    s = sl.downloaded->wait (stream);
  if (s.is_ok ())
    s = sl.uploaded->wait (stream);
  if (s.is_ok ())
    s = process (dev_in, dev_out, stream);
  if (s.is_ok ())
    s = sl.computed->record (stream);
  if (s.is_ok ())
    s = sl.computed->wait (down_.get ());
  if (s.is_ok ())
    s = cudafx::copy_image_async (host_out, dev_out, down_.get ());
  if (s.is_ok ())
    s = sl.downloaded->record (down_.get ());
  if (!s.is_ok ()) {
    /* whatever was queued finishes before the frames' memory goes */
    (void) up_.synchronize ();
    (void) cudafx::synchronize_stream (stream);
    (void) down_.synchronize ();
    gst_video_frame_unmap (out_frame);
    gst_video_frame_unmap (in_frame);
    return s;
  }
  next_ = 1 - k;
  Frame f;
  f.in = *in_frame;
  f.out = *out_frame;
  f.slot = k;
  gst_buffer_ref (f.in.buffer);
  gst_buffer_ref (f.out.buffer);
  frames_.push_back (f);
  return s;
}

cudafx::Status GstCudaFxOverlap::finish_oldest (GstBuffer ** out)
{
  *out = nullptr;
  if (frames_.empty ())
    return cudafx::Status::ok ();
  Frame f = frames_.front ();
  frames_.pop_front ();
  /* the download waited for the op, the op for the upload */
  const cudafx::Status s = slots_[f.slot].downloaded->synchronize ();
  GstBuffer *buf = gst_buffer_ref (f.out.buffer);
  release_frame (f);
  if (!s.is_ok ()) {
    gst_buffer_unref (buf);
    return s;
  }
  *out = buf;
  return s;
}

void
GstCudaFxOverlap::discard ()
{
  if (up_)
    (void) up_.synchronize ();
  if (down_)
    (void) down_.synchronize ();
  for (Frame & f:frames_) {
    (void) slots_[f.slot].downloaded->synchronize ();
    release_frame (f);
  }
  frames_.clear ();
}

void
GstCudaFxOverlap::release ()
{
  discard ();
  for (Slot & s:slots_) {
    s.in.reset ();
    s.out.reset ();
    s.uploaded.reset ();
    s.computed.reset ();
    s.downloaded.reset ();
  }
  up_.reset ();
  down_.reset ();
  next_ = 0;
}
