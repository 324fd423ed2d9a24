#include "cudafx/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace cudafx {
namespace {

// How long a thread polls before it sleeps: a worker for the next job, a
// caller for its job's last items. A frame of the delta encoder is five to
// six jobs a millisecond apart, and a sleep and a wake-up between them had
// cost the CPU encoder 5-15 % of its frames/s on two cores (bikes.mp4).
// At most kMostSpinners workers poll at a time (the others sleep at once),
// so that on a machine of many cores the polling costs a few threads'
// time, not every core's, between jobs and after a frame's last.
// 200 us, not 50 (session 27): the gap between two frames of the encoder
// element (the pipeline's own work) often outlasted 50 us, and a worker
// woken from its sleep at the next frame's first job had cost, on the
// development machine's virtual CPUs, up to a quarter to a third of the
// element's frames/s in whole benchmark passes (bench_delta_clip, bikes.mp4
// at T = 4: 1 231-1 252 frames/s against 1 670-1 749 with 200 us, three
// rounds interleaved). The price: after a stream's frames, or between the
// frames of a 30 frames/s stream, two threads poll 200 us (~1 % of a
// core each at 30 frames/s).
constexpr std::chrono::microseconds kSpin{200};
constexpr int kMostSpinners = 2;
// But not while the machine's host multiplexes this machine's CPUs
// (session 28): a shared VM's virtual CPUs at times take turns on fewer
// physical ones (two threads' ping-pong then took 0.6-75 us a round trip,
// not 0.17), and a worker polling for the next job then holds a physical
// CPU that the caller needs for the work between jobs. In that state the
// library's encode loop on bikes.mp4 at T = 10 read 926 frames/s with
// 200 us of polling for the next job, 1 196 with 20 us; 2 000 us read
// 705 (a caller's wait for its job's last items was better left at
// 200). A poll that finds itself descheduled (kDescheduled between two of
// its checks, each 64 pauses apart) marks the pool contended for
// kContendedFor, and meanwhile a worker polls for the next job only
// kContendedSpin before it sleeps (1 163 frames/s in that state).
constexpr std::chrono::microseconds kContendedSpin{20};
constexpr std::chrono::microseconds kDescheduled{25};
constexpr std::chrono::milliseconds kContendedFor{1000};

// The share a worker runs first, its own, of a job in `shares` shares.
inline int own_share(int worker, int shares) { return worker % shares; }

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Workers sleep on a condition variable between jobs. A job is one
// parallel_for call; its caller takes part as worker 0, so the pool holds
// cpu_worker_count() - 1 threads. Jobs from several threads run at the same
// time: an idle worker takes items from the oldest job that has some left.
// (Serialising them, as this pool first did, made two encoders in one
// process -- two cameras -- take turns on a 32-core machine whose every
// frame used 16 of the cores.) Within a job every participant has its own
// worker index; two jobs may both have a worker 0 (their callers), which is
// safe because a job's per-worker scratch is its caller's.
class Pool {
 public:
  explicit Pool(int n) : n_(n) {
    for (int i = 1; i < n_; i++)
      threads_.emplace_back([this, i] { loop(i); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lk(m_);
      quit_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_)
      t.join();
  }
  int size() const { return n_; }

  // Runs fn over [0, first[shares]), share k being [first[k], first[k + 1]).
  void run(const int* first, int shares, const std::function<void(int, int)>& fn) {
    Job job(fn, first, shares);
    bool wake;
    {
      std::lock_guard<std::mutex> lk(m_);
      jobs_.push_back(&job);
      wake = sleepers_ > 0;
    }
    posted_.fetch_add(1, std::memory_order_release);
    if (wake)
      cv_.notify_all();
    const int finished = job.work(0);
    {
      std::lock_guard<std::mutex> lk(m_);
      job.done += finished;
    }
    // Spin a while before sleeping: the workers finish the job's last items
    // within microseconds, far sooner than a sleep and a wake-up take.
    spin_until([&] { return job.complete(); }, false);
    std::unique_lock<std::mutex> lk(m_);
    // Every item returned, and no worker still holds the job.
    done_cv_.wait(lk, [&] { return job.complete(); });
    jobs_.erase(std::find(jobs_.begin(), jobs_.end(), &job));
  }

 private:
  // A job's items are dealt out in shares, one per pool thread, each a
  // contiguous run: a thread runs its own share from the front, then takes
  // what is left of the others' from their backs. Item i of a job thus
  // runs, in the common case, on the same thread from one call to the next
  // (a frame's tile rows, its lanes, the next frame's rows), so the bytes a
  // pass writes are read by the next pass, and the next frame, from the
  // same core's caches rather than moved between cores.
  struct Job {
    Job(const std::function<void(int, int)>& f, const int* first, int shares)
        : fn(f), count(first[shares]), n_shares(shares) {
      for (int k = 0; k < n_shares; k++)
        share[k].v.store(pack(first[k], first[k + 1]), std::memory_order_relaxed);
    }
    const std::function<void(int, int)>& fn;
    const int count;
    const int n_shares;
    // Each share's [front, back) as front << 32 | back, on cache lines of
    // its own (128 bytes: the pair of lines a core's prefetcher fetches
    // together): side by side, every take by one thread moved the line
    // from under the other's next take (about 1 % on the delta encoder's
    // loop with the VM's two CPUs far apart, session 30).
    struct alignas(128) Share {
      std::atomic<uint64_t> v;
    };
    Share share[kParallelMostShares];
    std::atomic<int> done{0};     // items returned (written under m_)
    std::atomic<int> workers{0};  // pool threads working on it (written under m_)
    static uint64_t pack(uint32_t front, uint32_t back) { return uint64_t{front} << 32 | back; }
    bool has_items() const {
      for (int k = 0; k < n_shares; k++) {
        const uint64_t v = share[k].v.load(std::memory_order_relaxed);
        if ((v >> 32) < (v & 0xffffffffu))
          return true;
      }
      return false;
    }
    bool complete() const {
      return done.load(std::memory_order_acquire) == count &&
             workers.load(std::memory_order_acquire) == 0;
    }
    // Takes the next item of share k, from its front or (another thread's
    // share) its back; -1 when the share is empty.
    int take(int k, bool front) {
      uint64_t v = share[k].v.load(std::memory_order_relaxed);
      for (;;) {
        const uint32_t f = static_cast<uint32_t>(v >> 32), b = static_cast<uint32_t>(v);
        if (f >= b)
          return -1;
        const uint64_t next = front ? pack(f + 1, b) : pack(f, b - 1);
        if (share[k].v.compare_exchange_weak(v, next, std::memory_order_relaxed))
          return static_cast<int>(front ? f : b - 1);
      }
    }
    // Runs items until none is left; how many it ran.
    int work(int worker) {
      int n = 0;
      const int own = own_share(worker, n_shares);
      for (int i = take(own, true); i >= 0; i = take(own, true), n++)
        fn(i, worker);
      for (int d = 1; d < n_shares; d++) {
        const int k = (own + d) % n_shares;
        for (int i = take(k, false); i >= 0; i = take(k, false), n++)
          fn(i, worker);
      }
      return n;
    }
  };

  // Polls `ready` for up to kSpin (kContendedSpin where `yields` and the
  // pool is contended); whether it became true.
  template <class Ready>
  bool spin_until(Ready ready, bool yields) {
    using Clock = std::chrono::steady_clock;
    Clock::time_point last = Clock::now();
    const bool contended = yields && last.time_since_epoch().count() <
                                         contended_until_.load(std::memory_order_relaxed);
    const Clock::time_point until = last + (contended ? kContendedSpin : kSpin);
    for (int i = 0;; i++) {
      if (ready())
        return true;
      if ((i & 63) == 63) {
        const Clock::time_point now = Clock::now();
        if (now - last >= kDescheduled) {
          contended_until_.store((now + kContendedFor).time_since_epoch().count(),
                                 std::memory_order_relaxed);
          if (yields)
            return false;
        }
        if (now >= until)
          return false;
        last = now;
      }
      cpu_relax();
    }
  }

  Job* job_with_items() const {
    for (Job* j : jobs_)
      if (j->has_items())
        return j;
    return nullptr;
  }

  void loop(int worker) {
    uint64_t seen = posted_.load(std::memory_order_acquire);
    for (;;) {
      // A job posted while this worker spins is taken without a sleep.
      if (spinners_.fetch_add(1) < kMostSpinners)
        spin_until([&] { return posted_.load(std::memory_order_acquire) != seen; }, true);
      spinners_.fetch_sub(1);
      Job* job = nullptr;
      {
        std::unique_lock<std::mutex> lk(m_);
        seen = posted_.load(std::memory_order_acquire);
        job = job_with_items();
        if (!job) {
          sleepers_++;
          cv_.wait(lk, [&] { return quit_ || (job = job_with_items()) != nullptr; });
          sleepers_--;
          seen = posted_.load(std::memory_order_acquire);
        }
        if (quit_)
          return;
        job->workers++;
      }
      const int finished = job->work(worker);
      {
        std::lock_guard<std::mutex> lk(m_);
        job->done += finished;
        job->workers--;
        if (job->done == job->count && job->workers == 0)
          done_cv_.notify_all();
      }
    }
  }

  const int n_;
  std::vector<std::thread> threads_;
  std::mutex m_;
  std::condition_variable cv_, done_cv_;
  std::vector<Job*> jobs_;  // running, oldest first (under m_)
  bool quit_ = false;
  int sleepers_ = 0;  // workers waiting on cv_ (under m_)
  std::atomic<uint64_t> posted_{0};  // jobs posted so far
  std::atomic<int> spinners_{0};     // workers polling for the next job
  // Until when (steady_clock ticks) the pool counts as contended.
  std::atomic<std::chrono::steady_clock::rep> contended_until_{0};
};

Pool& pool() {
  static Pool p(std::max(1u, std::thread::hardware_concurrency()));
  return p;
}

}  // namespace

int cpu_worker_count() { return pool().size(); }

int parallel_share_count() { return std::min(cpu_worker_count(), kParallelMostShares); }

int parallel_worker_share(int worker) { return own_share(worker, parallel_share_count()); }

int parallel_share_begin(int count, int k) {
  return static_cast<int>(static_cast<int64_t>(count) * k / parallel_share_count());
}

void parallel_for_shares(const int* first, const std::function<void(int, int)>& fn) {
  const int shares = parallel_share_count(), count = first[shares];
  if (count <= 0)
    return;
  if (count == 1 || cpu_worker_count() == 1) {
    for (int i = 0; i < count; i++)
      fn(i, 0);
    return;
  }
  pool().run(first, shares, fn);
}

namespace {
// parallel_for's shares: [0, count) split evenly.
void even_shares(int count, int* first) {
  for (int k = 0; k <= parallel_share_count(); k++) first[k] = parallel_share_begin(count, k);
}
}  // namespace

void parallel_for(int count, const std::function<void(int, int)>& fn) {
  int first[kParallelMostShares + 1];
  even_shares(count, first);
  parallel_for_shares(first, fn);
}

void parallel_weighted_shares(const uint64_t* weight_before, int count, int* first) {
  const int shares = parallel_share_count();
  const uint64_t total = weight_before[count];
  if (total == 0) {
    even_shares(count, first);
    return;
  }
  // Item i's middle, 2 * before + weight = before(i) + before(i + 1), falls
  // in share k where middle * shares >= 2 * total * k. (Weights are bytes
  // or symbols: far below 2^56 / kParallelMostShares.)
  int k = 1;
  first[0] = 0;
  for (int i = 0; i < count && k < shares; i++) {
    const uint64_t middle = weight_before[i] + weight_before[i + 1];
    while (k < shares && middle * shares >= 2 * total * k) first[k++] = i;
  }
  while (k <= shares) first[k++] = count;
}

}  // namespace cudafx
