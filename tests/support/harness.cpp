#include "harness.hpp"

#include <gtest/gtest.h>

#include "gst_frames.hpp"

namespace testing_support {

bool have_element(const char* name) {
  GstElementFactory* f = gst_element_factory_find(name);
  if (f)
    gst_object_unref(f);
  return f != nullptr;
}

HostImage push_pull(GstHarness* h, const HostImage& img, size_t pad) {
  HostImage out;
  EXPECT_EQ(gst_harness_push(h, buffer_from_image(img, pad)), GST_FLOW_OK);
  GstBuffer* buf = gst_harness_pull(h);
  EXPECT_NE(buf, nullptr);
  GstCaps* caps = gst_pad_get_current_caps(h->sinkpad);
  EXPECT_NE(caps, nullptr);
  if (buf && caps) {
    GstVideoInfo info;
    EXPECT_TRUE(gst_video_info_from_caps(&info, caps));
    const cudafx::ImageDesc d{img.desc().format, GST_VIDEO_INFO_WIDTH(&info),
                              GST_VIDEO_INFO_HEIGHT(&info)};
    EXPECT_TRUE(image_from_buffer(buf, d, &out));
  }
  if (caps)
    gst_caps_unref(caps);
  if (buf)
    gst_buffer_unref(buf);
  return out;
}

HostImage push_pull_at(GstHarness* h, const HostImage& img, GstClockTime pts, bool discont) {
  GstBuffer* b = buffer_from_image(img);
  GST_BUFFER_PTS(b) = pts;
  if (discont)
    GST_BUFFER_FLAG_SET(b, GST_BUFFER_FLAG_DISCONT);
  EXPECT_EQ(gst_harness_push(h, b), GST_FLOW_OK);
  GstBuffer* out = gst_harness_pull(h);
  HostImage got;
  EXPECT_TRUE(out && image_from_buffer(out, img.desc(), &got));
  if (out)
    gst_buffer_unref(out);
  return got;
}

std::string start_error(const std::string& pipeline) {
  GError* err = nullptr;
  GstElement* p = gst_parse_launch(pipeline.c_str(), &err);
  EXPECT_NE(p, nullptr) << (err ? err->message : "");
  if (err)
    g_error_free(err);
  if (!p)
    return "";
  std::string text;
  EXPECT_EQ(gst_element_set_state(p, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE) << pipeline;
  GstBus* bus = gst_element_get_bus(p);
  GstMessage* msg = gst_bus_timed_pop_filtered(bus, 10 * GST_SECOND, GST_MESSAGE_ERROR);
  EXPECT_NE(msg, nullptr) << pipeline;
  if (msg) {
    GError* gerr = nullptr;
    gst_message_parse_error(msg, &gerr, nullptr);
    text = gerr->message;
    g_error_free(gerr);
    gst_message_unref(msg);
  }
  gst_object_unref(bus);
  gst_element_set_state(p, GST_STATE_NULL);
  gst_object_unref(p);
  return text;
}

char pad_memory(GstElement* e, const char* pad_name) {
  GstPad* pad = gst_element_get_static_pad(e, pad_name);
  GstCaps* caps = pad ? gst_pad_get_current_caps(pad) : nullptr;
  char m = '?';
  if (caps && gst_caps_get_size(caps) > 0)
    m = gst_caps_features_contains(gst_caps_get_features(caps, 0), "memory:CUDAMemory") ? 'C'
                                                                                          : 'S';
  if (caps)
    gst_caps_unref(caps);
  if (pad)
    gst_object_unref(pad);
  return m;
}

GstHarness* harness_with(const char* factory, const std::string& props) {
  GstElement* e = gst_element_factory_make(factory, nullptr);
  EXPECT_NE(e, nullptr) << "no element " << factory;
  if (!e)
    return gst_harness_new("identity");
  // Split as a shell would: values may be quoted ("font-desc=\"Sans 20\"").
  gchar** pairs = nullptr;
  const std::string line = "x " + props;
  EXPECT_TRUE(g_shell_parse_argv(line.c_str(), nullptr, &pairs, nullptr)) << props;
  for (gchar** kv = pairs ? pairs + 1 : nullptr; kv && *kv; kv++) {
    gchar** nv = g_strsplit(*kv, "=", 2);
    if (nv[0] && nv[1])
      gst_util_set_object_arg(G_OBJECT(e), nv[0], nv[1]);
    g_strfreev(nv);
  }
  g_strfreev(pairs);
  GstHarness* h = gst_harness_new_with_element(e, "sink", "src");
  gst_object_unref(e);
  return h;
}

namespace {

// The pad named `name` of an element of `bin` that has no peer, or null.
GstPad* unlinked_pad_named(GstBin* bin, const char* name) {
  GstPad* found = nullptr;
  GstIterator* it = gst_bin_iterate_elements(bin);
  GValue v = G_VALUE_INIT;
  while (!found && gst_iterator_next(it, &v) == GST_ITERATOR_OK) {
    GstPad* pad = gst_element_get_static_pad(GST_ELEMENT(g_value_get_object(&v)), name);
    if (pad && !gst_pad_is_linked(pad))
      found = pad;
    else if (pad)
      gst_object_unref(pad);
    g_value_reset(&v);
  }
  g_value_unset(&v);
  gst_iterator_free(it);
  return found;
}

}  // namespace

GstHarness* harness_parse(const std::string& launch) {
  GError* err = nullptr;
  GstElement* bin = gst_parse_bin_from_description(launch.c_str(), FALSE, &err);
  EXPECT_NE(bin, nullptr) << launch << ": " << (err ? err->message : "");
  if (err)
    g_error_free(err);
  if (!bin)
    return gst_harness_new("identity");
  for (const char* name : {"sink", "src"}) {
    GstPad* pad = unlinked_pad_named(GST_BIN(bin), name);
    EXPECT_NE(pad, nullptr) << launch << " has no unlinked pad named " << name;
    if (pad) {
      gst_element_add_pad(bin, gst_ghost_pad_new(name, pad));
      gst_object_unref(pad);
    }
  }
  GstHarness* h = gst_harness_new_with_element(bin, "sink", "src");
  gst_object_unref(bin);
  return h;
}

std::string negotiated_memory(GstHarness* h) {
  std::string m;
  for (int i = 0;; i++) {
    GstElement* e = gst_bin_get_by_name(GST_BIN(h->element), ("g" + std::to_string(i)).c_str());
    if (!e)
      break;
    m += pad_memory(e, "sink");
    m += pad_memory(e, "src");
    gst_object_unref(e);
  }
  return m;
}

void set_caps(GstHarness* h, const cudafx::ImageDesc& desc) {
  const std::string caps = caps_string(desc);
  gst_harness_set_caps_str(h, caps.c_str(), caps.c_str());
}

void push_flush(GstHarness* h) {
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_flush_start()));
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_flush_stop(TRUE)));
  GstSegment segment;
  gst_segment_init(&segment, GST_FORMAT_TIME);
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_segment(&segment)));
}

}  // namespace testing_support
