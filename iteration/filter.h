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

#include <algorithm>
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
#include "iteration/declared_access.h"
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
  // Changed / Added: only entities that have `c` and whose `c` was written / added
  // after tick `since` (EntityPages::TrackChanges, ChangedMask): a system passes the
  // tick it last ran at (EntityPages::kNeverRan on its first run: everything). The walk
  // skips a page with one compare when nothing in it changed after `since`.
  Filter& Changed(ComponentId c, uint32_t since) {
    changes_.push_back({c, since, false});
    return *this;
  }
  template <typename T>
  Filter& Changed(Component<T> c, uint32_t since) {
    return Changed(c.id, since);
  }
  Filter& Added(ComponentId c, uint32_t since) {
    changes_.push_back({c, since, true});
    return *this;
  }
  template <typename T>
  Filter& Added(Component<T> c, uint32_t since) {
    return Added(c.id, since);
  }
  struct ChangeTerm {
    ComponentId component;
    uint32_t since;
    bool added;
  };
  absl::Span<const ComponentId> include() const { return include_; }
  absl::Span<const ComponentId> exclude() const { return exclude_; }
  absl::Span<const ChangeTerm> changes() const { return changes_; }

  // Validate: InvalidArgument if a component is not registered in `pages`. A walk or
  // CountMatches with such a filter aborts with a message (a programming error): call
  // Validate once on filters built from outside data.
  absl::Status Validate(const EntityPages& pages) const;

 private:
  absl::InlinedVector<ComponentId, 8> include_;
  absl::InlinedVector<ComponentId, 8> exclude_;
  absl::InlinedVector<ChangeTerm, 2> changes_;
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
  // The filter's change terms, resolved (none: the common case, no per-page test).
  struct Change {
    const iteration_internal::ChangeTicks* ticks;  // null: untracked, nothing changed
    const uint32_t* present;                       // the component's presence masks
    uint32_t since;                                // clamped
    bool added;
    bool all;  // since == kNeverRan: every present slot
  };
  absl::InlinedVector<Change, 2> changes;
  // The pages that can match: the intersection of the includes' data page ranges
  // (after a compaction, a rare component's pages are a short run).
  size_t begin = 0;
  size_t end = 0;
  MaskRows rows() const {
    return {include.data(), include.size(), exclude.data(), exclude.size()};
  }
};
ResolvedRows Resolve(const EntityPages& pages, const Filter& filter);

// ApplyChanges: `mask` (of `page`, slots that all have the terms' components)
// narrowed by the filter's change terms: a page whose latest write is not after
// `since` costs one load and a compare.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline uint32_t ApplyChanges(
    absl::Span<const ResolvedRows::Change> changes, size_t page, uint32_t mask) {
  for (const ResolvedRows::Change& term : changes) {
    if (term.all) {
      mask &= term.present[page];
      continue;
    }
    if (term.ticks == nullptr) return 0;
    const uint32_t latest = term.added ? term.ticks->page_added(page) : term.ticks->page_tick(page);
    if (!ChangeTicks::After(latest, term.since)) return 0;
    // The component need not be an include: only the slots that have it.
    mask &= term.present[page];
    mask = term.added ? term.ticks->AddedMask(page, mask, term.since)
                      : term.ticks->ChangedMask(page, mask, term.since);
    if (mask == 0) return 0;
  }
  return mask;
}

// CallbackParams<Fn>: the parameter types of a callback with one non-template
// operator() (or a function pointer); kKnown false for a generic lambda.
template <typename M>
struct MemberParams {
  static constexpr bool kKnown = false;
  using type = std::tuple<>;
};
template <typename R, typename C, typename... A>
struct MemberParams<R (C::*)(A...)> {
  static constexpr bool kKnown = true;
  using type = std::tuple<A...>;
};
template <typename R, typename C, typename... A>
struct MemberParams<R (C::*)(A...) const> : MemberParams<R (C::*)(A...)> {};
template <typename R, typename C, typename... A>
struct MemberParams<R (C::*)(A...) noexcept> : MemberParams<R (C::*)(A...)> {};
template <typename R, typename C, typename... A>
struct MemberParams<R (C::*)(A...) const noexcept> : MemberParams<R (C::*)(A...)> {};
template <typename Fn, typename = void>
struct CallbackParams {
  static constexpr bool kKnown = false;
  using type = std::tuple<>;
};
template <typename Fn>
struct CallbackParams<Fn, std::void_t<decltype(&Fn::operator())>>
    : MemberParams<decltype(&Fn::operator())> {};
template <typename R, typename... A>
struct CallbackParams<R (*)(A...), void> {
  static constexpr bool kKnown = true;
  using type = std::tuple<A...>;
};

// WritesParam<P>: a parameter through which the callback may write (T&, or a
// non-const U* for an Optional).
template <typename P>
inline constexpr bool kWritesParam =
    (std::is_lvalue_reference_v<P> && !std::is_const_v<std::remove_reference_t<P>>) ||
    (std::is_pointer_v<P> && !std::is_const_v<std::remove_pointer_t<P>>);

// WritesComponent<Fn, kOffset, I>: whether the callback may write the I-th listed
// component (its parameter kOffset + I); true when the parameters cannot be known.
template <typename Fn, size_t kOffset, size_t I>
constexpr bool WritesComponent() {
  using Params = CallbackParams<std::remove_cv_t<std::remove_reference_t<Fn>>>;
  if constexpr (!Params::kKnown) {
    return true;
  } else if constexpr (kOffset + I < std::tuple_size_v<typename Params::type>) {
    return kWritesParam<std::tuple_element_t<kOffset + I, typename Params::type>>;
  } else {
    return true;
  }
}

template <typename T>
ComponentId IdOf(Component<T> c) {
  return c.id;
}
template <typename T>
ComponentId IdOf(OptionalComponent<T> c) {
  return c.id;
}

// MarkWrites: for change detection, each component the callback may write counts as
// written in the visited slots (one load and a predicted branch per page when the
// type is untracked).
template <typename Fn, size_t kOffset, typename... Cs, size_t... I>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void MarkWrites(
    [[maybe_unused]] const EntityPages& pages, [[maybe_unused]] size_t page,
    [[maybe_unused]] uint32_t mask, std::index_sequence<I...>, Cs... components) {
  ((WritesComponent<Fn, kOffset, I>() ? pages.MarkWalked(IdOf(components), page, mask)
                                      : void()),
   ...);
}

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

// VisitSlots: visit(i) for each set bit i of `mask`, in order. A full page's loop is
// unrolled 32 times when kWholePage (GCC -O2 then vectorises the page's 32 elements as
// one block; the loop itself it does not vectorise at -O2: AoS strides, possible
// aliasing), 8 times otherwise: a callback that also takes each entity does not
// vectorise across elements, and unrolled 32 times its records' loads are hoisted
// ahead and spilled (measured 1.25x slower than 8 on a compacted store).
template <bool kWholePage, typename Visit>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void VisitSlots(uint32_t mask, Visit visit) {
  if (mask == ~uint32_t{0}) {
#if !defined(ABSL_HAVE_ADDRESS_SANITIZER) && !defined(ABSL_HAVE_THREAD_SANITIZER)
    // Not in sanitizer builds: there each of the 32 copies is instrumented, which made
    // one ForEachMatch about 90 KB of code and the files that use it twice as slow to
    // compile, for no check the plain loop does not make.
    if constexpr (kWholePage) {
#pragma GCC unroll 32
      for (uint32_t i = 0; i < kEntityPageSize; ++i) visit(i);
      return;
    }
#pragma GCC unroll 8
#endif
    for (uint32_t i = 0; i < kEntityPageSize; ++i) visit(i);
  } else {
    while (mask != 0) {
      visit(static_cast<uint32_t>(absl::countr_zero(mask)));  // tzcnt
      mask &= mask - 1;                                         // blsr
    }
  }
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
  MarkWrites<Fn, kWantsEntity ? 1 : 0>(pages, page, mask, std::index_sequence_for<Cs...>(),
                                       components...);
  if constexpr (kWantsEntity) {
    // The entity's source is chosen once per page, not per slot (GCC -O2 neither
    // hoists the layout test nor the record pointer out of the unrolled loop).
    if (pages.compacted()) {
      const uint64_t* const bits = pages.page_entity_bits(page);
      VisitSlots<false>(mask, [&](uint32_t i) ABSL_ATTRIBUTE_ALWAYS_INLINE {
        std::apply([&](const auto&... a) { fn(Entity::FromBits(bits[i]), a(i)...); }, access);
      });
    } else {
      const uint32_t* const generations = pages.page_generations(page);
      const uint32_t first = static_cast<uint32_t>(page * kEntityPageSize);
      VisitSlots<false>(mask, [&](uint32_t i) ABSL_ATTRIBUTE_ALWAYS_INLINE {
        std::apply([&](const auto&... a) { fn(Entity(first + i, generations[i]), a(i)...); },
                   access);
      });
    }
  } else {
    VisitSlots<true>(mask, [&](uint32_t i) ABSL_ATTRIBUTE_ALWAYS_INLINE {
      std::apply([&](const auto&... a) { fn(a(i)...); }, access);
    });
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

// TakesEntityFirst<Fn>: the callback's first parameter is an Entity (known params).
template <typename Fn>
constexpr size_t ComponentParamOffset() {
  using Params = CallbackParams<std::remove_cv_t<std::remove_reference_t<Fn>>>;
  if constexpr (Params::kKnown && std::tuple_size_v<typename Params::type> > 0) {
    using First = std::tuple_element_t<0, typename Params::type>;
    return std::is_same_v<std::remove_cv_t<std::remove_reference_t<First>>, Entity> ? 1 : 0;
  } else {
    return 0;
  }
}

template <typename Fn, typename... Cs, size_t... I>
ABSL_ATTRIBUTE_NOINLINE void CheckDeclaredComponents(const DeclaredAccess& access,
                                                     std::index_sequence<I...>,
                                                     Cs... components) {
  [[maybe_unused]] constexpr size_t kOffset = ComponentParamOffset<Fn>();
  (access.Check(IdOf(components), WritesComponent<Fn, kOffset, I>(), "ForEachMatch"), ...);
}

// CheckDeclared: inside a system's DeclaredAccess scope (iteration/declared_access.h)
// over `pages`, every component the callback takes must be declared (readable, or
// writable for T&); aborts with a message otherwise. One thread-local load outside.
template <typename Fn, typename... Cs>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void CheckDeclared(const EntityPages& pages,
                                                       Cs... components) {
  const DeclaredAccess* access = DeclaredAccess::Current();
  if (ABSL_PREDICT_TRUE(access == nullptr) || &access->pages() != &pages) return;
  CheckDeclaredComponents<Fn>(*access, std::index_sequence_for<Cs...>(), components...);
}

// Pages filtered per kernel call: the outputs (2 * 4 KiB) stay in L1.
inline constexpr size_t kFilterChunkPages = 1024;

// LeadChange: the first change term that selects by tick (not kNeverRan), or null.
inline const ResolvedRows::Change* LeadChange(absl::Span<const ResolvedRows::Change> changes) {
  for (const ResolvedRows::Change& term : changes) {
    if (!term.all) return &term;
  }
  return nullptr;
}

// ForEachChangedInRange: the walk for a filter with a change term: the pages whose
// latest write (or add) is after `since` come first from a scan of the term's page
// ticks (a load and a compare per page, no mask kernel), then the masks of those
// pages only. A frame that wrote few pages costs O(pages) compares, not a full walk.
template <typename Fn, typename... Cs>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void ForEachChangedInRange(
    const EntityPages& pages, const MaskRows& rows, size_t begin, size_t end,
    const ResolvedRows::Change& lead, absl::Span<const ResolvedRows::Change> changes, Fn& fn,
    Cs... components) {
  if (lead.ticks == nullptr) return;  // untracked: nothing changed
  end = std::min(end, lead.ticks->pages());
  const uint32_t* const ticks = lead.added ? lead.ticks->page_addeds() : lead.ticks->page_ticks();
  for (size_t first = begin; first < end; first += 32) {
    const size_t n = std::min<size_t>(32, end - first);
    uint32_t candidates = ChangeTicks::PagesAfter(ticks, first, n, lead.since);
    while (candidates != 0) {
      const size_t page = first + static_cast<size_t>(absl::countr_zero(candidates));
      candidates &= candidates - 1;
      const uint32_t mask = ApplyChanges(changes, page, FilterOnePage(rows, page));
      if (mask != 0) VisitPage(pages, page, mask, fn, components...);
    }
  }
}

// ForEachMatchInRange: the SIMD walk over pages [begin, end). Always inlined into
// the caller so that state the callback captures by reference (sums, counters) can
// live in registers; out of line, GCC keeps it in memory and every match pays a
// read-modify-write chain (measured 2x slower on full pages).
template <typename Fn, typename... Cs>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void ForEachMatchInRange(const EntityPages& pages,
                                                             const MaskRows& rows,
                                                             size_t begin, size_t end,
                                                             absl::Span<const ResolvedRows::Change> changes,
                                                             Fn& fn, Cs... components) {
  if (ABSL_PREDICT_FALSE(!changes.empty())) {
    if (const ResolvedRows::Change* lead = LeadChange(changes)) {
      ForEachChangedInRange(pages, rows, begin, end, *lead, changes, fn, components...);
      return;
    }
  }
  uint32_t out_pages[kFilterChunkPages + kFilterOutputSlack];
  uint32_t out_masks[kFilterChunkPages + kFilterOutputSlack];
  for (size_t chunk = begin; chunk < end; chunk += kFilterChunkPages) {
    const size_t chunk_end = chunk + kFilterChunkPages < end ? chunk + kFilterChunkPages
                                                             : end;
    const size_t n = FilterPages(rows, chunk, chunk_end, out_pages, out_masks);
    if (ABSL_PREDICT_TRUE(changes.empty())) {
      for (size_t i = 0; i < n; ++i) {
        VisitPage(pages, out_pages[i], out_masks[i], fn, components...);
      }
    } else {
      for (size_t i = 0; i < n; ++i) {
        const uint32_t mask = ApplyChanges(changes, out_pages[i], out_masks[i]);
        if (mask != 0) VisitPage(pages, out_pages[i], mask, fn, components...);
      }
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
  iteration_internal::CheckDeclared<Fn>(pages, components...);
  const EntityPages::WalkScope walk(pages);
  const iteration_internal::ResolvedRows resolved =
      iteration_internal::Resolve(pages, filter);
  iteration_internal::ForEachMatchInRange(pages, resolved.rows(), resolved.begin,
                                          resolved.end, resolved.changes, fn, components...);
}

// ForEachMatchScalar: the same walk with the scalar per-page filter (scheme 2 as the
// article writes it). O(pages * rows + matches), early exits per page.
template <typename Fn, typename... Cs>
void ForEachMatchScalar(const EntityPages& pages, const Filter& filter, Fn&& fn,
                        Cs... components) {
  iteration_internal::CheckComponents(pages, filter, components...);
  iteration_internal::CheckDeclared<Fn>(pages, components...);
  const EntityPages::WalkScope walk(pages);
  const iteration_internal::ResolvedRows resolved =
      iteration_internal::Resolve(pages, filter);
  const MaskRows rows = resolved.rows();
  for (size_t page = resolved.begin; page < resolved.end; ++page) {
    const uint32_t mask =
        iteration_internal::ApplyChanges(resolved.changes, page, FilterOnePage(rows, page));
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
  iteration_internal::CheckDeclared<Fn>(pages, components...);
  const EntityPages::WalkScope walk(pages);
  const iteration_internal::ResolvedRows resolved =
      iteration_internal::Resolve(pages, filter);
  const size_t begin = begin_page > resolved.begin ? begin_page : resolved.begin;
  const size_t end = end_page < resolved.end ? end_page : resolved.end;
  if (begin >= end) return;
  iteration_internal::ForEachMatchInRange(pages, resolved.rows(), begin, end, resolved.changes,
                                          fn, components...);
}

// CountMatches: how many entities match `filter` (SIMD kernel + popcount).
size_t CountMatches(const EntityPages& pages, const Filter& filter);

}  // namespace strata

#endif  // STRATA_ITERATION_FILTER_H_
