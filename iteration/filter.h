// Filters over EntityPages: include/exclude queries, the per-page AND/ANDNOT of
// presence masks, and the tzcnt/blsr walk that hands each match to a callback.
//
//   Filter moving;
//   moving.Include(pos).Include(vel).Exclude(frozen);
//   ForEachMatch(pages, moving, [](Position& p, const Velocity& v) {
//     p.x += v.x; p.y += v.y; p.z += v.z;
//   }, pos, vel);
//   ForEachMatch(pages, moving, [&](Entity e, Position& p, Velocity&) { ... }, pos, vel);
//   // Optional components: a pointer, null where the entity lacks it.
//   ForEachMatch(pages, moving, [](Position& p, Health* h) { ... }, pos, Optional(health));
//
// A page's filtered mask is AND(include masks) & ~OR(exclude masks) (with no include,
// the page's occupied mask). Pages are pages of slots (see EntityPages): the walk
// order is slot order, which EntityPages::Compact may change; the set of matches and
// their values it never changes. Two walks produce the same matches in the same order
// (pages ascending, slots ascending inside a page):
// - ForEachMatch: the Highway kernel (FilterPages) filters 8 (AVX2) or 16 (AVX-512)
//   pages per instruction from the per-component mask arrays and compacts the
//   non-empty pages; chosen at run time with HWY_DYNAMIC_DISPATCH.
// - ForEachMatchScalar: the article's per-page loop with early exits.
// - ForEachMatchInPageRange: the SIMD walk over a page range, for job systems
//   (iteration/parallel_query.h does the same with TBB).
// A page whose filtered mask is all ones takes a straight loop over its 32 elements,
// which the compiler can vectorise; other pages take the tzcnt/blsr bit walk.
//
// The callback takes (Entity, T&..., U*...) or (T&..., U*...): a reference for each
// listed Component<T>, which must be in the filter's include set, and a pointer for
// each Optional(Component<U>). Every listed component must be registered in the store
// with its C++ type's size; a walk checks both once, in every build mode, and aborts
// with a message otherwise (a programming error, like an out-of-range index). It may
// modify the components it is handed (and others' through TryGet), and nothing else in
// the store: a walk opens an EntityPages::WalkScope, under which an add, remove,
// delete, destroy, create or compaction aborts at the call with a message, in every
// build mode. Record them in a CommandBuffer (iteration/command_buffer.h) instead.
// References handed to the callback are valid until the callback returns.
//
// The kernel layer (FilterPages*) is plain C++ over pointers and counts, for callers
// with their own mask arrays; the Highway code is in filter-inl.h.
#ifndef STRATA_ITERATION_FILTER_H_
#define STRATA_ITERATION_FILTER_H_

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "absl/base/config.h"
#include "absl/base/optimization.h"
#include "absl/container/inlined_vector.h"
#include "absl/numeric/bits.h"
#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/check.h"
#include "entity/entity.h"
#include "iteration/entity_pages.h"

namespace strata {

// OptionalComponent<T>: a component the callback receives as `T*`, nullptr where the
// entity lacks it. It does not filter: list it in no include or exclude set.
//   ForEachMatch(pages, moving, [](Position& p, const Velocity& v, Frozen* f) {...},
//                pos, vel, Optional(frozen));
template <typename T>
struct OptionalComponent {
  ComponentId id = 0;
};
template <typename T>
OptionalComponent<T> Optional(Component<T> c) {
  return {c.id};
}

// Filter: which components an entity must have (include) and must not have (exclude).
// Put the rarest include first: the scalar walk exits on the first empty mask.
class Filter {
 public:
  Filter& Include(ComponentId c) {
    include_.push_back(c);
    return *this;
  }
  template <typename T>
  Filter& Include(Component<T> c) {
    return Include(c.id);
  }
  Filter& Exclude(ComponentId c) {
    exclude_.push_back(c);
    return *this;
  }
  template <typename T>
  Filter& Exclude(Component<T> c) {
    return Exclude(c.id);
  }
  absl::Span<const ComponentId> include() const { return include_; }
  absl::Span<const ComponentId> exclude() const { return exclude_; }

  // Validate: InvalidArgument if a component is not registered in `pages`. A walk or
  // CountMatches with such a filter aborts with a message (a programming error): call
  // Validate once on filters built from outside data.
  absl::Status Validate(const EntityPages& pages) const;

 private:
  absl::InlinedVector<ComponentId, 8> include_;
  absl::InlinedVector<ComponentId, 8> exclude_;
};

// MaskRows: the mask arrays a filter reads, one pointer per component, each
// indexable by page. `include` must not be empty (use the occupied masks instead).
struct MaskRows {
  const uint32_t* const* include;
  size_t num_include;
  const uint32_t* const* exclude;
  size_t num_exclude;
};

// FilterOnePage: page `page`'s filtered mask, with the article's early exits. O(rows).
inline uint32_t FilterOnePage(const MaskRows& rows, size_t page) {
  uint32_t inc = rows.include[0][page];
  for (size_t i = 1; i < rows.num_include && inc != 0; ++i) inc &= rows.include[i][page];
  if (inc == 0) return 0;
  uint32_t exc = 0;
  for (size_t i = 0; i < rows.num_exclude; ++i) {
    exc |= rows.exclude[i][page];
    if ((inc & ~exc) == 0) return 0;
  }
  return inc & ~exc;
}

// kFilterOutputSlack: extra elements the output arrays of FilterPages* need beyond
// the number of pages filtered: the SIMD compaction may write a whole vector.
inline constexpr size_t kFilterOutputSlack = 64;

// FilterPagesScalar: for pages [begin, end), writes the index and filtered mask of
// every page with a non-zero result to out_pages / out_masks (ascending) and returns
// how many. The reference for FilterPages. O(pages * rows).
size_t FilterPagesScalar(const MaskRows& rows, size_t begin, size_t end,
                         uint32_t* out_pages, uint32_t* out_masks);

// FilterPages: same result as FilterPagesScalar, with the best Highway target this CPU
// supports. Output arrays need (end - begin) + kFilterOutputSlack elements.
size_t FilterPages(const MaskRows& rows, size_t begin, size_t end, uint32_t* out_pages,
                   uint32_t* out_masks);

namespace iteration_internal {

// The mask-row pointers of a filter against `pages`, on the stack for small filters.
struct ResolvedRows {
  absl::InlinedVector<const uint32_t*, 8> include;
  absl::InlinedVector<const uint32_t*, 8> exclude;
  // The pages that can match: the intersection of the includes' data page ranges
  // (after a compaction, a rare component's pages are a short run).
  size_t begin = 0;
  size_t end = 0;
  MaskRows rows() const {
    return {include.data(), include.size(), exclude.data(), exclude.size()};
  }
};
ResolvedRows Resolve(const EntityPages& pages, const Filter& filter);

template <typename T>
T* PageArray(const EntityPages& pages, Component<T> c, size_t page) {
  return reinterpret_cast<T*>(pages.page_data(c.id, page));
}

// Accessors: what the callback gets for each listed component at bit i of a page.
// A required component is always present in a matching entity: a reference.
template <typename T>
struct RequiredAccess {
  T* array;
  ABSL_ATTRIBUTE_ALWAYS_INLINE T& operator()(uint32_t i) const { return array[i]; }
};
// An optional one is a pointer, null where the page's presence mask has no bit.
template <typename T>
struct OptionalAccess {
  T* array;  // null when the page has no data for it (then mask is 0)
  uint32_t mask;
  ABSL_ATTRIBUTE_ALWAYS_INLINE T* operator()(uint32_t i) const {
    return ((mask >> i) & 1u) != 0 ? array + i : nullptr;
  }
};
template <typename T>
RequiredAccess<T> Access(const EntityPages& pages, Component<T> c, size_t page) {
  return {PageArray(pages, c, page)};
}
template <typename T>
OptionalAccess<T> Access(const EntityPages& pages, OptionalComponent<T> c, size_t page) {
  return {reinterpret_cast<T*>(pages.page_data(c.id, page)), pages.page_masks(c.id)[page]};
}

// VisitPage: calls fn for each set bit of `mask` in `page`. Full pages take a
// straight loop so element access is unit-stride and vectorisable.
template <typename Fn, typename... Cs>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void VisitPage(const EntityPages& pages, size_t page,
                                                   uint32_t mask, Fn& fn, Cs... components) {
  const std::tuple<decltype(Access(pages, components, page))...> access(
      Access(pages, components, page)...);
  constexpr bool kWantsEntity =
      std::is_invocable_v<Fn&, Entity, decltype(Access(pages, components, page)(0))...>;
  static_assert(
      kWantsEntity ||
          std::is_invocable_v<Fn&, decltype(Access(pages, components, page)(0))...>,
      "callback must take (Entity, T&..., U*...) or (T&..., U*...): a reference per "
      "component, a pointer per Optional(component)");
  auto visit = [&](uint32_t i) ABSL_ATTRIBUTE_ALWAYS_INLINE {
    if constexpr (kWantsEntity) {
      std::apply([&](const auto&... a) { fn(pages.entity_at(page, i), a(i)...); }, access);
    } else {
      std::apply([&](const auto&... a) { fn(a(i)...); }, access);
    }
  };
  if (mask == ~uint32_t{0}) {
    // Unrolled, GCC -O2 vectorises the page's 32 elements as one block (the loop
    // itself it does not vectorise at -O2: AoS strides, possible aliasing).
#if !defined(ABSL_HAVE_ADDRESS_SANITIZER) && !defined(ABSL_HAVE_THREAD_SANITIZER)
    // Not in sanitizer builds: there each of the 32 copies is instrumented, which made
    // one ForEachMatch about 90 KB of code and the files that use it twice as slow to
    // compile, for no check the plain loop does not make.
#pragma GCC unroll 32
#endif
    for (uint32_t i = 0; i < kEntityPageSize; ++i) visit(i);
  } else {
    while (mask != 0) {
      visit(static_cast<uint32_t>(absl::countr_zero(mask)));  // tzcnt
      mask &= mask - 1;                                         // blsr
    }
  }
}

// RequiredIsIncluded: a required component must be in the filter's include set; an
// optional one is looked up, not filtered on.
template <typename T>
bool RequiredIsIncluded(const Filter& filter, Component<T> c) {
  for (ComponentId id : filter.include()) {
    if (id == c.id) return true;
  }
  return false;
}
template <typename T>
bool RequiredIsIncluded(const Filter&, OptionalComponent<T>) {
  return true;
}

// HasTypeOf: `id` is registered in `pages` with T's size (0 for an empty T).
template <typename T>
bool HasTypeOf(const EntityPages& pages, ComponentId id) {
  return id < pages.num_component_types() &&
         pages.component_size(id) == (std::is_empty_v<T> ? 0 : sizeof(T));
}
template <typename T>
bool HasTypeOf(const EntityPages& pages, Component<T> c) {
  return HasTypeOf<T>(pages, c.id);
}
template <typename T>
bool HasTypeOf(const EntityPages& pages, OptionalComponent<T> c) {
  return HasTypeOf<T>(pages, c.id);
}

// CheckComponents: a walk's contract on the components it hands out, checked once per
// walk in every build mode (a few compares): each is registered in `pages` with its
// C++ type's size (else, say for a Component<T> of another store, the walk would index
// T-sized elements in pages of another size, and write through them), and each
// required one is in the include set (else the walk would hand references to elements
// the entity does not have).
template <typename... Cs>
void CheckComponents(const EntityPages& pages, const Filter& filter, Cs... components) {
  (void)pages;
  (void)filter;
  STRATA_CHECK((HasTypeOf(pages, components) && ...),
               "ForEachMatch: a listed component is not registered in this store with its "
               "C++ type's size (a Component<T> made from another type's id, or another "
               "store's)");
  STRATA_CHECK((RequiredIsIncluded(filter, components) && ...),
               "ForEachMatch: a component the callback takes by reference is not in the "
               "filter's include set (list it there, or pass Optional(c))");
}

// Pages filtered per kernel call: the outputs (2 * 4 KiB) stay in L1.
inline constexpr size_t kFilterChunkPages = 1024;

// ForEachMatchInRange: the SIMD walk over pages [begin, end). Always inlined into
// the caller so that state the callback captures by reference (sums, counters) can
// live in registers; out of line, GCC keeps it in memory and every match pays a
// read-modify-write chain (measured 2x slower on full pages).
template <typename Fn, typename... Cs>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void ForEachMatchInRange(const EntityPages& pages,
                                                             const MaskRows& rows,
                                                             size_t begin, size_t end,
                                                             Fn& fn, Cs... components) {
  uint32_t out_pages[kFilterChunkPages + kFilterOutputSlack];
  uint32_t out_masks[kFilterChunkPages + kFilterOutputSlack];
  for (size_t chunk = begin; chunk < end; chunk += kFilterChunkPages) {
    const size_t chunk_end = chunk + kFilterChunkPages < end ? chunk + kFilterChunkPages
                                                             : end;
    const size_t n = FilterPages(rows, chunk, chunk_end, out_pages, out_masks);
    for (size_t i = 0; i < n; ++i) {
      VisitPage(pages, out_pages[i], out_masks[i], fn, components...);
    }
  }
}

}  // namespace iteration_internal

// ForEachMatch: calls fn for every entity of `pages` matching `filter`, in page
// order, using the SIMD kernel. O(pages * rows / lanes + matches). No allocation for
// filters of up to 8 includes and 8 excludes.
template <typename Fn, typename... Cs>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void ForEachMatch(const EntityPages& pages,
                                                      const Filter& filter, Fn&& fn,
                                                      Cs... components) {
  iteration_internal::CheckComponents(pages, filter, components...);
  const EntityPages::WalkScope walk(pages);
  const iteration_internal::ResolvedRows resolved =
      iteration_internal::Resolve(pages, filter);
  iteration_internal::ForEachMatchInRange(pages, resolved.rows(), resolved.begin,
                                          resolved.end, fn, components...);
}

// ForEachMatchScalar: the same walk with the scalar per-page filter (scheme 2 as the
// article writes it). O(pages * rows + matches), early exits per page.
template <typename Fn, typename... Cs>
void ForEachMatchScalar(const EntityPages& pages, const Filter& filter, Fn&& fn,
                        Cs... components) {
  iteration_internal::CheckComponents(pages, filter, components...);
  const EntityPages::WalkScope walk(pages);
  const iteration_internal::ResolvedRows resolved =
      iteration_internal::Resolve(pages, filter);
  const MaskRows rows = resolved.rows();
  for (size_t page = resolved.begin; page < resolved.end; ++page) {
    const uint32_t mask = FilterOnePage(rows, page);
    if (mask == 0) continue;
    iteration_internal::VisitPage(pages, page, mask, fn, components...);
  }
}

// ForEachMatchInPageRange: ForEachMatch restricted to pages [begin_page, end_page)
// (clamped to page_capacity()), for callers that split the walk over their own job
// system. Calls on disjoint page ranges touch disjoint entities, so they may run
// concurrently (see iteration/parallel_query.h for why that is race-free).
template <typename Fn, typename... Cs>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void ForEachMatchInPageRange(
    const EntityPages& pages, const Filter& filter, size_t begin_page, size_t end_page,
    Fn&& fn, Cs... components) {
  iteration_internal::CheckComponents(pages, filter, components...);
  const EntityPages::WalkScope walk(pages);
  const iteration_internal::ResolvedRows resolved =
      iteration_internal::Resolve(pages, filter);
  const size_t begin = begin_page > resolved.begin ? begin_page : resolved.begin;
  const size_t end = end_page < resolved.end ? end_page : resolved.end;
  if (begin >= end) return;
  iteration_internal::ForEachMatchInRange(pages, resolved.rows(), begin, end, fn,
                                          components...);
}

// CountMatches: how many entities match `filter` (SIMD kernel + popcount).
size_t CountMatches(const EntityPages& pages, const Filter& filter);

}  // namespace strata

#endif  // STRATA_ITERATION_FILTER_H_
