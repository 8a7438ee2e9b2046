// SparseStore<T>: fixed-capacity entity storage whose slots never move, as argued for
// in "Entity Memory Contiguity".
//
// All memory is allocated in the constructor (the article's MAX_ENTITIES); an entry
// keeps its slot from Add until Remove, so a pointer to it stays valid that long and
// "permanent" entities (the player) can be held by pointer. Holes are allowed; each
// slot has a generation (so stale handles resolve to nullptr) and a state (free,
// pending, active). An iteration list of the active slots is kept up to date on every
// change, so ForEach over a nearly empty store touches only the live entries.
// Pending (partially initialised) entries are stored but skipped by iteration until
// Activate().
//
//   strata::SparseStore<Npc> npcs(/*capacity=*/4096);
//   STRATA_ASSIGN_OR_RETURN(strata::StoreHandle boss, npcs.AddPending(Npc{"boss"}));
//   ... later, once its assets are loaded:
//   STRATA_RETURN_IF_ERROR(npcs.Activate(boss));
//   npcs.ForEach([](Npc& npc) { npc.Think(); });            // active entries only
//   if (Npc* npc = npcs.TryGet(boss)) npc->health -= 10;    // nullptr once removed
//   STRATA_RETURN_IF_ERROR(npcs.Remove(boss));
//
// Handles: the store issues its own StoreHandle (slot index + generation), see
// store_handle.h for how they relate to EntityManager entities. A freed slot is reused
// FIFO (the one free the longest), and a slot whose generation reaches
// Options::max_generation is retired, so a stale handle never matches a new entry.
// A handle from another store is not detected if its slot happens to be live here.
//
// Thread-safety: none; concurrent const access (TryGet, ForEach on const) is safe.
#ifndef STRATA_ENTITY_SPARSE_STORE_H_
#define STRATA_ENTITY_SPARSE_STORE_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <utility>

#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "entity/internal/element_index.h"
#include "entity/internal/handle_pool.h"
#include "entity/store_handle.h"

namespace strata {

template <typename T>
class SparseStore {
 public:
  struct Options {
    // max_generation: a slot removed at this generation is retired (never reused).
    // Must be < 2^31. Tests lower it to reach retirement quickly.
    uint32_t max_generation = 0x7FFFFFFFu;
  };

  // SparseStore: room for `capacity` entries (< 2^32 - 1), allocated now, never grown.
  // O(capacity).
  explicit SparseStore(uint32_t capacity) : SparseStore(capacity, Options()) {}
  SparseStore(uint32_t capacity, const Options& options)
      : pool_(capacity, options.max_generation),
        data_(std::allocator<T>().allocate(capacity)),
        state_(new uint8_t[capacity]()),
        list_(new uint32_t[capacity]),
        list_pos_(new uint32_t[capacity]) {}

  SparseStore(const SparseStore&) = delete;
  SparseStore& operator=(const SparseStore&) = delete;

  // ~SparseStore: destroys every stored entry, pending or active. O(capacity).
  ~SparseStore() {
    if constexpr (!std::is_trivially_destructible_v<T>) {
      for (uint32_t i = 0; i < capacity(); ++i) {
        if (state_[i] != kFree) std::destroy_at(data_ + i);
      }
    }
    std::allocator<T>().deallocate(data_, capacity());
  }

  // Add: constructs T(args...) in the longest-free slot and makes it active (visible
  // to ForEach). ResourceExhausted when every slot is in use or retired; then nothing
  // changes. O(1). Invalidates no pointer, handle or iterator order of other entries
  // except that ForEach sees the new entry last.
  template <typename... Args>
  absl::StatusOr<StoreHandle> Add(Args&&... args) {
    StoreHandle h;
    if (ABSL_PREDICT_FALSE(!pool_.Acquire(&h))) return FullError();
    std::construct_at(data_ + h.index(), std::forward<Args>(args)...);
    state_[h.index()] = kActive;
    PushToList(h.index());
    return h;
  }

  // AddPending: like Add, but the entry is pending: stored and reachable by its handle
  // (TryGet), skipped by ForEach and ForEachScan until Activate(). O(1).
  template <typename... Args>
  absl::StatusOr<StoreHandle> AddPending(Args&&... args) {
    StoreHandle h;
    if (ABSL_PREDICT_FALSE(!pool_.Acquire(&h))) return FullError();
    std::construct_at(data_ + h.index(), std::forward<Args>(args)...);
    state_[h.index()] = kPending;
    return h;
  }

  // Activate: makes pending entry `h` active. NotFound if `h` is stale, invalid or
  // never issued; FailedPrecondition if it is already active. O(1); moves no entry.
  absl::Status Activate(StoreHandle h) {
    if (ABSL_PREDICT_FALSE(!pool_.Contains(h))) return StaleError("Activate", h);
    if (ABSL_PREDICT_FALSE(state_[h.index()] == kActive)) {
      return absl::FailedPreconditionError(
          absl::StrCat("SparseStore::Activate: ", h.DebugString(), " is already active"));
    }
    state_[h.index()] = kActive;
    PushToList(h.index());
    return absl::OkStatus();
  }

  // Remove: destroys entry `h` (pending or active); `h` and its copies go stale.
  // NotFound if `h` is stale, invalid or never issued; then nothing changes. O(1).
  // Pointers to other entries stay valid; the iteration order changes (the last
  // listed entry takes the removed one's place in the list).
  absl::Status Remove(StoreHandle h) {
    if (ABSL_PREDICT_FALSE(!pool_.Contains(h))) return StaleError("Remove", h);
    const uint32_t slot = h.index();
    if (state_[slot] == kActive) {
      // Swap-remove from the iteration list.
      const uint32_t pos = list_pos_[slot];
      const uint32_t last = list_[--list_size_];
      list_[pos] = last;
      list_pos_[last] = pos;
    }
    state_[slot] = kFree;
    std::destroy_at(data_ + slot);
    pool_.Release(slot);
    return absl::OkStatus();
  }

  // Contains: `h` names a stored entry (pending or active). O(1).
  bool Contains(StoreHandle h) const { return pool_.Contains(h); }
  // IsActive / IsPending: `h` names a stored entry in that state. O(1).
  bool IsActive(StoreHandle h) const {
    return pool_.Contains(h) && state_[h.index()] == kActive;
  }
  bool IsPending(StoreHandle h) const {
    return pool_.Contains(h) && state_[h.index()] == kPending;
  }

  // TryGet: the entry `h` names (pending or active), or nullptr if `h` is stale,
  // invalid or never issued. O(1). The pointer stays valid until that entry is
  // removed or the store is destroyed.
  T* TryGet(StoreHandle h) {
    return pool_.Contains(h) ? data_ + h.index() : nullptr;
  }
  const T* TryGet(StoreHandle h) const {
    return pool_.Contains(h) ? data_ + h.index() : nullptr;
  }

  // HandleOf: the handle of the stored entry at `entry` (the article's
  // HandleFromEntity), or the invalid handle if `entry` is not a stored entry of this
  // store. O(1).
  StoreHandle HandleOf(const T* entry) const {
    uint32_t slot;
    if (!entity_internal::ElementIndex<T>(data_, capacity(), entry, &slot)) {
      return StoreHandle();
    }
    return pool_.in_use(slot) ? pool_.HandleAt(slot) : StoreHandle();
  }

  // ForEach: calls fn(T&) or fn(StoreHandle, T&) for every active entry, walking the
  // iteration list (in blocks of 16, see WalkList): O(active entries), independent of
  // capacity. Order: activation order, perturbed by removals (see SortIterationList).
  // fn must not add, activate or remove entries of this store; collect handles and
  // change the store afterwards.
  template <typename F>
  void ForEach(F&& fn) {
    WalkList(list_.get(), list_size_, [&](uint32_t slot) { Invoke(fn, slot); });
  }
  template <typename F>
  void ForEach(F&& fn) const {
    WalkList(list_.get(), list_size_, [&](uint32_t slot) { Invoke(fn, slot); });
  }

  // ForEachScan: the same visit without the iteration list: the article's plain loop
  // over every slot, checking its active flag. O(capacity) even when empty; slot order.
  // Kept as the baseline the iteration list is measured against.
  template <typename F>
  void ForEachScan(F&& fn) {
    const uint8_t* const state = state_.get();
    const uint32_t n = capacity();
    for (uint32_t slot = 0; slot < n; ++slot) {
      if (state[slot] == kActive) Invoke(fn, slot);
    }
  }
  template <typename F>
  void ForEachScan(F&& fn) const {
    const uint8_t* const state = state_.get();
    const uint32_t n = capacity();
    for (uint32_t slot = 0; slot < n; ++slot) {
      if (state[slot] == kActive) Invoke(fn, slot);
    }
  }

  // iteration_list: the slots of the active entries, in ForEach order. Invalidated by
  // any Add, Activate, Remove or SortIterationList.
  absl::Span<const uint32_t> iteration_list() const {
    return absl::MakeConstSpan(list_.get(), list_size_);
  }

  // SortIterationList: puts the iteration list back in slot (address) order, so
  // ForEach walks memory forwards again after much churn. O(n log n), n = active.
  void SortIterationList() {
    std::sort(list_.get(), list_.get() + list_size_);
    for (uint32_t k = 0; k < list_size_; ++k) list_pos_[list_[k]] = k;
  }

  // capacity: slots allocated at construction (some may be retired).
  uint32_t capacity() const { return pool_.capacity(); }
  // size: stored entries, pending or active: every slot the pool has not free or
  // retired.
  size_t size() const {
    return size_t{capacity()} - pool_.free_slots() - pool_.retired_slots();
  }
  bool empty() const { return size() == 0; }
  // active_size / pending_size: entries in each state.
  size_t active_size() const { return list_size_; }
  size_t pending_size() const { return size() - list_size_; }
  // retired_slots: slots whose generation ran out; capacity() - retired_slots() is the
  // most entries the store can still hold.
  size_t retired_slots() const { return pool_.retired_slots(); }
  // MemoryUsage: bytes allocated by the store (fixed at construction).
  size_t MemoryUsage() const {
    return size_t{capacity()} * (sizeof(T) + sizeof(uint8_t) + 2 * sizeof(uint32_t)) +
           pool_.MemoryUsage();
  }

 private:
  enum : uint8_t { kFree = 0, kPending = 1, kActive = 2 };

  template <typename F>
  ABSL_ATTRIBUTE_ALWAYS_INLINE void Invoke(F& fn, uint32_t slot) {
    if constexpr (std::is_invocable_v<F&, StoreHandle, T&>) {
      fn(pool_.HandleAt(slot), data_[slot]);
    } else {
      fn(data_[slot]);
    }
  }
  template <typename F>
  void Invoke(F& fn, uint32_t slot) const {
    if constexpr (std::is_invocable_v<F&, StoreHandle, const T&>) {
      fn(pool_.HandleAt(slot), static_cast<const T&>(data_[slot]));
    } else {
      fn(static_cast<const T&>(data_[slot]));
    }
  }

  // WalkList: calls visit(slot) for list[0, n) in order. The list is walked in blocks
  // of kWalkBlock slots, each block first prefetching the list line kWalkPrefetch
  // slots ahead. Why: a pass streams the entities through L1, which evicts the list's
  // own lines, and every entity load depends on its index load; a list line that
  // arrives late stalls the next 16 entity loads, a gap the contiguous store (whose
  // addresses need no load) never has. Inside a block the loop is unrolled only
  // kWalkUnroll times. Fully unrolled (16 entity loads, each its own instruction), the
  // HalfFullWorstCase/Slim walk (every other slot) ran 1.21-1.32x of Contiguous in an
  // interleaved scratch benchmark; unrolled by 2 it ran 1.15-1.18x, and Full/Slim
  // 0.91-0.94x instead of 0.95-0.97x. A plausible cause, unconfirmed without performance
  // counters on our VM: each load instruction then advances 512 bytes per iteration
  // instead of 4 KiB, within the reach of the L1 prefetcher that follows one
  // instruction's constant stride (2 KiB on recent Intel cores). Measured on
  // storage_benchmark Full/Slim and HalfFullWorstCase/Slim, see
  // README.md. `list` and `n` are passed in as values, so visit's writes (through a
  // uint32_t&, say) cannot force reloads of list_ or list_size_.
  template <typename V>
  ABSL_ATTRIBUTE_ALWAYS_INLINE static void WalkList(const uint32_t* list, uint32_t n,
                                                    V&& visit) {
    uint32_t k = 0;
    for (; n - k >= kWalkBlock; k += kWalkBlock) {
      // Never past the end: the address is computed only while it is in the list.
      if (n - k > kWalkPrefetch) __builtin_prefetch(list + k + kWalkPrefetch);
      const uint32_t* const block = list + k;
#pragma GCC unroll kWalkUnroll
      for (uint32_t j = 0; j < kWalkBlock; ++j) visit(block[j]);
    }
    for (; k < n; ++k) visit(list[k]);
  }
  // NOTE: 16 uint32_t slots = one 64-byte line of the list per block; 128 slots =
  // eight lines ahead (the distance that measured best, 64 and 256 did worse).
  // kWalkUnroll: 2 measured best; 1, 4, 8 and 16 were slower on Full/Slim or
  // HalfFullWorstCase/Slim.
  static constexpr uint32_t kWalkBlock = 16;
  static constexpr uint32_t kWalkPrefetch = 128;
  static constexpr uint32_t kWalkUnroll = 2;
  static_assert(kWalkBlock % kWalkUnroll == 0);

  void PushToList(uint32_t slot) {
    list_pos_[slot] = list_size_;
    list_[list_size_++] = slot;
  }

  absl::Status FullError() const {
    return absl::ResourceExhaustedError(absl::StrCat(
        "SparseStore: no free slot (capacity ", capacity(), ", ", size(), " stored, ",
        retired_slots(), " retired)"));
  }
  static absl::Status StaleError(const char* op, StoreHandle h) {
    return absl::NotFoundError(absl::StrCat("SparseStore::", op, ": ", h.DebugString(),
                                            " is stale, invalid or never issued"));
  }

  entity_internal::HandlePool pool_;
  // NOTE: data_ is raw storage from std::allocator<T> (aligned to alignof(T)); slot i
  // holds a live T exactly when state_[i] != kFree.
  T* data_;
  std::unique_ptr<uint8_t[]> state_;
  // Iteration list: list_[0, list_size_) are the active slots; list_pos_[slot] is the
  // slot's position in it (meaningful only while the slot is active).
  std::unique_ptr<uint32_t[]> list_;
  std::unique_ptr<uint32_t[]> list_pos_;
  uint32_t list_size_ = 0;
};

}  // namespace strata

#endif  // STRATA_ENTITY_SPARSE_STORE_H_
