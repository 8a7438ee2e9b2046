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

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "base/parallel_for.h"
#include "entity/entity_manager.h"
#include "iteration/command_buffer.h"
#include "iteration/declared_access.h"
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
  iteration_internal::CheckDeclared<Fn>(pages, components...);
  // Opened here, on the calling thread, for the whole parallel walk.
  const EntityPages::WalkScope walk(pages);
  const iteration_internal::ResolvedRows resolved =
      iteration_internal::Resolve(pages, filter);
  const MaskRows rows = resolved.rows();
  const size_t first = resolved.begin;
  const DeclaredAccess* const access = DeclaredAccess::Current();
  ParallelFor(resolved.end - first, kParallelGrainPages, [&](size_t begin, size_t end) {
    const DeclaredAccess::Scope scope(access);  // the caller's system, on every worker
    iteration_internal::ForEachMatchInRange(pages, rows, first + begin, first + end,
                                            resolved.changes, fn, components...);
  });
}

// ParallelCommands: the command buffers of parallel walks, one per fixed range of
// kParallelGrainPages pages, played back in page order. Which thread walked a range
// does not matter: its commands sit in that range's buffer, in the order the range's
// one thread recorded them (pages ascending), so a playback gives the same result,
// created handles included, for any thread count and any split TBB chooses.
//
//   ParallelCommands commands(pages);
//   ParallelForEachMatchWithCommands(pages, burning, commands,
//       [](CommandBuffer& out, Entity e, Health& h) { if (h.hp <= 0) out.Destroy(e); },
//       health);
//   commands.Playback(manager, pages);
//
// Buffers are kept (with their memory) for the next walk; a walk may add to buffers
// that already hold commands (several walks, then one playback).
class ParallelCommands {
 public:
  explicit ParallelCommands(const EntityPages& pages) : pages_(&pages) {}

  // Playback: every buffer's Playback, in page order; the results summed.
  CommandBuffer::Result Playback(EntityManager& entities, EntityPages& pages) {
    CommandBuffer::Result total;
    for (CommandBuffer& buffer : buffers_) {
      const CommandBuffer::Result r = buffer.Playback(entities, pages);
      total.applied += r.applied;
      total.skipped_dead += r.skipped_dead;
      total.skipped_conflict += r.skipped_conflict;
    }
    return total;
  }
  // buffers: the buffers in page order (what Playback plays; for
  // ComponentEvents::Playback).
  absl::Span<CommandBuffer> buffers() { return absl::MakeSpan(buffers_); }
  // Resolve: the entity a pending handle recorded in one of the buffers became in the
  // last playback (the invalid Entity if none); any other handle unchanged. O(buffers).
  Entity Resolve(Entity e) const {
    if (!CommandBuffer::IsPending(e)) return e;
    for (const CommandBuffer& buffer : buffers_) {
      const Entity resolved = buffer.Resolve(e);
      if (resolved.is_valid()) return resolved;
    }
    return Entity();
  }
  // size: commands recorded and not yet played back, over all buffers.
  size_t size() const {
    size_t n = 0;
    for (const CommandBuffer& buffer : buffers_) n += buffer.size();
    return n;
  }
  // Buffer: the buffer of page range `range` (made on first use; not thread-safe:
  // ParallelForEachMatchWithCommands makes them all before the walk).
  CommandBuffer& Buffer(size_t range) {
    Reserve(range + 1);
    return buffers_[range];
  }
  void Reserve(size_t ranges) {
    while (buffers_.size() < ranges) buffers_.emplace_back(*pages_);
  }

 private:
  const EntityPages* pages_;
  std::vector<CommandBuffer> buffers_;
};

namespace iteration_internal {
// WithBuffer: fn with a CommandBuffer& bound first; invocable exactly when fn is with
// the buffer in front, so the walk still tells (Entity, T&...) from (T&...).
template <typename Fn>
struct WithBuffer {
  Fn* fn;
  CommandBuffer* buffer;
  template <typename... A>
  ABSL_ATTRIBUTE_ALWAYS_INLINE auto operator()(A&&... a)
      -> decltype(std::declval<Fn&>()(std::declval<CommandBuffer&>(), std::forward<A>(a)...)) {
    return (*fn)(*buffer, std::forward<A>(a)...);
  }
};
// The walk sees the user's callback's parameters, less the buffer in front.
template <typename Fn>
struct CallbackParams<WithBuffer<Fn>, void> {
 private:
  using Inner = CallbackParams<std::remove_cv_t<Fn>>;
  template <typename First, typename... Rest>
  static std::tuple<Rest...> Drop(std::tuple<First, Rest...>*);
  static std::tuple<> Drop(std::tuple<>*);

 public:
  static constexpr bool kKnown = Inner::kKnown;
  using type = decltype(Drop(static_cast<typename Inner::type*>(nullptr)));
};
}  // namespace iteration_internal

// ParallelForEachMatchWithCommands: ParallelForEachMatch whose callback also takes the
// CommandBuffer of the entity's page range first: fn(CommandBuffer&, Entity, T&...) or
// fn(CommandBuffer&, T&...). The walk opens a WalkScope; play `commands` back after it.
template <typename Fn, typename... Cs>
void ParallelForEachMatchWithCommands(const EntityPages& pages, const Filter& filter,
                                      ParallelCommands& commands, Fn&& fn, Cs... components) {
  iteration_internal::CheckComponents(pages, filter, components...);
  iteration_internal::CheckDeclared<iteration_internal::WithBuffer<std::remove_reference_t<Fn>>>(
      pages, components...);
  const EntityPages::WalkScope walk(pages);
  const iteration_internal::ResolvedRows resolved = iteration_internal::Resolve(pages, filter);
  const MaskRows rows = resolved.rows();
  // Ranges are fixed multiples of kParallelGrainPages from page 0, not TBB's split.
  const size_t first_range = resolved.begin / kParallelGrainPages;
  const size_t end_range = (resolved.end + kParallelGrainPages - 1) / kParallelGrainPages;
  commands.Reserve(end_range);
  const DeclaredAccess* const access = DeclaredAccess::Current();
  ParallelFor(end_range - first_range, 1, [&](size_t begin, size_t end) {
    const DeclaredAccess::Scope scope(access);  // the caller's system, on every worker
    for (size_t range = first_range + begin; range < first_range + end; ++range) {
      const size_t page_begin = std::max(range * kParallelGrainPages, resolved.begin);
      const size_t page_end = std::min((range + 1) * kParallelGrainPages, resolved.end);
      iteration_internal::WithBuffer<std::remove_reference_t<Fn>> bound{&fn, &commands.Buffer(range)};
      iteration_internal::ForEachMatchInRange(pages, rows, page_begin, page_end,
                                              resolved.changes, bound, components...);
    }
  });
}

}  // namespace strata

#endif  // STRATA_ITERATION_PARALLEL_QUERY_H_
