// ParallelFor: a loop over [0, n) split into disjoint ranges that run on several
// threads, on oneTBB (Debian's libtbb), for the packages that walk large arrays in
// parallel (iteration/parallel_query.h, transform/).
//
//   strata::ParallelFor(pages, /*grain=*/256, [&](size_t begin, size_t end) {
//     for (size_t p = begin; p < end; ++p) Walk(p);
//   });
//
// Under ThreadSanitizer the ranges run on up to kTsanThreads std::threads instead, split
// whenever there are two items: Debian's libtbb is not TSan-instrumented, so TSan cannot
// see the synchronisation inside TBB's task pool and reports TBB's own fields (its
// partitioner's check_being_stolen) as racing. On plain threads TSan sees every edge, so
// a TSan run checks the callers' access pattern for real, even on small test inputs.
//
// Thread-safety: fn runs concurrently on disjoint ranges; it must synchronise anything
// else it shares. ParallelFor returns after every range is done (a happens-before edge).
#ifndef STRATA_BASE_PARALLEL_FOR_H_
#define STRATA_BASE_PARALLEL_FOR_H_

#include <algorithm>
#include <cstddef>

#if defined(__SANITIZE_THREAD__)
#include <thread>
#include <vector>
#else
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/parallel_for.h"
#endif

#include "base/policy_checks.h"

namespace strata {

// ParallelFor: calls fn(begin, end) for disjoint ranges covering [0, n), each at least
// `grain` long except the last (TBB's blocked_range; grain 0 counts as 1), and returns
// when all are done. O(n / grain) tasks.
template <typename Fn>
void ParallelFor(size_t n, size_t grain, const Fn& fn) {
#if defined(__SANITIZE_THREAD__)
  (void)grain;
  if (n == 0) return;  // as TBB: an empty range calls nothing
  constexpr size_t kTsanThreads = 4;
  const size_t threads = std::clamp<size_t>(n, 1, kTsanThreads);
  std::vector<std::thread> workers;
  for (size_t t = 1; t < threads; ++t) {
    workers.emplace_back([&fn, n, t, threads] { fn(n * t / threads, n * (t + 1) / threads); });
  }
  fn(0, n / threads);
  for (std::thread& worker : workers) worker.join();
#else
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n, std::max<size_t>(grain, 1)),
                    [&fn](const tbb::blocked_range<size_t>& r) { fn(r.begin(), r.end()); });
#endif
}

}  // namespace strata

#endif  // STRATA_BASE_PARALLEL_FOR_H_
