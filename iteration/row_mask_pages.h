// RowMaskPages: scheme 1 of "Efficient Entity Page Iteration" (entity as row), kept to
// compare against EntityPages (scheme 2). Each entity slot holds one 64-bit component
// mask; each 32-entity page caches the bit-or and bit-and of its rows so a filter can
// skip whole pages, then checks the surviving pages' rows one by one.
//
//   RowMaskPages rows;
//   rows.Add(17, kPosition);
//   rows.Add(17, kVelocity);
//   rows.ForEachMatch(Bit(kPosition) | Bit(kVelocity), Bit(kFrozen),
//                     [&](uint32_t index) { ... });
//   rows.UpdateDirtyPages();   // once per frame: exact caches, release empty pages
//
// Keyed by entity index (not handle) and masks only, no component data: what is
// compared is the filtering, component storage is the same in both schemes.
//
// Cache invariant (why a walk is correct between UpdateDirtyPages calls): bit_or is
// always a superset of the OR of the rows (Add/Create OR into it), bit_and always a
// subset of their AND (Remove/Delete clear the bit in it), so a page is only skipped
// when no row can match. UpdateDirtyPages makes both exact.
//
// Thread-safety: none for mutation; ForEachMatch is const.
#ifndef STRATA_ITERATION_ROW_MASK_PAGES_H_
#define STRATA_ITERATION_ROW_MASK_PAGES_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "base/policy_checks.h"

namespace strata {

class RowMaskPages {
 public:
  // kMaxComponents: one 64-bit row per entity.
  static constexpr uint32_t kMaxComponents = 64;
  static constexpr uint32_t kPageSize = 32;

  RowMaskPages() = default;
  RowMaskPages(const RowMaskPages&) = delete;
  RowMaskPages& operator=(const RowMaskPages&) = delete;

  // Add: sets `component` (< kMaxComponents) for entity `index`; allocates its page.
  // Returns false if it was already set. O(1).
  bool Add(uint32_t index, uint32_t component);
  // Remove: clears `component`; false if it was not set. O(1); marks the page dirty.
  bool Remove(uint32_t index, uint32_t component);
  // Delete: clears every component of `index`; false if it had none. O(1).
  bool Delete(uint32_t index);
  // Row: the mask of `index` (0 if none or never allocated). O(1).
  uint64_t Row(uint32_t index) const;
  // CreateFromBundle: ORs `mask` into the rows of `indices`. O(indices).
  void CreateFromBundle(absl::Span<const uint32_t> indices, uint64_t mask);

  // UpdateDirtyPages: recomputes bit_or/bit_and of pages changed by Remove/Delete and
  // releases pages whose rows are all zero. O(dirty pages * 32). Returns pages freed.
  size_t UpdateDirtyPages();

  // ForEachMatch: fn(index) for each entity whose row has every bit of `include`
  // and none of `exclude`, ascending. The article's scheme 1 walk.
  template <typename Fn>
  void ForEachMatch(uint64_t include, uint64_t exclude, Fn&& fn) const {
    for (size_t p = 0; p < pages_.size(); ++p) {
      const Page* page = pages_[p].get();
      if (page == nullptr) continue;
      if ((page->bit_or & include) != include) continue;
      if ((page->bit_and & exclude) != 0) continue;
      const uint32_t base = static_cast<uint32_t>(p * kPageSize);
      for (uint32_t i = 0; i < kPageSize; ++i) {
        const uint64_t row = page->rows[i];
        if ((row & include) != include) continue;
        if ((row & exclude) != 0) continue;
        fn(base + i);
      }
    }
  }

  size_t allocated_pages() const { return allocated_pages_; }
  size_t num_dirty_pages() const { return dirty_.size(); }
  // page_caches: the cached (bit_or, bit_and) of page `p`, or {0, 0} if unallocated.
  std::pair<uint64_t, uint64_t> page_caches(size_t p) const;

 private:
  struct Page {
    uint64_t rows[kPageSize] = {};
    uint64_t bit_or = 0;
    uint64_t bit_and = 0;
    bool dirty = false;
  };
  Page* EnsurePage(uint32_t page);
  void MarkDirty(uint32_t page);

  std::vector<std::unique_ptr<Page>> pages_;
  std::vector<uint32_t> dirty_;
  size_t allocated_pages_ = 0;
};

}  // namespace strata

#endif  // STRATA_ITERATION_ROW_MASK_PAGES_H_
