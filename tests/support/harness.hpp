// GstHarness helpers for element tests.
#pragma once

#include <gst/check/gstharness.h>

#include <string>

#include "host_image.hpp"

namespace testing_support {

// A harness around a new `factory` element whose properties are set from
// `props` ("name=value name=\"quoted value\"", gst-launch syntax) BEFORE the harness
// starts it: gst_harness_new() starts the element at once, and properties
// read at start (backend, cuda-device-id) set afterwards are silently not
// used -- "cpu" cases then ran on the GPU wherever there was one.
GstHarness* harness_with(const char* factory, const std::string& props);

// A harness around the elements of `launch` (gst-launch syntax), fed through
// the unlinked pad named "sink" and drained through the one named "src".
// gst_harness_new_parse() takes the first unlinked sink pad it finds, which
// for a chain holding an element with a second sink pad (cudatextoverlay's
// text_sink) is that pad: video pushed there fails as not-negotiated.
GstHarness* harness_parse(const std::string& launch);

// True when the registry has an element factory of that name.
bool have_element(const char* name);

// Pushes `img` (rows padded by `pad` bytes) into the harness, pulls one
// frame and returns it at the size the harness's output negotiated, in the
// input's format. Failures are test failures.
HostImage push_pull(GstHarness* h, const HostImage& img, size_t pad = 0);

// Pushes `img` with PTS `pts` (and the DISCONT flag when asked), pulls one
// frame and returns it in the input's desc. Failures are test failures.
HostImage push_pull_at(GstHarness* h, const HostImage& img, GstClockTime pts,
                       bool discont = false);

// Sets `pipeline` (gst-launch syntax) to PLAYING, expecting it to fail, and
// returns the message of the error it posted ("" when it started or posted
// none within ten seconds; a test failure either way).
std::string start_error(const std::string& pipeline);

// 'C' when the current caps of `e`'s pad `pad_name` have memory:CUDAMemory,
// 'S' for system memory, '?' when nothing is negotiated.
char pad_memory(GstElement* e, const char* pad_name);

// The memory negotiated around the elements named g0, g1, ... of a parsed
// harness, sink then src pad each: "CS" is CUDA memory in, system memory
// out. Chains that are meant to stay on the GPU assert it: a chain that fell
// back to system memory still gives the right pixels.
std::string negotiated_memory(GstHarness* h);

// Sets both of the harness's caps to raw video of `desc` (system memory).
void set_caps(GstHarness* h, const cudafx::ImageDesc& desc);

// A flush as a flushing seek makes it (FLUSH_START, FLUSH_STOP resetting
// time, a new TIME segment), pushed into `h` (failures are test failures).
void push_flush(GstHarness* h);

}  // namespace testing_support
