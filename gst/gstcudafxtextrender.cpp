#include "gstcudafxtextrender.h"

#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace {

void
set_source_argb (cairo_t * cr, uint32_t argb)
{
  cairo_set_source_rgba (cr, ((argb >> 16) & 0xff) / 255.0, ((argb >> 8) & 0xff) / 255.0,
      (argb & 0xff) / 255.0, ((argb >> 24) & 0xff) / 255.0);
}

/* Selects the colour attributes, which the shadow drops: it is black
 * whatever colours the markup gives the text. */
gboolean
is_colour (PangoAttribute * attr, gpointer)
{
  return attr->klass->type == PANGO_ATTR_FOREGROUND ||
      attr->klass->type == PANGO_ATTR_FOREGROUND_ALPHA;
}

}  // namespace

GstCudaFxTextRenderer::GstCudaFxTextRenderer ()
{
  /* A font map of our own: the default one is shared process-wide and not
   * thread-safe, and elements render on their streaming threads. */
  font_map_ = pango_cairo_font_map_new ();
  if (font_map_)
    context_ = pango_font_map_create_context (font_map_);
  if (context_)
    layout_ = pango_layout_new (context_);
}

GstCudaFxTextRenderer::~GstCudaFxTextRenderer ()
{
  if (layout_)
    g_object_unref (layout_);
  if (context_)
    g_object_unref (context_);
  if (font_map_)
    g_object_unref (font_map_);
}

std::string
GstCudaFxTextRenderer::sanitize (const char *text)
{
  if (!text)
    return std::string ();
  gchar *valid = g_utf8_make_valid (text, -1);
  std::string out = valid;
  g_free (valid);
  if (!pango_parse_markup (out.c_str (), -1, 0, nullptr, nullptr, nullptr, nullptr)) {
    gchar *escaped = g_markup_escape_text (out.c_str (), -1);
    out = escaped;
    g_free (escaped);
  }
  return out;
}

bool
GstCudaFxTextRenderer::render (const char *text, const GstCudaFxTextStyle & style,
    GstCudaFxTextImage * out, std::string * error)
{
  *out = GstCudaFxTextImage ();
  if (!layout_) {
    *error = "Pango has no font map (is fontconfig installed?)";
    return false;
  }
  const std::string markup = sanitize (text);
  if (markup.empty ())
    return true;

  PangoFontDescription *desc = pango_font_description_from_string (
      style.font_desc.empty ()? "Sans 12" : style.font_desc.c_str ());
  if (pango_font_description_get_size (desc) <= 0)
    pango_font_description_set_size (desc, 12 * PANGO_SCALE);
  /* textoverlay sizes the shadow and the outline from the description's
   * size as written (points, truncated), not from pixels: so do we, or the
   * image and the placement differ from its by a pixel. */
  const double px = pango_font_description_get_size (desc) / PANGO_SCALE;
  pango_layout_set_font_description (layout_, desc);
  pango_font_description_free (desc);
  /* textoverlay's proportions: shadow offset size/13, outline width
   * size/15 (at least 1), both in unscaled layout pixels. */
  const double shadow = style.draw_shadow ? std::ceil (px / 13.0) : 0.0;
  const double outline_width = std::max (1.0, px / 15.0);
  const double outline = style.draw_outline ? std::ceil (outline_width) : 0.0;
  const double scale = style.scale > 0 ? style.scale : 1.0;

  pango_layout_set_alignment (layout_, style.line_alignment);
  pango_layout_set_wrap (layout_, style.wrap_mode);
  pango_layout_set_width (layout_, -1);
  pango_layout_set_markup (layout_, markup.c_str (), -1);

  PangoRectangle ink, logical;
  pango_layout_get_pixel_extents (layout_, &ink, &logical);
  int width = static_cast<int>(std::ceil ((ink.width + shadow + outline) * scale));
  if (style.wrap && style.max_width > 0 && width > style.max_width) {
    /* Too wide for the frame: wrap to what fits, as textoverlay does. */
    const double avail = style.max_width / scale - shadow - outline;
    pango_layout_set_width (layout_,
        static_cast<int>(std::max (1.0, avail) * PANGO_SCALE));
    pango_layout_get_pixel_extents (layout_, &ink, &logical);
    width = static_cast<int>(std::ceil ((ink.width + shadow + outline) * scale));
  }
  int height = static_cast<int>(std::ceil ((ink.height + shadow + outline) * scale));
  if (ink.width <= 0 || ink.height <= 0 || width <= 0 || height <= 0) {
    /* only spaces: nothing to draw, but they advance the pen */
    out->advance = logical.width * scale;
    out->line_height = logical.height * scale;
    return true;
  }

  const double half = std::ceil (outline / 2.0);
  const double shift_x = std::min (std::max (style.shift_x, 0.0), 0.999);
  const double shift_y = std::min (std::max (style.shift_y, 0.0), 0.999);
  if (shift_x > 0)
    width++;
  if (shift_y > 0)
    height++;
  out->width = width;
  out->height = height;
  out->pitch = static_cast<size_t>(width) * 4;
  out->pixels.assign (out->pitch * height, 0);
  out->ink_x = static_cast<int>(std::ceil ((ink.x - half) * scale));
  out->ink_y = static_cast<int>(std::ceil ((ink.y - half) * scale));
  out->logical_x = static_cast<int>(std::ceil ((logical.x - half) * scale));
  out->logical_y = static_cast<int>(std::ceil ((logical.y - half) * scale));
  out->logical_width = static_cast<int>(std::ceil ((logical.width + shadow + outline) * scale));
  out->logical_height = static_cast<int>(std::ceil ((logical.height + shadow + outline) * scale));
  out->advance = logical.width * scale;
  out->line_height = logical.height * scale;
  out->decoration = (shadow + outline) * scale;
  out->half_outline = half * scale;
  out->ink_x_exact = (ink.x - half) * scale;
  out->ink_y_exact = (ink.y - half) * scale;

  cairo_surface_t *surface = cairo_image_surface_create_for_data (out->pixels.data (),
      CAIRO_FORMAT_ARGB32, width, height, static_cast<int>(out->pitch));
  cairo_t *cr = cairo_create (surface);
  if (cairo_status (cr) != CAIRO_STATUS_SUCCESS) {
    *error = std::string ("cairo: ") + cairo_status_to_string (cairo_status (cr));
    cairo_destroy (cr);
    cairo_surface_destroy (surface);
    *out = GstCudaFxTextImage ();
    return false;
  }
  cairo_translate (cr, shift_x, shift_y);
  cairo_scale (cr, scale, scale);
  /* The ink box, grown by half the outline, starts at the image's origin. */
  cairo_translate (cr, half - ink.x, half - ink.y);

  if (style.draw_shadow) {
    PangoAttrList *attrs = pango_layout_get_attributes (layout_);
    PangoAttrList *kept = attrs ? pango_attr_list_copy (attrs) : nullptr;
    if (attrs) {
      pango_attr_list_ref (attrs);
      PangoAttrList *colours = pango_attr_list_filter (kept, is_colour, nullptr);
      if (colours)
        pango_attr_list_unref (colours);
      pango_layout_set_attributes (layout_, kept);
    }
    cairo_save (cr);
    cairo_translate (cr, px / 13.0, px / 13.0);
    cairo_set_source_rgba (cr, 0.0, 0.0, 0.0, 0.5);
    pango_cairo_show_layout (cr, layout_);
    cairo_restore (cr);
    if (attrs) {
      pango_layout_set_attributes (layout_, attrs);
      pango_attr_list_unref (attrs);
      pango_attr_list_unref (kept);
    }
  }
  if (style.draw_outline) {
    cairo_save (cr);
    set_source_argb (cr, style.outline_color);
    cairo_set_line_width (cr, outline_width);
    pango_cairo_layout_path (cr, layout_);
    cairo_stroke (cr);
    cairo_restore (cr);
  }
  cairo_save (cr);
  set_source_argb (cr, style.color);
  pango_cairo_show_layout (cr, layout_);
  cairo_restore (cr);

  cairo_destroy (cr);
  cairo_surface_flush (surface);
  cairo_surface_destroy (surface);
  return true;
}
