// A small persistent thread pool for the CPU backend. Each op's CPU path
// splits its rows into bands and runs them here; the pool lives for the
// process, so a frame costs no thread creation.
#pragma once

#include <functional>

namespace cudafx {

// Number of threads parallel_for uses (the hardware's concurrency).
int cpu_worker_count();

// Calls fn(index, worker) for every index in [0, count), spread over the
// pool; `worker` < cpu_worker_count() identifies the calling thread so that
// callers can index per-thread scratch (the caller's own: calls from other
// threads run at the same time, each with its own worker 0). Returns when
// all calls have returned. `fn` must not call parallel_for itself.
void parallel_for(int count, const std::function<void(int index, int worker)>& fn);

}  // namespace cudafx
