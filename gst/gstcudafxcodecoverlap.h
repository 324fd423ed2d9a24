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
 * download) the bus crosses beside the codec's kernels and host work. Both
 * stand on GstCudaFxSlotPair: a stream of their own beside the element's,
 * two device slots used in turn, and events that order each slot's reuse
 * against the stream that reads it. Streaming thread only; the element's
 * context must be current for every call. */
#pragma once

#include <optional>

#include "cudafx/cuda_resources.hpp"
#include "cudafx/image.hpp"

/* A side stream, two device slots used in turn, and two events a slot:
 * `across_`, the hand-over between the element's stream and the side stream,
 * and `done_`, the side stream's work on the slot finished. */
class GstCudaFxSlotPair
{
public:
  GstCudaFxSlotPair (const GstCudaFxSlotPair &) = delete;
  GstCudaFxSlotPair & operator= (const GstCudaFxSlotPair &) = delete;

  /* The host waits for the side stream's work on `slot` (before the host
   * memory it reads or writes goes). */
  cudafx::Status finish (int slot);
  /* Every queued transfer done. */
  cudafx::Status synchronize () const;
  /* Stream, events and device memory freed. */
  void release ();

protected:
  GstCudaFxSlotPair () = default;
  ~GstCudaFxSlotPair () = default;
  /* The stream and the events made (again where one failed before). */
  cudafx::Status ensure ();
  /* The slot the next frame takes; advance() once it is queued. */
  int next () const { return next_; }
  void advance () { next_ = 1 - next_; }

  cudafx::CudaStream side_;
  cudafx::DeviceBuffer mem_[2];
  std::optional < cudafx::CudaEvent > across_[2], done_[2];

private:
  int next_ = 0;
};

class GstCudaFxUploadAhead : public GstCudaFxSlotPair
{
public:
  GstCudaFxUploadAhead () = default;

  /* Queues the copy of `host` into the next slot on the upload stream (after
   * the reader of that slot's previous frame, see consumed()); *device: the
   * slot's image, *slot: its number. `host` must stay mapped until the
   * stream that reads *device has waited (wait()) and passed that point, or
   * finish(slot). */
  cudafx::Status upload (const cudafx::ImageView & host, cudafx::ImageView * device,
      int *slot);
  /* `stream` waits for the upload into `slot`. */
  cudafx::Status wait (int slot, cudafx::StreamHandle stream) const;
  /* The reader of `slot`, on `stream`, is queued: the slot's next upload
   * waits for it. */
  cudafx::Status consumed (int slot, cudafx::StreamHandle stream);
};

class GstCudaFxDownloadBehind : public GstCudaFxSlotPair
{
public:
  GstCudaFxDownloadBehind () = default;

  /* Copies `device` into the next slot on `stream` (ordered after the work
   * that made it, and before whatever `stream` runs next), then downloads
   * the slot into `host` on the download stream; *slot: its number. `host`
   * must stay mapped until finish(slot). */
  cudafx::Status download (const cudafx::ImageView & device, const cudafx::ImageView & host,
      cudafx::StreamHandle stream, int *slot);
};
