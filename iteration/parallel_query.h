// ParallelForEachMatch: ForEachMatch with the pages split across TBB worker threads.
//
//   ParallelForEachMatch(pages, moving, [](Position& p, const Velocity& v) {
//     p.x += v.x; p.y += v.y; p.z += v.z;
//   }, pos, vel);
//
// Same matches as ForEachMatch; only the order differs (each page is visited in
// ascending order by one thread, pages in any order).
//
// Why there is no data race: tbb::parallel_for hands out disjoint page ranges, so each
// entity is visited by exactly one thread. The store itself is only read (mask arrays,
// data-page pointers, generations); the callback writes only the components of the
// entity it was handed, which live in that entity's own elements of per-page arrays
// no other thread touches. parallel_for returns after every task finished (a
// happens-before edge), so the caller sees all writes. The callback must not mutate
// the store, and must synchronise anything else it shares (e.g. a counter).
//
// Under ThreadSanitizer the same disjoint page ranges run on std::threads instead:
// Debian's libtbb is not TSan-instrumented, so TSan cannot see the synchronisation
// inside TBB's task pool and reports TBB's own fields as racing. On std::threads TSan
// sees every edge, so a TSan run checks this function's access pattern for real.
#ifndef STRATA_ITERATION_PARALLEL_QUERY_H_
#define STRATA_ITERATION_PARALLEL_QUERY_H_

#include <algorithm>
#include <cstddef>
#if defined(__SANITIZE_THREAD__)
#include <thread>
#include <vector>
#endif

#include "iteration/entity_pages.h"
#include "iteration/filter.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/parallel_for.h"

namespace strata {

// kParallelGrainPages: pages per task at least; 256 pages = 8192 entities, enough
// work to pay for a task (about a microsecond of scheduling).
inline constexpr size_t kParallelGrainPages = 256;

// ParallelForEachMatch: see above. O(pages * rows / lanes + matches) work split over
// TBB's worker threads; `fn` is copied into no task (taken by reference) and must be
// safe to call concurrently for different entities.
template <typename Fn, typename... Cs>
void ParallelForEachMatch(const EntityPages& pages, const Filter& filter, Fn&& fn,
                          Cs... components) {
  iteration_internal::AssertIncluded(filter, components...);
  const iteration_internal::ResolvedRows resolved =
      iteration_internal::Resolve(pages, filter);
  const MaskRows rows = resolved.rows();
#if defined(__SANITIZE_THREAD__)
  // Split whenever there are two pages, so even a small test world runs on threads.
  constexpr size_t kTsanThreads = 4;
  const size_t page_count = pages.page_capacity();
  const size_t threads = std::clamp<size_t>(page_count, 1, kTsanThreads);
  auto walk = [&](size_t t) {
    iteration_internal::ForEachMatchInRange(pages, rows, page_count * t / threads,
                                            page_count * (t + 1) / threads, fn,
                                            components...);
  };
  std::vector<std::thread> workers;
  for (size_t t = 1; t < threads; ++t) workers.emplace_back(walk, t);
  walk(0);
  for (std::thread& worker : workers) worker.join();
#else
  tbb::parallel_for(
      tbb::blocked_range<size_t>(0, pages.page_capacity(), kParallelGrainPages),
      [&](const tbb::blocked_range<size_t>& range) {
        iteration_internal::ForEachMatchInRange(pages, rows, range.begin(), range.end(),
                                                fn, components...);
      });
#endif
}

}  // namespace strata

#endif  // STRATA_ITERATION_PARALLEL_QUERY_H_
