// Test metas: an API with chosen tags whose metas carry an int and can only
// copy themselves, to see which metas an element keeps, drops or scales.
#pragma once

#include <gst/gst.h>

namespace testing_support {

// Metas of these kinds (each registered once, on first use):
const GstMetaInfo* untagged_test_meta();    // no tags: kept by every element
const GstMetaInfo* video_test_meta();       // only "video": kept by every element
const GstMetaInfo* colorspace_test_meta();  // "video" + "colorspace": dropped by our filters

// Adds a meta of `info` holding `value`.
void add_test_meta(GstBuffer* buf, const GstMetaInfo* info, int value);
// The value of the buffer's meta of `info`'s API, or -1 when it has none.
int test_meta_value(GstBuffer* buf, const GstMetaInfo* info);

}  // namespace testing_support
