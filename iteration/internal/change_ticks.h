// ChangeTicks: the write and add history of one component type of an EntityPages
// store, exact for any "since", at page cost for the walks that write whole pages.
//
// A tick is the store's clock (EntityPages::tick()). Per page: page_tick, the tick of
// the page's last write, and page_mask, the slots written at page_tick. Per slot:
// slot_tick, the tick of the slot's last write when that was before page_tick (a slot
// in page_mask reads page_tick instead). So a walk that writes a page at a new tick
// stores two words, moving into slot_tick only the slots of the old mask it does not
// write again; and "changed since s" skips a page whose page_tick is not after s with
// one compare, else reads page_mask and the slot ticks of the other slots. Adds keep
// per-slot ticks (slot_added) and a per-page maximum (page_added).
//
// Ticks compare in serial-number arithmetic (after: (int32_t)(a - b) > 0), valid for
// differences below 2^31; the store clamps ticks older than kMaxAge (Clamp) as the
// clock passes each multiple of kMaxAge, so a difference never reaches 2^31. Tick 0
// is never a store's tick: it is kNeverRan, before every write.
// Thread-safety: walks on disjoint pages mark disjoint words.
#ifndef STRATA_ITERATION_INTERNAL_CHANGE_TICKS_H_
#define STRATA_ITERATION_INTERNAL_CHANGE_TICKS_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/numeric/bits.h"

namespace strata::iteration_internal {

inline constexpr uint32_t kChangePageShift = 5;  // 32 slots per page, as EntityPages

class ChangeTicks {
 public:
  // kMaxAge: ticks older than this are clamped to it (see above).
  static constexpr uint32_t kMaxAge = uint32_t{1} << 30;

  static bool After(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) > 0; }

  // Grow: room for `pages` pages (new ones never written).
  void Grow(size_t pages) {
    if (pages <= page_tick_.size()) return;
    page_tick_.resize(pages, 0);
    page_mask_.resize(pages, 0);
    page_added_.resize(pages, 0);
    slot_tick_.resize(pages << kChangePageShift, 0);
    slot_added_.resize(pages << kChangePageShift, 0);
  }
  size_t pages() const { return page_tick_.size(); }
  // page_tick / page_added: the page's latest write / add (a walk's first test).
  uint32_t page_tick(size_t page) const { return page_tick_[page]; }
  uint32_t page_added(size_t page) const { return page_added_[page]; }
  const uint32_t* page_ticks() const { return page_tick_.data(); }
  const uint32_t* page_addeds() const { return page_added_.data(); }

  // PagesAfter: bit j set when page `first` + j (j < n <= 32) has its latest tick in
  // `ticks` after `since`. A branch-free loop the compiler vectorises.
  static uint32_t PagesAfter(const uint32_t* ticks, size_t first, size_t n, uint32_t since) {
    uint32_t bits = 0;
    for (size_t j = 0; j < n; ++j) {
      bits |= static_cast<uint32_t>(static_cast<int32_t>(ticks[first + j] - since) > 0) << j;
    }
    return bits;
  }

  // MarkWritten: slots `bits` of `page` were written at `tick` (the store's current).
  ABSL_ATTRIBUTE_ALWAYS_INLINE void MarkWritten(size_t page, uint32_t bits, uint32_t tick) {
    uint32_t& page_tick = page_tick_[page];
    uint32_t& mask = page_mask_[page];
    if (page_tick == tick) {
      mask |= bits;
      return;
    }
    // The old mask's slots not written now keep their tick per slot.
    uint32_t keep = mask & ~bits;
    while (keep != 0) {
      slot_tick_[(page << kChangePageShift) + absl::countr_zero(keep)] = page_tick;
      keep &= keep - 1;
    }
    page_tick = tick;
    mask = bits;
  }
  // MarkAdded: `slot` took the component at `tick` (also a write).
  void MarkAdded(uint32_t slot, uint32_t tick) {
    slot_added_[slot] = tick;
    page_added_[slot >> kChangePageShift] = tick;
    MarkWritten(slot >> kChangePageShift, uint32_t{1} << (slot & 31), tick);
  }

  // ChangedMask / AddedMask: of the slots `present` of `page`, those written / added
  // after `since`.
  uint32_t ChangedMask(size_t page, uint32_t present, uint32_t since) const {
    if (!After(page_tick_[page], since)) return 0;
    uint32_t changed = page_mask_[page] & present;
    uint32_t rest = present & ~page_mask_[page];
    while (rest != 0) {
      const uint32_t bit = static_cast<uint32_t>(absl::countr_zero(rest));
      if (After(slot_tick_[(page << kChangePageShift) + bit], since)) changed |= uint32_t{1} << bit;
      rest &= rest - 1;
    }
    return changed;
  }
  uint32_t AddedMask(size_t page, uint32_t present, uint32_t since) const {
    if (!After(page_added_[page], since)) return 0;
    uint32_t added = 0;
    while (present != 0) {
      const uint32_t bit = static_cast<uint32_t>(absl::countr_zero(present));
      if (After(slot_added_[(page << kChangePageShift) + bit], since)) added |= uint32_t{1} << bit;
      present &= present - 1;
    }
    return added;
  }

  // Swap: slots a and b exchange their histories (a compaction's swap or move).
  void Swap(uint32_t a, uint32_t b) {
    const uint32_t written_a = Written(a);
    const uint32_t written_b = Written(b);
    PutWritten(a, written_b);
    PutWritten(b, written_a);
    std::swap(slot_added_[a], slot_added_[b]);
    RaiseAdded(a);
    RaiseAdded(b);
  }

  // Clamp: every tick more than kMaxAge before `tick` becomes tick - kMaxAge.
  void Clamp(uint32_t tick) {
    const uint32_t oldest = tick - kMaxAge;
    auto clamp = [&](std::vector<uint32_t>& ticks) {
      for (uint32_t& t : ticks) {
        if (t != 0 && After(oldest, t)) t = oldest;
      }
    };
    clamp(page_tick_);
    clamp(page_added_);
    clamp(slot_tick_);
    clamp(slot_added_);
  }

  size_t MemoryUsage() const {
    return (page_tick_.capacity() + page_mask_.capacity() + page_added_.capacity() +
            slot_tick_.capacity() + slot_added_.capacity()) * sizeof(uint32_t);
  }

 private:
  uint32_t Written(uint32_t slot) const {
    const size_t page = slot >> kChangePageShift;
    return (page_mask_[page] >> (slot & 31)) & 1u ? page_tick_[page] : slot_tick_[slot];
  }
  // PutWritten: `slot`'s last write becomes `tick` (at most the page's tick or newer).
  void PutWritten(uint32_t slot, uint32_t tick) {
    const size_t page = slot >> kChangePageShift;
    const uint32_t bit = uint32_t{1} << (slot & 31);
    if (After(tick, page_tick_[page])) {
      // The page's tick rises: its mask's slots keep theirs per slot first.
      uint32_t keep = page_mask_[page] & ~bit;
      while (keep != 0) {
        slot_tick_[(page << kChangePageShift) + absl::countr_zero(keep)] = page_tick_[page];
        keep &= keep - 1;
      }
      page_tick_[page] = tick;
      page_mask_[page] = bit;
    } else {
      page_mask_[page] &= ~bit;
      slot_tick_[slot] = tick;
    }
  }
  void RaiseAdded(uint32_t slot) {
    uint32_t& page_added = page_added_[slot >> kChangePageShift];
    if (After(slot_added_[slot], page_added)) page_added = slot_added_[slot];
  }

  std::vector<uint32_t> page_tick_;
  std::vector<uint32_t> page_mask_;
  std::vector<uint32_t> page_added_;
  std::vector<uint32_t> slot_tick_;
  std::vector<uint32_t> slot_added_;
};

}  // namespace strata::iteration_internal

#endif  // STRATA_ITERATION_INTERNAL_CHANGE_TICKS_H_
