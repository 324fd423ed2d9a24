// examples/delta_rtsp_server with four clients on 127.0.0.1 (issue #18,
// item 3): the server program is started as a user would start it, serving
// videotestsrc's ball (a frame is a function of its number, so the test
// renders the same frames itself as the oracle) through one shared encoder
// with a keyframe every 90 frames. Clients
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
// frames are checked against the threshold only). A UDP client that loses a
// frame gets a keyframe through RTCP PLI (a test of its own below).
#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
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

// The server program (CUDAFX_RTSP_SERVER, set by meson) serving the ball with
// a keyframe every `key_int_max` frames, and the URL it printed; nullptr,
// with a failure added, when it is not there or printed no URL.
std::unique_ptr<ServerProcess> start_server(const char* key_int_max, std::string* url,
                                            bool intra_refresh = false) {
  const char* program = std::getenv("CUDAFX_RTSP_SERVER");
  if (!program || !*program) {
    ADD_FAILURE() << "CUDAFX_RTSP_SERVER (set by meson) names no program";
    return nullptr;
  }
  std::vector<std::string> args{
      program, "--port", "0", "--threshold", std::to_string(kThreshold), "--key-int-max",
      key_int_max, "--source",
      std::string("videotestsrc is-live=true pattern=ball animation-mode=frames ! ") + kRaw};
  if (intra_refresh)
    args.push_back("--intra-refresh");
  auto server = std::make_unique<ServerProcess>(args);
  *url = server->first_line(20);
  if (url->rfind("rtsp://127.0.0.1:", 0) != 0) {
    ADD_FAILURE() << "the server printed \"" << *url << "\"";
    return nullptr;
  }
  return server;
}

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
                             " latency=20 ! rtpgstdepay ! cudadeltadec name=dec ! "
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
  // Loses the next encoded frame on its way into the decoder, as a lost
  // packet would (rtpgstdepay drops a frame that misses one): the probe
  // drops one buffer, then removes itself at the next.
  void lose_next_frame() {
    GstElement* dec = gst_bin_get_by_name(GST_BIN(pipeline), "dec");
    ASSERT_NE(dec, nullptr);
    GstPad* pad = gst_element_get_static_pad(dec, "sink");
    gst_pad_add_probe(
        pad, GST_PAD_PROBE_TYPE_BUFFER,
        [](GstPad*, GstPadProbeInfo*, gpointer dropped) {
          bool* d = static_cast<bool*>(dropped);
          if (*d)
            return GST_PAD_PROBE_REMOVE;
          *d = true;
          return GST_PAD_PROBE_DROP;
        },
        new bool(false), [](gpointer d) { delete static_cast<bool*>(d); });
    gst_object_unref(pad);
    gst_object_unref(dec);
  }
};

}  // namespace

TEST(DeltaRtspServer, FourClientsJoiningLateEachDecodeWithinTheThresholdAndInSync) {
  const auto refs = reference_frames();
  ASSERT_EQ(refs.size(), static_cast<size_t>(kReferenceFrames));
  std::string url;
  const auto server = start_server("90", &url);
  ASSERT_TRUE(server);

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

// A UDP client that loses a frame recovers at once, with no periodic
// keyframes at all (key-int-max=0): its decoder's keyframe request goes
// upstream as a GstForceKeyUnit, which the client's rtpsession sends as an
// RTCP PLI because the server's SDP offers "a=rtcp-fb:96 nack pli"; the
// server's rtpsession turns the PLI into a keyframe request to the shared
// encoder. Before the server offered PLI the request died in rtspsrc's
// udpsrc and this client decoded nothing after the loss.
TEST(DeltaRtspServer, UdpClientThatLosesAFrameGetsAKeyframeThroughRtcpPli) {
  const auto refs = reference_frames();
  ASSERT_EQ(refs.size(), static_cast<size_t>(kReferenceFrames));
  std::string url;
  const auto server = start_server("0", &url);
  ASSERT_TRUE(server);

  Client client(url, "udp", 0);
  // RTCP feedback may go early (at once) only after the first regular
  // report (RFC 4585 3.5.2; rtpsession sends it 1.25 to 3.75 s after the
  // start): a loss before it waits for that report. 150 frames are 5 s.
  while (client.index.size() < 150)
    ASSERT_TRUE(client.take(refs, 20)) << "stalled before the loss";
  client.lose_next_frame();
  const size_t before = client.index.size();
  while (client.index.size() < before + 30)
    ASSERT_TRUE(client.take(refs, 20))
        << "no frame for 20 s after the loss, " << client.index.size() - before << " after it";

  int largest_gap = 0;
  for (size_t n = 0; n < client.index.size(); n++) {
    ASSERT_GE(client.index[n], 0) << "frame " << n << ": within the threshold of no source frame";
    if (n > 0)
      largest_gap = std::max(largest_gap, client.index[n] - client.index[n - 1]);
  }
  EXPECT_GE(largest_gap, 2) << "no frame was lost";
  printf("frames missed after the loss of one: %d\n", largest_gap - 1);
  // early feedback: the keyframe comes a frame or two after the loss (the
  // decoder asks again every half second, were the first request lost)
  EXPECT_LE(largest_gap, kRefreshFrames) << "frames missed between the loss and the keyframe";
}

// Bad arguments end the program at start with a message, before any client
// comes: a number out of range or not a number, a source that cannot be
// built (gst-rtsp-server alone would find it only when the first client
// asks).
// --intra-refresh: no keyframe for a joining client and none periodic; a
// late client (TCP) and one that loses a frame (UDP) are whole again within
// the payloader's next config (every second) plus one sweep (key-int-max
// 30), every frame within the threshold.
TEST(DeltaRtspServer, IntraRefreshServerNeedsNoKeyframeForLateOrLossyClients) {
  const auto refs = reference_frames();
  ASSERT_EQ(refs.size(), static_cast<size_t>(kReferenceFrames));
  std::string url;
  const auto server = start_server("30", &url, true);
  ASSERT_TRUE(server);
  Client first(url, "tcp", 0);
  while (first.index.size() < 10)
    ASSERT_TRUE(first.take(refs, 20)) << first.name << " stalled";
  const int joined = first.latest(refs);
  Client late(url, "udp", 1);
  // Keyframes reaching the late client's decoder: none, since the stream's
  // first (sent before it joined).
  auto* keyframes = new std::atomic<int>(0);
  {
    GstElement* dec = gst_bin_get_by_name(GST_BIN(late.pipeline), "dec");
    ASSERT_NE(dec, nullptr);
    GstPad* pad = gst_element_get_static_pad(dec, "sink");
    gst_pad_add_probe(
        pad, GST_PAD_PROBE_TYPE_BUFFER,
        [](GstPad*, GstPadProbeInfo* info, gpointer count) {
          if (!GST_BUFFER_FLAG_IS_SET(GST_PAD_PROBE_INFO_BUFFER(info), GST_BUFFER_FLAG_DELTA_UNIT))
            ++*static_cast<std::atomic<int>*>(count);
          return GST_PAD_PROBE_OK;
        },
        keyframes, [](gpointer c) { delete static_cast<std::atomic<int>*>(c); });
    gst_object_unref(pad);
    gst_object_unref(dec);
  }
  while (late.index.size() < 10)
    ASSERT_TRUE(late.take(refs, 20)) << late.name << " stalled";
  EXPECT_LE(late.index[0] - joined, 2 * kRefreshFrames)
      << "started at source frame " << late.index[0] << ", joined at " << joined;
  late.lose_next_frame();
  int largest_gap = 0;
  while (late.index.size() < 80) {
    ASSERT_TRUE(late.take(refs, 20)) << late.name << " stalled after the loss";
    const size_t n = late.index.size();
    if (late.index[n - 1] >= 0 && late.index[n - 2] >= 0)
      largest_gap = std::max(largest_gap, late.index[n - 1] - late.index[n - 2]);
  }
  for (const Client* c : {&first, &late})
    for (size_t n = 0; n < c->index.size(); n++)
      ASSERT_GE(c->index[n], 0) << c->name << ", frame " << n
                                << ": within the threshold of no source frame";
  EXPECT_GE(largest_gap, 2) << "the loss cost no frame";
  EXPECT_LE(largest_gap, kRefreshFrames + 1) << "frames missed between the loss and whole";
  EXPECT_EQ(keyframes->load(), 0) << "keyframes reached the late client";
}

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
