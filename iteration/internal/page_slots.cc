#include "iteration/internal/page_slots.h"

#include <cstddef>
#include <cstdint>

#include "absl/base/attributes.h"
#include "absl/numeric/bits.h"

// Compiled once per Highway target (the loop below), then dispatched at run time.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "iteration/internal/page_slots.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace strata::iteration_internal {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Not instrumented by ASan: GCC spills AVX-512 vectors to 64-byte-aligned stack slots,
// which ASan's fake stack frames (detect_stack_use_after_return) do not align, and the
// aligned reload faults. The tests check every write against canaries instead.
ABSL_ATTRIBUTE_NO_SANITIZE_ADDRESS
uint32_t TakeWholePagesTarget(const PageMatchRows& rows, uint32_t page, uint32_t end_page,
                              uint32_t* HWY_RESTRICT out, size_t& n_ref, size_t max) {
  size_t n = n_ref;
  constexpr size_t kLanes = HWY_LANES(uint32_t);
  if constexpr (kLanes == 16) {
    // AVX-512: a native compress of the slot numbers by the page's bits, 16 slots at a
    // time, each stored whole (its tail is overwritten by the next).
    const hn::ScalableTag<uint32_t> d;
    constexpr uint32_t kChunkBits = (uint32_t{1} << kLanes) - 1;
    const auto lane = hn::Iota(d, 0);
    for (; page < end_page && n + kPageSlots <= max; ++page) {
      const uint32_t match = PageMatches(rows, page);
      const uint32_t base = page * kPageSlots;
      for (uint32_t k = 0; k < kPageSlots; k += kLanes) {
        const uint32_t chunk = (match >> k) & kChunkBits;
        const uint8_t bytes[8] = {static_cast<uint8_t>(chunk), static_cast<uint8_t>(chunk >> 8)};
        const auto slots = hn::Add(lane, hn::Set(d, base + k));
        hn::StoreU(hn::Compress(slots, hn::LoadMaskBits(d, bytes)), d, out + n);
        n += hwy::PopCount(uint64_t{chunk});
      }
    }
  } else if constexpr (kLanes == 8) {
    // AVX2: the slots of each byte of the page's bits from kByteSlots, one load, add
    // and store per 8 slots. Not hn::Compress: AVX2 has no compress instruction, and
    // GCC 12 copied Highway's 1 KiB table of lane indices onto the stack at every call
    // (a `rep movsq` that took 71% of this loop, a quarter of a first compaction).
    const hn::ScalableTag<uint32_t> d;
    for (; page < end_page && n + kPageSlots <= max; ++page) {
      const uint32_t match = PageMatches(rows, page);
      const uint32_t base = page * kPageSlots;
      for (uint32_t k = 0; k < kPageSlots; k += 8) {
        const uint32_t byte = (match >> k) & 0xFFu;
        hn::StoreU(hn::Add(hn::LoadU(d, kByteSlots.slot[byte]), hn::Set(d, base + k)), d,
                   out + n);
        n += kByteSlots.count[byte];
      }
    }
  } else {
    // Other vector sizes (128-bit, scalable): the byte table, as the compiler vectorises it.
    for (; page < end_page && n + kPageSlots <= max; ++page) {
      n += AppendPageSlots(PageMatches(rows, page), page * kPageSlots, out + n);
    }
  }
  n_ref = n;
  return page;
}

void ClassifyOne(const uint32_t* occupied, const uint32_t* const* masks, size_t num_types,
                 size_t page, size_t i, PageClasses& out) {
  const PageClass one = ClassifyPage(occupied[page], masks, num_types, page,
                                     [](size_t c) { return uint64_t{1} << c; });
  out.split[i] = one.split;
  out.full[i] = static_cast<uint32_t>(one.full);  // num_types <= 32
  out.part[i] = static_cast<uint32_t>(one.part);
  out.mismatch[i] = one.mismatch;
}

// Not ASan-instrumented, as TakeWholePagesTarget.
ABSL_ATTRIBUTE_NO_SANITIZE_ADDRESS
void ClassifyPagesTarget(const uint32_t* occupied, const uint32_t* const* masks, size_t num_types,
                         size_t begin, size_t count, PageClasses& out) {
  size_t i = 0;
  constexpr size_t kLanes = HWY_LANES(uint32_t);
  if constexpr (kLanes == 8 || kLanes == 16) {
    const hn::ScalableTag<uint32_t> d;
    const auto zero = hn::Zero(d);
    for (; i + kLanes <= count; i += kLanes) {
      const size_t page = begin + i;
      const auto occupied_bits = hn::LoadU(d, occupied + page);
      auto split = zero;
      auto full = zero;
      auto part = zero;
      auto mismatch = zero;
      for (size_t c = 0; c < num_types; ++c) {
        const auto mask = hn::And(hn::LoadU(d, masks[c] + page), occupied_bits);
        const auto nonzero = hn::Ne(mask, zero);
        const auto is_full = hn::And(hn::Eq(mask, occupied_bits), nonzero);
        const auto is_part = hn::AndNot(is_full, nonzero);
        split = hn::IfThenElse(hn::And(hn::Eq(split, zero), is_part), mask, split);
        mismatch = hn::Or(mismatch, hn::VecFromMask(d, hn::And(is_part, hn::Ne(mask, split))));
        const auto bit = hn::Set(d, uint32_t{1} << c);
        full = hn::Or(full, hn::IfThenElseZero(is_full, bit));
        part = hn::Or(part, hn::IfThenElseZero(is_part, bit));
      }
      hn::StoreU(split, d, out.split + i);
      hn::StoreU(full, d, out.full + i);
      hn::StoreU(part, d, out.part + i);
      hn::StoreU(mismatch, d, out.mismatch + i);
    }
  }
  for (; i < count; ++i) ClassifyOne(occupied, masks, num_types, begin + i, i, out);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace strata::iteration_internal
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace strata::iteration_internal {

HWY_EXPORT(TakeWholePagesTarget);
HWY_EXPORT(ClassifyPagesTarget);

void ClassifyPages(const uint32_t* occupied, const uint32_t* const* masks, size_t num_types,
                   size_t begin, size_t count, PageClasses& out) {
  HWY_DYNAMIC_DISPATCH(ClassifyPagesTarget)(occupied, masks, num_types, begin, count, out);
}

void ClassifyPagesScalar(const uint32_t* occupied, const uint32_t* const* masks, size_t num_types,
                         size_t begin, size_t count, PageClasses& out) {
  for (size_t i = 0; i < count; ++i) {
    HWY_STATIC_DISPATCH(ClassifyOne)(occupied, masks, num_types, begin + i, i, out);
  }
}

uint32_t TakeWholePages(const PageMatchRows& rows, uint32_t page, uint32_t end_page, uint32_t* out,
                        size_t& n, size_t max) {
  return HWY_DYNAMIC_DISPATCH(TakeWholePagesTarget)(rows, page, end_page, out, n, max);
}

uint32_t TakeWholePagesScalar(const PageMatchRows& rows, uint32_t page, uint32_t end_page,
                              uint32_t* out, size_t& n, size_t max) {
  for (; page < end_page && n + kPageSlots <= max; ++page) {
    const uint32_t base = page * kPageSlots;
    for (uint32_t bits = PageMatches(rows, page); bits != 0; bits &= bits - 1) {
      out[n++] = base + static_cast<uint32_t>(absl::countr_zero(bits));
    }
  }
  return page;
}

}  // namespace strata::iteration_internal
#endif  // HWY_ONCE
