// HandlePool: the generational id table SparseStore and ContiguousStore share.
//
// A fixed number of slots, each with a generation. Acquire() hands out the slot that has
// been free the longest (a FIFO ring, so one slot's generation advances slowly even
// when entries churn); Release() bumps the generation so old handles go stale, or
// retires the slot once its generation reaches max_generation. Everything is
// allocated in the constructor; nothing grows later.
//
//   entity_internal::HandlePool pool(/*capacity=*/4, /*max_generation=*/0x7FFFFFFF);
//   StoreHandle h;
//   if (pool.Acquire(&h)) { ...; pool.Release(h.index()); }  // h is now stale
#ifndef STRATA_ENTITY_INTERNAL_HANDLE_POOL_H_
#define STRATA_ENTITY_INTERNAL_HANDLE_POOL_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "entity/store_handle.h"

namespace strata::entity_internal {

class HandlePool {
 public:
  // NOTE: a slot's word is its current generation, with kFreeBit set while the slot is
  // free or retired. Issued generations never have the bit, so Contains() is one
  // compare against the stored word.
  static constexpr uint32_t kFreeBit = 0x80000000u;
  // kMaxCapacity: slot indices stay below StoreHandle::kInvalidIndex.
  static constexpr uint32_t kMaxCapacity = StoreHandle::kInvalidIndex;

  // kMaxGeneration: the largest max_generation, 2^31 - 1.
  static constexpr uint32_t kMaxGeneration = kFreeBit - 1;

  // Validate: OK, or InvalidArgument naming `store` and the value the pool cannot
  // honour (capacity >= kMaxCapacity, max_generation > kMaxGeneration).
  static absl::Status Validate(const char* store, uint32_t capacity,
                               uint32_t max_generation) {
    if (capacity >= kMaxCapacity) {
      return absl::InvalidArgumentError(absl::StrCat(store, ": capacity ", capacity,
                                                     " is above the largest, ",
                                                     kMaxCapacity - 1));
    }
    if (max_generation > kMaxGeneration) {
      return absl::InvalidArgumentError(
          absl::StrCat(store, ": Options::max_generation ", max_generation,
                       " is above the largest generation a handle can hold (",
                       kMaxGeneration, ")"));
    }
    return absl::OkStatus();
  }

  // HandlePool: `capacity` free slots at generation 0, handed out in index order first.
  // Aborts, in every build mode, unless Validate(capacity, max_generation) is OK.
  HandlePool(uint32_t capacity, uint32_t max_generation)
      : capacity_(CheckedCapacity(capacity, max_generation)),
        max_generation_(max_generation),
        generations_(new uint32_t[capacity]),
        free_ring_(new uint32_t[capacity]),
        free_count_(capacity) {
    for (uint32_t i = 0; i < capacity; ++i) {
      generations_[i] = kFreeBit;
      free_ring_[i] = i;
    }
  }

  HandlePool(const HandlePool&) = delete;
  HandlePool& operator=(const HandlePool&) = delete;

  // Acquire: takes the longest-free slot; false when none is left (all in use or
  // retired). O(1).
  bool Acquire(StoreHandle* out) {
    if (ABSL_PREDICT_FALSE(free_count_ == 0)) return false;
    const uint32_t index = free_ring_[free_head_];
    free_head_ = free_head_ + 1 == capacity_ ? 0 : free_head_ + 1;
    --free_count_;
    const uint32_t generation = generations_[index] & ~kFreeBit;
    generations_[index] = generation;
    *out = StoreHandle(index, generation);
    return true;
  }

  // Contains: `h` is a slot currently in use at h's generation. O(1).
  bool Contains(StoreHandle h) const {
    return h.index() < capacity_ && (h.generation() & kFreeBit) == 0 &&
           generations_[h.index()] == h.generation();
  }

  // in_use: slot `index` (< capacity) is handed out.
  bool in_use(uint32_t index) const { return (generations_[index] & kFreeBit) == 0; }

  // HandleAt: the live handle of in-use slot `index`.
  StoreHandle HandleAt(uint32_t index) const {
    return StoreHandle(index, generations_[index]);
  }

  // Release: frees in-use slot `index`: its handles go stale; it rejoins the back of
  // the free ring, or is retired for good if its generation reached max_generation.
  void Release(uint32_t index) {
    ABSL_HARDENING_ASSERT(index < capacity_ && in_use(index));
    const uint32_t generation = generations_[index];
    if (ABSL_PREDICT_FALSE(generation >= max_generation_)) {
      generations_[index] = generation | kFreeBit;
      ++retired_count_;
      return;
    }
    generations_[index] = (generation + 1) | kFreeBit;
    uint64_t tail = uint64_t{free_head_} + free_count_;  // < 2^33: no wrap
    if (tail >= capacity_) tail -= capacity_;
    free_ring_[tail] = index;
    ++free_count_;
  }

  uint32_t capacity() const { return capacity_; }
  // free_slots: slots Acquire() can still hand out.
  uint32_t free_slots() const { return free_count_; }
  // retired_slots: slots that reached max_generation and are never handed out again.
  uint32_t retired_slots() const { return retired_count_; }
  // MemoryUsage: bytes of the two tables.
  size_t MemoryUsage() const { return size_t{capacity_} * 2 * sizeof(uint32_t); }

 private:
  // Runs before the tables are allocated, so an unusable capacity never allocates.
  static uint32_t CheckedCapacity(uint32_t capacity, uint32_t max_generation) {
    STRATA_CHECK(capacity < kMaxCapacity,
                 "store capacity must be below 2^32 - 1 (use the store's Make for a Status)");
    STRATA_CHECK(max_generation <= kMaxGeneration,
                 "store Options::max_generation must be below 2^31 (use the store's Make "
                 "for a Status)");
    return capacity;
  }

  uint32_t capacity_;
  uint32_t max_generation_;
  std::unique_ptr<uint32_t[]> generations_;
  // Ring of free slot indices: free_count_ entries starting at free_head_.
  std::unique_ptr<uint32_t[]> free_ring_;
  uint32_t free_head_ = 0;
  uint32_t free_count_;
  uint32_t retired_count_ = 0;
};

}  // namespace strata::entity_internal

#endif  // STRATA_ENTITY_INTERNAL_HANDLE_POOL_H_
