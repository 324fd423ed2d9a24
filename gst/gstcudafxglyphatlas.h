/* Glyphs rendered once, strings composed from them every frame: the seed's
 * glyph atlas (000_*.txt), for text that changes every frame -- time codes,
 * clocks, counters -- so that a new string costs no Pango layout, no Cairo
 * painting and no upload, only a list of rectangles to blend.
 *
 * Every character of a set is rendered alone, with the style the whole
 * string would get (GstCudaFxTextRenderer: shadow, outline, scale), at
 * kPhases x kPhases sub-pixel offsets, into one image: the atlas. A string
 * is laid out by advancing a pen by each glyph's advance (Pango's logical
 * width of the character alone); each glyph goes where the whole-string
 * rendering draws it, to a quarter pixel (the phase chosen by the
 * fractional part, the integer part placing the image). That is Pango's
 * layout of the string for text without kerning or ligatures between its
 * characters -- digits, ':' and '.' in the DejaVu and most UI fonts are
 * tabular -- and within a pixel of it otherwise; where glyph images
 * overlap, the later glyph is blended over the earlier one (a whole-string
 * rendering draws all shadows, then all outlines, then all fills), a
 * difference confined to the few pixels where neighbours' outlines touch.
 * The tests compare composed strings with whole-string renderings. */
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gstcudafxtextrender.h"

struct GstCudaFxGlyphPlacement
{
  int src_x, src_y, width, height;  /* in the atlas */
  int x, y;                         /* in the string's image: relative to its top-left */
};

/* A composed string: where its glyphs go, and metrics in the terms of
 * GstCudaFxTextImage (width and height of the ink image, ink and logical
 * rectangles) for placing it on a frame as a rendered text would be. */
struct GstCudaFxComposedText
{
  std::vector < GstCudaFxGlyphPlacement > glyphs;
  GstCudaFxTextImage metrics;   /* pixels left empty */
};

class GstCudaFxGlyphAtlas
{
public:
  /* Renders each character of `charset` (UTF-8; repeats ignored) with
   * `style`. Wrapping is off (one glyph a line). False with *error on a
   * rendering failure or invalid UTF-8. */
  bool build (GstCudaFxTextRenderer & renderer, const GstCudaFxTextStyle & style,
      const std::string & charset, std::string * error);

  /* Whether every character of `text` (UTF-8, plain: no markup) is in the
   * atlas. */
  bool covers (const std::string & text) const;

  /* Lays `text` out (it must be covered). */
  void compose (const std::string & text, GstCudaFxComposedText * out) const;

  int width () const { return width_; }
  int height () const { return height_; }
  size_t pitch () const { return static_cast < size_t > (width_) * 4; }
  const std::vector < uint8_t > &pixels () const { return pixels_; }
  bool empty () const { return glyphs_.empty (); }

private:
  static constexpr int kPhases = 4;
  struct Glyph
  {
    /* the image of phase (i, j) at atlas_x[i][j], shifted by i/kPhases and
     * j/kPhases pixels; 0 x 0: nothing to draw (a space) */
    int atlas_x[kPhases][kPhases] = {};
    int atlas_y[kPhases][kPhases] = {};
    int width = 0, height = 0;
    double ink_x = 0, ink_y = 0;        /* unshifted image offset from the pen and the line top */
    double advance = 0;
  };
  std::map < gunichar, Glyph > glyphs_;
  std::vector < uint8_t > pixels_;
  int width_ = 0, height_ = 0;
  double line_height_ = 0, decoration_ = 0, half_outline_ = 0;
};
