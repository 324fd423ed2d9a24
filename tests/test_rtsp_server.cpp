// examples/delta_rtsp_server with four clients on 127.0.0.1 (issue #18,
// item 3): the server program is started as a user would start it, serving
// videotestsrc's ball (a frame is a function of its number, so the test
// renders the same frames itself as the oracle) through one shared encoder
// with a keyframe every 90 frames (3 s: the recovery of a UDP client that
// loses a packet, since its keyframe requests do not reach the encoder
// through RTSP yet). Clients
// `rtspsrc ! rtpgstdepay ! cudadeltadec ! appsink` join one after another,
// each when the one before has decoded ten frames. Every client:
//  - decodes every frame within the threshold of the source frame it is;
//  - is in sync within one refresh period of joining: its first frame is at
//    most 30 frames (one second) behind where the first client was when it
//    joined -- without the keyframe the server sends each client that plays,
//    a late client would wait for the next periodic one, up to 90 frames
//    (checked with key-int-max=0 and the join keyframe left out: the second
//    client stalls);
//  - (over TCP) gets consecutive source frames, none skipped or repeated.
// The fourth client takes UDP (loss on loopback is possible, if rare: its
// frames are checked against the threshold only).
#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "support/gst_env.hpp"
#include "support/gst_frames.hpp"
#include "support/host_image.hpp"

using namespace cudafx;
using namespace testing_support;

namespace {

constexpr int kThreshold = 4;
constexpr int kRefreshFrames = 30;  // one second at 30 frames/s
constexpr int kReferenceFrames = 450;
const ImageDesc kDesc{PixelFormat::I420, 320, 240};
const char* const kRaw = "video/x-raw,format=I420,width=320,height=240,framerate=30/1";

// The server program, started with its arguments; stopped (SIGTERM) and
// reaped by the destructor.
class ServerProcess {
 public:
  explicit ServerProcess(const std::vector<std::string>& args) {
    std::vector<char*> argv;
    for (const std::string& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    GError* err = nullptr;
    int out = -1;
    if (!g_spawn_async_with_pipes(nullptr, argv.data(), nullptr, G_SPAWN_DO_NOT_REAP_CHILD, nullptr,
                                  nullptr, &pid_, nullptr, &out, nullptr, &err)) {
      ADD_FAILURE() << "cannot start " << args[0] << ": " << (err ? err->message : "?");
      g_clear_error(&err);
      return;
    }
    out_ = fdopen(out, "r");
  }
  ~ServerProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      int status = 0;
      waitpid(pid_, &status, 0);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
          << "the server did not end cleanly on SIGTERM (status " << status << ")";
      g_spawn_close_pid(pid_);
    }
    if (out_)
      fclose(out_);
  }
  // The first line the program prints (its URL); "" when it printed none
  // within `seconds` (a guard) or ended.
  std::string first_line(int seconds) {
    if (!out_)
      return "";
    pollfd p{fileno(out_), POLLIN, 0};
    if (poll(&p, 1, seconds * 1000) <= 0)
      return "";
    char line[512];
    if (!fgets(line, sizeof line, out_))
      return "";
    std::string s = line;
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
      s.pop_back();
    return s;
  }

 private:
  GPid pid_ = 0;
  FILE* out_ = nullptr;
};

// The source's frames, rendered here by the same element and settings.
std::vector<HostImage> reference_frames() {
  std::vector<HostImage> frames;
  GstElement* p = gst_parse_launch(
      ("videotestsrc pattern=ball animation-mode=frames num-buffers=" +
       std::to_string(kReferenceFrames) + " ! " + kRaw + " ! appsink name=sink sync=false")
          .c_str(),
      nullptr);
  EXPECT_NE(p, nullptr);
  if (!p)
    return frames;
  GstElement* sink = gst_bin_get_by_name(GST_BIN(p), "sink");
  gst_element_set_state(p, GST_STATE_PLAYING);
  while (GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 10 * GST_SECOND)) {
    frames.emplace_back();
    EXPECT_TRUE(image_from_buffer(gst_sample_get_buffer(s), kDesc, &frames.back()));
    gst_sample_unref(s);
  }
  gst_element_set_state(p, GST_STATE_NULL);
  gst_object_unref(sink);
  gst_object_unref(p);
  return frames;
}

// True when every byte of `a` is within `t` of `b`'s (stops at the first
// that is not).
bool within(const ImageView& a, const ImageView& b, int t) {
  const FormatInfo& fi = format_info(a.desc.format);
  for (int p = 0; p < fi.n_planes; p++) {
    const PlaneView x = a.plane(p), y = b.plane(p);
    const int row = x.width * fi.planes[p].channels;
    for (int r = 0; r < x.height; r++)
      for (int c = 0; c < row; c++)
        if (std::abs(x.data[r * x.pitch + c] - y.data[r * y.pitch + c]) > t)
          return false;
  }
  return true;
}

struct Client {
  std::string name;
  GstElement* pipeline = nullptr;
  GstElement* sink = nullptr;
  std::vector<int> index;  // the source frame each decoded frame is (-1: none)

  Client(const std::string& url, const char* protocol, int n) : name("client " + std::to_string(n)) {
    const std::string desc = "rtspsrc location=" + url + " protocols=" + protocol +
                             " latency=20 ! rtpgstdepay ! cudadeltadec ! "
                             "appsink name=sink sync=false max-buffers=100000";
    pipeline = gst_parse_launch(desc.c_str(), nullptr);
    EXPECT_NE(pipeline, nullptr) << desc;
    sink = gst_bin_get_by_name(GST_BIN(pipeline), "sink");
    EXPECT_NE(gst_element_set_state(pipeline, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
  }
  ~Client() {
    gst_element_set_state(pipeline, GST_STATE_NULL);
    gst_object_unref(sink);
    gst_object_unref(pipeline);
  }
  // Takes one decoded frame (waiting up to `seconds`, a guard; 0: only one
  // already there) and finds which source frame it is: the one after the
  // previous frame's when that one matches, else any. False when none came.
  bool take(const std::vector<HostImage>& refs, int seconds) {
    GstSample* s = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), seconds * GST_SECOND);
    if (!s)
      return false;
    HostImage got;
    EXPECT_TRUE(image_from_buffer(gst_sample_get_buffer(s), kDesc, &got)) << name;
    gst_sample_unref(s);
    int found = -1;
    const int next = index.empty() || index.back() < 0 ? -1 : index.back() + 1;
    if (next >= 0 && next < static_cast<int>(refs.size()) &&
        within(got.view(), refs[next].view(), kThreshold))
      found = next;
    for (int i = 0; found < 0 && i < static_cast<int>(refs.size()); i++)
      if (within(got.view(), refs[i].view(), kThreshold))
        found = i;
    index.push_back(found);
    return true;
  }
  int latest(const std::vector<HostImage>& refs) {
    while (take(refs, 0)) {
    }
    return index.empty() ? -1 : index.back();
  }
};

}  // namespace

TEST(DeltaRtspServer, FourClientsJoiningLateEachDecodeWithinTheThresholdAndInSync) {
  const char* program = std::getenv("CUDAFX_RTSP_SERVER");
  ASSERT_TRUE(program && *program) << "CUDAFX_RTSP_SERVER (set by meson) names no program";
  const auto refs = reference_frames();
  ASSERT_EQ(refs.size(), static_cast<size_t>(kReferenceFrames));
  ServerProcess server({program, "--port", "0", "--threshold", std::to_string(kThreshold),
                        "--key-int-max", "90", "--source",
                        std::string("videotestsrc is-live=true pattern=ball animation-mode=frames ! ") +
                            kRaw});
  const std::string url = server.first_line(20);
  ASSERT_EQ(url.rfind("rtsp://127.0.0.1:", 0), 0u) << "the server printed \"" << url << "\"";

  std::vector<std::unique_ptr<Client>> clients;
  std::vector<int> first_at_join(4, -1);  // client 0's frame when each joined
  for (int k = 0; k < 4; k++) {
    if (k > 0) {
      // the one before has decoded ten frames: join now
      while (static_cast<int>(clients[k - 1]->index.size()) < 10)
        ASSERT_TRUE(clients[k - 1]->take(refs, 20)) << clients[k - 1]->name << " stalled";
      first_at_join[k] = clients[0]->latest(refs);
    }
    clients.push_back(std::make_unique<Client>(url, k == 3 ? "udp" : "tcp", k));
  }
  for (auto& c : clients)
    while (c->index.size() < 30)
      ASSERT_TRUE(c->take(refs, 20)) << c->name << " stalled after " << c->index.size();

  for (int k = 0; k < 4; k++) {
    const Client& c = *clients[k];
    for (size_t n = 0; n < c.index.size(); n++)
      ASSERT_GE(c.index[n], 0) << c.name << ", frame " << n
                               << ": within the threshold of no source frame";
    if (k > 0) {
      EXPECT_LE(c.index[0] - first_at_join[k], kRefreshFrames)
          << c.name << " started at source frame " << c.index[0] << ", joined at "
          << first_at_join[k];
    }
    if (k < 3) {
      for (size_t n = 1; n < c.index.size(); n++)
        EXPECT_EQ(c.index[n], c.index[n - 1] + 1) << c.name << ", frame " << n;
    }
  }
}

// Bad arguments end the program at start with a message, before any client
// comes: a number out of range or not a number, a source that cannot be
// built (gst-rtsp-server alone would find it only when the first client
// asks).
TEST(DeltaRtspServer, BadArgumentsFailAtStartWithAMessage) {
  const char* program = std::getenv("CUDAFX_RTSP_SERVER");
  ASSERT_TRUE(program && *program) << "CUDAFX_RTSP_SERVER (set by meson) names no program";
  struct Case {
    std::vector<std::string> args;
    const char* says;
  };
  const Case cases[] = {
      {{"--threshold", "256"}, "usage:"},
      {{"--threshold", "4x"}, "usage:"},
      {{"--key-int-max", "-1"}, "usage:"},
      {{"--seconds", "soon"}, "usage:"},
      {{"--mount", "cam"}, "usage:"},
      {{"--source", "nosuchelement"}, "the pipeline cannot be built: no element \"nosuchelement\""},
  };
  for (const Case& c : cases) {
    std::vector<char*> argv{const_cast<char*>(program)};
    const std::vector<std::string> args = [&] {
      // --seconds 5 first: a program that wrongly starts ends anyway, with 0
      std::vector<std::string> a{"--port", "0", "--seconds", "5"};
      a.insert(a.end(), c.args.begin(), c.args.end());
      return a;
    }();
    for (const std::string& a : args)
      argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    gchar* err_text = nullptr;
    gint status = 0;
    GError* err = nullptr;
    ASSERT_TRUE(g_spawn_sync(nullptr, argv.data(), nullptr, G_SPAWN_STDOUT_TO_DEV_NULL, nullptr,
                             nullptr, nullptr, &err_text, &status, &err))
        << (err ? err->message : "");
    EXPECT_FALSE(g_spawn_check_wait_status(status, nullptr)) << c.args[0] << " " << c.args[1];
    EXPECT_NE(std::string(err_text ? err_text : "").find(c.says), std::string::npos)
        << c.args[0] << " " << c.args[1] << ": " << (err_text ? err_text : "");
    g_free(err_text);
  }
}
