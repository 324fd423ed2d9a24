// 2D convolution with a user kernel (cv::filter2D's correlation: the kernel
// is not flipped), per plane, identical bytes on both backends.
//
// out(x, y) = saturate(round(sum over the kernel of t[i][j] *
//             in(x + j - anchor_x, y + i - anchor_y) / divisor + offset)),
// pixels outside the plane from BorderMode, every filtered channel on its
// own. Which bytes are filtered: packed RGB, the three colour bytes (alpha
// and padding are copied: an emboss offset of 128 would otherwise make the
// frame half transparent); GRAY8 and the luma plane of YUV, every byte;
// the chroma planes of YUV only with `filter_chroma` (the same kernel in
// chroma pixels; else copied: an edge kernel would turn neutral chroma green).
//
// Two arithmetics, chosen by the plan:
//  - integer, exact: every tap, the divisor and the offset integers, and the
//    sum of |taps| at most 2^23 (so every sum fits 32 bits). s is the exact
//    sum; the result is s / divisor rounded half up (floor((2s + d) / 2d),
//    with signs made positive in the divisor), plus the offset, saturated.
//    A kernel that is the product of an integer column and an integer row
//    runs as two passes (row, then column) with the same exact sums.
//  - float: taps w = (float)(t / divisor) (double division, one rounding);
//    acc = fma(w, p, acc) over the taps in row-major order from 0; then
//    acc + (float)offset (one rounding) to the nearest integer, ties to
//    even, saturated.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cudafx/backend.hpp"
#include "cudafx/border.hpp"
#include "cudafx/cuda_resources.hpp"
#include "cudafx/image.hpp"
#include "cudafx/status.hpp"

namespace cudafx {

constexpr int kConvolveMaxSize = 31;
constexpr long long kConvolveMaxIntegerWeight = 1 << 23;  // sum of |taps|

struct ConvolveParams {
  int width = 3, height = 3;  // odd, 1..31
  std::vector<double> taps;   // row-major, width * height
  double divisor = 0.0;       // 0: the sum of the taps (1 when that is 0)
  double offset = 0.0;
  int anchor_x = -1, anchor_y = -1;  // -1: the centre
  BorderMode border = BorderMode::Replicate;
  bool filter_chroma = false;
};

// Parses "1 2 1; 2 4 2; 1 2 1" (rows separated by ';' or newlines, values by
// spaces or commas) into params' width, height and taps.
Status parse_convolve_kernel(const std::string& text, ConvolveParams* params);

// Separable integer kernels of more taps than this run as a row pass and a
// column pass on the GPU (smaller ones are faster in 2D there; the CPU runs
// every separable integer kernel in two passes: integer sums are exact
// either way).
constexpr int kConvolveTwoPassArea = 11 * 11;
// Float kernels of more taps than this that factor run as two passes on both
// backends (the passes round differently from the 2D sum, so the plan's
// choice decides the bytes). H100, 2160p RGBA, a float Gaussian: 15x15 in
// two passes 1.34 ms against 1.28 ms in 2D, 31x31 2.38 against 4.95 ms.
constexpr int kConvolveFloatTwoPassArea = 15 * 15;
// A float kernel factors when, with r the row of its largest tap p and c its
// column divided by p, the taps (divided by the divisor) differ from
// c[i] * r[j] (in float) by at most kConvolveFloatFactorTolerance in all
// (sum of |c[i] r[j] - t|): the factored kernel moves no output by more than
// a quarter of a grey level before rounding, so kernels typed with a few
// digits (a Gaussian to six) still factor. The passes then apply c and r.
constexpr float kConvolveFloatFactorTolerance = 0.25f / 255.0f;

struct ConvolvePlan {
  ImageDesc desc;
  ConvolveParams params;
  int ax = 0, ay = 0;                // the anchor
  double divisor = 1.0;              // the one used
  bool integer = false, separable = false;
  std::vector<int> itaps;            // integer: the taps
  std::vector<int> col, row;         // separable: taps = col[i] * row[j]
  int idivisor = 1, ioffset = 0;
  std::vector<float> ftaps;          // float: t / divisor
  std::vector<float> fcol, frow;     // float separable (more than kConvolveFloatTwoPassArea taps)
  float foffset = 0.0f;
  // Per plane: whether it is filtered, and which of its bytes (bit c of
  // lanes: byte c of a pixel).
  bool filtered[kMaxPlanes] = {false, false, false};
  unsigned lanes[kMaxPlanes] = {0, 0, 0};
};

Status plan_convolve(const ImageDesc& desc, const ConvolveParams& params, ConvolvePlan* out);

class ConvolveOp {
 public:
  // For Backend::Cuda the current CUDA context is the one the op runs in.
  static Status create(Backend backend, const ImageDesc& desc, const ConvolveParams& params,
                       std::unique_ptr<ConvolveOp>* out);
  ~ConvolveOp();
  Status set_params(const ConvolveParams& params);
  // Filters src into dst (views of the op's desc that do not overlap).
  // CUDA: device memory, queued on `stream`; CPU: host memory, on return.
  Status submit(StreamHandle stream, const ImageView& src, const ImageView& dst);
  const ConvolvePlan& plan() const { return plan_; }

 private:
  ConvolveOp(Backend backend) : backend_(backend) {}
  Status prepare();
  Backend backend_;
  ConvolvePlan plan_;
  DeviceBuffer device_;  // CUDA: the taps and the separable pass's rows
};

// The backends, for the op and the tests.
Status convolve_cpu(const ConvolvePlan& plan, const ImageView& src, const ImageView& dst);
Status convolve_cuda(const ConvolvePlan& plan, const ImageView& src, const ImageView& dst,
                     void* scratch, size_t scratch_bytes, StreamHandle stream);
size_t convolve_cuda_scratch_bytes(const ConvolvePlan& plan);
// Whether plane `plane` of the plan runs on the integer tensor cores on the
// current device (4-byte pixels, integer taps within -128..127, at most 17
// wide, sm_80 and up; the images' rows 4-byte aligned): for tests and notes.
bool convolve_cuda_tensor_cores(const ConvolvePlan& plan, int plane);

}  // namespace cudafx
