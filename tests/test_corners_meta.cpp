// GstCudaFxCornersMeta (libgstcudafxmeta): add/get with parameters, deep
// copies, the scale transform (called directly and through cudaupscale and
// videoscale), kept by cudagaussian, dropped by transforms it does not know
// (and by videoflip's rotation and videocrop), 0 and 100 000 corners,
// invalid arguments.
#include <gst/check/gstharness.h>
#include <gst/cudafx/gstcudafxcornersmeta.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

class GstEnv : public ::testing::Environment {
 public:
  void SetUp() override { gst_init(nullptr, nullptr); }
};
const auto* const kGstEnv = ::testing::AddGlobalTestEnvironment(new GstEnv);

// What cudaharris will attach: its properties, by name and type.
GstStructure* harris_params() {
  return gst_structure_new("cudaharris", "gradient-size", G_TYPE_INT, 5, "block-size", G_TYPE_INT,
                           7, "k", G_TYPE_DOUBLE, 0.04, "threshold", G_TYPE_DOUBLE, 0.01,
                           "min-distance", G_TYPE_INT, 3, "max-corners", G_TYPE_INT, 500, nullptr);
}

int count_corners_metas(GstBuffer* buf) {
  int n = 0;
  gpointer state = nullptr;
  while (gst_buffer_iterate_meta_filtered(buf, &state, GST_CUDA_FX_CORNERS_META_API_TYPE))
    n++;
  return n;
}

// The documented scale rule, for the expectations.
float scaled(float v, int in_size, int out_size) {
  return static_cast<float>((static_cast<double>(v) + 0.5) * out_size / in_size - 0.5);
}

// A writable RGBA buffer of w x h (tightly packed, as the caps below say).
GstBuffer* rgba_frame(int w, int h) {
  GstBuffer* buf = gst_buffer_new_allocate(nullptr, static_cast<gsize>(w) * h * 4, nullptr);
  gst_buffer_memset(buf, 0, 0x80, static_cast<gsize>(w) * h * 4);
  return buf;
}

std::string rgba_caps(int w, int h) {
  return "video/x-raw,format=RGBA,width=" + std::to_string(w) + ",height=" + std::to_string(h) +
         ",framerate=30/1";
}

// Pushes `buf` (taken) through the element(s) of `launch`, the input at
// in_w x in_h RGBA, the output constrained by `out_caps`; returns the output
// buffer (nullptr, with a test failure, if none came).
GstBuffer* push_through(const char* launch, int in_w, int in_h, const char* out_caps,
                        GstBuffer* buf) {
  GstHarness* h = gst_harness_new_parse(launch);
  gst_harness_set_src_caps_str(h, rgba_caps(in_w, in_h).c_str());
  gst_harness_set_sink_caps_str(h, out_caps);
  GstFlowReturn ret = gst_harness_push(h, buf);
  EXPECT_EQ(ret, GST_FLOW_OK) << launch;
  GstBuffer* out = ret == GST_FLOW_OK ? gst_harness_pull(h) : nullptr;
  EXPECT_NE(out, nullptr) << launch;
  gst_harness_teardown(h);
  return out;
}

bool have_element(const char* name) {
  GstElementFactory* f = gst_element_factory_find(name);
  if (!f)
    return false;
  gst_object_unref(f);
  return true;
}

// The meta's own transform function, called as an element would.
gboolean transform(GstBuffer* dest, GstBuffer* src, GQuark type, gpointer data) {
  GstMeta* meta = reinterpret_cast<GstMeta*>(gst_buffer_get_cuda_fx_corners_meta(src));
  EXPECT_NE(meta, nullptr);
  if (!meta)
    return FALSE;
  return meta->info->transform_func(dest, meta, src, type, data);
}

// Scales `src`'s corners meta onto a new buffer, from in_w x in_h to
// out_w x out_h, through the transform function (as videoscale does).
GstBuffer* scale_directly(GstBuffer* src, int in_w, int in_h, int out_w, int out_h) {
  GstVideoInfo in_info, out_info;
  gst_video_info_set_format(&in_info, GST_VIDEO_FORMAT_RGBA, in_w, in_h);
  gst_video_info_set_format(&out_info, GST_VIDEO_FORMAT_RGBA, out_w, out_h);
  GstVideoMetaTransform sizes = {&in_info, &out_info};
  GstBuffer* dest = gst_buffer_new();
  EXPECT_TRUE(transform(dest, src, gst_video_meta_transform_scale_get_quark(), &sizes));
  return dest;
}

}  // namespace

// ---- registration, add and get ----

TEST(CornersMeta, ApiHasTheVideoSizeAndOrientationTags) {
  GType api = GST_CUDA_FX_CORNERS_META_API_TYPE;
  EXPECT_STREQ(g_type_name(api), "GstCudaFxCornersMetaAPI");
  EXPECT_TRUE(gst_meta_api_type_has_tag(api, g_quark_from_static_string(GST_META_TAG_VIDEO_STR)));
  EXPECT_TRUE(
      gst_meta_api_type_has_tag(api, g_quark_from_static_string(GST_META_TAG_VIDEO_SIZE_STR)));
  EXPECT_TRUE(gst_meta_api_type_has_tag(
      api, g_quark_from_static_string(GST_META_TAG_VIDEO_ORIENTATION_STR)));
  const gchar* const* tags = gst_meta_api_type_get_tags(api);
  EXPECT_EQ(g_strv_length(const_cast<gchar**>(tags)), 3u);
  const GstMetaInfo* info = GST_CUDA_FX_CORNERS_META_INFO;
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->api, api);
  EXPECT_EQ(info, gst_cuda_fx_corners_meta_get_info()) << "registered twice";
  EXPECT_EQ(info->size, sizeof(GstCudaFxCornersMeta));
}

TEST(CornersMeta, AddGetRoundTripWithParams) {
  std::vector<GstCudaFxCorner> corners = {{10.f, 20.f, 1500.f}, {3.25f, 7.75f, 900.5f},
                                          {0.f, 0.f, -1.f}};
  GstStructure* params = harris_params();
  GstBuffer* buf = gst_buffer_new();
  EXPECT_EQ(gst_buffer_get_cuda_fx_corners_meta(buf), nullptr);
  GstCudaFxCornersMeta* added =
      gst_buffer_add_cuda_fx_corners_meta(buf, corners.data(), corners.size(), params);
  ASSERT_NE(added, nullptr);
  GstCudaFxCornersMeta* meta = gst_buffer_get_cuda_fx_corners_meta(buf);
  EXPECT_EQ(meta, added);
  EXPECT_EQ(meta->meta.info, GST_CUDA_FX_CORNERS_META_INFO);
  ASSERT_EQ(meta->n_corners, 3u);
  // Copies: the caller's array and structure are its own to change or free.
  EXPECT_NE(meta->corners, corners.data());
  EXPECT_NE(meta->params, params);
  corners[0].x = -99.f;
  gst_structure_set(params, "k", G_TYPE_DOUBLE, 0.2, nullptr);
  EXPECT_EQ(meta->corners[0].x, 10.f);
  EXPECT_EQ(meta->corners[0].y, 20.f);
  EXPECT_EQ(meta->corners[0].score, 1500.f);
  EXPECT_EQ(meta->corners[1].x, 3.25f);
  EXPECT_EQ(meta->corners[1].y, 7.75f);
  EXPECT_EQ(meta->corners[1].score, 900.5f);
  EXPECT_EQ(meta->corners[2].score, -1.f);
  gst_structure_free(params);

  ASSERT_NE(meta->params, nullptr);
  EXPECT_TRUE(gst_structure_has_name(meta->params, "cudaharris"));
  gint gradient = 0, block = 0, min_distance = 0, max_corners = 0;
  gdouble k = 0, threshold = 0;
  EXPECT_TRUE(gst_structure_get(meta->params, "gradient-size", G_TYPE_INT, &gradient, "block-size",
                                G_TYPE_INT, &block, "k", G_TYPE_DOUBLE, &k, "threshold",
                                G_TYPE_DOUBLE, &threshold, "min-distance", G_TYPE_INT,
                                &min_distance, "max-corners", G_TYPE_INT, &max_corners, nullptr));
  EXPECT_EQ(gradient, 5);
  EXPECT_EQ(block, 7);
  EXPECT_EQ(k, 0.04);
  EXPECT_EQ(threshold, 0.01);
  EXPECT_EQ(min_distance, 3);
  EXPECT_EQ(max_corners, 500);
  gst_buffer_unref(buf);
}

TEST(CornersMeta, NullParamsLeaveParamsNull) {
  GstCudaFxCorner c = {1.f, 2.f, 3.f};
  GstBuffer* buf = gst_buffer_new();
  GstCudaFxCornersMeta* meta = gst_buffer_add_cuda_fx_corners_meta(buf, &c, 1, nullptr);
  ASSERT_NE(meta, nullptr);
  EXPECT_EQ(meta->params, nullptr);
  GstBuffer* copy = gst_buffer_copy(buf);
  ASSERT_NE(gst_buffer_get_cuda_fx_corners_meta(copy), nullptr);
  EXPECT_EQ(gst_buffer_get_cuda_fx_corners_meta(copy)->params, nullptr);
  gst_buffer_unref(copy);
  gst_buffer_unref(buf);
}

// ---- copies ----

// gst_buffer_copy gives the copy a meta of its own: its array and its
// structure outlive the original buffer and do not follow its changes.
TEST(CornersMeta, BufferCopyIsDeep) {
  const GstCudaFxCorner corners[] = {{5.f, 6.f, 70.f}, {8.5f, 9.5f, 60.f}};
  GstStructure* params = harris_params();
  GstBuffer* buf = rgba_frame(16, 16);
  GstCudaFxCornersMeta* orig = gst_buffer_add_cuda_fx_corners_meta(buf, corners, 2, params);
  gst_structure_free(params);
  ASSERT_NE(orig, nullptr);

  GstBuffer* copy = gst_buffer_copy(buf);
  ASSERT_EQ(count_corners_metas(copy), 1);
  GstCudaFxCornersMeta* cmeta = gst_buffer_get_cuda_fx_corners_meta(copy);
  ASSERT_NE(cmeta, nullptr);
  EXPECT_NE(cmeta, orig);
  EXPECT_NE(cmeta->corners, orig->corners) << "the copy shares the original's array";
  EXPECT_NE(cmeta->params, orig->params) << "the copy shares the original's structure";
  EXPECT_TRUE(gst_structure_is_equal(cmeta->params, orig->params));
  orig->corners[0].x = -1.f;
  gst_buffer_unref(buf);  // frees the original meta's array and structure

  ASSERT_EQ(cmeta->n_corners, 2u);
  EXPECT_EQ(cmeta->corners[0].x, 5.f);
  EXPECT_EQ(cmeta->corners[0].y, 6.f);
  EXPECT_EQ(cmeta->corners[0].score, 70.f);
  EXPECT_EQ(cmeta->corners[1].x, 8.5f);
  EXPECT_EQ(cmeta->corners[1].y, 9.5f);
  EXPECT_EQ(cmeta->corners[1].score, 60.f);
  GstStructure* expected = harris_params();
  EXPECT_TRUE(gst_structure_is_equal(cmeta->params, expected));
  gst_structure_free(expected);
  gst_buffer_unref(copy);
}

// A copy of a byte region keeps every corner: bytes are not pixels.
TEST(CornersMeta, RegionCopyKeepsAllCorners) {
  const GstCudaFxCorner corners[] = {{1.f, 1.f, 1.f}, {14.f, 15.f, 2.f}};
  GstBuffer* buf = rgba_frame(16, 16);
  ASSERT_NE(gst_buffer_add_cuda_fx_corners_meta(buf, corners, 2, nullptr), nullptr);
  GstBuffer* region = gst_buffer_copy_region(buf, GST_BUFFER_COPY_ALL, 64, 128);
  GstCudaFxCornersMeta* meta = gst_buffer_get_cuda_fx_corners_meta(region);
  ASSERT_NE(meta, nullptr);
  ASSERT_EQ(meta->n_corners, 2u);
  EXPECT_EQ(meta->corners[1].x, 14.f);
  EXPECT_EQ(meta->corners[1].y, 15.f);
  gst_buffer_unref(region);
  gst_buffer_unref(buf);
}

// ---- the scale transform ----

// Pixel centres keep their place: (x + 0.5) * out / in - 0.5 per axis, here
// from 64x48 to 100x30 (x by 100/64, y by 30/48); the frame's edges
// (-0.5) stay the edges; scores and parameters unchanged.
TEST(CornersMeta, ScaleTransformMovesPixelCentres) {
  const GstCudaFxCorner corners[] = {
      {0.f, 0.f, 1.f}, {-0.5f, -0.5f, 2.f}, {63.5f, 47.5f, 3.f}, {10.f, 20.f, 4.f},
      {12.25f, 7.75f, 5.f}};
  GstStructure* params = harris_params();
  GstBuffer* buf = gst_buffer_new();
  ASSERT_NE(gst_buffer_add_cuda_fx_corners_meta(buf, corners, 5, params), nullptr);
  GstBuffer* out = scale_directly(buf, 64, 48, 100, 30);
  GstCudaFxCornersMeta* meta = gst_buffer_get_cuda_fx_corners_meta(out);
  ASSERT_NE(meta, nullptr);
  ASSERT_EQ(meta->n_corners, 5u);
  for (guint i = 0; i < 5; i++) {
    EXPECT_FLOAT_EQ(meta->corners[i].x, scaled(corners[i].x, 64, 100)) << i;
    EXPECT_FLOAT_EQ(meta->corners[i].y, scaled(corners[i].y, 48, 30)) << i;
    EXPECT_EQ(meta->corners[i].score, corners[i].score) << i;
  }
  EXPECT_FLOAT_EQ(meta->corners[0].x, 0.28125f);  // 0.5 * 100/64 - 0.5
  EXPECT_FLOAT_EQ(meta->corners[1].x, -0.5f);
  EXPECT_FLOAT_EQ(meta->corners[1].y, -0.5f);
  EXPECT_FLOAT_EQ(meta->corners[2].x, 99.5f);
  EXPECT_FLOAT_EQ(meta->corners[2].y, 29.5f);
  EXPECT_TRUE(gst_structure_is_equal(meta->params, params));
  gst_structure_free(params);
  gst_buffer_unref(out);
  gst_buffer_unref(buf);
}

// A scale and then a copy of the same meta onto one buffer (what GStreamer
// 1.20's videoscale does) leave the scaled meta alone: the copy is skipped.
// A copy onto a buffer with another detector's meta still adds its own.
TEST(CornersMeta, CopyAfterScaleOfTheSameMetaIsSkipped) {
  const GstCudaFxCorner corners[] = {{10.f, 20.f, 2.f}, {63.f, 0.f, 3.f}};
  GstStructure* params = harris_params();
  GstBuffer* buf = gst_buffer_new();
  ASSERT_NE(gst_buffer_add_cuda_fx_corners_meta(buf, corners, 2, params), nullptr);
  GstBuffer* out = scale_directly(buf, 64, 48, 100, 30);
  GstMetaTransformCopy whole = {FALSE, 0, static_cast<gsize>(-1)};
  EXPECT_TRUE(transform(out, buf, _gst_meta_transform_copy, &whole));
  EXPECT_EQ(count_corners_metas(out), 1);
  GstCudaFxCornersMeta* meta = gst_buffer_get_cuda_fx_corners_meta(out);
  ASSERT_NE(meta, nullptr);
  EXPECT_FLOAT_EQ(meta->corners[0].x, scaled(10.f, 64, 100)) << "the scaled meta was replaced";

  // another detector's meta (other parameters) on the destination
  GstBuffer* other = gst_buffer_new();
  GstStructure* other_params = gst_structure_new("other", "k", G_TYPE_DOUBLE, 0.05, nullptr);
  ASSERT_NE(gst_buffer_add_cuda_fx_corners_meta(other, corners, 2, other_params), nullptr);
  EXPECT_TRUE(transform(other, buf, _gst_meta_transform_copy, &whole));
  EXPECT_EQ(count_corners_metas(other), 2);
  gst_structure_free(other_params);
  gst_structure_free(params);
  gst_buffer_unref(other);
  gst_buffer_unref(out);
  gst_buffer_unref(buf);
}

// cudaupscale factor=2 (64x48 -> 128x96) scales the corners with the frame:
// exactly one corners meta on the output, x' = 2x + 0.5, y' = 2y + 0.5.
TEST(CornersMeta, CudaupscaleFactor2ScalesTheCorners) {
  const GstCudaFxCorner corners[] = {
      {0.f, 0.f, 1.f}, {10.f, 20.f, 2.f}, {63.f, 47.f, 3.f}, {12.25f, 7.75f, 4.f}};
  GstBuffer* buf = rgba_frame(64, 48);
  GstStructure* params = harris_params();
  ASSERT_NE(gst_buffer_add_cuda_fx_corners_meta(buf, corners, 4, params), nullptr);
  GstBuffer* out =
      push_through("cudaupscale factor=2 backend=cpu", 64, 48, "video/x-raw", buf);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(gst_buffer_get_size(out), 128u * 96u * 4u) << "not scaled to 128x96";
  EXPECT_EQ(count_corners_metas(out), 1);
  GstCudaFxCornersMeta* meta = gst_buffer_get_cuda_fx_corners_meta(out);
  ASSERT_NE(meta, nullptr) << "cudaupscale dropped the corners meta";
  ASSERT_EQ(meta->n_corners, 4u);
  const float expected[][2] = {{0.5f, 0.5f}, {20.5f, 40.5f}, {126.5f, 94.5f}, {25.f, 16.f}};
  for (guint i = 0; i < 4; i++) {
    EXPECT_FLOAT_EQ(meta->corners[i].x, expected[i][0]) << i;
    EXPECT_FLOAT_EQ(meta->corners[i].y, expected[i][1]) << i;
    EXPECT_EQ(meta->corners[i].score, corners[i].score) << i;
  }
  EXPECT_TRUE(gst_structure_is_equal(meta->params, params));
  gst_structure_free(params);
  gst_buffer_unref(out);
}

// videoscale (gst-plugins-base) calls the same transform: 64x48 -> 100x30.
TEST(CornersMeta, VideoscaleScalesTheCorners) {
  if (!have_element("videoscale"))
    GTEST_SKIP() << "no videoscale element";
  const GstCudaFxCorner corners[] = {{10.f, 20.f, 2.f}, {63.f, 0.f, 3.f}};
  GstBuffer* buf = rgba_frame(64, 48);
  ASSERT_NE(gst_buffer_add_cuda_fx_corners_meta(buf, corners, 2, nullptr), nullptr);
  GstBuffer* out = push_through("videoscale", 64, 48, "video/x-raw,width=100,height=30", buf);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(gst_buffer_get_size(out), 100u * 30u * 4u) << "not scaled to 100x30";
  EXPECT_EQ(count_corners_metas(out), 1);
  GstCudaFxCornersMeta* meta = gst_buffer_get_cuda_fx_corners_meta(out);
  ASSERT_NE(meta, nullptr) << "videoscale dropped the corners meta";
  ASSERT_EQ(meta->n_corners, 2u);
  for (guint i = 0; i < 2; i++) {
    EXPECT_FLOAT_EQ(meta->corners[i].x, scaled(corners[i].x, 64, 100)) << i;
    EXPECT_FLOAT_EQ(meta->corners[i].y, scaled(corners[i].y, 48, 30)) << i;
  }
  gst_buffer_unref(out);
}

// A filter that keeps the geometry (a blur) passes the corners on as they are.
TEST(CornersMeta, CudagaussianKeepsTheCorners) {
  const GstCudaFxCorner corners[] = {{10.f, 20.f, 2.f}, {12.25f, 7.75f, 4.f}};
  GstBuffer* buf = rgba_frame(64, 48);
  ASSERT_NE(gst_buffer_add_cuda_fx_corners_meta(buf, corners, 2, nullptr), nullptr);
  GstBuffer* out = push_through("cudagaussian sigma=2 backend=cpu", 64, 48, "video/x-raw", buf);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(count_corners_metas(out), 1);
  GstCudaFxCornersMeta* meta = gst_buffer_get_cuda_fx_corners_meta(out);
  ASSERT_NE(meta, nullptr) << "cudagaussian dropped the corners meta";
  ASSERT_EQ(meta->n_corners, 2u);
  EXPECT_EQ(meta->corners[1].x, 12.25f);
  EXPECT_EQ(meta->corners[1].y, 7.75f);
  gst_buffer_unref(out);
}

// ---- transforms the meta does not know, and sizes it refuses ----

TEST(CornersMeta, UnknownTransformDropsIt) {
  const GstCudaFxCorner c = {10.f, 20.f, 2.f};
  GstBuffer* buf = gst_buffer_new();
  ASSERT_NE(gst_buffer_add_cuda_fx_corners_meta(buf, &c, 1, nullptr), nullptr);
  GstBuffer* dest = gst_buffer_new();
  int data = 0;
  EXPECT_FALSE(transform(dest, buf, g_quark_from_static_string("cudafx-test-rotate"), &data));
  EXPECT_EQ(gst_buffer_get_cuda_fx_corners_meta(dest), nullptr);
  EXPECT_EQ(count_corners_metas(dest), 0);

  // A scale from or to an empty frame has no meaning.
  GstVideoInfo in_info, out_info;
  gst_video_info_init(&in_info);
  gst_video_info_set_format(&out_info, GST_VIDEO_FORMAT_RGBA, 64, 48);
  GstVideoMetaTransform sizes = {&in_info, &out_info};
  EXPECT_FALSE(transform(dest, buf, gst_video_meta_transform_scale_get_quark(), &sizes));
  EXPECT_FALSE(transform(dest, buf, gst_video_meta_transform_scale_get_quark(), nullptr));
  EXPECT_EQ(count_corners_metas(dest), 0);
  gst_buffer_unref(dest);
  gst_buffer_unref(buf);
}

// A rotation drops it rather than pass on coordinates of the unrotated
// frame (videoflip 1.22 decides that itself from the meta's "size" and
// "orientation" tags; an element that asks the meta with a transform type
// other than copy or scale gets FALSE, as above).
TEST(CornersMeta, VideoflipRotationDropsIt) {
  if (!have_element("videoflip"))
    GTEST_SKIP() << "no videoflip element";
  const GstCudaFxCorner c = {10.f, 20.f, 2.f};
  GstBuffer* buf = rgba_frame(64, 48);
  ASSERT_NE(gst_buffer_add_cuda_fx_corners_meta(buf, &c, 1, nullptr), nullptr);
  GstBuffer* out = push_through("videoflip video-direction=90r", 64, 48, "video/x-raw", buf);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(count_corners_metas(out), 0);
  gst_buffer_unref(out);
}

// So does a crop (videocrop drops "size"-tagged metas it cannot adjust).
TEST(CornersMeta, VideocropDropsIt) {
  if (!have_element("videocrop"))
    GTEST_SKIP() << "no videocrop element";
  const GstCudaFxCorner c = {10.f, 20.f, 2.f};
  GstBuffer* buf = rgba_frame(64, 48);
  ASSERT_NE(gst_buffer_add_cuda_fx_corners_meta(buf, &c, 1, nullptr), nullptr);
  GstBuffer* out = push_through("videocrop left=4 top=2", 64, 48, "video/x-raw", buf);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(gst_buffer_get_size(out), 60u * 46u * 4u) << "not cropped to 60x46";
  EXPECT_EQ(count_corners_metas(out), 0);
  gst_buffer_unref(out);
}

// ---- counts at the ends ----

TEST(CornersMeta, ZeroCorners) {
  GstBuffer* buf = rgba_frame(64, 48);
  GstStructure* params = harris_params();
  GstCudaFxCornersMeta* meta = gst_buffer_add_cuda_fx_corners_meta(buf, nullptr, 0, params);
  ASSERT_NE(meta, nullptr);
  EXPECT_EQ(meta->n_corners, 0u);
  EXPECT_EQ(meta->corners, nullptr);
  EXPECT_TRUE(gst_structure_is_equal(meta->params, params));

  GstBuffer* copy = gst_buffer_copy(buf);
  ASSERT_NE(gst_buffer_get_cuda_fx_corners_meta(copy), nullptr);
  EXPECT_EQ(gst_buffer_get_cuda_fx_corners_meta(copy)->n_corners, 0u);
  gst_buffer_unref(copy);

  GstBuffer* scaled_buf = scale_directly(buf, 64, 48, 128, 96);
  ASSERT_NE(gst_buffer_get_cuda_fx_corners_meta(scaled_buf), nullptr);
  EXPECT_EQ(gst_buffer_get_cuda_fx_corners_meta(scaled_buf)->n_corners, 0u);
  gst_buffer_unref(scaled_buf);

  // and through an element
  GstBuffer* out = push_through("cudaupscale factor=2 backend=cpu", 64, 48, "video/x-raw", buf);
  ASSERT_NE(out, nullptr);
  GstCudaFxCornersMeta* ometa = gst_buffer_get_cuda_fx_corners_meta(out);
  ASSERT_NE(ometa, nullptr);
  EXPECT_EQ(ometa->n_corners, 0u);
  EXPECT_EQ(ometa->corners, nullptr);
  EXPECT_TRUE(gst_structure_is_equal(ometa->params, params));
  gst_structure_free(params);
  gst_buffer_unref(out);
}

TEST(CornersMeta, HundredThousandCorners) {
  const guint n = 100000;
  std::vector<GstCudaFxCorner> corners(n);
  for (guint i = 0; i < n; i++)
    corners[i] = {static_cast<float>(i % 1920), static_cast<float>(i / 1920),
                  static_cast<float>(n - i)};
  GstBuffer* buf = gst_buffer_new();
  ASSERT_NE(gst_buffer_add_cuda_fx_corners_meta(buf, corners.data(), n, nullptr), nullptr);

  GstBuffer* copy = gst_buffer_copy(buf);
  GstCudaFxCornersMeta* cmeta = gst_buffer_get_cuda_fx_corners_meta(copy);
  ASSERT_NE(cmeta, nullptr);
  ASSERT_EQ(cmeta->n_corners, n);
  guint wrong = 0;
  for (guint i = 0; i < n; i++)
    wrong += cmeta->corners[i].x != corners[i].x || cmeta->corners[i].y != corners[i].y ||
             cmeta->corners[i].score != corners[i].score;
  EXPECT_EQ(wrong, 0u);
  gst_buffer_unref(copy);

  GstBuffer* out = scale_directly(buf, 1920, 1080, 3840, 2160);
  GstCudaFxCornersMeta* smeta = gst_buffer_get_cuda_fx_corners_meta(out);
  ASSERT_NE(smeta, nullptr);
  ASSERT_EQ(smeta->n_corners, n);
  wrong = 0;
  for (guint i = 0; i < n; i++)
    wrong += smeta->corners[i].x != 2.f * corners[i].x + 0.5f ||
             smeta->corners[i].y != 2.f * corners[i].y + 0.5f ||
             smeta->corners[i].score != corners[i].score;
  EXPECT_EQ(wrong, 0u);
  gst_buffer_unref(out);
  gst_buffer_unref(buf);
}

// ---- invalid arguments ----

namespace {
void count_critical(const gchar*, GLogLevelFlags, const gchar*, gpointer count) {
  ++*static_cast<int*>(count);
}
}  // namespace

// A count without an array is refused with a critical, and nothing is added.
TEST(CornersMeta, CountWithoutArrayIsRefused) {
  int criticals = 0;
  guint handler =
      g_log_set_handler("cudafx-meta", G_LOG_LEVEL_CRITICAL, count_critical, &criticals);
  GstBuffer* buf = gst_buffer_new();
  EXPECT_EQ(gst_buffer_add_cuda_fx_corners_meta(buf, nullptr, 3, nullptr), nullptr);
  EXPECT_EQ(criticals, 1);
  EXPECT_EQ(count_corners_metas(buf), 0);
  g_log_remove_handler("cudafx-meta", handler);
  gst_buffer_unref(buf);
}
