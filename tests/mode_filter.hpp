// Test-only elements on GstCudaFxFilter, one per thing the base class must
// carry, with ops simple enough to check byte for byte:
//  - "cudafxtestfilter" (every format): `op-mode` picks the base class mode.
//    TRANSFORM copies the frame and writes kTransformMark over row 0 of
//    plane 0; IN_PLACE writes kInPlaceMark over row 0 of plane 0; ANALYSIS
//    copies row 0 of plane 0 to pinned memory (CUDA) or a vector (CPU), and
//    `finish` attaches a GstVideoRegionOfInterestMeta "row-sum" whose param
//    "sum" is the sum of those bytes, and posts the element message
//    "cudafxtestfilter" with the same "sum".
//  - "cudafxtestgrey": RGBA in, GRAY8 out (separate format lists): each
//    output row is the first `width` bytes of the input row.
//  - "cudafxtesthostip" (IN_PLACE, every format): process_ip writes
//    kInPlaceMark over row 0 of plane 0, process_ip_host kHostMark: which
//    one a frame got shows where the base class sent it.
// Registered in-process (no plugin): the test binary links the base class.
#pragma once

#include <gst/gst.h>

namespace testing_support {

constexpr guint8 kTransformMark = 0x5A;
constexpr guint8 kInPlaceMark = 0xA5;
constexpr guint8 kHostMark = 0x3C;

// Registers the element factories once.
void register_mode_filters();

}  // namespace testing_support
