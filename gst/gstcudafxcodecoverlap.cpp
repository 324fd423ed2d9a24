#include "gstcudafxcodecoverlap.h"

#include "gstcudafxdevice.h"

/* ---- GstCudaFxSlotPair ---- */

cudafx::Status GstCudaFxSlotPair::ensure ()
{
  if (!side_)
    CUDAFX_TRY (side_.create ());
  for (int i = 0; i < 2; i++) {
    for (std::optional < cudafx::CudaEvent > *e: {&across_[i], &done_[i]}) {
      if (!*e)
        e->emplace ();
      CUDAFX_TRY ((*e)->create ());   /* idempotent: a failed one is tried again */
    }
  }
  return cudafx::Status::ok ();
}

cudafx::Status
GstCudaFxSlotPair::finish (int slot)
{
  return done_[slot]->synchronize ();
}

cudafx::Status GstCudaFxSlotPair::synchronize () const
{
  return side_ ? side_.synchronize () : cudafx::Status::ok ();
}

void
GstCudaFxSlotPair::release ()
{
  (void) synchronize ();
  for (int i = 0; i < 2; i++) {
    across_[i].reset ();
    done_[i].reset ();
    mem_[i].reset ();
  }
  side_.reset ();
  next_ = 0;
}

/* ---- GstCudaFxUploadAhead: done_ the upload, across_ the slot's reader ---- */

cudafx::Status
GstCudaFxUploadAhead::upload (const cudafx::ImageView & host, cudafx::ImageView * device,
    int *slot)
{
  CUDAFX_TRY (ensure ());
  const int k = next ();
  /* A slot is written again two frames later: after its reader (a fresh
   * event waits for nothing). */
  CUDAFX_TRY (across_[k]->wait (side_.get ()));
  CUDAFX_TRY (GstCudaFxDevice::staging_view (mem_[k], host, device, side_.get ()));
  CUDAFX_TRY (cudafx::copy_image_async (*device, host, side_.get ()));
  CUDAFX_TRY (done_[k]->record (side_.get ()));
  advance ();
  *slot = k;
  return cudafx::Status::ok ();
}

cudafx::Status
GstCudaFxUploadAhead::wait (int slot, cudafx::StreamHandle stream) const
{
  return done_[slot]->wait (stream);
}

cudafx::Status
GstCudaFxUploadAhead::consumed (int slot, cudafx::StreamHandle stream)
{
  return across_[slot]->record (stream);
}

/* ---- GstCudaFxDownloadBehind: across_ the device copy, done_ the
 * download ---- */

cudafx::Status
GstCudaFxDownloadBehind::download (const cudafx::ImageView & device,
    const cudafx::ImageView & host, cudafx::StreamHandle stream, int *slot)
{
  CUDAFX_TRY (ensure ());
  const int k = next ();
  cudafx::ImageView copy;
  CUDAFX_TRY (GstCudaFxDevice::staging_view (mem_[k], host, &copy, stream));
  /* the slot's last download (two frames ago) read it out first */
  CUDAFX_TRY (done_[k]->wait (stream));
  CUDAFX_TRY (cudafx::copy_image_async (copy, device, stream));
  CUDAFX_TRY (across_[k]->record (stream));
  CUDAFX_TRY (across_[k]->wait (side_.get ()));
  CUDAFX_TRY (cudafx::copy_image_async (host, copy, side_.get ()));
  CUDAFX_TRY (done_[k]->record (side_.get ()));
  advance ();
  *slot = k;
  return cudafx::Status::ok ();
}
