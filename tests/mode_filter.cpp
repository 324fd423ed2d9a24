// The test-only elements of mode_filter.hpp.
#include "mode_filter.hpp"

#include <cstring>
#include <vector>

#include "cudafx/cuda_resources.hpp"
#include "gstcudafxfilter.h"

namespace {

using namespace cudafx;

// ---- cudafxtestfilter ----

struct TestFilter {
  GstCudaFxFilter parent;
  Backend backend;
  PinnedBuffer pinned_row;  // ANALYSIS on CUDA: row 0 of plane 0
  std::vector<guint8> host_row;  // ANALYSIS on the CPU
  size_t row_bytes;
};
struct TestFilterClass {
  GstCudaFxFilterClass parent_class;
};

GType test_filter_get_type();
G_DEFINE_TYPE(TestFilter, test_filter, GST_TYPE_CUDA_FX_FILTER)

enum { PROP_0, PROP_OP_MODE };

GType op_mode_get_type() {
  static GType type = 0;
  static const GEnumValue values[] = {
      {GST_CUDA_FX_FILTER_MODE_TRANSFORM, "transform", "transform"},
      {GST_CUDA_FX_FILTER_MODE_IN_PLACE, "in place", "in-place"},
      {GST_CUDA_FX_FILTER_MODE_ANALYSIS, "analysis", "analysis"},
      {0, nullptr, nullptr},
  };
  if (g_once_init_enter(&type))
    g_once_init_leave(&type, g_enum_register_static("CudaFxTestOpMode", values));
  return type;
}

TestFilter* cast(GstCudaFxFilter* f) { return reinterpret_cast<TestFilter*>(f); }

Status fill_row(const PlaneView& p, guint8 value, StreamHandle stream, Backend backend) {
  if (backend == Backend::Cuda)
    return fill_bytes_async(p.data, value, p.row_bytes(), stream);
  std::memset(p.data, value, p.row_bytes());
  return Status::ok();
}

Status test_filter_setup(GstCudaFxFilter* filter, const GstCudaFxFilterConfig& config) {
  TestFilter* self = cast(filter);
  self->backend = config.backend;
  self->row_bytes = format_info(config.in.format).planes[0].channels *
                    static_cast<size_t>(config.in.width);
  if (config.mode == GST_CUDA_FX_FILTER_MODE_ANALYSIS) {
    if (config.backend == Backend::Cuda)
      return self->pinned_row.allocate(self->row_bytes);
    self->host_row.assign(self->row_bytes, 0);
  }
  return Status::ok();
}

Status test_filter_process(GstCudaFxFilter* filter, const ImageView& src, const ImageView& dst,
                           StreamHandle stream) {
  TestFilter* self = cast(filter);
  if (self->backend == Backend::Cuda) {
    CUDAFX_TRY(copy_image_async(dst, src, stream));
  } else {
    const FormatInfo& fi = format_info(src.desc.format);
    for (int i = 0; i < fi.n_planes; i++) {
      const PlaneView s = src.plane(i), d = dst.plane(i);
      for (int y = 0; y < s.height; y++)
        std::memcpy(d.data + y * d.pitch, s.data + y * s.pitch, s.row_bytes());
    }
  }
  return fill_row(dst.plane(0), testing_support::kTransformMark, stream, self->backend);
}

Status test_filter_process_ip(GstCudaFxFilter* filter, const ImageView& frame,
                              StreamHandle stream) {
  TestFilter* self = cast(filter);
  if (gst_cuda_fx_filter_get_mode(filter) == GST_CUDA_FX_FILTER_MODE_IN_PLACE)
    return fill_row(frame.plane(0), testing_support::kInPlaceMark, stream, self->backend);
  if (self->backend == Backend::Cuda)
    return copy_bytes_async(self->pinned_row.get(), frame.data[0], self->row_bytes, stream);
  std::memcpy(self->host_row.data(), frame.data[0], self->row_bytes);
  return Status::ok();
}

Status test_filter_finish(GstCudaFxFilter* filter, GstBuffer* buffer) {
  TestFilter* self = cast(filter);
  if (gst_cuda_fx_filter_get_mode(filter) != GST_CUDA_FX_FILTER_MODE_ANALYSIS)
    return Status::ok();
  const guint8* row = self->backend == Backend::Cuda ? self->pinned_row.bytes()
                                                     : self->host_row.data();
  guint64 sum = 0;
  for (size_t i = 0; i < self->row_bytes; i++)
    sum += row[i];
  if (!gst_buffer_is_writable(buffer))
    return Status::invalid("finish got a buffer whose metadata is not writable");
  GstVideoRegionOfInterestMeta* meta =
      gst_buffer_add_video_region_of_interest_meta(buffer, "row-sum", 0, 0, 1, 1);
  gst_video_region_of_interest_meta_add_param(
      meta, gst_structure_new("row-sum", "sum", G_TYPE_UINT64, sum, nullptr));
  gst_element_post_message(
      GST_ELEMENT(filter),
      gst_message_new_element(GST_OBJECT(filter), gst_structure_new("cudafxtestfilter", "sum",
                                                                     G_TYPE_UINT64, sum, nullptr)));
  return Status::ok();
}

void test_filter_teardown(GstCudaFxFilter* filter) {
  TestFilter* self = cast(filter);
  self->pinned_row.reset();
  self->host_row.clear();
}

void test_filter_set_property(GObject* object, guint id, const GValue* value, GParamSpec* pspec) {
  if (id == PROP_OP_MODE)
    gst_cuda_fx_filter_set_mode(GST_CUDA_FX_FILTER(object),
                                static_cast<GstCudaFxFilterMode>(g_value_get_enum(value)));
  else
    G_OBJECT_CLASS(test_filter_parent_class)->set_property(object, id, value, pspec);
}

void test_filter_get_property(GObject* object, guint id, GValue* value, GParamSpec* pspec) {
  if (id == PROP_OP_MODE)
    g_value_set_enum(value, gst_cuda_fx_filter_get_mode(GST_CUDA_FX_FILTER(object)));
  else
    G_OBJECT_CLASS(test_filter_parent_class)->get_property(object, id, value, pspec);
}

void test_filter_finalize(GObject* object) {
  TestFilter* self = reinterpret_cast<TestFilter*>(object);
  self->pinned_row.~PinnedBuffer();
  self->host_row.~vector();
  G_OBJECT_CLASS(test_filter_parent_class)->finalize(object);
}

void test_filter_class_init(TestFilterClass* klass) {
  GObjectClass* gobject_class = G_OBJECT_CLASS(klass);
  GstCudaFxFilterClass* filter_class = GST_CUDA_FX_FILTER_CLASS(klass);
  gobject_class->set_property = test_filter_set_property;
  gobject_class->get_property = test_filter_get_property;
  gobject_class->finalize = test_filter_finalize;
  g_object_class_install_property(
      gobject_class, PROP_OP_MODE,
      g_param_spec_enum("op-mode", "Mode", "The base class mode", op_mode_get_type(),
                        GST_CUDA_FX_FILTER_MODE_TRANSFORM,
                        static_cast<GParamFlags>(G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS |
                                                 GST_PARAM_MUTABLE_PLAYING)));
  gst_element_class_set_static_metadata(GST_ELEMENT_CLASS(klass), "cudafx test filter",
                                        "Filter/Video", "Exercises the base class modes",
                                        "gst-cudafx tests");
  gst_cuda_fx_filter_class_add_pad_templates(filter_class, GST_CUDA_FX_CUDA_FORMATS,
                                             GST_CUDA_FX_SYSTEM_FORMATS);
  filter_class->setup = test_filter_setup;
  filter_class->process = test_filter_process;
  filter_class->process_ip = test_filter_process_ip;
  filter_class->finish = test_filter_finish;
  filter_class->teardown = test_filter_teardown;
}

void test_filter_init(TestFilter* self) {
  new (&self->pinned_row) PinnedBuffer();
  new (&self->host_row) std::vector<guint8>();
  self->backend = Backend::Cpu;
  self->row_bytes = 0;
}

// ---- cudafxtestgrey ----

struct TestGrey {
  GstCudaFxFilter parent;
  Backend backend;
};
struct TestGreyClass {
  GstCudaFxFilterClass parent_class;
};

GType test_grey_get_type();
G_DEFINE_TYPE(TestGrey, test_grey, GST_TYPE_CUDA_FX_FILTER)

Status test_grey_setup(GstCudaFxFilter* filter, const GstCudaFxFilterConfig& config) {
  if (config.in.format != PixelFormat::RGBA || config.out.format != PixelFormat::GRAY8 ||
      config.in.width != config.out.width || config.in.height != config.out.height)
    return Status::invalid("cudafxtestgrey: RGBA in, GRAY8 of the same size out");
  reinterpret_cast<TestGrey*>(filter)->backend = config.backend;
  return Status::ok();
}

Status test_grey_process(GstCudaFxFilter* filter, const ImageView& src, const ImageView& dst,
                         StreamHandle stream) {
  // The first `width` bytes of each row: src seen as a GRAY8 image that wide.
  ImageView narrow = src;
  narrow.desc = dst.desc;
  if (reinterpret_cast<TestGrey*>(filter)->backend == Backend::Cuda)
    return copy_image_async(dst, narrow, stream);
  for (int y = 0; y < dst.desc.height; y++)
    std::memcpy(dst.data[0] + y * dst.pitch[0], src.data[0] + y * src.pitch[0], dst.desc.width);
  return Status::ok();
}

void test_grey_teardown(GstCudaFxFilter*) {}

GstCaps* test_grey_transform_video_caps(GstCudaFxFilter*, GstPadDirection, GstCaps* caps) {
  return gst_cuda_fx_caps_free_format(gst_caps_ref(caps));
}

void test_grey_class_init(TestGreyClass* klass) {
  GstCudaFxFilterClass* filter_class = GST_CUDA_FX_FILTER_CLASS(klass);
  gst_element_class_set_static_metadata(GST_ELEMENT_CLASS(klass), "cudafx test grey",
                                        "Filter/Converter/Video",
                                        "Exercises separate format lists", "gst-cudafx tests");
  gst_cuda_fx_filter_class_add_pad_templates_full(filter_class, "{ RGBA }", "{ RGBA }", nullptr,
                                                  "{ GRAY8 }", nullptr);
  filter_class->setup = test_grey_setup;
  filter_class->process = test_grey_process;
  filter_class->teardown = test_grey_teardown;
  filter_class->transform_video_caps = test_grey_transform_video_caps;
}

void test_grey_init(TestGrey* self) { self->backend = Backend::Cpu; }

// ---- cudafxtesthostip ----

struct TestHostIp {
  GstCudaFxFilter parent;
  Backend backend;
};
struct TestHostIpClass {
  GstCudaFxFilterClass parent_class;
};

GType test_host_ip_get_type();
G_DEFINE_TYPE(TestHostIp, test_host_ip, GST_TYPE_CUDA_FX_FILTER)

Status test_host_ip_setup(GstCudaFxFilter* filter, const GstCudaFxFilterConfig& config) {
  reinterpret_cast<TestHostIp*>(filter)->backend = config.backend;
  return Status::ok();
}

Status test_host_ip_process_ip(GstCudaFxFilter* filter, const ImageView& frame,
                               StreamHandle stream) {
  return fill_row(frame.plane(0), testing_support::kInPlaceMark, stream,
                  reinterpret_cast<TestHostIp*>(filter)->backend);
}

Status test_host_ip_process_ip_host(GstCudaFxFilter*, const ImageView& frame) {
  return fill_row(frame.plane(0), testing_support::kHostMark, nullptr, Backend::Cpu);
}

void test_host_ip_teardown(GstCudaFxFilter*) {}

void test_host_ip_class_init(TestHostIpClass* klass) {
  GstCudaFxFilterClass* filter_class = GST_CUDA_FX_FILTER_CLASS(klass);
  gst_element_class_set_static_metadata(GST_ELEMENT_CLASS(klass), "cudafx test host in-place",
                                        "Filter/Video", "Exercises process_ip_host",
                                        "gst-cudafx tests");
  gst_cuda_fx_filter_class_add_pad_templates(filter_class, GST_CUDA_FX_CUDA_FORMATS,
                                             GST_CUDA_FX_SYSTEM_FORMATS);
  filter_class->setup = test_host_ip_setup;
  filter_class->process_ip = test_host_ip_process_ip;
  filter_class->process_ip_host = test_host_ip_process_ip_host;
  filter_class->teardown = test_host_ip_teardown;
}

void test_host_ip_init(TestHostIp* self) {
  self->backend = Backend::Cpu;
  gst_cuda_fx_filter_set_mode(GST_CUDA_FX_FILTER(self), GST_CUDA_FX_FILTER_MODE_IN_PLACE);
}

}  // namespace

namespace testing_support {

void register_mode_filters() {
  static gsize done = 0;
  if (g_once_init_enter(&done)) {
    gst_element_register(nullptr, "cudafxtestfilter", GST_RANK_NONE, test_filter_get_type());
    gst_element_register(nullptr, "cudafxtestgrey", GST_RANK_NONE, test_grey_get_type());
    gst_element_register(nullptr, "cudafxtesthostip", GST_RANK_NONE, test_host_ip_get_type());
    g_once_init_leave(&done, 1);
  }
}

}  // namespace testing_support
