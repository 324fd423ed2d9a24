#include "cudafx/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace cudafx {
namespace {

// Workers sleep on a condition variable between jobs. A job is one
// parallel_for call; the caller takes part as worker 0, so the pool holds
// cpu_worker_count() - 1 threads. Calls from several threads are serialised.
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

  void run(int count, const std::function<void(int, int)>& fn) {
    std::lock_guard<std::mutex> job_lock(job_m_);
    {
      std::lock_guard<std::mutex> lk(m_);
      fn_ = &fn;
      count_ = count;
      next_.store(0);
      active_ = n_ - 1;
      generation_++;
    }
    cv_.notify_all();
    work(0);
    std::unique_lock<std::mutex> lk(m_);
    done_cv_.wait(lk, [this] { return active_ == 0; });
    fn_ = nullptr;
  }

 private:
  void work(int worker) {
    for (;;) {
      const int i = next_.fetch_add(1);
      if (i >= count_)
        break;
      (*fn_)(i, worker);
    }
  }
  void loop(int worker) {
    unsigned seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lk(m_);
        cv_.wait(lk, [&] { return quit_ || generation_ != seen; });
        if (quit_)
          return;
        seen = generation_;
      }
      work(worker);
      {
        std::lock_guard<std::mutex> lk(m_);
        if (--active_ == 0)
          done_cv_.notify_one();
      }
    }
  }

  const int n_;
  std::vector<std::thread> threads_;
  std::mutex job_m_, m_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(int, int)>* fn_ = nullptr;
  int count_ = 0;
  std::atomic<int> next_{0};
  int active_ = 0;
  unsigned generation_ = 0;
  bool quit_ = false;
};

Pool& pool() {
  static Pool p(std::max(1u, std::thread::hardware_concurrency()));
  return p;
}

}  // namespace

int cpu_worker_count() { return pool().size(); }

void parallel_for(int count, const std::function<void(int, int)>& fn) {
  if (count <= 0)
    return;
  if (count == 1 || cpu_worker_count() == 1) {
    for (int i = 0; i < count; i++)
      fn(i, 0);
    return;
  }
  pool().run(count, fn);
}

}  // namespace cudafx
