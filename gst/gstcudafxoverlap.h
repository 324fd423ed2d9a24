/* Frames of a TRANSFORM element whose input and output are in system memory
 * (copied through the device), overlapped: frame n+1's upload runs while
 * frame n's download runs (PCIe is full duplex), so a frame costs about one
 * crossing of the bus instead of two. Three streams: uploads, the op (the
 * element's own stream: ops keep scratch memory, so their kernels stay in
 * one order) and downloads, ordered by events; two staging slots, used in
 * turn. A frame is given back when the next one has been queued (one frame
 * of latency) or when the element drains (EOS and any other serialized
 * event, new caps); its input buffer is released with it. (Waiting for the
 * upload to let the input go sooner leaves the upload engine idle while the
 * host fetches the next buffer: cudagaussian at 2160p on an H200 ran at
 * 76-84 % of one-direction pinned bandwidth that way, 83-87 % this way,
 * a few runs each.) Streaming thread only; the element's context must be
 * current. */
#pragma once

#include <gst/gst.h>
#include <gst/video/video.h>

#include <deque>
#include <functional>
#include <optional>

#include "cudafx/cuda_resources.hpp"
#include "cudafx/image.hpp"

class GstCudaFxOverlap
{
public:
  using Process = std::function < cudafx::Status (const cudafx::ImageView & src,
      const cudafx::ImageView & dst, cudafx::StreamHandle stream) >;

  GstCudaFxOverlap () = default;
  ~GstCudaFxOverlap ();
  GstCudaFxOverlap (const GstCudaFxOverlap &) = delete;
  GstCudaFxOverlap & operator= (const GstCudaFxOverlap &) = delete;

  /* Queues one frame: `host_in`, which lies in `in_frame` (mapped for
   * reading), uploaded, `process` on `stream`, the result downloaded into
   * `host_out`, which lies in `out_frame` (mapped for writing). Both frames
   * are taken over, with a reference to their buffers, and unmapped when
   * the frame is finished. On an error nothing stays queued of this frame
   * (both unmapped). */
  cudafx::Status queue (cudafx::StreamHandle stream, GstVideoFrame * in_frame,
      const cudafx::ImageView & host_in, GstVideoFrame * out_frame,
      const cudafx::ImageView & host_out, const Process & process);

  size_t in_flight () const { return frames_.size (); }

  /* The oldest frame in flight, after its download: its buffer (ours to
   * give) in *out, or an error (the buffer dropped). */
  cudafx::Status finish_oldest (GstBuffer ** out);

  /* Every frame in flight dropped, after the device is done with them. */
  void discard ();

  /* Streams, events and staging memory released (nothing in flight). */
  void release ();

private:
  struct Slot
  {
    cudafx::DeviceBuffer in, out;
    /* made in the element's context, destroyed there (release) */
    std::optional < cudafx::CudaEvent > uploaded, computed, downloaded;
  };
  struct Frame
  {
    GstVideoFrame in, out;      /* mapped; their buffers referenced */
    int slot;
  };
  static void release_frame (Frame & f);

  cudafx::Status ensure_streams ();

  cudafx::CudaStream up_, down_;
  Slot slots_[2];
  int next_ = 0;
  std::deque < Frame > frames_;
};
