// CPU backend of the Harris op. Rows are split into one band per worker; a
// band computes, for every product row it needs (its rows and block_radius
// more on each side, through the border rule), the Sobel derivatives of the
// row (vertical pass over the grey rows, then horizontal), the three
// products and their horizontal window sums, kept in a ring of
// block_size rows; each output row is then the vertical sum of the ring and
// harris_response. Exact integers up to the sums (int64), then the shared
// float formula, so the CUDA backend gives the same bytes.
//
// Suppression and the list: each band collects the keys of its corners;
// the keys are sorted (unique, so the order is total) and the first
// max_corners become the list.
#include <algorithm>
#include <cstring>

#include "cudafx/harris.hpp"
#include "cudafx/harris_math.hpp"
#include "cudafx/parallel.hpp"

namespace cudafx {
namespace {

// The grey plane a frame is read from: the source's plane 0 for GRAY8 and
// YUV, the converted plane in scratch for RGB formats.
struct Grey {
  const uint8_t* data;
  size_t pitch;
  int width, height;
};

// Per-worker rows, in long longs.
struct RowLayout {
  size_t vs, vd, ix, iy, prod, ring;
  size_t total;
};

RowLayout row_layout(const HarrisPlan& plan) {
  const size_t W = plan.desc.width;
  const size_t gr = plan.grad_radius, br = plan.block_radius;
  RowLayout l;
  size_t at = 0;
  l.vs = at, at += W + 2 * gr;  // vertical passes, padded by the border
  l.vd = at, at += W + 2 * gr;
  l.ix = at, at += W;
  l.iy = at, at += W;
  l.prod = at, at += 3 * (W + 2 * br);  // products, padded
  l.ring = at, at += 3 * W * (2 * br + 1);  // horizontal sums of block_size rows
  l.total = at;
  return l;
}

void convert_grey(const HarrisPlan& plan, const PlaneView& src, uint8_t* dst) {
  const HarrisLuma L = plan.luma;
  const int W = plan.desc.width, H = plan.desc.height;
  const int bands = std::min(H, cpu_worker_count() * 4);
  parallel_for(bands, [&](int band, int) {
    const int y0 = static_cast<int>(static_cast<long>(H) * band / bands);
    const int y1 = static_cast<int>(static_cast<long>(H) * (band + 1) / bands);
    for (int y = y0; y < y1; y++) {
      const uint8_t* s = src.data + static_cast<size_t>(y) * src.pitch;
      uint8_t* d = dst + static_cast<size_t>(y) * W;
      for (int x = 0; x < W; x++, s += L.channels)
        d[x] = static_cast<uint8_t>(harris_luma(s[L.r], s[L.g], s[L.b]));
    }
  });
}

// The horizontal window sums of product row `py` (any row; outside the
// frame through the border rule) into out[0..3W): Sxx, Sxy, Syy rows.
void window_row(const HarrisPlan& plan, const Grey& g, int py, long long* rows,
                const RowLayout& l, long long* out) {
  const int W = g.width, H = g.height;
  const int gr = plan.grad_radius, br = plan.block_radius;
  const BorderMode border = plan.params.border;
  const int my = border_index(py, H, border);
  if (my < 0) {
    std::fill(out, out + 3 * static_cast<size_t>(W), 0LL);
    return;
  }
  long long* vs = rows + l.vs + gr;
  long long* vd = rows + l.vd + gr;
  long long* ix = rows + l.ix;
  long long* iy = rows + l.iy;
  // Vertical pass: smoothing and derivative down each column.
  std::fill(vs, vs + W, 0LL);
  std::fill(vd, vd + W, 0LL);
  for (int j = -gr; j <= gr; j++) {
    const int ys = border_index(my + j, H, border);
    if (ys < 0)
      continue;
    const uint8_t* row = g.data + static_cast<size_t>(ys) * g.pitch;
    const long long ws = plan.smooth[j + gr], wd = plan.deriv[j + gr];
    for (int x = 0; x < W; x++) {
      vs[x] += ws * row[x];
      vd[x] += wd * row[x];
    }
  }
  for (int i = 1; i <= gr; i++) {
    for (int x : {-i, W - 1 + i}) {
      const int xs = border_index(x, W, border);
      vs[x] = xs < 0 ? 0 : vs[xs];
      vd[x] = xs < 0 ? 0 : vd[xs];
    }
  }
  // Horizontal pass: Ix = deriv_x of the smoothed columns, Iy = smooth_x
  // of the differentiated ones.
  for (int x = 0; x < W; x++) {
    long long a = 0, b = 0;
    for (int i = -gr; i <= gr; i++) {
      a += plan.deriv[i + gr] * vs[x + i];
      b += plan.smooth[i + gr] * vd[x + i];
    }
    ix[x] = a;
    iy[x] = b;
  }
  // Products, padded by the border rule applied to the product row.
  const size_t pw = static_cast<size_t>(W) + 2 * br;
  long long* pxx = rows + l.prod + br;
  long long* pxy = pxx + pw;
  long long* pyy = pxy + pw;
  for (int x = 0; x < W; x++) {
    pxx[x] = ix[x] * ix[x];
    pxy[x] = ix[x] * iy[x];
    pyy[x] = iy[x] * iy[x];
  }
  for (int i = 1; i <= br; i++) {
    for (int x : {-i, W - 1 + i}) {
      const int xs = border_index(x, W, border);
      pxx[x] = xs < 0 ? 0 : pxx[xs];
      pxy[x] = xs < 0 ? 0 : pxy[xs];
      pyy[x] = xs < 0 ? 0 : pyy[xs];
    }
  }
  long long* oxx = out;
  long long* oxy = out + W;
  long long* oyy = out + 2 * static_cast<size_t>(W);
  for (int x = 0; x < W; x++) {
    long long a = 0, b = 0, c = 0;
    for (int i = -br; i <= br; i++) {
      const long long w = plan.window[i + br];
      a += w * pxx[x + i];
      b += w * pxy[x + i];
      c += w * pyy[x + i];
    }
    oxx[x] = a;
    oxy[x] = b;
    oyy[x] = c;
  }
}

// Returns the band's largest response (0 when none is positive).
float response_band(const HarrisPlan& plan, const Grey& g, const HarrisResponseView& resp, int y0,
                    int y1, long long* rows, const RowLayout& l) {
  const int W = g.width, br = plan.block_radius;
  const int ring = 2 * br + 1;
  const size_t row3 = 3 * static_cast<size_t>(W);
  auto slot = [&](int py) { return rows + l.ring + static_cast<size_t>((py - (y0 - br)) % ring) * row3; };
  for (int py = y0 - br; py < y0 + br; py++)
    window_row(plan, g, py, rows, l, slot(py));
  const float norm = plan.norm, k = plan.params.k;
  float max_r = 0.0f;
  for (int y = y0; y < y1; y++) {
    window_row(plan, g, y + br, rows, l, slot(y + br));
    float* out = reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(resp.data) +
                                          static_cast<size_t>(y) * resp.pitch);
    for (int x = 0; x < W; x++) {
      long long sxx = 0, sxy = 0, syy = 0;
      for (int j = -br; j <= br; j++) {
        const long long w = plan.window[j + br];
        const long long* s = slot(y + j);
        sxx += w * s[x];
        sxy += w * s[W + x];
        syy += w * s[2 * static_cast<size_t>(W) + x];
      }
      out[x] = harris_response(harris_to_float(sxx), harris_to_float(sxy), harris_to_float(syy),
                               norm, k);
      max_r = std::max(max_r, out[x]);
    }
  }
  return max_r;
}

float response_at(const HarrisResponseView& r, int x, int y) {
  return harris_response_at(r.data, r.pitch, x, y);
}

// Keys of the corners in rows [y0, y1).
void suppress_band(const HarrisPlan& plan, const HarrisResponseView& resp, float t, int y0, int y1,
                   std::vector<uint64_t>* keys) {
  const int W = plan.desc.width, H = plan.desc.height, r = plan.params.min_distance;
  for (int y = y0; y < y1; y++) {
    for (int x = 0; x < W; x++) {
      const float v = response_at(resp, x, y);
      if (v > t && harris_is_local_max(resp.data, resp.pitch, W, H, r, x, y, v))
        keys->push_back(harris_key(v, static_cast<uint32_t>(y) * W + x));
    }
  }
}

HarrisCorner make_corner(const HarrisPlan& plan, const HarrisResponseView& resp, uint64_t key) {
  HarrisCorner c;
  harris_corner_of(key, resp.data, resp.pitch, plan.desc.width, plan.desc.height,
                   plan.params.subpixel, &c.x, &c.y, &c.score);
  return c;
}

int suppress_bands(const HarrisPlan& plan) {
  return std::min(plan.desc.height, cpu_worker_count() * 4);
}

}  // namespace

Status harris_cpu_prepare(const HarrisPlan& plan, HarrisCpuScratch* s) {
  const size_t px = static_cast<size_t>(plan.desc.width) * plan.desc.height;
  if (plan.luma.r >= 0 && s->grey.size() < px)
    s->grey.resize(px);
  if (s->response.size() < px)
    s->response.resize(px);
  const size_t rows = row_layout(plan).total * static_cast<size_t>(cpu_worker_count());
  if (s->rows.size() < rows)
    s->rows.resize(rows);
  // One key list per suppression band, and the merged list.
  s->keys.resize(static_cast<size_t>(suppress_bands(plan)) + 1);
  s->band_max.resize(static_cast<size_t>(cpu_worker_count()));
  const size_t result =
      sizeof(HarrisResultHeader) + static_cast<size_t>(plan.params.max_corners) * sizeof(HarrisCorner);
  if (s->result.size() < result)
    s->result.resize(result);
  std::memset(s->result.data(), 0, sizeof(HarrisResultHeader));
  return Status::ok();
}

Status harris_cpu(const HarrisPlan& plan, const ImageView& src, const HarrisResponseView& response,
                  bool detect, HarrisCpuScratch* s) {
  CUDAFX_TRY(validate_view(src, plan.desc, "harris source"));
  HarrisResponseView resp = response;
  if (!resp.data) {
    CUDAFX_TRY(harris_cpu_prepare(plan, s));  // no-op when the op sized it
    resp.data = s->response.data();
    resp.pitch = static_cast<size_t>(plan.desc.width) * sizeof(float);
  } else {
    CUDAFX_TRY(harris_check_response(plan, resp, "harris response"));
    CUDAFX_TRY(harris_cpu_prepare(plan, s));
  }
  const int W = plan.desc.width, H = plan.desc.height;
  const PlaneView p0 = src.plane(0);
  Grey g{p0.data, p0.pitch, W, H};
  if (plan.luma.r >= 0) {
    convert_grey(plan, p0, s->grey.data());
    g.data = s->grey.data();
    g.pitch = static_cast<size_t>(W);
  }

  const RowLayout l = row_layout(plan);
  const int bands = std::min(H, cpu_worker_count());
  std::fill(s->band_max.begin(), s->band_max.end(), 0.0f);
  parallel_for(bands, [&](int band, int worker) {
    const int y0 = static_cast<int>(static_cast<long>(H) * band / bands);
    const int y1 = static_cast<int>(static_cast<long>(H) * (band + 1) / bands);
    const float m = response_band(plan, g, resp, y0, y1, s->rows.data() + l.total * worker, l);
    s->band_max[worker] = std::max(s->band_max[worker], m);
  });
  if (!detect)
    return Status::ok();

  // The frame's largest response (a maximum: the split does not matter).
  const float max_r = *std::max_element(s->band_max.begin(), s->band_max.end());
  const HarrisParams& P = plan.params;
  const float t =
      harris_threshold(P.threshold_mode == HarrisThresholdMode::Relative, P.threshold, max_r);

  // Per-band lists keep their capacity from frame to frame.
  const int nb = suppress_bands(plan);
  parallel_for(nb, [&](int band, int) {
    const int y0 = static_cast<int>(static_cast<long>(H) * band / nb);
    const int y1 = static_cast<int>(static_cast<long>(H) * (band + 1) / nb);
    s->keys[band].clear();
    suppress_band(plan, resp, t, y0, y1, &s->keys[band]);
  });
  std::vector<uint64_t>& keys = s->keys[nb];
  keys.clear();
  for (int b = 0; b < nb; b++)
    keys.insert(keys.end(), s->keys[b].begin(), s->keys[b].end());
  const size_t n = keys.size();
  const size_t m = std::min(n, static_cast<size_t>(P.max_corners));
  std::partial_sort(keys.begin(), keys.begin() + m, keys.end());

  HarrisResultHeader h{static_cast<uint32_t>(m), static_cast<uint32_t>(n), max_r, t};
  std::memcpy(s->result.data(), &h, sizeof h);
  auto* out = reinterpret_cast<HarrisCorner*>(s->result.data() + sizeof h);
  for (size_t i = 0; i < m; i++)
    out[i] = make_corner(plan, resp, keys[i]);
  return Status::ok();
}

}  // namespace cudafx
