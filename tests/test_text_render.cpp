// The text renderer of cudatextoverlay (gst/gstcudafxtextrender): premultiplied
// B, G, R, A images of Pango layouts with textoverlay's shadow and outline;
// sizes that follow the font; wrapping; markup and bad input shown, never
// refused. Needs the DejaVu fonts (fonts-dejavu-core), which scripts/deps.sh
// installs and the GPU runtime carries.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "gstcudafxtextrender.h"

namespace {

const char* const kFont = "DejaVu Sans 24";

GstCudaFxTextImage render(const char* text, const GstCudaFxTextStyle& style) {
  GstCudaFxTextRenderer r;
  GstCudaFxTextImage img;
  std::string err;
  EXPECT_TRUE(r.render(text, style, &img, &err)) << err;
  return img;
}

GstCudaFxTextStyle plain(const char* font = kFont) {
  GstCudaFxTextStyle s;
  s.font_desc = font;
  s.draw_outline = false;
  s.draw_shadow = false;
  return s;
}

struct Counts {
  int opaque = 0, partial = 0, clear = 0;
  bool premultiplied = true;
};

Counts count(const GstCudaFxTextImage& img) {
  Counts c;
  for (int y = 0; y < img.height; y++)
    for (int x = 0; x < img.width; x++) {
      const uint8_t* p = &img.pixels[y * img.pitch + x * 4];
      c.premultiplied &= p[0] <= p[3] && p[1] <= p[3] && p[2] <= p[3];
      if (p[3] == 255)
        c.opaque++;
      else if (p[3] == 0)
        c.clear++;
      else
        c.partial++;
    }
  return c;
}

bool font_available() {
  PangoFontMap* map = pango_cairo_font_map_new();
  PangoContext* ctx = pango_font_map_create_context(map);
  PangoFontDescription* d = pango_font_description_from_string(kFont);
  PangoFont* f = pango_font_map_load_font(map, ctx, d);
  bool ok = false;
  if (f) {
    PangoFontDescription* got = pango_font_describe(f);
    ok = std::string(pango_font_description_get_family(got)) == "DejaVu Sans";
    pango_font_description_free(got);
    g_object_unref(f);
  }
  pango_font_description_free(d);
  g_object_unref(ctx);
  g_object_unref(map);
  return ok;
}

class TextRender : public ::testing::Test {
 protected:
  void SetUp() override {
    // A missing font is a broken machine, not a reason to skip: the deps
    // script installs it.
    ASSERT_TRUE(font_available()) << "DejaVu Sans is not installed (fonts-dejavu-core)";
  }
};

// Plain white text: premultiplied, every pixel white at its coverage
// (B = G = R = A), some fully opaque, the image as tall as the glyphs.
TEST_F(TextRender, PlainTextIsPremultipliedWhiteCoverage) {
  const GstCudaFxTextImage img = render("Hello", plain());
  ASSERT_GT(img.width, img.height);
  EXPECT_GE(img.height, 17);  // "Hello" at 24 pt, 96 dpi: 32 px font, ink ~24 px
  EXPECT_LE(img.height, 40);
  EXPECT_EQ(img.pitch, static_cast<size_t>(img.width) * 4);
  const Counts c = count(img);
  EXPECT_TRUE(c.premultiplied);
  EXPECT_GT(c.opaque, 50);
  EXPECT_GT(c.clear, 50);
  for (size_t i = 0; i < img.pixels.size(); i += 4)
    ASSERT_TRUE(img.pixels[i] == img.pixels[i + 3] && img.pixels[i + 1] == img.pixels[i + 3] &&
                img.pixels[i + 2] == img.pixels[i + 3])
        << "pixel " << i / 4 << " is not white";
}

// textoverlay's colour is ARGB: 0xff0000ff is opaque blue.
TEST_F(TextRender, ColourIsArgb) {
  GstCudaFxTextStyle s = plain();
  s.color = 0xff0000ffu;
  const GstCudaFxTextImage img = render("Blue", s);
  int blue = 0;
  for (size_t i = 0; i < img.pixels.size(); i += 4) {
    EXPECT_EQ(img.pixels[i + 1], 0);
    EXPECT_EQ(img.pixels[i + 2], 0);
    blue += img.pixels[i] == 255 && img.pixels[i + 3] == 255;
  }
  EXPECT_GT(blue, 30);
}

// The outline adds black pixels around the white ones and grows the image;
// the shadow adds half-transparent black below and right.
TEST_F(TextRender, OutlineAndShadow) {
  const GstCudaFxTextImage bare = render("Hi", plain());
  GstCudaFxTextStyle s = plain();
  s.draw_outline = true;
  const GstCudaFxTextImage outlined = render("Hi", s);
  EXPECT_GT(outlined.width, bare.width);
  EXPECT_GT(outlined.height, bare.height);
  // Mostly covered and dark: the outline (24 pt: a stroke 1.6 pixels wide,
  // half of it under the fill).
  int black = 0;
  for (size_t i = 0; i < outlined.pixels.size(); i += 4)
    black += outlined.pixels[i + 3] >= 160 && outlined.pixels[i] <= outlined.pixels[i + 3] / 4;
  EXPECT_GT(black, 30) << "no dark outline pixels";

  s.draw_outline = false;
  s.draw_shadow = true;
  const GstCudaFxTextImage shadowed = render("Hi", s);
  EXPECT_GT(shadowed.width, bare.width);
  int shade = 0;  // the shadow alone: black at half alpha
  for (size_t i = 0; i < shadowed.pixels.size(); i += 4)
    shade += shadowed.pixels[i] == 0 && shadowed.pixels[i + 3] >= 120 && shadowed.pixels[i + 3] <= 136;
  EXPECT_GT(shade, 10);
  EXPECT_TRUE(count(shadowed).premultiplied);
}

TEST_F(TextRender, SizeFollowsTheFont) {
  const GstCudaFxTextImage small = render("Size", plain("DejaVu Sans 20"));
  const GstCudaFxTextImage large = render("Size", plain("DejaVu Sans 40"));
  const double rw = double(large.width) / small.width, rh = double(large.height) / small.height;
  EXPECT_NEAR(rw, 2.0, 0.2);
  EXPECT_NEAR(rh, 2.0, 0.2);
  // textoverlay's auto-resize: the same text scaled.
  GstCudaFxTextStyle s = plain("DejaVu Sans 20");
  s.scale = 2.0;
  const GstCudaFxTextImage scaled = render("Size", s);
  EXPECT_NEAR(double(scaled.width) / small.width, 2.0, 0.15);
}

// Text wider than max_width wraps onto more lines and fits.
TEST_F(TextRender, WrapsToTheMaximumWidth) {
  const char* text = "a long line of words that does not fit";
  const GstCudaFxTextImage one = render(text, plain());
  GstCudaFxTextStyle s = plain();
  s.max_width = one.width / 3;
  const GstCudaFxTextImage wrapped = render(text, s);
  EXPECT_LE(wrapped.width, s.max_width);
  EXPECT_GT(wrapped.height, 2 * one.height);
  s.wrap = false;
  EXPECT_EQ(render(text, s).width, one.width);
}

TEST_F(TextRender, EmptyAndBlankTextDrawNothing) {
  for (const char* t : {"", "   "}) {
    const GstCudaFxTextImage img = render(t, plain());
    EXPECT_EQ(img.width, 0) << "'" << t << "'";
    EXPECT_EQ(img.height, 0);
    EXPECT_TRUE(img.pixels.empty());
  }
  GstCudaFxTextRenderer r;
  GstCudaFxTextImage img;
  std::string err;
  EXPECT_TRUE(r.render(nullptr, plain(), &img, &err));
  EXPECT_EQ(img.width, 0);
}

// Markup as textoverlay's text property; text that is not markup shows
// literally; bytes that are not UTF-8 show as U+FFFD.
TEST_F(TextRender, MarkupBadMarkupAndBadUtf8) {
  EXPECT_EQ(GstCudaFxTextRenderer::sanitize("<b>bold</b>"), "<b>bold</b>");
  EXPECT_EQ(GstCudaFxTextRenderer::sanitize("1 < 2 & <b>"), "1 &lt; 2 &amp; &lt;b&gt;");
  EXPECT_EQ(GstCudaFxTextRenderer::sanitize("a\xff" "b"), "a\xef\xbf\xbd" "b");
  const GstCudaFxTextImage bold = render("<b>W</b>", plain());
  const GstCudaFxTextImage regular = render("W", plain());
  EXPECT_GT(count(bold).opaque, count(regular).opaque) << "bold markup was not applied";
  const GstCudaFxTextImage literal = render("<b>W", plain());
  EXPECT_GT(literal.width, 2 * regular.width) << "bad markup was not shown literally";
  const GstCudaFxTextImage bad = render("\xc3\x28\xa0\xa1", plain());
  EXPECT_GT(bad.width, 0);
}

// A huge text renders (no limit of ours; Cairo's is 32767 pixels a side).
TEST_F(TextRender, LongText) {
  std::string text(2000, 'x');
  GstCudaFxTextStyle s = plain("DejaVu Sans 8");
  s.max_width = 1920;
  const GstCudaFxTextImage img = render(text.c_str(), s);
  const GstCudaFxTextImage line = render("x", s);
  EXPECT_LE(img.width, 1920);
  EXPECT_GT(img.height, 5 * line.height) << "2000 glyphs of ~7 px on 1920 px: 7 lines or more";
}

}  // namespace

// ---- the glyph atlas ----

#include "gstcudafxglyphatlas.h"

namespace {

// The composed string painted as the element blends it: each glyph "over"
// the image in order, at its place, on a canvas in the whole rendering's
// coordinates (origin: the layout's, as ink_x/ink_y say).
struct Canvas {
  int x0 = -20, y0 = -20, w = 600, h = 120;
  std::vector<double> a = std::vector<double>(600 * 120, 0.0);
  void over(const uint8_t* px, size_t pitch, int sx, int sy, int width, int height, int ox, int oy) {
    for (int y = 0; y < height; y++)
      for (int x = 0; x < width; x++) {
        const int cx = ox + x - x0, cy = oy + y - y0;
        if (cx < 0 || cy < 0 || cx >= w || cy >= h)
          continue;
        const double src = px[(sy + y) * pitch + (sx + x) * 4 + 3] / 255.0;
        double& d = a[cy * w + cx];
        d = src + (1 - src) * d;
      }
  }
};

double mask_iou(const Canvas& p, const Canvas& q) {
  int inter = 0, uni = 0;
  for (size_t i = 0; i < p.a.size(); i++) {
    const bool a = p.a[i] > 0.25, b = q.a[i] > 0.25;
    inter += a && b;
    uni += a || b;
  }
  return uni ? double(inter) / uni : 1.0;
}

}  // namespace

// Strings composed from the atlas look like the whole string rendered: the
// covered pixels agree (IoU >= 0.95) and the metrics a placement uses are
// within a pixel.
TEST_F(TextRender, GlyphAtlasComposesLikeTheWholeString) {
  GstCudaFxTextStyle s;
  s.font_desc = kFont;  // outline and shadow on, as the element's default
  GstCudaFxTextRenderer r;
  GstCudaFxGlyphAtlas atlas;
  std::string err;
  ASSERT_TRUE(atlas.build(r, s, "0123456789:.- ", &err)) << err;
  EXPECT_GT(atlas.width(), 10 * 10);
  for (const char* text : {"12:34:56.789", "0:00:00.000", "100:59:59.999", "1 - 2"}) {
    ASSERT_TRUE(atlas.covers(text));
    GstCudaFxComposedText c;
    atlas.compose(text, &c);
    GstCudaFxTextImage whole;
    ASSERT_TRUE(r.render(text, s, &whole, &err)) << err;
    EXPECT_NEAR(c.metrics.width, whole.width, 2) << text;
    EXPECT_NEAR(c.metrics.height, whole.height, 1) << text;
    EXPECT_NEAR(c.metrics.ink_x, whole.ink_x, 1) << text;
    EXPECT_NEAR(c.metrics.ink_y, whole.ink_y, 1) << text;
    EXPECT_NEAR(c.metrics.logical_width, whole.logical_width, 2) << text;
    EXPECT_EQ(c.metrics.logical_height, whole.logical_height) << text;
    Canvas composed, rendered;
    for (const GstCudaFxGlyphPlacement& g : c.glyphs)
      composed.over(atlas.pixels().data(), atlas.pitch(), g.src_x, g.src_y, g.width, g.height,
                    c.metrics.ink_x + g.x, c.metrics.ink_y + g.y);
    rendered.over(whole.pixels.data(), whole.pitch, 0, 0, whole.width, whole.height, whole.ink_x,
                  whole.ink_y);
    EXPECT_GE(mask_iou(composed, rendered), 0.95) << text;
  }
  EXPECT_FALSE(atlas.covers("12:34 AM"));
  EXPECT_FALSE(atlas.covers("\xff"));
  GstCudaFxComposedText blank;
  atlas.compose("   ", &blank);
  EXPECT_TRUE(blank.glyphs.empty());
  EXPECT_FALSE(atlas.build(r, s, "\xff", &err));
}
