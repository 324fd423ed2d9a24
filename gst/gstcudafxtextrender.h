/* Text rendered as GStreamer's textoverlay renders it -- a Pango layout
 * painted by Cairo: a shadow (black, half transparent, offset by the font
 * size in points / 13), an outline (a stroke size / 15 wide, at least 1) and
 * the fill --
 * into a premultiplied ARGB image (bytes B, G, R, A on little-endian
 * machines: what GstVideoOverlayRectangle and the cudafx overlay blend take).
 * cudatextoverlay renders once per change of text or style and uploads the
 * image once; strings that change every frame go through a glyph atlas
 * instead (see the element).
 *
 * Text is Pango markup, as textoverlay's `text` property; text that is not
 * valid markup is shown literally, and bytes that are not UTF-8 are shown as
 * U+FFFD, so no input fails to render. */
#pragma once

#include <pango/pangocairo.h>

#include <cstdint>
#include <string>
#include <vector>

struct GstCudaFxTextStyle
{
  std::string font_desc;          /* Pango font description; "" = Pango's default */
  uint32_t color = 0xffffffffu;   /* ARGB, as textoverlay's color */
  uint32_t outline_color = 0xff000000u;
  bool draw_outline = true;
  bool draw_shadow = true;
  PangoAlignment line_alignment = PANGO_ALIGN_CENTER;
  PangoWrapMode wrap_mode = PANGO_WRAP_WORD_CHAR;
  bool wrap = true;               /* wrap lines longer than max_width */
  int max_width = -1;             /* pixels of the image, after scaling; -1: no limit */
  double scale = 1.0;             /* textoverlay's auto-resize: frame width / 640 */
  /* Sub-pixel shift of the drawing inside the image, 0 <= v < 1 output
   * pixels (the glyph atlas renders each glyph at several phases); a shift
   * makes the image a pixel larger on that axis. */
  double shift_x = 0.0, shift_y = 0.0;
};

/* The rendered text. Placement follows textoverlay: `ink_x`, `ink_y` is
 * where the image's top-left lies relative to the layout's logical origin,
 * `logical_*` the logical rectangle (line spacing included) in image
 * pixels, for alignment against the frame. */
struct GstCudaFxTextImage
{
  int width = 0, height = 0;      /* 0 x 0: nothing to draw (empty text) */
  size_t pitch = 0;               /* bytes a row: width * 4 */
  std::vector<uint8_t> pixels;    /* B, G, R, A premultiplied */
  int ink_x = 0, ink_y = 0;
  int logical_x = 0, logical_y = 0, logical_width = 0, logical_height = 0;
  /* For composing strings from separately rendered glyphs (the glyph
   * atlas), unrounded and scaled: the pen advance (logical width without
   * shadow and outline), the line height (likewise), what shadow and
   * outline add to both, and the outline's half width the image starts
   * before the ink. */
  double advance = 0, line_height = 0, decoration = 0, half_outline = 0;
  /* ink_x, ink_y before rounding up (and before any shift) */
  double ink_x_exact = 0, ink_y_exact = 0;
};

class GstCudaFxTextRenderer
{
public:
  GstCudaFxTextRenderer ();
  ~GstCudaFxTextRenderer ();
  GstCudaFxTextRenderer (const GstCudaFxTextRenderer &) = delete;
  GstCudaFxTextRenderer & operator= (const GstCudaFxTextRenderer &) = delete;

  /* Renders `text` (NUL-terminated, any bytes) with `style` into *out.
   * False with *error set only when Cairo or Pango cannot work at all
   * (out of memory, no font map). */
  bool render (const char *text, const GstCudaFxTextStyle & style,
      GstCudaFxTextImage * out, std::string * error);

  /* The text Pango will lay out for `text`: valid UTF-8 (invalid bytes as
   * U+FFFD) and valid markup (text that does not parse is escaped). */
  static std::string sanitize (const char *text);

private:
  PangoFontMap *font_map_ = nullptr;
  PangoContext *context_ = nullptr;
  PangoLayout *layout_ = nullptr;
};
