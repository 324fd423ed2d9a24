/* Bus transfers of the delta codec's elements in system memory, overlapped
 * with the codec's own work, one frame apart (overlap=true):
 *
 * - GstCudaFxUploadAhead (cudadeltaenc): frame n+1 is uploaded while frame
 *   n is encoded. The encoder holds frame n back until n+1 comes (or EOS,
 *   new caps, a drain) and then encodes it from the device copy the upload
 *   stream made.
 * - GstCudaFxDownloadBehind (cudadeltadec): frame n's reconstruction is
 *   copied on the device (the decoder updates it in place with frame n+1)
 *   and downloaded while frame n+1 decodes; frame n goes out when n+1 has
 *   been decoded.
 *
 * The codec is sequential (each frame predicts from the previous
 * reconstruction), so unlike GstCudaFxOverlap (filters: upload beside
 * download) the bus crosses beside the codec's kernels and host work. Two
 * device slots, used in turn; events order the slot's reuse against the
 * stream that reads it. Streaming thread only; the element's context must
 * be current for every call. */
#pragma once

#include <optional>

#include "cudafx/cuda_resources.hpp"
#include "cudafx/image.hpp"

class GstCudaFxUploadAhead
{
public:
  GstCudaFxUploadAhead () = default;
  GstCudaFxUploadAhead (const GstCudaFxUploadAhead &) = delete;
  GstCudaFxUploadAhead & operator= (const GstCudaFxUploadAhead &) = delete;

  /* Queues the copy of `host` into the next slot on the upload stream (after
   * the reader of that slot's previous frame, see consumed()); *device: the
   * slot's image, *slot: its number. `host` must stay mapped until the
   * stream that reads *device has waited (wait()) and passed that point. */
  cudafx::Status upload (const cudafx::ImageView & host, cudafx::ImageView * device,
      int *slot);
  /* `stream` waits for the upload into `slot`. */
  cudafx::Status wait (int slot, cudafx::StreamHandle stream) const;
  /* The reader of `slot`, on `stream`, is queued: the slot's next upload
   * waits for it. */
  cudafx::Status consumed (int slot, cudafx::StreamHandle stream);
  /* The host waits for the upload into `slot` (before its host memory goes). */
  cudafx::Status finish (int slot);
  /* Every queued upload done. */
  cudafx::Status synchronize () const;
  /* Stream, events and device memory freed. */
  void release ();

private:
  cudafx::Status ensure ();

  cudafx::CudaStream up_;
  cudafx::DeviceBuffer mem_[2];
  std::optional < cudafx::CudaEvent > uploaded_[2], read_[2];
  int next_ = 0;
};

class GstCudaFxDownloadBehind
{
public:
  GstCudaFxDownloadBehind () = default;
  GstCudaFxDownloadBehind (const GstCudaFxDownloadBehind &) = delete;
  GstCudaFxDownloadBehind & operator= (const GstCudaFxDownloadBehind &) = delete;

  /* Copies `device` into the next slot on `stream` (ordered after the work
   * that made it, and before whatever `stream` runs next), then downloads
   * the slot into `host` on the download stream; *slot: its number. `host`
   * must stay mapped until finish(slot). */
  cudafx::Status download (const cudafx::ImageView & device, const cudafx::ImageView & host,
      cudafx::StreamHandle stream, int *slot);
  /* The host waits for the download of `slot`. */
  cudafx::Status finish (int slot);
  /* Every queued download done. */
  cudafx::Status synchronize () const;
  /* Stream, events and device memory freed. */
  void release ();

private:
  cudafx::Status ensure ();

  cudafx::CudaStream down_;
  cudafx::DeviceBuffer mem_[2];
  std::optional < cudafx::CudaEvent > copied_[2], downloaded_[2];
  int next_ = 0;
};
