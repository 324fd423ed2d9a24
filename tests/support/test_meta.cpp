#include "test_meta.hpp"

#include <gst/video/video.h>

namespace testing_support {
namespace {

struct TestMeta {
  GstMeta meta;
  int value;
};

gboolean test_meta_init(GstMeta* meta, gpointer, GstBuffer*) {
  reinterpret_cast<TestMeta*>(meta)->value = 0;
  return TRUE;
}

gboolean test_meta_transform(GstBuffer* dest, GstMeta* meta, GstBuffer*, GQuark type, gpointer) {
  if (!GST_META_TRANSFORM_IS_COPY(type))
    return FALSE;
  auto* copy = reinterpret_cast<TestMeta*>(gst_buffer_add_meta(dest, meta->info, nullptr));
  if (!copy)
    return FALSE;
  copy->value = reinterpret_cast<TestMeta*>(meta)->value;
  return TRUE;
}

const GstMetaInfo* register_test_meta(const char* api_name, const char* impl_name,
                                      const gchar** tags) {
  return gst_meta_register(gst_meta_api_type_register(api_name, tags), impl_name,
                           sizeof(TestMeta), test_meta_init, nullptr, test_meta_transform);
}

}  // namespace

const GstMetaInfo* untagged_test_meta() {
  static const gchar* tags[] = {nullptr};
  static const GstMetaInfo* info =
      register_test_meta("CudaFxTestUntaggedMetaAPI", "CudaFxTestUntaggedMeta", tags);
  return info;
}

const GstMetaInfo* video_test_meta() {
  static const gchar* tags[] = {GST_META_TAG_VIDEO_STR, nullptr};
  static const GstMetaInfo* info =
      register_test_meta("CudaFxTestVideoOnlyMetaAPI", "CudaFxTestVideoOnlyMeta", tags);
  return info;
}

const GstMetaInfo* colorspace_test_meta() {
  static const gchar* tags[] = {GST_META_TAG_VIDEO_STR, GST_META_TAG_VIDEO_COLORSPACE_STR,
                                nullptr};
  static const GstMetaInfo* info =
      register_test_meta("CudaFxTestColorspaceMetaAPI", "CudaFxTestColorspaceMeta", tags);
  return info;
}

void add_test_meta(GstBuffer* buf, const GstMetaInfo* info, int value) {
  auto* m = reinterpret_cast<TestMeta*>(gst_buffer_add_meta(buf, info, nullptr));
  if (m)
    m->value = value;
}

int test_meta_value(GstBuffer* buf, const GstMetaInfo* info) {
  auto* m = reinterpret_cast<TestMeta*>(gst_buffer_get_meta(buf, info->api));
  return m ? m->value : -1;
}

}  // namespace testing_support
