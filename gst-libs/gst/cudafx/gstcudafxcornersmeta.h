/* GstCudaFxCornersMeta: corners found in a video frame, as buffer
 * metadata. Installed; C and C++. */

#ifndef __GST_CUDA_FX_CORNERS_META_H__
#define __GST_CUDA_FX_CORNERS_META_H__

#include <gst/gst.h>

/* Symbols of libgstcudafxmeta: exported while the library itself is built
 * (BUILDING_GST_CUDA_FX_META, set by its meson.build), imported otherwise.
 * GStreamer 1.20 has no GST_API_EXPORT: there, the ELF spelling of it. */
#ifndef GST_CUDA_FX_META_API
# ifdef BUILDING_GST_CUDA_FX_META
#  ifdef GST_API_EXPORT
#   define GST_CUDA_FX_META_API GST_API_EXPORT
#  else
#   define GST_CUDA_FX_META_API extern __attribute__ ((visibility ("default")))
#  endif
# else
#  define GST_CUDA_FX_META_API GST_API_IMPORT
# endif
#endif

G_BEGIN_DECLS

/**
 * SECTION:gstcudafxcornersmeta
 * @title: GstCudaFxCornersMeta
 * @short_description: corners found in a video frame, as buffer metadata
 *
 * A #GstCudaFxCornersMeta lists the corners a detector (the `cudaharris`
 * element of the `cudafx` plugin) found in the frame of the buffer that
 * carries it: for each corner its position and its score, plus the
 * parameters the detector ran with. Link `libgstcudafxmeta-1.0`
 * (pkg-config `gstreamer-cudafx-meta-1.0`) to read or write it.
 *
 * Coordinates are in the pixels of the frame the buffer holds, pixel
 * centres at integer coordinates: the centre of the top-left pixel is
 * (0, 0), that of pixel (column i, row j) is (i, j), and the frame covers
 * [-0.5, width - 0.5] x [-0.5, height - 0.5]. Sub-pixel positions are
 * fractions in between (this is OpenCV's convention).
 *
 * The API is tagged #GST_META_TAG_VIDEO_STR, #GST_META_TAG_VIDEO_SIZE_STR
 * and #GST_META_TAG_VIDEO_ORIENTATION_STR: the coordinates depend on the
 * frame's size and orientation. The meta's transform function handles:
 *
 * - copies (gst_buffer_copy(), gst_buffer_copy_into(), a transform's
 *   metadata copy), whole or of any byte region: every corner and the
 *   parameters are copied (deep: the copy owns its own array and structure);
 * - scaling (#GST_VIDEO_META_TRANSFORM_IS_SCALE, with a
 *   #GstVideoMetaTransform giving the input and output #GstVideoInfo, as
 *   `videoscale` and `cudaupscale` call it): each corner moves with its
 *   pixel centre,
 *   x' = (x + 0.5) * out_width / in_width - 0.5 and
 *   y' = (y + 0.5) * out_height / in_height - 0.5
 *   (computed in double precision, then rounded to float); scores and
 *   parameters are unchanged (they describe the detection on the frame it
 *   ran on). A transform with an input or output size of 0 is refused;
 * - nothing else: any other transform type returns %FALSE and the output
 *   buffer gets no corners meta (an element that rotates, crops or flips
 *   the frame drops it rather than pass wrong coordinates on).
 */

/**
 * GstCudaFxCorner:
 * @x: column of the corner, in pixels, pixel centres at integers
 * @y: row of the corner, in pixels, pixel centres at integers
 * @score: the detector's response at the corner (for Harris corners,
 *   R = det(M) - k * trace(M)^2); higher is stronger
 *
 * One corner of a #GstCudaFxCornersMeta.
 */
typedef struct
{
  gfloat x;
  gfloat y;
  gfloat score;
} GstCudaFxCorner;

/**
 * GstCudaFxCornersMeta:
 * @meta: parent #GstMeta
 * @n_corners: number of corners in @corners (may be 0)
 * @corners: (array length=n_corners) (nullable): the corners, in the order
 *   the detector gave them (`cudaharris`: strongest first); %NULL when
 *   @n_corners is 0. Owned by the meta.
 * @params: (nullable): the detector's parameters, e.g. "gradient-size",
 *   "block-size", "k", "threshold", "min-distance", "max-corners", with the
 *   types of the element's properties; %NULL when none were given. Owned by
 *   the meta.
 *
 * Corners found in a video frame. Fields may be read directly; change them
 * only on a buffer whose metadata is writable, and only by replacing the
 * meta (gst_buffer_remove_meta() then gst_buffer_add_cuda_fx_corners_meta()).
 */
typedef struct
{
  GstMeta meta;

  guint n_corners;
  GstCudaFxCorner *corners;
  GstStructure *params;
} GstCudaFxCornersMeta;

/**
 * GST_CUDA_FX_CORNERS_META_API_TYPE:
 *
 * The #GType of the corners meta API, for gst_buffer_get_meta(),
 * gst_buffer_iterate_meta_filtered() and allocation queries.
 */
#define GST_CUDA_FX_CORNERS_META_API_TYPE (gst_cuda_fx_corners_meta_api_get_type ())

/**
 * GST_CUDA_FX_CORNERS_META_INFO:
 *
 * The #GstMetaInfo of the corners meta's implementation.
 */
#define GST_CUDA_FX_CORNERS_META_INFO (gst_cuda_fx_corners_meta_get_info ())

/**
 * gst_cuda_fx_corners_meta_api_get_type:
 *
 * Registers the API "GstCudaFxCornersMetaAPI" with the tags "video",
 * "size" and "orientation" on the first call (thread-safe).
 *
 * Returns: the #GType of the corners meta API
 */
GST_CUDA_FX_META_API
GType gst_cuda_fx_corners_meta_api_get_type (void);

/**
 * gst_cuda_fx_corners_meta_get_info:
 *
 * Registers the implementation "GstCudaFxCornersMeta" on the first call
 * (thread-safe).
 *
 * Returns: (transfer none): the #GstMetaInfo of the corners meta
 */
GST_CUDA_FX_META_API
const GstMetaInfo *gst_cuda_fx_corners_meta_get_info (void);

/**
 * gst_buffer_add_cuda_fx_corners_meta:
 * @buffer: a #GstBuffer whose metadata is writable
 * @corners: (array length=n_corners) (nullable): @n_corners corners to copy;
 *   may be %NULL only when @n_corners is 0
 * @n_corners: the number of corners
 * @params: (nullable): the detector's parameters, copied; %NULL leaves the
 *   meta's params %NULL
 *
 * Adds a corners meta holding copies of @corners and @params to @buffer.
 * A buffer may carry more than one (gst_buffer_get_cuda_fx_corners_meta()
 * returns the first); a detector adds one per frame.
 *
 * Returns: (transfer none) (nullable): the new meta, or %NULL when the
 *   arguments are invalid (a critical warning is logged)
 */
GST_CUDA_FX_META_API
GstCudaFxCornersMeta *gst_buffer_add_cuda_fx_corners_meta (GstBuffer * buffer,
    const GstCudaFxCorner * corners, guint n_corners, const GstStructure * params);

/**
 * gst_buffer_get_cuda_fx_corners_meta:
 * @buffer: a #GstBuffer
 *
 * Returns: (transfer none) (nullable): the first corners meta of @buffer,
 *   or %NULL when it has none
 */
GST_CUDA_FX_META_API
GstCudaFxCornersMeta *gst_buffer_get_cuda_fx_corners_meta (GstBuffer * buffer);

G_END_DECLS

#endif /* __GST_CUDA_FX_CORNERS_META_H__ */
