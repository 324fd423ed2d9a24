// A small persistent thread pool for the CPU backend. Each op's CPU path
// splits its rows into bands and runs them here; the pool lives for the
// process, so a frame costs no thread creation.
#pragma once

#include <cstdint>
#include <functional>

namespace cudafx {

// Number of threads parallel_for uses (the hardware's concurrency).
int cpu_worker_count();

// Calls fn(index, worker) for every index in [0, count), spread over the
// pool; `worker` < cpu_worker_count() identifies the calling thread so that
// callers can index per-thread scratch (the caller's own: calls from other
// threads run at the same time, each with its own worker 0). Returns when
// all calls have returned. `fn` must not call parallel_for itself.
//
// The indices are dealt out in contiguous shares, one a pool thread: a
// thread runs its own share first, in order, then helps with what is left
// of the others'. So index i runs, when the threads keep pace, on the same
// thread from one call to the next, and a pass over the same items reads
// what the pass before it wrote from that core's caches.
void parallel_for(int count, const std::function<void(int index, int worker)>& fn);

// The number of shares (at most kParallelMostShares) and the first index
// of share k (0 <= k <= parallel_share_count()) of a parallel_for over
// [0, count): share k is [begin(k), begin(k + 1)).
constexpr int kParallelMostShares = 64;
int parallel_share_count();
int parallel_share_begin(int count, int k);
// The share that the thread of `worker` (as fn receives it) runs first, its
// own: work laid out in share k is run by the thread whose own share is k.
int parallel_worker_share(int worker);

// As parallel_for over [0, first[parallel_share_count()]), with the shares
// given: share k is [first[k], first[k + 1]) (first[0] = 0, non-decreasing).
// For passes whose items weigh differently (a frame's tile rows: a luma
// row is four chroma rows' bytes) but which should land on the same
// threads pass after pass.
void parallel_for_shares(const int* first, const std::function<void(int index, int worker)>& fn);

// Shares of [0, count) of about equal weight for parallel_for_shares:
// weight_before[i] (count + 1 entries, non-decreasing) is the weight of
// the items before i; an item goes to the share its weight's middle falls
// in. Writes parallel_share_count() + 1 entries of `first`.
void parallel_weighted_shares(const uint64_t* weight_before, int count, int* first);

}  // namespace cudafx
