// GenerationTable: the one generational slot table behind every index + generation
// handle in Strata (EntityManager's entities, the stores' StoreHandles, the transform's
// stable ids).
//
// Each slot is an index with a generation. Acquire() hands out a slot; Release() bumps
// its generation, so every copy of the old handle is stale and Contains() rejects it.
// The owner wraps (index, generation) in its own handle type.
//
//   GenerationTable table;                         // default Options
//   uint32_t index, generation;
//   if (table.Acquire(&index, &generation)) {
//     table.Contains(index, generation);           // true
//     table.Release(index);
//     table.Contains(index, generation);           // false: stale
//   }
//
// Policy (the same for every owner; owners choose the three numbers in Options):
// - Growth: a new slot (index size(), generation 0) is appended whenever the free queue
//   holds no more than `min_free_indices` slots, up to `max_slots` slots in all. Slot
//   indices are dense: [0, size()).
// - FIFO late reuse: released slots join the back of a FIFO queue; Acquire takes the
//   front only while more than `min_free_indices` slots wait, so a released slot is
//   reused only after at least `min_free_indices` other releases, and one slot's
//   generation advances slowly. When the table has reached `max_slots`, the delay gives
//   way and any queued slot is reused (a full table reuses rather than fails).
// - Retirement: a slot released at generation `max_generation` is retired: never
//   queued, never handed out again, so a generation never wraps to one a stale handle
//   still holds.
// A fixed-capacity owner (the stores) sets max_slots = its capacity, min_free_indices
// = max_slots (every slot is used once before any is reused) and calls Reserve once,
// so nothing allocates later.
//
// Errors: Options from configuration go through Options::Validate (InvalidArgument);
// the constructor aborts on invalid options in every build mode. Acquire returns false
// when no slot is left (max_slots in use or retired). Release and generation abort, in
// every build mode, on a slot not in use: the owner checks its handles first.
//
// Complexity: Contains, Acquire, Release O(1) (amortised where the tables grow);
// the batch forms O(n). Thread-safety: none; const members may run concurrently.
#ifndef STRATA_ENTITY_GENERATION_TABLE_H_
#define STRATA_ENTITY_GENERATION_TABLE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/check.h"
#include "base/huge_page_allocator.h"

namespace strata {

class GenerationTable {
 public:
  // NOTE: a slot's word is its current generation, with kFreeBit set while the slot is
  // free or retired. Issued generations never have the bit, so Contains() is one
  // compare against the stored word, and a forged handle cannot match a free slot.
  static constexpr uint32_t kFreeBit = 0x80000000u;
  // kMaxGeneration: the largest max_generation, 2^31 - 1.
  static constexpr uint32_t kMaxGeneration = kFreeBit - 1;
  // kMaxSlots: the largest max_slots, 2^32 - 2: indices stay below the all-ones index
  // every handle type reserves for "invalid".
  static constexpr uint32_t kMaxSlots = 0xFFFFFFFEu;

  struct Options {
    // min_free_indices: a released slot is reused only while more than this many wait
    // (see the policy above).
    uint32_t min_free_indices = 1024;
    // max_generation: a slot released at this generation is retired. At most
    // kMaxGeneration.
    uint32_t max_generation = kMaxGeneration;
    // max_slots: slots the table may ever hold. At most kMaxSlots.
    uint32_t max_slots = kMaxSlots;

    // Validate: OK, or InvalidArgument naming `owner` and the option it cannot honour.
    absl::Status Validate(absl::string_view owner) const;
  };

  GenerationTable() : GenerationTable(Options()) {}
  // GenerationTable: an empty table. Aborts, in every build mode, unless
  // options.Validate() is OK.
  explicit GenerationTable(const Options& options);

  GenerationTable(const GenerationTable&) = delete;
  GenerationTable& operator=(const GenerationTable&) = delete;
  GenerationTable(GenerationTable&&) noexcept = default;
  GenerationTable& operator=(GenerationTable&&) noexcept = default;

  // Reserve: room for `slots` slots (at most max_slots) and as many queued ones, so
  // tables of that size never allocate again. O(size()) when it grows.
  void Reserve(size_t slots);

  // Contains: slot `index` is in use at `generation`. O(1).
  bool Contains(uint32_t index, uint32_t generation) const {
    return index < words_.size() && (generation & kFreeBit) == 0 &&
           words_[index] == generation;
  }
  // in_use: slot `index` (any value) is handed out.
  bool in_use(uint32_t index) const {
    return index < words_.size() && (words_[index] & kFreeBit) == 0;
  }
  // generation: the generation of in-use slot `index`. Aborts, in every build mode, if
  // the slot is not in use (out of range, free or retired). Kernels reading the slots
  // they hold in a loop read words() instead.
  uint32_t generation(uint32_t index) const {
    STRATA_CHECK(in_use(index), "GenerationTable::generation: the slot is not in use");
    return words_[index];
  }
  // words: per slot, its generation, with kFreeBit set while free or retired; for
  // kernels that check many handles in one loop. Invalidated by Acquire and Reserve.
  const uint32_t* words() const { return words_.data(); }

  // Acquire: hands out a slot by the policy above; false (nothing changes) when none
  // is left. O(1) amortised.
  bool Acquire(uint32_t* index, uint32_t* generation) {
    if (ABSL_PREDICT_TRUE(free_count_ > options_.min_free_indices)) {
      PopFront(index, generation);
      return true;
    }
    if (ABSL_PREDICT_TRUE(words_.size() < options_.max_slots)) {
      *index = static_cast<uint32_t>(words_.size());
      *generation = 0;
      words_.push_back(0);
      return true;
    }
    if (free_count_ == 0) return false;
    PopFront(index, generation);
    return true;
  }

  // AcquireBatch: hands out `n` slots, all or nothing, exactly as n calls of Acquire
  // would, calling emit(k, index, generation) for k = 0..n-1 in order. False (nothing
  // changes, emit never called) when fewer than n are left. O(n).
  template <typename Emit>
  bool AcquireBatch(size_t n, Emit emit);

  // Release: frees in-use slot `index` (the caller has checked its handle, e.g. with
  // Contains): its handles go stale; it joins the back of the queue, or is retired if
  // its generation reached max_generation. O(1) amortised. Aborts, in every build mode,
  // if the slot is not in use (out of range, free or retired): one compare and one bit
  // test on the word it reads anyway.
  void Release(uint32_t index) {
    STRATA_CHECK(in_use(index), "GenerationTable::Release: the slot is not in use");
    const uint32_t generation = words_[index];
    if (ABSL_PREDICT_FALSE(generation >= options_.max_generation)) {
      words_[index] = generation | kFreeBit;
      ++retired_count_;
      return;
    }
    words_[index] = (generation + 1) | kFreeBit;
    ReserveFree(1);
    ring_[(head_ + free_count_) & (ring_capacity_ - 1)] = index;
    ++free_count_;
  }

  // ReleaseBatch: releases every handle of `handles` (each has index() and
  // generation()), all or nothing: returns handles.size() when all were in use (and
  // are now released, in order), else the position of the first that is not in use,
  // or repeats an earlier one, and then nothing changes. O(n), no allocation once the
  // queue has room for n more.
  template <typename Handle>
  size_t ReleaseBatch(absl::Span<const Handle> handles);

  // size: slots ever handed out (the largest index + 1); live, free or retired.
  size_t size() const { return words_.size(); }
  // live: slots in use.
  size_t live() const { return words_.size() - free_count_ - retired_count_; }
  // free_slots: released slots waiting in the queue.
  size_t free_slots() const { return free_count_; }
  // retired_slots: slots retired at max_generation.
  size_t retired_slots() const { return retired_count_; }
  // available: slots Acquire can still hand out (unused below max_slots, plus queued).
  size_t available() const { return options_.max_slots - words_.size() + free_count_; }
  const Options& options() const { return options_; }
  // MemoryUsage: bytes of the slot words and the queue.
  size_t MemoryUsage() const {
    return (words_.capacity() + ring_capacity_) * sizeof(uint32_t);
  }

 private:
  void PopFront(uint32_t* index, uint32_t* generation) {
    const uint32_t i = ring_[head_];
    head_ = (head_ + 1) & (ring_capacity_ - 1);
    --free_count_;
    const uint32_t g = words_[i] & ~kFreeBit;
    words_[i] = g;
    *index = i;
    *generation = g;
  }
  // Makes room in the queue for `n` more indices (capacity stays a power of two, so
  // positions wrap with a mask and pops never move memory).
  void ReserveFree(size_t n) {
    if (ABSL_PREDICT_FALSE(ring_capacity_ - free_count_ < n)) GrowRing(free_count_ + n);
  }
  void GrowRing(size_t min_capacity);
  // ReleaseBatch's loop, on values only and out of line: with the table's `this` live
  // across it, the compiler spilled the queue mask to the stack (a load per handle).
  struct ReleaseRunResult {
    size_t done;    // handles released before the first bad one (n if none)
    size_t pushed;  // of those, queued (the rest retired)
  };
  template <typename Handle>
  ABSL_ATTRIBUTE_NOINLINE static ReleaseRunResult ReleaseRun(
      const Handle* in, size_t n, uint32_t* words, size_t slot_count, uint32_t* ring,
      size_t mask, size_t tail, uint32_t max_generation);
  // ReleaseBatch's failure path, out of line so the hot loop keeps its registers.
  template <typename Handle>
  ABSL_ATTRIBUTE_NOINLINE void UndoRelease(absl::Span<const Handle> handles, size_t failed);

  Options options_;
  // NOTE: huge-page backed from 1 MiB (256k slots): handles are checked in random order
  // (a frame's movers, a destroy batch), and with 4 KiB pages every few checks of a
  // large table took a TLB miss on top of the cache miss.
  std::vector<uint32_t, HugePageAllocator<uint32_t>> words_;
  std::unique_ptr<uint32_t[]> ring_;  // free_count_ indices from head_, FIFO
  size_t ring_capacity_ = 0;          // 0 or a power of two
  size_t head_ = 0;
  size_t free_count_ = 0;
  size_t retired_count_ = 0;
};

// ---- Implementation ---------------------------------------------------------------------

template <typename Emit>
bool GenerationTable::AcquireBatch(size_t n, Emit emit) {
  // The policy in three runs: the queue down to min_free_indices, fresh slots up to
  // max_slots, then the rest of the queue.
  const size_t reusable =
      free_count_ > options_.min_free_indices ? free_count_ - options_.min_free_indices : 0;
  const size_t from_queue = std::min(reusable, n);
  const size_t fresh = std::min(n - from_queue, options_.max_slots - words_.size());
  const size_t late = n - from_queue - fresh;
  if (ABSL_PREDICT_FALSE(late > free_count_ - from_queue)) return false;
  const size_t mask = ring_capacity_ - 1;
  // Locals, so the stores `emit` makes cannot force reloads of the members.
  uint32_t* const words = words_.data();
  const uint32_t* const ring = ring_.get();
  const size_t head = head_;
  for (size_t k = 0; k < from_queue; ++k) {
    const uint32_t index = ring[(head + k) & mask];
    const uint32_t generation = words[index] & ~kFreeBit;
    words[index] = generation;
    emit(k, index, generation);
  }
  head_ = (head + from_queue) & mask;
  free_count_ -= from_queue;
  if (fresh > 0) {
    const size_t first = words_.size();
    words_.resize(first + fresh);  // generation 0, which resize() writes
    for (size_t k = 0; k < fresh; ++k) {
      emit(from_queue + k, static_cast<uint32_t>(first + k), uint32_t{0});
    }
  }
  for (size_t k = from_queue + fresh; k < n; ++k) {
    uint32_t index, generation;
    PopFront(&index, &generation);
    emit(k, index, generation);
  }
  return true;
}

template <typename Handle>
size_t GenerationTable::ReleaseBatch(absl::Span<const Handle> handles) {
  const size_t n = handles.size();
  // NOTE: the queue may grow even when the batch then fails; that is capacity only.
  ReserveFree(n);
  const ReleaseRunResult run =
      ReleaseRun(handles.data(), n, words_.data(), words_.size(), ring_.get(),
                 ring_capacity_ - 1, head_ + free_count_, options_.max_generation);
  if (ABSL_PREDICT_FALSE(run.done != n)) {
    UndoRelease(handles, run.done);
    return run.done;
  }
  free_count_ += run.pushed;
  retired_count_ += n - run.pushed;
  return n;
}

template <typename Handle>
GenerationTable::ReleaseRunResult GenerationTable::ReleaseRun(
    const Handle* in, size_t n, uint32_t* words, size_t slot_count, uint32_t* ring,
    size_t mask, size_t tail, uint32_t max_generation) {
  // One pass validates, frees and queues each handle. A repeat fails the check because
  // its first occurrence already set the free bit. On failure the caller undoes the
  // pass (words restored; the queue's count was not yet raised), so nothing changes.
  size_t pushed = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t index = in[i].index();
    const uint32_t generation = in[i].generation();
    if (ABSL_PREDICT_FALSE(index >= slot_count || (generation & kFreeBit) != 0 ||
                           words[index] != generation)) {
      return {i, pushed};
    }
    // Branch-free Release(): the next generation is queued, or at max_generation the
    // slot keeps its generation, is not queued (the write lands past the queue's end,
    // inside the reserved room) and is retired.
    const uint32_t reusable = generation < max_generation ? 1 : 0;
    words[index] = (generation + reusable) | kFreeBit;
    ring[(tail + pushed) & mask] = index;
    pushed += reusable;
  }
  return {n, pushed};
}

template <typename Handle>
void GenerationTable::UndoRelease(absl::Span<const Handle> handles, size_t failed) {
  for (size_t k = 0; k < failed; ++k) words_[handles[k].index()] = handles[k].generation();
}

}  // namespace strata

#endif  // STRATA_ENTITY_GENERATION_TABLE_H_
