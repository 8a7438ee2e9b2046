// Compactor::Compact: the moves of a compaction (see iteration/internal/compactor.h;
// the planners are in compactor_plan.cc). The design and the figures are in
// docs/notes/iteration.md.
//
// A pass runs its trades first: pairs of entities that swap places (an entity of set
// s in r's range with one of r in s's range), found by cursors over the masks; then
// the moves planned for the other outsiders: into a free hole, a move; into a hole
// held by another entity, a swap. A trade's swaps run fused, one whole swap (records,
// then every type its two entities have) after another, the lines of the swaps ahead
// prefetched (SwapTradePairs, in compactor_trade.cc); the planned moves run in
// batches, the slot records of a batch first, then each component type's masks and
// data (SwapComponentData).
#include "iteration/internal/compactor.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "iteration/entity_pages.h"

namespace strata::iteration_internal {
namespace {
// kAnySize: SwapColumn's size parameter for a size known only at run time.
constexpr size_t kAnySize = ~size_t{0};

// How many pairs ahead the swap loops prefetch: a pair takes a few ns once its lines
// are in, a miss a hundred or more.
constexpr size_t kSwapPrefetchAhead = 24;

// NOTE: every helper or lambda here that only prefetches is ABSL_ATTRIBUTE_ALWAYS_INLINE.
// GCC 12 finds such a function (looping) pure and, C++ loops being assumed finite,
// deletes its calls: without the attribute no prefetch of this file reached the
// binary (objdump showed none), so figures measured before had no prefetching. Check
// with `objdump -d` that prefetcht instructions are there after changing one.

// Prefetches, for writing, the elements of both slots of `pair` whose data pages
// exist (their data-page pointers are in L2). kLocality as __builtin_prefetch's.
template <int kLocality>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void PrefetchPairElements(std::byte* const* data,
                                                              const uint32_t* pair, size_t size) {
  for (int side = 0; side < 2; ++side) {
    const uint32_t slot = pair[side];
    if (const std::byte* page = data[slot >> kEntityPageShift]) {
      __builtin_prefetch(page + size_t{slot & (kEntityPageSize - 1)} * size, 1, kLocality);
    }
  }
}

// Swaps the elements of one component type between slots pairs[2k] and pairs[2k+1]
// for k < n, in order, with their mask bits: both present, a swap; one present, a
// copy to the other side (whose data page `ensure(page)` allocates if missing); none,
// nothing. Sizes known at compile time (kSize, 0 for tags) copy with a few moves.
template <size_t kSize, typename Ensure>
void SwapColumn(uint32_t* masks, std::byte** data, size_t runtime_size,
                const uint32_t* pairs, size_t n, Ensure&& ensure) {
  const size_t size = kSize == kAnySize ? runtime_size : kSize;
  for (size_t k = 0; k < n; ++k) {
    if (size != 0 && k + kSwapPrefetchAhead < n) {
      PrefetchPairElements<3>(data, &pairs[2 * (k + kSwapPrefetchAhead)], size);
    }
    const uint32_t a = pairs[2 * k];
    const uint32_t b = pairs[2 * k + 1];
    const uint32_t a_page = a >> kEntityPageShift;
    const uint32_t b_page = b >> kEntityPageShift;
    const uint32_t a_flag = uint32_t{1} << (a & (kEntityPageSize - 1));
    const uint32_t b_flag = uint32_t{1} << (b & (kEntityPageSize - 1));
    const bool in_a = (masks[a_page] & a_flag) != 0;
    const bool in_b = (masks[b_page] & b_flag) != 0;
    if (!in_a && !in_b) continue;
    std::byte* data_a = data[a_page];
    std::byte* data_b = data[b_page];
    if (ABSL_PREDICT_FALSE(data_a == nullptr)) data_a = ensure(a_page);
    if (ABSL_PREDICT_FALSE(data_b == nullptr)) data_b = ensure(b_page);
    if (in_a != in_b) {
      masks[a_page] ^= a_flag;  // the same word twice if both slots share a page
      masks[b_page] ^= b_flag;
    }
    if (size == 0) continue;
    std::byte* pa = data_a + size_t{a & (kEntityPageSize - 1)} * size;
    std::byte* pb = data_b + size_t{b & (kEntityPageSize - 1)} * size;
    if constexpr (kSize != kAnySize && kSize != 0) {
      std::byte tmp[kSize];
      if (in_a && in_b) {
        std::memcpy(tmp, pa, kSize);
        std::memcpy(pa, pb, kSize);
        std::memcpy(pb, tmp, kSize);
      } else if (in_a) {
        std::memcpy(pb, pa, kSize);
      } else {
        std::memcpy(pa, pb, kSize);
      }
    } else {
      if (in_a && in_b) {
        std::swap_ranges(pa, pa + size, pb);
      } else if (in_a) {
        std::memcpy(pb, pa, size);
      } else {
        std::memcpy(pa, pb, size);
      }
    }
  }
}

}  // namespace

// The store's members below are reached through a local reference to it (the store
// pointer loaded once per call): what `this` was when these were EntityPages' methods.

void Compactor::MoveRecords(uint32_t from, uint32_t to) {
  EntityPages& store = *store_;
  const uint32_t from_page = from >> kEntityPageShift;
  const uint32_t from_bit = from & (kEntityPageSize - 1);
  const uint32_t to_page = to >> kEntityPageShift;
  const uint32_t to_bit = to & (kEntityPageSize - 1);
  EntityPage* dst = store.EnsureEntityPage(to_page);  // may grow the tables: first
  EntityPage* src = store.entity_pages_[from_page];
  const uint64_t entity = src->entity[from_bit];
  dst->entity[to_bit] = entity;
  const uint32_t index = Entity::FromBits(entity).index();
  store.count_[to] = store.count_[from];
  store.count_[from] = 0;
  store.occupied_[to_page] |= uint32_t{1} << to_bit;
  store.occupied_[from_page] &= ~(uint32_t{1} << from_bit);
  store.slot_of_[index].slot = to;
  if (!store.dirty_[from_page]) store.MarkDirty(from_page);
  store.PushFreeSlot(from);
}

void Compactor::SwapRecords(uint32_t a, uint32_t b) {
  EntityPages& store = *store_;
  const uint32_t a_page = a >> kEntityPageShift;
  const uint32_t a_bit = a & (kEntityPageSize - 1);
  const uint32_t b_page = b >> kEntityPageShift;
  const uint32_t b_bit = b & (kEntityPageSize - 1);
  EntityPage* ea = store.entity_pages_[a_page];
  EntityPage* eb = store.entity_pages_[b_page];
  const uint64_t entity_a = ea->entity[a_bit];
  const uint64_t entity_b = eb->entity[b_bit];
  ea->entity[a_bit] = entity_b;
  eb->entity[b_bit] = entity_a;
  const uint32_t index_a = Entity::FromBits(entity_a).index();
  const uint32_t index_b = Entity::FromBits(entity_b).index();
  std::swap(store.count_[a], store.count_[b]);
  store.slot_of_[index_b].slot = a;
  store.slot_of_[index_a].slot = b;
  // Either page may lose its last entity with some component.
  if (!store.dirty_[a_page]) store.MarkDirty(a_page);
  if (!store.dirty_[b_page]) store.MarkDirty(b_page);
}

void Compactor::SwapComponentData(ComponentId c, const uint32_t* pairs, size_t n) {
  EntityPages& store = *store_;
  ComponentType& type = store.types_[c];
  // Nothing to do for a type without data pages in this batch's pages: its masks
  // there are zero (a set bit implies a data page).
  if (type.first_page == type.end_page) return;
  uint32_t* const masks = type.masks.data();
  std::byte** const data = type.data.data();  // EnsureDataPage writes entries, never grows
  auto ensure = [&](uint32_t page) { return store.EnsureDataPage(type, page); };
  switch (type.size) {
    case 0: return SwapColumn<0>(masks, data, 0, pairs, n, ensure);
    case 4: return SwapColumn<4>(masks, data, 4, pairs, n, ensure);
    case 8: return SwapColumn<8>(masks, data, 8, pairs, n, ensure);
    case 12: return SwapColumn<12>(masks, data, 12, pairs, n, ensure);
    case 16: return SwapColumn<16>(masks, data, 16, pairs, n, ensure);
    default: return SwapColumn<kAnySize>(masks, data, type.size, pairs, n, ensure);
  }
}

size_t Compactor::Compact(size_t budget) {
  EntityPages& store = *store_;
  if (budget == 0) return 0;
  if (in_progress() && !store.indirect_) {
    // The store emptied since the pass began (back to the identity): nothing of the
    // pass is left to do.
    ResetTrades();
  }
  if (!in_progress()) {
    if (!store.layout_changed_) return 0;  // compact since the last pass: nothing to plan
    if (!PlanTrades()) return 0;
    store.MakeIndirect();  // the moves need the slot table from here on
  }
  // The moves run in batches of kBatch slot pairs. A trade's batch (the pairs its
  // cursors find) runs fused, each swap whole before the next (SwapTradePairs); the
  // batch is its prefetch window, restarted per batch. The planned moves (and a
  // parked entity's) run in two phases: first the pairs are decided and the slot
  // records moved (entity pages, counts, occupancy, slot table), in order, which is
  // what later moves of the batch read; then, one component type at a time, its masks
  // and data are swapped pair by pair in the same order (a move is a swap with an
  // empty slot).
  constexpr size_t kBatch = 512;
  // The moves' slots are scattered over a store larger than the caches, and each
  // move's records are a chain of dependent loads (slot, page pointer, records):
  // prefetch the slot of the move kAhead * 2 ahead and the records of the move kAhead
  // ahead, so several moves' misses overlap.
  constexpr size_t kAhead = 16;
  auto prefetch_records = [&](uint32_t slot) ABSL_ATTRIBUTE_ALWAYS_INLINE {
    const uint32_t page = slot >> kEntityPageShift;
    if (page >= store.page_capacity_) return;
    const uint32_t bit = slot & (kEntityPageSize - 1);
    if (const EntityPage* entity_page = store.entity_pages_[page]) {
      __builtin_prefetch(&entity_page->entity[bit], 1);
    }
    __builtin_prefetch(&store.count_[slot], 1);
  };
  uint32_t pairs[2 * kBatch];
  size_t num_pairs = 0;
  auto flush = [&] {
    for (ComponentId c = 0; c < store.num_types_; ++c) SwapComponentData(c, pairs, num_pairs);
    store.SwapChangeTicks(pairs, num_pairs);
    num_pairs = 0;
  };
  auto add_pair = [&](uint32_t a, uint32_t b) {
    pairs[2 * num_pairs] = a;
    pairs[2 * num_pairs + 1] = b;
    if (++num_pairs == kBatch) flush();
  };
  auto occupied = [&](uint32_t slot) {
    const uint32_t page = slot >> kEntityPageShift;
    return page < store.page_capacity_ &&
           ((store.occupied_[page] >> (slot & (kEntityPageSize - 1))) & 1u) != 0;
  };
  size_t moves = 0;

  // 1. A trade the budget cut in two: the parked entity comes back.
  if (parked_stage_ == 1 && moves < budget) {
    if (occupied(parked_[0]) && !occupied(parked_[1])) {
      MoveRecords(parked_[0], parked_[1]);
      add_pair(parked_[0], parked_[1]);
      ++moves;
    }
    parked_stage_ = 2;
  }
  if (parked_stage_ == 2 && moves < budget) {
    if (occupied(parked_[2]) && !occupied(parked_[0])) {
      MoveRecords(parked_[2], parked_[0]);
      add_pair(parked_[2], parked_[0]);
      ++moves;
    }
    parked_stage_ = 0;
  }

  // 2. Trades, a batch of swaps at a time: the cursors find the pairs (the cached
  // page matches are of this call only), then SwapTradePairs swaps them.
  if (trade_cursor_ < trades_.size()) {
    trades_[trade_cursor_].a.page = trades_[trade_cursor_].b.page = kNoSlot;
    trades_[trade_cursor_].a.bits = trades_[trade_cursor_].b.bits = 0;
  }
  // No table grows during the trades (only a parking move may, and it ends them).
  const std::vector<const uint32_t*> masks = TypeMasks();
  // A page of room past kBatch (see TakeOfSet).
  uint32_t xs[kBatch + kEntityPageSize];
  uint32_t ys[kBatch + kEntityPageSize];
  while (trade_cursor_ < trades_.size() && moves < budget && parked_stage_ == 0) {
    Trade& trade = trades_[trade_cursor_];
    if (num_pairs != 0) flush();
    const size_t want = std::min(kBatch, (budget - moves) / 2);
    // The batch's pairs: up to `take` entities of each side, paired in order (the two
    // cursors cover different ranges, so no swap of the batch changes what either
    // finds next).
    const size_t take = std::max<size_t>(want, 1);
    const size_t got = TakeOfSet(trade.a, masks.data(), xs, take);
    const size_t n = got == 0 ? 0 : TakeOfSet(trade.b, masks.data(), ys, got);
    const bool done = n < take;
    if (want == 0 && n == 1) {
      // One move left: park the second entity past the ranges; the first takes its
      // slot and the parked one the first's on the next call.
      const uint32_t x = xs[0];
      const uint32_t y = ys[0];
      const uint32_t free_slot = store.FindFreeSlotFrom(plan_end_);
      MoveRecords(y, free_slot);
      pairs[0] = y;
      pairs[1] = free_slot;
      num_pairs = 1;
      ++moves;
      parked_[0] = x;
      parked_[1] = y;
      parked_[2] = free_slot;
      parked_stage_ = 1;
    } else {
      SwapTradePairs(trade, xs, ys, n);
      moves += 2 * n;
    }
    if (done) {
      ++trade_cursor_;
      if (trade_cursor_ < trades_.size()) {
        trades_[trade_cursor_].a.page = trades_[trade_cursor_].b.page = kNoSlot;
      }
    }
  }
  if (num_pairs != 0) flush();

  // 3. The moves left, planned once the trades are done (they read the masks).
  if (trade_cursor_ >= trades_.size() && parked_stage_ == 0 && moves_pending_ &&
      moves < budget) {
    ResetTrades();  // the trades are done: what is left is the plan below
    PlanCompaction();
  }
  const bool plan_runs = plan_cursor_ < plan_.size() && moves < budget &&
                         trade_cursor_ >= trades_.size() && parked_stage_ == 0;
  while (plan_runs && plan_cursor_ < plan_.size() && moves < budget) {
    if (plan_cursor_ + 2 * kAhead < plan_.size()) {
      __builtin_prefetch(&store.slot_of_[plan_[plan_cursor_ + 2 * kAhead].index]);
    }
    if (plan_cursor_ + kAhead < plan_.size()) {
      const PlannedMove& ahead = plan_[plan_cursor_ + kAhead];
      // An entity no longer in the store has a stale entry: prefetched for nothing.
      const uint32_t from = store.slot_of_[ahead.index].slot;
      if (from < store.page_capacity_ * kEntityPageSize) prefetch_records(from);
      prefetch_records(ahead.target);
    }
    const PlannedMove& move = plan_[plan_cursor_];
    const SlotEntry entry = store.slot_of_[move.index];
    const uint32_t slot = entry.slot;
    // Deleted or reissued since the plan, or already placed by an earlier swap (the
    // entry's generation is the generation table's).
    if (entry.generation != move.generation || slot == move.target) {
      ++plan_cursor_;
      continue;
    }
    if (!occupied(move.target)) {
      MoveRecords(slot, move.target);
      add_pair(slot, move.target);
      ++moves;
      ++plan_cursor_;
    } else if (budget - moves >= 2) {
      SwapRecords(slot, move.target);
      add_pair(slot, move.target);
      moves += 2;
      ++plan_cursor_;
    } else {
      // One move left: move the target's occupant out of the way, past the target
      // ranges; this entity takes its target on the next call.
      const uint32_t free_slot = store.FindFreeSlotFrom(plan_end_);
      MoveRecords(move.target, free_slot);
      add_pair(move.target, free_slot);
      ++moves;
    }
  }
  if (num_pairs != 0) flush();
  if (plan_cursor_ >= plan_.size()) {
    plan_ = std::vector<PlannedMove>();
    plan_cursor_ = 0;
  }
  if (moves != 0) {
    ++store.epoch_;
    store.ReleaseEmptyPages();
  } else if (!in_progress() && store.layout_changed_) {
    // The pass ended with nothing left to move (what was left had been destroyed or
    // placed), but the store changed during it: plan the next one now, so that 0
    // still means compact. The new pass clears the store's layout_changed_, so this
    // recurses once.
    return Compact(budget);
  }
  return moves;
}

}  // namespace strata::iteration_internal
