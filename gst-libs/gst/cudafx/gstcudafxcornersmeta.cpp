/* GstCudaFxCornersMeta: see gstcudafxcornersmeta.h for the semantics.
 *
 * Written as C in a C++ file (the project builds only C++): no C++ runtime
 * is used, so the library needs nothing beyond GStreamer and GLib. */
#include "gstcudafxcornersmeta.h"

#include <gst/video/video.h>

#include <string.h>

static gboolean
gst_cuda_fx_corners_meta_init (GstMeta * meta, gpointer params, GstBuffer * buffer)
{
  GstCudaFxCornersMeta *cmeta = (GstCudaFxCornersMeta *) meta;
  (void) params;
  (void) buffer;
  cmeta->n_corners = 0;
  cmeta->corners = NULL;
  cmeta->params = NULL;
  return TRUE;
}

static void
gst_cuda_fx_corners_meta_free (GstMeta * meta, GstBuffer * buffer)
{
  GstCudaFxCornersMeta *cmeta = (GstCudaFxCornersMeta *) meta;
  (void) buffer;
  g_free (cmeta->corners);
  cmeta->corners = NULL;
  cmeta->n_corners = 0;
  if (cmeta->params)
    gst_structure_free (cmeta->params);
  cmeta->params = NULL;
}

/* A corner's coordinate on an axis that goes from in_size to out_size
 * pixels: its pixel centre keeps its place relative to the frame. */
static gfloat
scale_coordinate (gfloat v, gint in_size, gint out_size)
{
  return (gfloat) (((gdouble) v + 0.5) * (gdouble) out_size / (gdouble) in_size - 0.5);
}

/* Whether `dest` already carries a corners meta made from `smeta` by a
 * transform: as many corners, equal parameters. */
static gboolean
has_transformed_copy (GstBuffer * dest, const GstCudaFxCornersMeta * smeta)
{
  gpointer state = NULL;
  GstMeta *m;
  while ((m = gst_buffer_iterate_meta_filtered (dest, &state,
              GST_CUDA_FX_CORNERS_META_API_TYPE))) {
    const GstCudaFxCornersMeta *d = (const GstCudaFxCornersMeta *) m;
    if (d->n_corners == smeta->n_corners &&
        (d->params == smeta->params || (d->params && smeta->params
                && gst_structure_is_equal (d->params, smeta->params))))
      return TRUE;
  }
  return FALSE;
}

static gboolean
gst_cuda_fx_corners_meta_transform (GstBuffer * dest, GstMeta * meta, GstBuffer * buffer,
    GQuark type, gpointer data)
{
  GstCudaFxCornersMeta *smeta = (GstCudaFxCornersMeta *) meta;
  (void) buffer;

  /* A copy, whole or of a byte region: bytes say nothing about pixels, so
   * every corner stays (as GstVideoRegionOfInterestMeta does). GStreamer
   * 1.20's videoscale scales a size-tagged meta and then has it copied as
   * well (1.22 does not): a copy onto a buffer that already has this meta's
   * transformed twin is skipped, else the unscaled corners would follow. */
  if (GST_META_TRANSFORM_IS_COPY (type)) {
    if (has_transformed_copy (dest, smeta))
      return TRUE;
    return gst_buffer_add_cuda_fx_corners_meta (dest, smeta->corners, smeta->n_corners,
        smeta->params) != NULL;
  }

  if (GST_VIDEO_META_TRANSFORM_IS_SCALE (type)) {
    GstVideoMetaTransform *trans = (GstVideoMetaTransform *) data;
    if (!trans || !trans->in_info || !trans->out_info)
      return FALSE;
    gint in_w = GST_VIDEO_INFO_WIDTH (trans->in_info);
    gint in_h = GST_VIDEO_INFO_HEIGHT (trans->in_info);
    gint out_w = GST_VIDEO_INFO_WIDTH (trans->out_info);
    gint out_h = GST_VIDEO_INFO_HEIGHT (trans->out_info);
    if (in_w <= 0 || in_h <= 0 || out_w <= 0 || out_h <= 0)
      return FALSE;
    GstCudaFxCornersMeta *dmeta = gst_buffer_add_cuda_fx_corners_meta (dest, smeta->corners,
        smeta->n_corners, smeta->params);
    if (!dmeta)
      return FALSE;
    for (guint i = 0; i < dmeta->n_corners; i++) {
      dmeta->corners[i].x = scale_coordinate (smeta->corners[i].x, in_w, out_w);
      dmeta->corners[i].y = scale_coordinate (smeta->corners[i].y, in_h, out_h);
    }
    return TRUE;
  }

  /* Rotation, cropping, anything else: the coordinates would be wrong. */
  return FALSE;
}

GType
gst_cuda_fx_corners_meta_api_get_type (void)
{
  static gsize type = 0;
  static const gchar *tags[] = { GST_META_TAG_VIDEO_STR, GST_META_TAG_VIDEO_SIZE_STR,
    GST_META_TAG_VIDEO_ORIENTATION_STR, NULL
  };

  if (g_once_init_enter (&type)) {
    GType t = gst_meta_api_type_register ("GstCudaFxCornersMetaAPI", tags);
    g_once_init_leave (&type, t);
  }
  return (GType) type;
}

const GstMetaInfo *
gst_cuda_fx_corners_meta_get_info (void)
{
  static gsize info = 0;

  if (g_once_init_enter (&info)) {
    const GstMetaInfo *i = gst_meta_register (GST_CUDA_FX_CORNERS_META_API_TYPE,
        "GstCudaFxCornersMeta", sizeof (GstCudaFxCornersMeta),
        gst_cuda_fx_corners_meta_init, gst_cuda_fx_corners_meta_free,
        gst_cuda_fx_corners_meta_transform);
    g_once_init_leave (&info, (gsize) i);
  }
  return (const GstMetaInfo *) info;
}

GstCudaFxCornersMeta *
gst_buffer_add_cuda_fx_corners_meta (GstBuffer * buffer, const GstCudaFxCorner * corners,
    guint n_corners, const GstStructure * params)
{
  g_return_val_if_fail (GST_IS_BUFFER (buffer), NULL);
  g_return_val_if_fail (corners != NULL || n_corners == 0, NULL);

  GstCudaFxCornersMeta *cmeta = (GstCudaFxCornersMeta *) gst_buffer_add_meta (buffer,
      GST_CUDA_FX_CORNERS_META_INFO, NULL);
  if (!cmeta)
    return NULL;
  if (n_corners > 0) {
    /* g_new checks n_corners * sizeof for overflow. */
    cmeta->corners = g_new (GstCudaFxCorner, n_corners);
    memcpy (cmeta->corners, corners, (gsize) n_corners * sizeof (GstCudaFxCorner));
    cmeta->n_corners = n_corners;
  }
  if (params)
    cmeta->params = gst_structure_copy (params);
  return cmeta;
}

GstCudaFxCornersMeta *
gst_buffer_get_cuda_fx_corners_meta (GstBuffer * buffer)
{
  g_return_val_if_fail (GST_IS_BUFFER (buffer), NULL);
  return (GstCudaFxCornersMeta *) gst_buffer_get_meta (buffer,
      GST_CUDA_FX_CORNERS_META_API_TYPE);
}
