#include "harris_oracle.hpp"

#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

namespace testing_support {

using namespace cudafx;

int cv_border(BorderMode mode) {
  switch (mode) {
    case BorderMode::Replicate:
      return cv::BORDER_REPLICATE;
    case BorderMode::Reflect101:
      return cv::BORDER_REFLECT_101;
    default:
      return cv::BORDER_CONSTANT;
  }
}

cv::Mat harris_grey(const HostImage& src) {
  const cv::Mat p = src.plane_mat(0);
  cv::Mat grey;
  switch (src.desc().format) {
    case PixelFormat::RGBA:
    case PixelFormat::RGBx:
      cv::cvtColor(p, grey, cv::COLOR_RGBA2GRAY);
      break;
    case PixelFormat::BGRA:
    case PixelFormat::BGRx:
      cv::cvtColor(p, grey, cv::COLOR_BGRA2GRAY);
      break;
    case PixelFormat::ARGB:
    case PixelFormat::ABGR: {
      // A R G B -> R G B A (ABGR -> B G R A): the same rule on reordered bytes.
      cv::Mat re(p.size(), CV_8UC4);
      const int from_to[] = {1, 0, 2, 1, 3, 2, 0, 3};
      cv::mixChannels(&p, 1, &re, 1, from_to, 4);
      cv::cvtColor(re, grey,
                   src.desc().format == PixelFormat::ARGB ? cv::COLOR_RGBA2GRAY : cv::COLOR_BGRA2GRAY);
      break;
    }
    case PixelFormat::RGB:
      cv::cvtColor(p, grey, cv::COLOR_RGB2GRAY);
      break;
    case PixelFormat::BGR:
      cv::cvtColor(p, grey, cv::COLOR_BGR2GRAY);
      break;
    default:
      grey = p.clone();
      break;
  }
  return grey;
}

HostImage grey_image(const cv::Mat& grey, size_t pad) {
  HostImage out({PixelFormat::GRAY8, grey.cols, grey.rows}, pad);
  grey.copyTo(out.plane_mat(0));
  return out;
}

namespace {

cv::Mat binomial(int size) {
  cv::Mat k(size, 1, CV_64F);
  k.at<double>(0) = 1;
  for (int i = 1; i < size; i++) {
    k.at<double>(i) = 0;
    for (int j = i; j > 0; j--)
      k.at<double>(j) += k.at<double>(j - 1);
  }
  return k;
}

double scale_of(const HarrisParams& p) {
  return 1.0 / ((1 << (p.gradient_size - 1)) * p.block_size * 255.0);
}

}  // namespace

cv::Mat harris_cv_response(const cv::Mat& grey, const HarrisParams& p) {
  const int border = cv_border(p.border);
  cv::Mat out;
  if (p.window == HarrisWindow::Box) {
    cv::cornerHarris(grey, out, p.block_size, p.gradient_size, p.k, border);
    return out;
  }
  const double scale = scale_of(p);
  cv::Mat dx, dy;
  cv::Sobel(grey, dx, CV_32F, 1, 0, p.gradient_size, scale, 0, border);
  cv::Sobel(grey, dy, CV_32F, 0, 1, p.gradient_size, scale, 0, border);
  cv::Mat a = dx.mul(dx), b = dx.mul(dy), c = dy.mul(dy);
  // Binomial taps scaled so that the 2D window weighs block_size^2 in all.
  cv::Mat w = binomial(p.block_size);
  w *= p.block_size / cv::sum(w)[0];
  w.convertTo(w, CV_32F);
  for (cv::Mat* m : {&a, &b, &c})
    cv::sepFilter2D(*m, *m, CV_32F, w, w, cv::Point(-1, -1), 0, border);
  out.create(grey.size(), CV_32F);
  for (int y = 0; y < grey.rows; y++)
    for (int x = 0; x < grey.cols; x++) {
      const float A = a.at<float>(y, x), B = b.at<float>(y, x), C = c.at<float>(y, x);
      const float ac = A + C;
      out.at<float>(y, x) = (A * C - B * B) - p.k * ac * ac;
    }
  return out;
}

double HarrisExact::r(int x, int y, float k) const {
  const double A = a.at<double>(y, x), B = b.at<double>(y, x), C = c.at<double>(y, x);
  return A * C - B * B - static_cast<double>(k) * (A + C) * (A + C);
}

double HarrisExact::magnitude(int x, int y, float k) const {
  const double A = a.at<double>(y, x), B = b.at<double>(y, x), C = c.at<double>(y, x);
  return std::abs(A * C) + B * B + static_cast<double>(k) * (A + C) * (A + C);
}

HarrisExact harris_exact(const cv::Mat& grey, const HarrisParams& p) {
  const int border = cv_border(p.border);
  cv::Mat dx, dy;
  cv::Sobel(grey, dx, CV_64F, 1, 0, p.gradient_size, 1, 0, border);
  cv::Sobel(grey, dy, CV_64F, 0, 1, p.gradient_size, 1, 0, border);
  HarrisExact e;
  e.a = dx.mul(dx);
  e.b = dx.mul(dy);
  e.c = dy.mul(dy);
  double n = scale_of(p) * scale_of(p);
  if (p.window == HarrisWindow::Box) {
    for (cv::Mat* m : {&e.a, &e.b, &e.c})
      cv::boxFilter(*m, *m, CV_64F, cv::Size(p.block_size, p.block_size), cv::Point(-1, -1), false,
                    border);
  } else {
    const cv::Mat w = binomial(p.block_size);
    for (cv::Mat* m : {&e.a, &e.b, &e.c})
      cv::sepFilter2D(*m, *m, CV_64F, w, w, cv::Point(-1, -1), 0, border);
    const double s = cv::sum(w)[0];
    n *= p.block_size * p.block_size / (s * s);
  }
  e.a *= n;
  e.b *= n;
  e.c *= n;
  return e;
}

::testing::AssertionResult response_within_bounds(const cv::Mat& got, const cv::Mat& cv_resp,
                                                  const HarrisExact& exact, float k,
                                                  double* worst_exact, double* worst_cv) {
  double max_cv = 0.0;
  for (int y = 0; y < got.rows; y++)
    for (int x = 0; x < got.cols; x++)
      max_cv = std::max(max_cv, std::abs(static_cast<double>(cv_resp.at<float>(y, x))));
  double we = 0.0, wc = 0.0;
  int bad = 0;
  std::ostringstream first;
  for (int y = 0; y < got.rows; y++) {
    for (int x = 0; x < got.cols; x++) {
      const double g = got.at<float>(y, x);
      const double m = exact.magnitude(x, y, k);
      const double de = std::abs(g - exact.r(x, y, k));
      const double dc = std::abs(g - cv_resp.at<float>(y, x));
      if (m > 0) {
        we = std::max(we, de / m);
        wc = std::max(wc, dc / m);
      }
      const bool ok = de <= std::ldexp(m, -20) && dc <= std::ldexp(m, -8) + std::ldexp(max_cv, -90);
      if (!ok && bad++ == 0)
        first << "first at (" << x << "," << y << "): got " << g << ", exact " << exact.r(x, y, k)
              << ", cv " << cv_resp.at<float>(y, x) << ", M " << m;
    }
  }
  if (worst_exact)
    *worst_exact = we;
  if (worst_cv)
    *worst_cv = wc;
  if (bad)
    return ::testing::AssertionFailure()
           << bad << " pixels outside the bounds; " << first.str() << "; worst |d|/M: exact 2^"
           << std::log2(we) << ", cv 2^" << std::log2(wc);
  return ::testing::AssertionSuccess();
}

ReferenceCorners harris_nms_reference(const cv::Mat& resp, const HarrisParams& p) {
  ReferenceCorners out;
  const int W = resp.cols, H = resp.rows, r = p.min_distance;
  float max_r = 0.0f;
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      max_r = std::max(max_r, resp.at<float>(y, x));
  out.max_response = max_r;
  out.threshold = p.threshold_mode == HarrisThresholdMode::Relative ? p.threshold * max_r
                                                                    : p.threshold;
  for (int y = 0; y < H; y++) {
    for (int x = 0; x < W; x++) {
      const float v = resp.at<float>(y, x);
      if (!(v > out.threshold))
        continue;
      bool keep = true;
      for (int qy = y - r; qy <= y + r && keep; qy++) {
        for (int qx = x - r; qx <= x + r; qx++) {
          if (qx < 0 || qy < 0 || qx >= W || qy >= H || (qx == x && qy == y))
            continue;
          const float q = resp.at<float>(qy, qx);
          const bool earlier = qy < y || (qy == y && qx < x);
          if (q > v || (q == v && earlier)) {
            keep = false;
            break;
          }
        }
      }
      if (keep)
        out.corners.push_back({static_cast<float>(x), static_cast<float>(y), v});
    }
  }
  std::sort(out.corners.begin(), out.corners.end(), [](const HarrisCorner& a, const HarrisCorner& b) {
    if (a.score != b.score)
      return a.score > b.score;
    if (a.y != b.y)
      return a.y < b.y;
    return a.x < b.x;
  });
  return out;
}

std::string corner_text(const HarrisCorner& c) {
  std::ostringstream s;
  s << "(" << c.x << ", " << c.y << ") score " << c.score;
  return s.str();
}

}  // namespace testing_support
