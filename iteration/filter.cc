#include "iteration/filter.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "base/check.h"

// Compile filter-inl.h once per Highway target, then dispatch at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "iteration/filter.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "iteration/filter-inl.h"

HWY_BEFORE_NAMESPACE();
namespace strata {
namespace HWY_NAMESPACE {

size_t FilterPagesTarget(const MaskRows& rows, size_t begin, size_t end,
                         uint32_t* out_pages, uint32_t* out_masks) {
  return FilterPagesKernel(rows, begin, end, out_pages, out_masks);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace strata
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace strata {

HWY_EXPORT(FilterPagesTarget);

size_t FilterPages(const MaskRows& rows, size_t begin, size_t end, uint32_t* out_pages,
                   uint32_t* out_masks) {
  return HWY_DYNAMIC_DISPATCH(FilterPagesTarget)(rows, begin, end, out_pages, out_masks);
}

size_t FilterPagesScalar(const MaskRows& rows, size_t begin, size_t end,
                         uint32_t* out_pages, uint32_t* out_masks) {
  size_t count = 0;
  for (size_t page = begin; page < end; ++page) {
    const uint32_t mask = FilterOnePage(rows, page);
    if (mask != 0) {
      out_pages[count] = static_cast<uint32_t>(page);
      out_masks[count] = mask;
      ++count;
    }
  }
  return count;
}

absl::Status Filter::Validate(const EntityPages& pages) const {
  for (absl::Span<const ComponentId> set : {include(), exclude()}) {
    for (ComponentId c : set) {
      if (c >= pages.num_component_types()) {
        return absl::InvalidArgumentError(
            absl::StrCat("filter names unregistered component id ", c));
      }
    }
  }
  return absl::OkStatus();
}

namespace iteration_internal {

namespace {
constexpr const char* kUnregisteredInFilter =
    "a filter names a component id not registered in this store (Filter::Validate "
    "reports it as an error: call it on filters built from outside data)";
}  // namespace

ResolvedRows Resolve(const EntityPages& pages, const Filter& filter) {
  ResolvedRows resolved;
  resolved.end = pages.page_capacity();
  for (ComponentId c : filter.include()) {
    STRATA_CHECK(c < pages.num_component_types(), kUnregisteredInFilter);
    resolved.include.push_back(pages.page_masks(c));
    const auto [first, end] = pages.data_page_range(c);
    resolved.begin = std::max<size_t>(resolved.begin, first);
    resolved.end = std::min<size_t>(resolved.end, end);
  }
  if (resolved.begin > resolved.end) resolved.begin = resolved.end;
  // No include: every entity in the store is a candidate.
  if (resolved.include.empty()) resolved.include.push_back(pages.occupied_masks());
  for (ComponentId c : filter.exclude()) {
    STRATA_CHECK(c < pages.num_component_types(), kUnregisteredInFilter);
    resolved.exclude.push_back(pages.page_masks(c));
  }
  for (const Filter::ChangeTerm& term : filter.changes()) {
    STRATA_CHECK(term.component < pages.num_component_types(), kUnregisteredInFilter);
    resolved.changes.push_back({pages.change_ticks(term.component), pages.page_masks(term.component),
                                pages.ClampedSince(term.since), term.added,
                                term.since == EntityPages::kNeverRan});
  }
  return resolved;
}

}  // namespace iteration_internal

size_t CountMatches(const EntityPages& pages, const Filter& filter) {
  const iteration_internal::ResolvedRows resolved =
      iteration_internal::Resolve(pages, filter);
  const MaskRows rows = resolved.rows();
  constexpr size_t kChunk = iteration_internal::kFilterChunkPages;
  uint32_t out_pages[kChunk + kFilterOutputSlack];
  uint32_t out_masks[kChunk + kFilterOutputSlack];
  size_t matches = 0;
  for (size_t chunk = resolved.begin; chunk < resolved.end; chunk += kChunk) {
    const size_t end = chunk + kChunk < resolved.end ? chunk + kChunk : resolved.end;
    const size_t n = FilterPages(rows, chunk, end, out_pages, out_masks);
    for (size_t i = 0; i < n; ++i) {
      matches += absl::popcount(
          iteration_internal::ApplyChanges(resolved.changes, out_pages[i], out_masks[i]));
    }
  }
  return matches;
}

}  // namespace strata
#endif  // HWY_ONCE
