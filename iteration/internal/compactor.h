// Compactor: EntityPages' compaction, the work behind EntityPages::Compact(budget).
// A pass regroups the store's entities so that those with the same component set fill
// contiguous whole pages, one set's range after another's in signature order. It
// begins with a survey of the store (iteration/internal/compaction_survey.h) and runs
// in two parts: first the trades, pairs of entities that swap places (one of set s in
// r's range with one of r in s's range), found by cursors over the masks as they go
// and swapped in fused batches; then the moves planned for the other outsiders, each
// into a hole of its set's range (a swap if another entity holds it). Every call stops
// after `budget` moves (a swap counts two) and the next call resumes the pass; a swap
// the budget cuts in two parks its second entity past the ranges and finishes on the
// next call. The design and the figures are in docs/notes/iteration.md, "Compaction".
//
// It is a class of its own so that the store's header and sources read as the store
// (slots, Add/Remove, pages) and the pass's state (trades, plan, parked entities) is
// in one place, written by one class. It is not an independent component: EntityPages
// owns one, constructed with the store, and delegates Compact and
// compaction_in_progress to it; it is a friend of EntityPages and works on the store's
// private tables (see the friend declaration there for what it touches). Internal to
// //iteration:entity_pages; include iteration/entity_pages.h, which includes this.
//
// The methods are in compactor.cc (the pass and its moves), compactor_plan.cc (the
// survey's use: trades and planned moves) and compactor_trade.cc (a trade's fused
// swaps).
#ifndef STRATA_ITERATION_INTERNAL_COMPACTOR_H_
#define STRATA_ITERATION_INTERNAL_COMPACTOR_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "iteration/components.h"

namespace strata {

class EntityPages;

namespace iteration_internal {

// One move of a compaction plan: put entity (index, generation) at `target`.
struct PlannedMove {
  uint32_t index;
  uint32_t generation;
  uint32_t target;
};

// A trade of a compaction pass: the entities of one component set standing in a
// second set's range swap places, in slot order, with those of the second set
// standing in the first's. Each side is a cursor over a range of slots (`next` the
// first not looked at, `end` past the last) for the entities of `set` (an offset
// into trade_sets_); `bits` caches what is left of page `page`'s matches (for one
// call: `page` is kNoSlot when none is cached).
struct TradeCursor {
  uint32_t next;
  uint32_t end;
  uint32_t set;
  uint32_t page;
  uint32_t bits;
};
struct Trade {
  TradeCursor a;  // entities of a's set in b's set's range
  TradeCursor b;
};

class Compactor {
 public:
  // Compactor: the compaction of `store`, which owns it (it outlives nothing of it).
  explicit Compactor(EntityPages& store) : store_(&store) {}
  Compactor(const Compactor&) = delete;
  Compactor& operator=(const Compactor&) = delete;

  // Compact: EntityPages::Compact (see iteration/entity_pages.h): at most `budget`
  // moves of the pass in progress, planning one first if none is and the store
  // changed since the last; the number of moves made.
  size_t Compact(size_t budget);
  // in_progress: EntityPages::compaction_in_progress.
  bool in_progress() const {
    return trade_cursor_ < trades_.size() || parked_stage_ != 0 || moves_pending_ ||
           plan_cursor_ < plan_.size();
  }
  // EndTrades: called when the store registers a type. The pass's trade sets have a
  // word per type of the plan: the cursors and swaps would read past them for the new
  // type. Its trades end (a parked entity stays where it is); true if there were any,
  // and the store then has the next Compact plan a new pass with every type.
  bool EndTrades() {
    if (trades_.empty() && parked_stage_ == 0) return false;
    ResetTrades();
    return true;
  }
  // DropPlan: the store emptied (every own slot is free again, back to the identity
  // layout): a pass in progress has no planned move left, and its memory goes.
  void DropPlan() {
    plan_ = std::vector<PlannedMove>();
    plan_cursor_ = 0;
  }
  // plan_bytes: the plan's memory, for EntityPages::MemoryUsage.
  size_t plan_bytes() const { return plan_.capacity() * sizeof(PlannedMove); }

 private:
  // The store's masks, one array per type (no table grows while they are used).
  std::vector<const uint32_t*> TypeMasks() const;
  // ResetTrades: no trade left of the pass. ResetPlan: no planned move left, the
  // layout counted as planned; false if the store is empty (nothing to plan).
  void ResetTrades();
  bool ResetPlan();
  // PlanTrades: a new pass from a survey: its trades, and the moves left after them
  // (or moves_pending_ for a store of many sets). False if nothing is to move.
  bool PlanTrades();
  // The cursor's next slots of its set, up to `max` (fewer: the range is exhausted).
  // Writes up to out[max + kEntityPageSize - 2] (out must have that room).
  size_t TakeOfSet(TradeCursor& cursor, const uint32_t* const* masks, uint32_t* out,
                   size_t max);
  // PlanCompaction: every move of the pass from a new survey (after the trades of a
  // store of many sets).
  bool PlanCompaction();
  // A move's or swap's slot records (entity pages, counts, occupancy, slot table),
  // then per type SwapComponentData for a batch of (from, to) slot pairs: masks and
  // data, as a swap of the two slots (a move is a swap with an empty slot).
  void MoveRecords(uint32_t from, uint32_t to);
  void SwapRecords(uint32_t a, uint32_t b);
  void SwapComponentData(ComponentId c, const uint32_t* pairs, size_t n);
  // A trade's swaps (xs[k], ys[k]), k < n, in order, each whole in one step: its records
  // and every type its entities have (known from the trade's sets), with prefetches.
  void SwapTradePairs(const Trade& trade, const uint32_t* xs, const uint32_t* ys, size_t n);

  EntityPages* const store_;
  // The pass in progress (plan_[plan_cursor_..] left) and the end of its target
  // ranges. A pass runs its trades (trades_[trade_cursor_..]) first, then plans the
  // moves left (moves_pending_) into plan_. A swap cut by the budget parks its second
  // entity: parked_[0] goes to parked_[1] and the one parked at parked_[2] to
  // parked_[0] (stage 1), or only the latter is left (stage 2). Whether the store
  // changed since the last pass was planned is the store's layout_changed_ (its hot
  // paths set it).
  std::vector<Trade> trades_;
  size_t trade_cursor_ = 0;
  std::vector<uint32_t> trade_sets_;  // per set of a trade, a word per type
  uint32_t parked_[3] = {0, 0, 0};
  uint8_t parked_stage_ = 0;
  bool moves_pending_ = false;
  std::vector<PlannedMove> plan_;
  size_t plan_cursor_ = 0;
  uint32_t plan_end_ = 0;
};

}  // namespace iteration_internal
}  // namespace strata

#endif  // STRATA_ITERATION_INTERNAL_COMPACTOR_H_
