#include "gstcudafxglyphatlas.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace {

/* The characters of valid UTF-8 `s`; false when it is not valid. */
bool
characters (const std::string & s, std::vector < gunichar > *out)
{
  if (!g_utf8_validate (s.c_str (), static_cast < gssize > (s.size ()), nullptr))
    return false;
  for (const char *p = s.c_str (); *p; p = g_utf8_next_char (p))
    out->push_back (g_utf8_get_char (p));
  return true;
}

}  // namespace

bool
GstCudaFxGlyphAtlas::build (GstCudaFxTextRenderer & renderer, const GstCudaFxTextStyle & style,
    const std::string & charset, std::string * error)
{
  glyphs_.clear ();
  pixels_.clear ();
  width_ = height_ = 0;
  std::vector < gunichar > chars;
  if (!characters (charset, &chars)) {
    *error = "glyph atlas: the character set is not UTF-8";
    return false;
  }
  GstCudaFxTextStyle one = style;
  one.wrap = false;
  one.max_width = -1;
  /* Each glyph's phases, a row a glyph, a column of space between images
   * so that no sampling reaches a neighbour. */
  struct Rendered
  {
    gunichar c;
    GstCudaFxTextImage img[kPhases][kPhases];
  };
  std::vector < Rendered > rendered;
  for (gunichar c : chars) {
    if (glyphs_.count (c))
      continue;
    gchar utf8[8] = { 0 };
    g_unichar_to_utf8 (c, utf8);
    gchar *escaped = g_markup_escape_text (utf8, -1);
    Rendered r;
    r.c = c;
    bool ok = true;
    for (int i = 0; i < kPhases && ok; i++)
      for (int j = 0; j < kPhases && ok; j++) {
        one.shift_x = double (i) / kPhases;
        one.shift_y = double (j) / kPhases;
        ok = renderer.render (escaped, one, &r.img[i][j], error);
      }
    g_free (escaped);
    if (!ok)
      return false;
    const GstCudaFxTextImage & base = r.img[0][0];
    Glyph g;
    g.width = base.width;
    g.height = base.height;
    g.ink_x = base.ink_x_exact;
    g.ink_y = base.ink_y_exact;
    g.advance = base.advance;
    line_height_ = std::max (line_height_, base.line_height);
    if (base.width > 0) {
      decoration_ = base.decoration;
      half_outline_ = base.half_outline;
    }
    glyphs_[c] = g;
    rendered.push_back (std::move (r));
  }
  int y = 0;
  for (const Rendered & r : rendered) {
    Glyph & g = glyphs_[r.c];
    if (g.width == 0)
      continue;
    int x = 0, row = 0;
    for (int i = 0; i < kPhases; i++)
      for (int j = 0; j < kPhases; j++) {
        g.atlas_x[i][j] = x;
        g.atlas_y[i][j] = y;
        x += r.img[i][j].width + 1;
        row = std::max (row, r.img[i][j].height);
      }
    width_ = std::max (width_, x);
    y += row + 1;
  }
  height_ = y;
  pixels_.assign (pitch () * std::max (height_, 0), 0);
  for (const Rendered & r : rendered) {
    const Glyph & g = glyphs_[r.c];
    if (g.width == 0)
      continue;
    for (int i = 0; i < kPhases; i++)
      for (int j = 0; j < kPhases; j++) {
        const GstCudaFxTextImage & img = r.img[i][j];
        for (int row = 0; row < img.height; row++)
          std::memcpy (&pixels_[(g.atlas_y[i][j] + row) * pitch () +
                  static_cast < size_t > (g.atlas_x[i][j]) * 4], &img.pixels[row * img.pitch],
              static_cast < size_t > (img.width) * 4);
      }
  }
  return true;
}

bool
GstCudaFxGlyphAtlas::covers (const std::string & text) const
{
  std::vector < gunichar > chars;
  if (!characters (text, &chars))
    return false;
  for (gunichar c : chars)
    if (!glyphs_.count (c))
      return false;
  return true;
}

void
GstCudaFxGlyphAtlas::compose (const std::string & text, GstCudaFxComposedText * out) const
{
  out->glyphs.clear ();
  out->metrics = GstCudaFxTextImage ();
  std::vector < gunichar > chars;
  if (!characters (text, &chars))
    return;
  /* Where the whole-string rendering draws each glyph's image (unshifted,
   * exact), relative to the pen's start on the line's top. */
  struct Spot
  {
    const Glyph *g;
    double x, y;
  };
  std::vector < Spot > spots;
  double pen = 0, minx = 1e300, miny = 1e300;
  for (gunichar c : chars) {
    auto it = glyphs_.find (c);
    if (it == glyphs_.end ())
      continue;
    const Glyph & g = it->second;
    if (g.width > 0) {
      spots.push_back ({&g, pen + g.ink_x, g.ink_y});
      minx = std::min (minx, pen + g.ink_x);
      miny = std::min (miny, g.ink_y);
    }
    pen += g.advance;
  }
  if (spots.empty ())
    return;
  /* Relative to the composed image's origin (where the whole rendering's
   * image starts): an integer offset and a quarter-pixel phase each axis. */
  int maxx = 0, maxy = 0;
  for (const Spot & sp : spots) {
    const double rx = (sp.x - minx) * kPhases, ry = (sp.y - miny) * kPhases;
    const long qx = std::lround (rx), qy = std::lround (ry);
    const int ix = static_cast < int >(qx / kPhases), iy = static_cast < int >(qy / kPhases);
    const int px = static_cast < int >(qx % kPhases), py = static_cast < int >(qy % kPhases);
    const int w = sp.g->width + (px ? 1 : 0), h = sp.g->height + (py ? 1 : 0);
    out->glyphs.push_back ({sp.g->atlas_x[px][py], sp.g->atlas_y[px][py], w, h, ix, iy});
    maxx = std::max (maxx, ix + w);
    maxy = std::max (maxy, iy + h);
  }
  GstCudaFxTextImage & m = out->metrics;
  m.width = maxx;
  m.height = maxy;
  m.ink_x = static_cast < int >(std::ceil (minx));
  m.ink_y = static_cast < int >(std::ceil (miny));
  /* A one-line layout's logical box starts at its origin; the renderer
   * moves both boxes by half the outline. */
  m.logical_x = static_cast < int >(std::ceil (-half_outline_));
  m.logical_y = static_cast < int >(std::ceil (-half_outline_));
  m.logical_width = static_cast < int >(std::ceil (pen + decoration_));
  m.logical_height = static_cast < int >(std::ceil (line_height_ + decoration_));
  m.advance = pen;
  m.line_height = line_height_;
  m.decoration = decoration_;
  m.half_outline = half_outline_;
}
