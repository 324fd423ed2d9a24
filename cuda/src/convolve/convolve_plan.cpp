// Validation and planning of the convolution op: the kernel's text form,
// which arithmetic, the separable split, and which bytes are filtered.
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <sstream>
#include <string>

#include "cudafx/convolve.hpp"
#include "cudafx/rgb_luma.hpp"

namespace cudafx {

Status parse_convolve_kernel(const std::string& text, ConvolveParams* params) {
  std::vector<std::vector<double>> rows;
  std::vector<double> cur;
  size_t i = 0;
  auto end_row = [&]() {
    if (!cur.empty())
      rows.push_back(cur);
    cur.clear();
  };
  while (i < text.size()) {
    const char c = text[i];
    if (c == ';' || c == '\n') {
      end_row();
      i++;
    } else if (c == ' ' || c == ',' || c == '\t' || c == '\r') {
      i++;
    } else {
      const char* start = text.c_str() + i;
      char* stop = nullptr;
      const double v = std::strtod(start, &stop);
      if (stop == start || !std::isfinite(v))
        return Status::invalid("convolution kernel: not a number at \"" + text.substr(i, 12) +
                               "\"");
      cur.push_back(v);
      i += stop - start;
    }
  }
  end_row();
  if (rows.empty())
    return Status::invalid("convolution kernel: empty");
  for (const auto& r : rows)
    if (r.size() != rows[0].size())
      return Status::invalid("convolution kernel: rows of different lengths (" +
                             std::to_string(rows[0].size()) + " and " + std::to_string(r.size()) +
                             ")");
  params->width = static_cast<int>(rows[0].size());
  params->height = static_cast<int>(rows.size());
  params->taps.clear();
  for (const auto& r : rows)
    params->taps.insert(params->taps.end(), r.begin(), r.end());
  return Status::ok();
}

namespace {

bool is_int(double v, long long limit) {
  return std::isfinite(v) && std::fabs(v) <= static_cast<double>(limit) && v == std::floor(v);
}

// taps = col x row in integers, with row the first nonzero row divided by
// the gcd of its entries; false when the kernel is no such product.
bool split_separable(const std::vector<int>& t, int w, int h, std::vector<int>* col,
                     std::vector<int>* row) {
  int r0 = -1;
  for (int i = 0; i < h && r0 < 0; i++)
    for (int j = 0; j < w; j++)
      if (t[i * w + j] != 0) {
        r0 = i;
        break;
      }
  if (r0 < 0)
    return false;  // all zero: the 2D path is as cheap
  int g = 0;
  for (int j = 0; j < w; j++)
    g = std::gcd(g, std::abs(t[r0 * w + j]));
  row->assign(w, 0);
  for (int j = 0; j < w; j++)
    (*row)[j] = t[r0 * w + j] / g;
  int j0 = 0;
  while ((*row)[j0] == 0)
    j0++;
  col->assign(h, 0);
  for (int i = 0; i < h; i++) {
    if (t[i * w + j0] % (*row)[j0] != 0)
      return false;
    (*col)[i] = t[i * w + j0] / (*row)[j0];
    for (int j = 0; j < w; j++)
      if (static_cast<long long>((*col)[i]) * (*row)[j] != t[i * w + j])
        return false;
  }
  return w > 1 && h > 1;
}

// The float factors of t (kConvolveFloatFactorTolerance), for kernels of more
// than kConvolveFloatTwoPassArea taps only: the row of the largest tap, and
// its column divided by that tap.
bool split_separable_float(const std::vector<float>& t, int w, int h, std::vector<float>* col,
                           std::vector<float>* row) {
  if (w * h <= kConvolveFloatTwoPassArea || w == 1 || h == 1)
    return false;
  size_t big = 0;
  for (size_t k = 1; k < t.size(); k++)
    if (std::fabs(t[k]) > std::fabs(t[big]))
      big = k;
  const float pivot = t[big];
  if (pivot == 0.0f)
    return false;
  const int i0 = static_cast<int>(big) / w, j0 = static_cast<int>(big) % w;
  row->assign(t.begin() + i0 * w, t.begin() + (i0 + 1) * w);
  col->resize(h);
  for (int i = 0; i < h; i++) (*col)[i] = t[i * w + j0] / pivot;
  double deviation = 0;
  for (int i = 0; i < h; i++)
    for (int j = 0; j < w; j++)
      deviation += std::fabs(static_cast<double>((*col)[i] * (*row)[j]) - t[i * w + j]);
  return deviation <= kConvolveFloatFactorTolerance;
}

}  // namespace

Status plan_convolve(const ImageDesc& desc, const ConvolveParams& p, ConvolvePlan* out) {
  if (desc.width <= 0 || desc.height <= 0)
    return Status::invalid("convolution: image size must be positive");
  const int w = p.width, h = p.height;
  if (w < 1 || h < 1 || w > kConvolveMaxSize || h > kConvolveMaxSize || w % 2 == 0 || h % 2 == 0)
    return Status::invalid("convolution kernel must be odd by odd, 1 to 31 a side, got " +
                           std::to_string(w) + "x" + std::to_string(h));
  if (p.taps.size() != static_cast<size_t>(w) * h)
    return Status::invalid("convolution kernel: " + std::to_string(p.taps.size()) +
                           " taps for " + std::to_string(w) + "x" + std::to_string(h));
  const int ax = p.anchor_x < 0 ? w / 2 : p.anchor_x, ay = p.anchor_y < 0 ? h / 2 : p.anchor_y;
  if (ax >= w || ay >= h)
    return Status::invalid("convolution anchor (" + std::to_string(p.anchor_x) + ", " +
                           std::to_string(p.anchor_y) + ") is outside the kernel");
  double sum = 0;
  for (double t : p.taps) {
    if (!std::isfinite(t))
      return Status::invalid("convolution kernel: taps must be finite");
    sum += t;
  }
  const double divisor = p.divisor != 0.0 ? p.divisor : (sum != 0.0 ? sum : 1.0);
  if (!std::isfinite(divisor) || !std::isfinite(p.offset))
    return Status::invalid("convolution: divisor and offset must be finite");

  ConvolvePlan plan;
  plan.desc = desc;
  plan.params = p;
  plan.ax = ax;
  plan.ay = ay;
  plan.divisor = divisor;
  long long weight = 0;
  bool integer = is_int(divisor, 1LL << 30) && is_int(p.offset, 1 << 20);
  for (double t : p.taps) {
    integer = integer && is_int(t, kConvolveMaxIntegerWeight);
    weight += integer ? static_cast<long long>(std::fabs(t)) : 0;
  }
  plan.integer = integer && weight <= kConvolveMaxIntegerWeight;
  if (plan.integer) {
    plan.itaps.assign(p.taps.begin(), p.taps.end());
    plan.idivisor = static_cast<int>(divisor);
    plan.ioffset = static_cast<int>(p.offset);
    plan.separable = split_separable(plan.itaps, w, h, &plan.col, &plan.row);
  } else {
    // Taps and offset must stay floats (a double past FLT_MAX has no float).
    constexpr double kFloatMax = 3.0e38;
    if (std::fabs(p.offset) > kFloatMax)
      return Status::invalid("convolution: offset out of float range");
    plan.ftaps.resize(p.taps.size());
    for (size_t i = 0; i < p.taps.size(); i++) {
      const double w = p.taps[i] / divisor;
      if (!(std::fabs(w) <= kFloatMax))
        return Status::invalid("convolution: a tap divided by the divisor is out of float range");
      plan.ftaps[i] = static_cast<float>(w);
    }
    plan.foffset = static_cast<float>(p.offset);
    plan.separable = split_separable_float(plan.ftaps, w, h, &plan.fcol, &plan.frow);
  }

  // The filtered bytes.
  const FormatInfo& fi = format_info(desc.format);
  RgbBytes rgb;
  if (rgb_bytes(desc.format, &rgb)) {
    plan.filtered[0] = true;
    plan.lanes[0] = (1u << rgb.r) | (1u << rgb.g) | (1u << rgb.b);
  } else {
    for (int i = 0; i < fi.n_planes; i++) {
      plan.filtered[i] = i == 0 || p.filter_chroma;
      plan.lanes[i] = plan.filtered[i] ? (1u << fi.planes[i].channels) - 1 : 0;
    }
  }
  *out = std::move(plan);
  return Status::ok();
}

}  // namespace cudafx
