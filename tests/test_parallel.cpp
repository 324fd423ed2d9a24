// The CPU backend's thread pool (cudafx/parallel.hpp): every index once,
// worker indices in range and never shared by two threads of one job, and
// jobs from several threads running at the same time (two encoders in one
// process must not take turns).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "cudafx/parallel.hpp"

using namespace cudafx;

TEST(ParallelFor, EveryIndexOnceWithWorkersInRange) {
  const int n = 1000;
  std::vector<std::atomic<int>> calls(n);
  std::atomic<int> bad_worker{0};
  parallel_for(n, [&](int i, int worker) {
    calls[i]++;
    if (worker < 0 || worker >= cpu_worker_count())
      bad_worker++;
  });
  for (int i = 0; i < n; i++)
    EXPECT_EQ(calls[i].load(), 1) << i;
  EXPECT_EQ(bad_worker.load(), 0);
}

TEST(ParallelFor, AWorkerIndexIsOneThreadAtATimeWithinAJob) {
  const int workers = cpu_worker_count();
  std::vector<std::atomic<int>> busy(workers);
  std::atomic<int> overlaps{0};
  for (int round = 0; round < 20; round++)
    parallel_for(4 * workers, [&](int, int worker) {
      if (busy[worker].fetch_add(1) != 0)
        overlaps++;
      volatile int spin = 0;
      for (int k = 0; k < 2000; k++)
        spin = spin + k;
      busy[worker].fetch_sub(1);
    });
  EXPECT_EQ(overlaps.load(), 0);
}

// Jobs far apart (the workers asleep by then, past their spin) and back to
// back (the workers still polling): every index once either way.
TEST(ParallelFor, JobsAfterTheWorkersSleptAndWhileTheyPoll) {
  for (int round = 0; round < 40; round++) {
    if (round % 2)  // not a synchronisation: long enough for the workers to sleep
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const int n = 3 + round;
    std::vector<std::atomic<int>> calls(n);
    parallel_for(n, [&](int i, int) { calls[i]++; });
    for (int i = 0; i < n; i++)
      ASSERT_EQ(calls[i].load(), 1) << "round " << round << " index " << i;
  }
}

// Two threads' jobs are in flight at once: each job's first item waits for
// the other job to have started. A pool that ran jobs one after the other
// would make the first wait for ever: the wait has a guard of ten seconds.
TEST(ParallelFor, JobsFromTwoThreadsRunAtTheSameTime) {
  if (cpu_worker_count() < 2)
    GTEST_SKIP() << "one hardware thread";
  std::mutex m;
  std::condition_variable cv;
  bool started[2] = {false, false};
  bool saw_other[2] = {false, false};
  auto job = [&](int me) {
    parallel_for(2, [&](int i, int) {
      if (i != 0)
        return;
      std::unique_lock<std::mutex> lk(m);
      started[me] = true;
      cv.notify_all();
      saw_other[me] = cv.wait_for(lk, std::chrono::seconds(10), [&] { return started[1 - me]; });
    });
  };
  std::thread a(job, 0), b(job, 1);
  a.join();
  b.join();
  EXPECT_TRUE(saw_other[0]);
  EXPECT_TRUE(saw_other[1]);
}

// Many threads, many small jobs: every index of every job exactly once.
TEST(ParallelFor, ManyThreadsManyJobsEveryIndexOnce) {
  const int threads = 6, jobs = 200, n = 37;
  std::vector<std::vector<std::atomic<int>>> calls(threads);
  for (auto& c : calls)
    c = std::vector<std::atomic<int>>(jobs * n);
  std::vector<std::thread> t;
  for (int k = 0; k < threads; k++)
    t.emplace_back([&, k] {
      for (int j = 0; j < jobs; j++)
        parallel_for(n, [&](int i, int) { calls[k][j * n + i]++; });
    });
  for (auto& th : t)
    th.join();
  int wrong = 0;
  for (auto& c : calls)
    for (auto& v : c)
      wrong += v.load() != 1;
  EXPECT_EQ(wrong, 0);
}

// The shares parallel_share_begin announces cover [0, count) in order,
// each contiguous, one a share, for counts smaller and larger than the
// number of shares.
TEST(ParallelFor, SharesCoverTheIndicesInOrder) {
  const int shares = parallel_share_count();
  ASSERT_GE(shares, 1);
  ASSERT_LE(shares, cpu_worker_count());
  for (int count : {1, 2, 3, 7, 35, 1000}) {
    EXPECT_EQ(parallel_share_begin(count, 0), 0) << count;
    EXPECT_EQ(parallel_share_begin(count, shares), count) << count;
    for (int k = 0; k < shares; k++)
      EXPECT_LE(parallel_share_begin(count, k), parallel_share_begin(count, k + 1)) << count;
  }
}

// Each thread runs its own share first, from its front and in order; what
// others take of a share is its tail. So a thread's list of indices begins
// with its share's first index, ascending by one while in the share, and
// every index it ran of its own share comes before any index of another.
// Whatever the timing, this holds; the items are made slow enough that the
// threads meet in each other's shares in most rounds.
TEST(ParallelFor, AThreadRunsItsOwnShareFirstInOrder) {
  const int workers = cpu_worker_count();
  const int n = 16 * workers;
  for (int round = 0; round < 20; round++) {
    std::vector<std::vector<int>> ran(workers);
    std::vector<int> owner(n, -1);
    parallel_for(n, [&](int i, int worker) {
      ran[worker].push_back(i);  // a worker index is one thread at a time
      owner[i] = worker;
      volatile int spin = 0;
      for (int k = 0; k < 1000 * (1 + i % 3); k++)
        spin = spin + k;
    });
    for (int w = 0; w < workers; w++) {
      const int k = parallel_worker_share(w);  // its own share
      const int begin = parallel_share_begin(n, k), end = parallel_share_begin(n, k + 1);
      const std::vector<int>& list = ran[w];
      size_t own = 0;
      while (own < list.size() && list[own] >= begin && list[own] < end) own++;
      for (size_t j = own; j < list.size(); j++)
        EXPECT_FALSE(list[j] >= begin && list[j] < end)
            << "round " << round << ": worker " << w << " ran " << list[j]
            << " of its share after another's";
      for (size_t j = 0; j < own; j++)
        EXPECT_EQ(list[j], begin + static_cast<int>(j))
            << "round " << round << ": worker " << w << "'s share out of order";
      // What others ran of this share is its tail, past what its owner ran.
      if (k == w)
        for (int i = begin + static_cast<int>(own); i < end; i++)
          EXPECT_NE(owner[i], w) << "round " << round << " index " << i;
    }
  }
}

// Weighted shares: each item in the share its weight's middle falls in, so
// the shares' weights are within an item of equal, and the shares cover
// [0, count) in order; zero weights fall back to the even split.
TEST(ParallelFor, WeightedSharesSplitTheWeightEvenly) {
  const int shares = parallel_share_count();
  // A frame's tile rows: 17 luma rows of 10 240 bytes, 9 + 9 chroma rows of
  // 2 560 (bikes.mp4's 640x272 I420, the last rows shorter).
  std::vector<uint64_t> weight;
  for (int r = 0; r < 17; r++) weight.push_back(640 * 16);
  for (int r = 0; r < 18; r++) weight.push_back(320 * (r % 9 == 8 ? 8 : 16));
  std::vector<uint64_t> before(1, 0);
  for (uint64_t w : weight) before.push_back(before.back() + w);
  const int count = static_cast<int>(weight.size());
  std::vector<int> first(shares + 1, -1);
  parallel_weighted_shares(before.data(), count, first.data());
  EXPECT_EQ(first[0], 0);
  EXPECT_EQ(first[shares], count);
  for (int k = 0; k < shares; k++) {
    ASSERT_LE(first[k], first[k + 1]);
    const double share = static_cast<double>(before[first[k + 1]] - before[first[k]]);
    EXPECT_NEAR(share, static_cast<double>(before[count]) / shares, 640.0 * 16)
        << "share " << k << " of " << shares;
  }
  // With two shares (the development machine): luma rows 0-12 and the
  // rest (the frame weighs 25.5 luma rows; row 12's middle, at 12.5, falls
  // before the half).
  if (shares == 2)
    EXPECT_EQ(first[1], 13);
  std::vector<uint64_t> zero(count + 1, 0);
  parallel_weighted_shares(zero.data(), count, first.data());
  for (int k = 0; k <= shares; k++) EXPECT_EQ(first[k], parallel_share_begin(count, k));
}

// parallel_for_shares runs every index of the shares it is given once, and
// a thread starts with the front of its own share, however uneven.
TEST(ParallelFor, GivenSharesRunEveryIndexOnceOwnShareFirst) {
  const int shares = parallel_share_count();
  std::vector<int> first(shares + 1);
  for (int k = 0; k <= shares; k++) first[k] = k == 0 ? 0 : first[k - 1] + 3 * k;
  const int count = first[shares];
  for (int round = 0; round < 20; round++) {
    std::vector<std::atomic<int>> calls(count);
    std::vector<std::vector<int>> ran(cpu_worker_count());
    parallel_for_shares(first.data(), [&](int i, int worker) {
      calls[i]++;
      ran[worker].push_back(i);
      volatile int spin = 0;
      for (int k = 0; k < 500; k++) spin = spin + k;
    });
    for (int i = 0; i < count; i++) ASSERT_EQ(calls[i].load(), 1) << i;
    for (int w = 0; w < cpu_worker_count(); w++)
      if (!ran[w].empty() && w < shares && first[w] < first[w + 1] &&
          ran[w][0] >= first[w] && ran[w][0] < first[w + 1])
        EXPECT_EQ(ran[w][0], first[w]) << "worker " << w << " round " << round;
  }
}
