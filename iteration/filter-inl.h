// Highway kernel behind FilterPages (iteration/filter.h). Included once per target
// by filter.cc and filter_simd_test.cc through hwy/foreach_target.h.
//
// NOTE: masks are stored per component as one uint32_t per page, contiguous over
// pages, so lane j of a vector load is page `begin + j`: one AND filters Lanes(d)
// pages (8 with AVX2, 16 with AVX-512).

// Per-target include guard, the HWY_TARGET_TOGGLE pattern of hwy/examples/skeleton.
#if defined(STRATA_ITERATION_FILTER_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef STRATA_ITERATION_FILTER_INL_H_
#undef STRATA_ITERATION_FILTER_INL_H_
#else
#define STRATA_ITERATION_FILTER_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "hwy/highway.h"
#include "iteration/filter.h"
#include "iteration/internal/page_slots.h"

HWY_BEFORE_NAMESPACE();
namespace strata {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// FilterPagesKernel: see FilterPages. Whole vectors first, then a scalar tail, so no
// load reads past `end` (the mask arrays are padded anyway, but callers of the
// pointer API need not be).
HWY_ATTR inline size_t FilterPagesKernel(const MaskRows& rows, size_t begin, size_t end,
                                         uint32_t* HWY_RESTRICT out_pages,
                                         uint32_t* HWY_RESTRICT out_masks) {
  const hn::ScalableTag<uint32_t> d;
  const size_t lanes = hn::Lanes(d);
  const auto zero = hn::Zero(d);
  const auto lane_index = hn::Iota(d, 0);
  size_t count = 0;
  size_t page = begin;
  for (; page + lanes <= end; page += lanes) {
    auto inc = hn::LoadU(d, rows.include[0] + page);
    for (size_t i = 1; i < rows.num_include; ++i) {
      inc = hn::And(inc, hn::LoadU(d, rows.include[i] + page));
    }
    // Early exit, the vector form of the article's "skip_page": no page of this
    // group has an entity with every include, so the excludes are not read.
    if (hn::AllTrue(d, hn::Eq(inc, zero))) continue;
    for (size_t i = 0; i < rows.num_exclude; ++i) {
      inc = hn::AndNot(hn::LoadU(d, rows.exclude[i] + page), inc);
    }
    const auto nonempty = hn::Ne(inc, zero);
    // Both stores may write a whole vector; callers leave kFilterOutputSlack.
    if constexpr (HWY_LANES(uint32_t) == 8) {
      // AVX2 has no compress instruction: the lanes to keep come from kByteSlots (the
      // positions of a byte's set bits), one permute for the masks and one add for the
      // page numbers. Not hn::CompressStore: GCC 12 copied Highway's 1 KiB table of
      // lane indices onto the stack twice per group of 8 pages (`rep movsq`).
      uint8_t bits[8];
      hn::StoreMaskBits(d, nonempty, bits);
      const auto keep = hn::LoadU(d, iteration_internal::kByteSlots.slot[bits[0]]);
      hn::StoreU(hn::Add(keep, hn::Set(d, static_cast<uint32_t>(page))), d,
                 out_pages + count);
      hn::StoreU(hn::TableLookupLanes(inc, hn::IndicesFromVec(d, keep)), d,
                 out_masks + count);
      count += iteration_internal::kByteSlots.count[bits[0]];
    } else {
      const auto pages = hn::Add(lane_index, hn::Set(d, static_cast<uint32_t>(page)));
      hn::CompressStore(pages, nonempty, d, out_pages + count);
      count += hn::CompressStore(inc, nonempty, d, out_masks + count);
    }
  }
  for (; page < end; ++page) {
    const uint32_t mask = FilterOnePage(rows, page);
    if (mask != 0) {
      out_pages[count] = static_cast<uint32_t>(page);
      out_masks[count] = mask;
      ++count;
    }
  }
  return count;
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace strata
HWY_AFTER_NAMESPACE();

#endif  // STRATA_ITERATION_FILTER_INL_H_
