// ParallelForEachMatch: ForEachMatch with the pages split across TBB worker threads.
//
//   ParallelForEachMatch(pages, moving, [](Position& p, const Velocity& v) {
//     p.x += v.x; p.y += v.y; p.z += v.z;
//   }, pos, vel);
//
// Same matches as ForEachMatch; only the order differs (each page is visited in
// ascending order by one thread, pages in any order).
//
// Why there is no data race: ParallelFor (base/parallel_for.h: oneTBB, or std::threads
// under TSan) hands out disjoint page ranges, so each entity is visited by exactly one
// thread. The store itself is only read (mask arrays, data-page pointers,
// generations); the callback writes only the components of the entity it was handed,
// which live in that entity's own elements of per-page arrays no other thread touches.
// ParallelFor returns after every range finished (a happens-before edge), so the
// caller sees all writes. The callback must not mutate the store, and must synchronise
// anything else it shares (e.g. a counter).
#ifndef STRATA_ITERATION_PARALLEL_QUERY_H_
#define STRATA_ITERATION_PARALLEL_QUERY_H_

#include <cstddef>

#include "base/parallel_for.h"
#include "iteration/entity_pages.h"
#include "iteration/filter.h"

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
  iteration_internal::CheckComponents(pages, filter, components...);
  const iteration_internal::ResolvedRows resolved =
      iteration_internal::Resolve(pages, filter);
  const MaskRows rows = resolved.rows();
  const size_t first = resolved.begin;
  ParallelFor(resolved.end - first, kParallelGrainPages, [&](size_t begin, size_t end) {
    iteration_internal::ForEachMatchInRange(pages, rows, first + begin, first + end, fn,
                                            components...);
  });
}

}  // namespace strata

#endif  // STRATA_ITERATION_PARALLEL_QUERY_H_
