#include "gstcudafxcodecoverlap.h"

#include "gstcudafxdevice.h"

namespace
{

cudafx::Status
ensure_events (std::optional < cudafx::CudaEvent > (&a)[2],
    std::optional < cudafx::CudaEvent > (&b)[2])
{
  for (int i = 0; i < 2; i++) {
    for (std::optional < cudafx::CudaEvent > *e: {&a[i], &b[i]}) {
      if (!*e)
        e->emplace ();
      CUDAFX_TRY ((*e)->create ());   /* idempotent: a failed one is tried again */
    }
  }
  return cudafx::Status::ok ();
}

}                               /* namespace */

/* ---- GstCudaFxUploadAhead ---- */

cudafx::Status GstCudaFxUploadAhead::ensure ()
{
  if (!up_)
    CUDAFX_TRY (up_.create ());
  return ensure_events (uploaded_, read_);
}

cudafx::Status
GstCudaFxUploadAhead::upload (const cudafx::ImageView & host, cudafx::ImageView * device,
    int *slot)
{
  CUDAFX_TRY (ensure ());
  const int k = next_;
  /* A slot is written again two frames later: after its reader (a fresh
   * event waits for nothing). */
  CUDAFX_TRY (read_[k]->wait (up_.get ()));
  CUDAFX_TRY (GstCudaFxDevice::staging_view (mem_[k], host, device, up_.get ()));
  CUDAFX_TRY (cudafx::copy_image_async (*device, host, up_.get ()));
  CUDAFX_TRY (uploaded_[k]->record (up_.get ()));
  next_ = 1 - k;
  *slot = k;
  return cudafx::Status::ok ();
}

cudafx::Status
GstCudaFxUploadAhead::wait (int slot, cudafx::StreamHandle stream) const
{
  return uploaded_[slot]->wait (stream);
}

cudafx::Status
GstCudaFxUploadAhead::consumed (int slot, cudafx::StreamHandle stream)
{
  return read_[slot]->record (stream);
}

cudafx::Status
GstCudaFxUploadAhead::finish (int slot)
{
  return uploaded_[slot]->synchronize ();
}

cudafx::Status GstCudaFxUploadAhead::synchronize () const
{
  return up_ ? up_.synchronize () : cudafx::Status::ok ();
}

void
GstCudaFxUploadAhead::release ()
{
  (void) synchronize ();
  for (int i = 0; i < 2; i++) {
    uploaded_[i].reset ();
    read_[i].reset ();
    mem_[i].reset ();
  }
  up_.reset ();
  next_ = 0;
}

/* ---- GstCudaFxDownloadBehind ---- */

cudafx::Status GstCudaFxDownloadBehind::ensure ()
{
  if (!down_)
    CUDAFX_TRY (down_.create ());
  return ensure_events (copied_, downloaded_);
}

cudafx::Status
GstCudaFxDownloadBehind::download (const cudafx::ImageView & device,
    const cudafx::ImageView & host, cudafx::StreamHandle stream, int *slot)
{
  CUDAFX_TRY (ensure ());
  const int k = next_;
  cudafx::ImageView copy;
  CUDAFX_TRY (GstCudaFxDevice::staging_view (mem_[k], host, &copy, stream));
  /* the slot's last download (two frames ago) read it out first */
  CUDAFX_TRY (downloaded_[k]->wait (stream));
  CUDAFX_TRY (cudafx::copy_image_async (copy, device, stream));
  CUDAFX_TRY (copied_[k]->record (stream));
  CUDAFX_TRY (copied_[k]->wait (down_.get ()));
  CUDAFX_TRY (cudafx::copy_image_async (host, copy, down_.get ()));
  CUDAFX_TRY (downloaded_[k]->record (down_.get ()));
  next_ = 1 - k;
  *slot = k;
  return cudafx::Status::ok ();
}

cudafx::Status
GstCudaFxDownloadBehind::finish (int slot)
{
  return downloaded_[slot]->synchronize ();
}

cudafx::Status GstCudaFxDownloadBehind::synchronize () const
{
  return down_ ? down_.synchronize () : cudafx::Status::ok ();
}

void
GstCudaFxDownloadBehind::release ()
{
  (void) synchronize ();
  for (int i = 0; i < 2; i++) {
    copied_[i].reset ();
    downloaded_[i].reset ();
    mem_[i].reset ();
  }
  down_.reset ();
  next_ = 0;
}
