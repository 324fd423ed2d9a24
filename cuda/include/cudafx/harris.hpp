// Harris corners: response map, non-maximum suppression and the sorted list
// of the strongest corners, on the luma of any PixelFormat.
//
// Semantics (identical on both backends, bit for bit):
//  - Grey input I: plane 0 as is for GRAY8, I420, NV12 and Y444 (their luma,
//    whatever its range); for the packed RGB formats the integer BT.601 luma
//    of OpenCV 4.6's cv::cvtColor(COLOR_RGB2GRAY / BGR2GRAY / RGBA2GRAY /
//    BGRA2GRAY) on 8-bit data:
//        I = (9798 R + 19235 G + 3735 B + 2^14) >> 15
//    (15-bit coefficients: OpenCV 4.6 uses them, not the 14-bit 4899/9617/
//    1868 of its older code, which differs on 43864 of the 2^24 colours; the
//    test suite checks every colour against cvtColor). Alpha and padding
//    bytes are ignored; ARGB and ABGR the same rule on their R, G, B bytes.
//  - Derivatives: Sobel of size g = gradient_size (3, 5, 7), as cv::Sobel:
//    Ix = smooth_y (x) deriv_x, Iy = deriv_y (x) smooth_x, correlation,
//    with the integer taps
//        g=3: deriv -1 0 1              smooth 1 2 1
//        g=5: deriv -1 -2 0 2 1         smooth 1 4 6 4 1
//        g=7: deriv -1 -4 -5 0 5 4 1    smooth 1 6 15 20 15 6 1
//    Pixels of I outside the frame come from `border` (Constant: 0).
//  - Window: Sxx, Sxy, Syy = sums of w(i,j) * (Ix^2, Ix*Iy, Iy^2) over the
//    block_size x block_size window b centred on the pixel; Box: w = 1 (as
//    cv::cornerHarris); Gaussian: w(i,j) = c_i * c_j with c the binomial
//    taps of size b (1 2 1 / 1 4 6 4 1 / 1 6 15 20 15 6 1). Products outside
//    the frame come from `border` applied to the product images (Constant:
//    0), as cornerHarris applies its borderType to both steps: a product at
//    an outside position is the product at the mapped inside position, not a
//    derivative computed over the extended grey image.
//  - Exactness rule: everything up to the window sums is integer arithmetic
//    and exact: derivatives in int32 (|Ix| <= 255 * 10 * 64 = 163200 for
//    g=7), products and window sums in int64 on the CPU (worst case
//    163200^2 * 4096 = 1.1e14 for g=7 with a 7x7 Gaussian window; int32
//    overflows from g=5 with a 5x5 box). The CUDA backend may use 32-bit
//    modular arithmetic where the plan proves the final sums fit
//    (HarrisPlan::narrow): exact integers are the same integers whatever
//    they were computed in. Then ONE float formula per pixel, each
//    operation rounded to nearest in this order:
//        a = float(Sxx) * n,  b = float(Sxy) * n,  c = float(Syy) * n
//        R = (a*c - b*b) - (k*(a+c)) * (a+c)
//    with n = float(s^2 * v), s = 1 / (2^(g-1) * b * 255) the scale
//    cv::cornerHarris applies to 8-bit derivatives, and v = 1 for Box,
//    b^2 / 4^(b-1) for Gaussian (the same total weight as the box, so a
//    threshold means the same for both windows); s^2 * v computed in double.
//  - Accuracy, with M = |a*c| + b^2 + k*(a+c)^2 the size of the terms
//    that cancel in R (on edges det ~ k tr^2, in flat areas all are 0, so
//    no bound relative to R itself can hold):
//      against R computed in double from the exact sums:
//        |R - R_exact| <= 2^-20 * M  (measured: 2^-21.1; R = 0 where M = 0);
//      against cv::cornerHarris (same g, b, k, border; float derivatives
//      and products, whose rounding dominates):
//        |R - R_cv| <= 2^-8 * M + 2^-90 * max|R_cv|
//      (measured on the four test photos, random and black/white frames,
//      every g, b and border: 2^-9.9 * M; OpenCV's running window sums
//      leave residues up to 2^-107 * max|R_cv| where M = 0).
//    tests/test_harris_op.cpp checks both at every pixel.
//  - Threshold: Absolute: t = threshold; Relative: t = threshold * Rmax
//    (float product), Rmax the frame's largest response, 0 when no
//    response is positive. A corner needs R > t (so R > 0).
//  - Non-maximum suppression: with r = min_distance, pixel p is a corner
//    when R(p) > t and p beats every other in-frame pixel q of the
//    (2r+1) x (2r+1) square around it: R(p) > R(q), or R(p) == R(q) and p
//    comes first in raster order (y, then x). r = 0 keeps every pixel above
//    t. Two corners are therefore more than r apart on some axis. On a run
//    of equal responses a pixel suppresses the equal ones after it within
//    r even when it is itself suppressed, so only the run's first survives.
//  - The list: all corners sorted by R descending, then y, then x; the
//    first max_corners of them. Position x, y in pixels (pixel centres at
//    integers); with subpixel, each axis is refined by the vertex of the
//    parabola through R at -1, 0, +1 on that axis (offset
//    0.5*(R- - R+) / (R- - 2R0 + R+), rounded as written, clamped to
//    +-0.5; 0 where the curvature is not negative or a neighbour is outside
//    the frame). score = R. (Harris's maximum lies inside a corner's angle:
//    on a step corner 0.5 pixel from the true corner for 3x3 windows, about
//    half the window for wider box windows.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "cudafx/backend.hpp"
#include "cudafx/border.hpp"
#include "cudafx/cuda_resources.hpp"
#include "cudafx/image.hpp"
#include "cudafx/status.hpp"

namespace cudafx {

enum class HarrisWindow { Box, Gaussian };
enum class HarrisThresholdMode { Absolute, Relative };

// Largest supported values.
constexpr int kHarrisMaxTaps = 7;            // gradient_size and block_size
constexpr int kHarrisMaxMinDistance = 32;
constexpr int kHarrisMaxCorners = 8192;
constexpr int kHarrisMaxSide = 32768;        // width and height

struct HarrisParams {
  int gradient_size = 3;  // Sobel aperture: 3, 5 or 7
  int block_size = 3;     // window: 3, 5 or 7
  HarrisWindow window = HarrisWindow::Box;
  float k = 0.04f;        // 0 .. 0.25
  // cv::cornerHarris's default (BORDER_DEFAULT).
  BorderMode border = BorderMode::Reflect101;
  HarrisThresholdMode threshold_mode = HarrisThresholdMode::Relative;
  // Absolute: the response a corner must exceed (>= 0). Relative: the
  // fraction of the frame's largest response (0 .. 1), like
  // goodFeaturesToTrack's qualityLevel.
  float threshold = 0.01f;
  int min_distance = 3;   // suppression radius r, 0 .. kHarrisMaxMinDistance
  int max_corners = 1000; // 1 .. kHarrisMaxCorners (there is no "unlimited")
  bool subpixel = false;
};

struct HarrisCorner {
  float x, y;     // pixels; integers unless subpixel
  float score;    // the response R at the pixel
};

// How the result lies in memory (pinned host memory on the CUDA backend):
// this header, then `count` corners.
struct HarrisResultHeader {
  uint32_t count;       // corners in the list (<= max_corners)
  uint32_t candidates;  // corners found before the max_corners cut
  float max_response;   // the frame's largest response, 0 when none is positive
  float threshold;      // the absolute threshold t applied
};

// The corners of the op's last submit.
struct HarrisCornerList {
  int count = 0;
  int candidates = 0;
  float max_response = 0.0f;
  float threshold = 0.0f;
  const HarrisCorner* corners = nullptr;  // strongest first
};

// The same list in device memory (CUDA backend), for work queued behind the
// detection on the same stream (drawing the corners) without waiting:
// `count` points at the header's count, `corners` at the corners.
struct HarrisDeviceList {
  const HarrisCorner* corners = nullptr;
  const uint32_t* count = nullptr;
};

// A float image of the op's size: `pitch` bytes between rows (a multiple of
// 4, at least width * 4); host memory for the CPU backend, device memory
// for CUDA.
struct HarrisResponseView {
  float* data = nullptr;
  size_t pitch = 0;
};

// Where the grey value of a pixel comes from: plane 0, `channels` bytes a
// pixel; r < 0: byte 0 as is; else the luma of bytes r, g, b.
struct HarrisLuma {
  int channels = 1;
  int r = -1, g = -1, b = -1;
};

struct HarrisPlan {
  ImageDesc desc;
  HarrisParams params;
  HarrisLuma luma;
  int grad_radius = 1, block_radius = 1;
  // Taps, 2 * radius + 1 of each.
  int deriv[kHarrisMaxTaps] = {}, smooth[kHarrisMaxTaps] = {}, window[kHarrisMaxTaps] = {};
  float norm = 0.0f;  // n of the formula
  // Window sums fit 32-bit modular arithmetic: the largest possible
  // sum(w) * (Ix^2 + Iy^2) is below 2^32, so Sxx and Syy fit uint32 and
  // |Sxy| <= that / 2 fits int32. True for g=3 (but a 7x7 Gaussian window)
  // and g=5 with a 3x3 window or a 5x5 box.
  bool narrow = false;
  // At most this many corners in a frame: one per (r+1) x (r+1) cell.
  size_t capacity = 0;
};

// Largest Ix^2 + Iy^2 an 8-bit image can produce with Sobel of size g, and
// its Ix alone: from the taps (the maximum of a convex function over the
// box [0,255]^(g*g) lies at a vertex; 3 and 5 enumerated, 7 bounded by
// twice the axis maximum). Used for HarrisPlan::narrow.
long long harris_max_gradient_sq(int gradient_size);
long long harris_max_derivative(int gradient_size);

// Validates the parameters for the image and computes the plan.
Status plan_harris(const ImageDesc& desc, const HarrisParams& params, HarrisPlan* out);

// The CPU backend's scratch, sized by the op.
struct HarrisCpuScratch {
  std::vector<uint8_t> grey;      // the luma plane of RGB formats
  std::vector<float> response;    // when the caller gives none
  std::vector<long long> rows;    // per-worker derivative and window rows
  std::vector<std::vector<uint64_t>> keys;  // per-band corners, then all of them
  std::vector<float> band_max;    // per-worker largest response
  std::vector<uint8_t> result;    // HarrisResultHeader + corners
};

// The CUDA backend's buffers, allocated by the op at creation.
struct HarrisCudaBuffers {
  DeviceBuffer device;   // state, result, candidate keys, response
  PinnedBuffer host;     // the result, written by the selection kernel or copied back
  uint8_t* host_mapped = nullptr;  // `host` as the device sees it; null: not mapped
  size_t result_at = 0, keys_at = 0, response_at = 0, response_pitch = 0;
  int sort_capacity = 0; // keys the select kernel sorts in shared memory
  bool early_launch = false;  // programmatic dependent launch (sm_90 and later)
  // The device state is zero: the last detection's selection kernel was
  // queued (it zeroes the state after reading it). False after allocation
  // or a failed submit: the next detection zeroes it first.
  bool state_zero = false;
};

// The op: built once for a format and size, then submitted per frame.
class HarrisOp {
 public:
  // For Backend::Cuda the current CUDA context is the one the op will run in;
  // creation allocates everything, submit() nothing: device memory for the
  // response (width * 4 bytes a row, rounded up to 256, times height), 8
  // bytes per possible corner (HarrisPlan::capacity: a pixel's worth with
  // min_distance 0, a quarter with 1, ...) and the result; pinned host
  // memory for the result (16 + 12 * max_corners bytes).
  static Status create(Backend backend, const ImageDesc& desc, const HarrisParams& params,
                       std::unique_ptr<HarrisOp>* out);
  ~HarrisOp();

  // New parameters for the same image; allocates only when the new plan
  // needs more (a smaller min_distance, more corners). CUDA: call it with
  // no submit of the op in flight (the buffers may move).
  Status set_params(const HarrisParams& params);

  // Detects the corners of `src` (a view of the op's desc). The response is
  // written to `response` when it has data, else to the op's own buffer.
  // CUDA: device pointers; queued on `stream` (response, suppression,
  // sorting, and the copy of the list into the op's pinned memory), returns
  // without waiting; synchronise the stream once, then read corners(). CPU:
  // host pointers; runs to completion.
  Status submit(StreamHandle stream, const ImageView& src, const HarrisResponseView& response = {});

  // The response map alone (no threshold, suppression or list).
  Status submit_response(StreamHandle stream, const ImageView& src,
                         const HarrisResponseView& response);

  // The list of the last submit(): valid after its stream was synchronised
  // (CUDA) or submit returned (CPU), until the next submit or set_params.
  HarrisCornerList corners() const;
  // CUDA: where submit() leaves the list in device memory (the stream's
  // later work sees it); null pointers on the CPU backend.
  HarrisDeviceList device_list() const;

  Backend backend() const { return backend_; }
  const HarrisPlan& plan() const { return plan_; }

 private:
  explicit HarrisOp(Backend backend) : backend_(backend) {}
  Status prepare();

  Backend backend_;
  HarrisPlan plan_;
  HarrisCpuScratch cpu_;
  HarrisCudaBuffers cuda_;
};

// The backends, for the op and for tests that call them directly.
Status harris_check_response(const HarrisPlan& plan, const HarrisResponseView& response,
                             const char* what);
Status harris_cpu_prepare(const HarrisPlan& plan, HarrisCpuScratch* scratch);
// detect: also threshold, suppress and list into scratch->result.
Status harris_cpu(const HarrisPlan& plan, const ImageView& src, const HarrisResponseView& response,
                  bool detect, HarrisCpuScratch* scratch);
// In the CUDA context the op runs in. Allocates the buffers for the plan
// (keeps them when large enough).
Status harris_cuda_prepare(const HarrisPlan& plan, HarrisCudaBuffers* buffers);
Status harris_cuda(const HarrisPlan& plan, const ImageView& src, const HarrisResponseView& response,
                   bool detect, HarrisCudaBuffers* buffers, StreamHandle stream);
// For tests, in every build: the CUDA backend's kernels run on the host --
// the same per-item code (cuda/src/harris/harris_kernels.hpp), block by
// block and thread by thread, candidates appended and gathered in scrambled
// orders -- on host memory. Writes the response and, with detect, into
// *result what the CUDA backend copies back (HarrisResultHeader + corners).
// `path`, when given, tells which way the selection kernel took (tests
// check that every way is taken): Buckets, the keys up to the max_corners-th
// one's score bucket ranked within their buckets; SortAll, every candidate
// sorted; Radix, a radix select of max_corners keys, then sorted.
enum class HarrisSelectPath { SortAll, Buckets, Radix };
Status harris_cuda_emulate(const HarrisPlan& plan, const ImageView& src,
                           const HarrisResponseView& response, bool detect,
                           std::vector<uint8_t>* result, HarrisSelectPath* path = nullptr);

}  // namespace cudafx
