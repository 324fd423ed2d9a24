// libFuzzer target for what cudatextoverlay takes from outside: bytes of a
// text property or a text_sink buffer (any encoding, markup or not), laid
// out by Pango and painted by Cairo, composed from the glyph atlas, and
// queued as timed text with arbitrary timestamps. Must never crash, hang or
// touch memory it does not own (ASan, UBSan).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "gstcudafxglyphatlas.h"
#include "gstcudafxtextrender.h"
#include "gstcudafxtimedtext.h"

namespace {

GstCudaFxTextRenderer& renderer() {
  static GstCudaFxTextRenderer r;
  return r;
}

GstCudaFxGlyphAtlas& atlas() {
  static GstCudaFxGlyphAtlas a = [] {
    GstCudaFxGlyphAtlas built;
    GstCudaFxTextStyle s;
    s.font_desc = "DejaVu Sans 12";
    std::string err;
    built.build(renderer(), s, "0123456789:;.-/ abcABC", &err);
    return built;
  }();
  return a;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4)
    return 0;
  // First bytes: style choices; the rest: the text.
  GstCudaFxTextStyle s;
  s.font_desc = (data[0] & 1) ? "DejaVu Sans 10" : "DejaVu Sans Bold 14";
  s.draw_outline = data[0] & 2;
  s.draw_shadow = data[0] & 4;
  s.wrap = data[0] & 8;
  s.max_width = 16 + data[1];
  s.scale = 0.25 + data[2] / 128.0;
  s.shift_x = (data[3] & 3) / 4.0;
  const std::string text(reinterpret_cast<const char*>(data + 4), size - 4);

  GstCudaFxTextImage img;
  std::string err;
  renderer().render(text.c_str(), s, &img, &err);
  if (img.width > 0 && img.pixels.size() != img.pitch * img.height)
    __builtin_trap();

  if (atlas().covers(text)) {
    GstCudaFxComposedText composed;
    atlas().compose(text, &composed);
    for (const GstCudaFxGlyphPlacement& g : composed.glyphs)
      if (g.src_x < 0 || g.src_y < 0 || g.src_x + g.width > atlas().width() ||
          g.src_y + g.height > atlas().height())
        __builtin_trap();
  }

  // Timed text: pushes and takes with timestamps from the bytes, never
  // waiting (a take that waited would need another thread to end it).
  GstCudaFxTimedText timed;
  size_t queued = 0;  // a push onto a full queue would wait for a taker
  for (size_t i = 0; i + 2 < size && i < 64; i += 3) {
    const GstClockTime a = data[i] == 255 ? GST_CLOCK_TIME_NONE : data[i] * GST_MSECOND;
    const GstClockTime b = data[i + 1] == 255 ? GST_CLOCK_TIME_NONE : data[i + 1] * GST_MSECOND;
    if (data[i + 2] & 1) {
      if (queued + 1 >= GstCudaFxTimedText::kMaxQueued) {
        timed.flush();
        timed.resume();
        queued = 0;
      }
      if (!timed.push(a, b, text.substr(0, data[i + 2] % 16)))
        __builtin_trap();  // not flushing: a push must be taken
      queued++;
    } else {
      timed.take(a, b, false);
    }
    if ((data[i + 2] & 0x0e) == 0x0e) {
      timed.flush();
      timed.resume();
      queued = 0;
    }
  }
  timed.end_of_stream();
  timed.take(0, GST_CLOCK_TIME_NONE, true);  // ended: returns at once
  return 0;
}
