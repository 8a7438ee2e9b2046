// SparseStore<T>: fixed-capacity entity storage whose slots never move, as argued for
// in "Entity Memory Contiguity".
//
// All memory is allocated in the constructor (the article's MAX_ENTITIES); an entry
// keeps its slot from Add until Remove, so a pointer to it stays valid that long and
// "permanent" entities (the player) can be held by pointer. Holes are allowed; each
// slot has a generation (so stale handles resolve to nullptr) and a state (free,
// pending, active). An iteration list of the active slots is kept up to date on every
// change, so ForEach over a nearly empty store touches only the live entries. Blocks of
// 16 listed slots that are evenly spaced (a batch added in order, every other slot of
// one) are remembered and walked by pointer steps, as a contiguous array is.
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
// Add, AddPending, Activate, Remove and SortIterationList abort, in every build mode,
// when called inside the store's own non-const ForEach or ForEachScan (see ForEach).
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
#include "base/check.h"
#include "entity/internal/element_index.h"
#include "entity/internal/for_each_scope.h"
#include "entity/internal/handle_pool.h"
#include "entity/store_handle.h"

namespace strata {

template <typename T>
class SparseStore {
 public:
  struct Options {
    // max_generation: a slot removed at this generation is retired (never reused).
    // At most 2^31 - 1. Tests lower it to reach retirement quickly.
    uint32_t max_generation = 0x7FFFFFFFu;
  };

  // Make: a store of `capacity` entries, or InvalidArgument when capacity is
  // 2^32 - 1 or more, or options.max_generation is above 2^31 - 1: the form for sizes
  // that come from configuration. O(capacity).
  static absl::StatusOr<std::unique_ptr<SparseStore>> Make(uint32_t capacity,
                                                        const Options& options = Options()) {
    if (absl::Status s = entity_internal::HandlePool::Validate("SparseStore", capacity,
                                                               options.max_generation);
        !s.ok()) {
      return s;
    }
    return std::make_unique<SparseStore>(capacity, options);
  }

  // SparseStore: room for `capacity` entries (< 2^32 - 1), allocated now, never grown.
  // O(capacity). Aborts, in every build mode, on the values Make rejects.
  explicit SparseStore(uint32_t capacity) : SparseStore(capacity, Options()) {}
  SparseStore(uint32_t capacity, const Options& options)
      : pool_(capacity, options.max_generation),
        data_(std::allocator<T>().allocate(capacity)),
        state_(new uint8_t[capacity]()),
        list_(new uint32_t[capacity]),
        list_pos_(new uint32_t[capacity]),
        block_stride_(new uint8_t[capacity / kWalkBlock + 1]()) {}

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
  // except that ForEach sees the new entry last. Aborts inside ForEach (see there).
  template <typename... Args>
  absl::StatusOr<StoreHandle> Add(Args&&... args) {
    STRATA_CHECK(!iterating_, "SparseStore::Add: called inside this store's ForEach");
    StoreHandle h;
    if (ABSL_PREDICT_FALSE(!pool_.Acquire(&h))) return FullError();
    std::construct_at(data_ + h.index(), std::forward<Args>(args)...);
    state_[h.index()] = kActive;
    PushToList(h.index());
    return h;
  }

  // AddPending: like Add, but the entry is pending: stored and reachable by its handle
  // (TryGet), skipped by ForEach and ForEachScan until Activate(). O(1). Aborts inside
  // ForEach.
  template <typename... Args>
  absl::StatusOr<StoreHandle> AddPending(Args&&... args) {
    STRATA_CHECK(!iterating_, "SparseStore::AddPending: called inside this store's ForEach");
    StoreHandle h;
    if (ABSL_PREDICT_FALSE(!pool_.Acquire(&h))) return FullError();
    std::construct_at(data_ + h.index(), std::forward<Args>(args)...);
    state_[h.index()] = kPending;
    return h;
  }

  // Activate: makes pending entry `h` active. NotFound if `h` is stale, invalid or
  // never issued; FailedPrecondition if it is already active. O(1); moves no entry.
  // Aborts inside ForEach.
  absl::Status Activate(StoreHandle h) {
    STRATA_CHECK(!iterating_, "SparseStore::Activate: called inside this store's ForEach");
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
  // listed entry takes the removed one's place in the list). Aborts inside ForEach.
  absl::Status Remove(StoreHandle h) {
    STRATA_CHECK(!iterating_, "SparseStore::Remove: called inside this store's ForEach");
    if (ABSL_PREDICT_FALSE(!pool_.Contains(h))) return StaleError("Remove", h);
    const uint32_t slot = h.index();
    if (state_[slot] == kActive) {
      // Swap-remove from the iteration list.
      const uint32_t pos = list_pos_[slot];
      const uint32_t last = list_[--list_size_];
      list_[pos] = last;
      list_pos_[last] = pos;
      // A block's slots determine its stride, so a block that lost one of them is no
      // longer evenly spaced (SortIterationList finds new ones); and the last block,
      // if it was full, is no longer.
      SetBlockStride(pos / kWalkBlock, 0);
      if (list_size_ % kWalkBlock == kWalkBlock - 1) {
        SetBlockStride(list_size_ / kWalkBlock, 0);
      }
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
  // capacity. Order: the iteration list's, i.e. activation order perturbed by removals
  // (see SortIterationList).
  // fn must not add, activate or remove entries of this store, nor sort its list;
  // collect handles and change the store afterwards. The non-const ForEach and
  // ForEachScan enforce it in every build mode: the mutators abort inside them (one
  // flag set and restored per pass, not per entry; nested walks are fine). The const
  // overloads cannot mark the store (concurrent const walks are allowed), so a change
  // through another, non-const path to the store inside them is not caught.
  template <typename F>
  void ForEach(F&& fn) {
    const entity_internal::ForEachScope scope(iterating_);
    WalkList(data_, [&](uint32_t slot, T& entry) { Invoke(fn, slot, entry); });
  }
  template <typename F>
  void ForEach(F&& fn) const {
    WalkList(static_cast<const T*>(data_),
             [&](uint32_t slot, const T& entry) { Invoke(fn, slot, entry); });
  }

  // ForEachScan: the same visit without the iteration list: the article's plain loop
  // over every slot, checking its active flag. O(capacity) even when empty; slot order.
  // Kept as the baseline the iteration list is measured against. Same rule as ForEach.
  template <typename F>
  void ForEachScan(F&& fn) {
    const entity_internal::ForEachScope scope(iterating_);
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

  // evenly_spaced_blocks: how many of the iteration list's full 16-entry blocks ForEach
  // walks by pointer steps (their slots evenly spaced, see WalkList). Diagnostics: a
  // figure well below active_size() / 16 on a store filled in order says that removals
  // have broken the blocks up and SortIterationList would restore them. ForEach steps
  // only while at least a quarter of the full blocks are evenly spaced (see WalkList).
  // O(1).
  size_t evenly_spaced_blocks() const { return stepped_blocks_; }

  // SortIterationList: puts the iteration list back in slot (address) order, so
  // ForEach walks memory forwards again after much churn, and finds the evenly spaced
  // blocks that removals had broken up. O(n log n), n = active. Aborts inside ForEach.
  void SortIterationList() {
    STRATA_CHECK(!iterating_, "SparseStore::SortIterationList: called inside this store's ForEach");
    std::sort(list_.get(), list_.get() + list_size_);
    for (uint32_t k = 0; k < list_size_; ++k) list_pos_[list_[k]] = k;
    for (uint32_t end = kWalkBlock; end <= list_size_; end += kWalkBlock) {
      UpdateBlockStride(end - kWalkBlock);
    }
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
           (capacity() / kWalkBlock + 1) + pool_.MemoryUsage();
  }

 private:
  enum : uint8_t { kFree = 0, kPending = 1, kActive = 2 };

  template <typename F>
  ABSL_ATTRIBUTE_ALWAYS_INLINE void Invoke(F& fn, uint32_t slot) {
    Invoke(fn, slot, data_[slot]);
  }
  template <typename F>
  void Invoke(F& fn, uint32_t slot) const {
    Invoke(fn, slot, static_cast<const T&>(data_[slot]));
  }
  // `entry` is data_[slot], passed in so that WalkList can reach it by pointer steps.
  template <typename F, typename Entry>
  ABSL_ATTRIBUTE_ALWAYS_INLINE void Invoke(F& fn, uint32_t slot, Entry& entry) const {
    if constexpr (std::is_invocable_v<F&, StoreHandle, Entry&>) {
      fn(pool_.HandleAt(slot), entry);
    } else {
      fn(entry);
    }
  }

  // WalkList: calls visit(slot, data[slot]) for list_[0, list_size_) in order, in
  // blocks of kWalkBlock list entries (one 64-byte line of the list).
  //
  // A block whose slots are evenly spaced (block_stride_[b] = s != 0: first, first + s,
  // ..., first + 15s) is walked by pointer steps of s entries. Otherwise each entry's
  // address waits on its index load, and the block first prefetches the list line
  // kWalkPrefetch entries ahead. Why: a pass streams the entities through L1, which
  // evicts the list's own lines, and a list line that arrives late stalls the next 16
  // entity loads; a contiguous store's loop, whose next address is a register add, has
  // neither cost. In an interleaved scratch benchmark (the article's Slim work, every
  // other slot active) the stepped walk ran 1.08-1.11x of Contiguous where the index
  // walk ran 1.16-1.20x, and 1.20-1.29x instead of 1.37-1.60x while the VM was in its
  // disturbed phase, in which index-addressed loops slow down the most; on a full store
  // 0.90-0.97x instead of 0.93-0.97x (1.07-1.14x instead of 1.39-1.55x disturbed).
  // entity/README.md has the measurements.
  //
  // The per-block check is not free: on a list with no even block (a random half of
  // the slots active) the same index walk with it ran 1.19-1.26x of Contiguous instead
  // of 0.97-1.02x in the quiet phase (no difference in the disturbed one; we have no
  // performance counters here to say why). So blocks are checked only while at least a
  // quarter of the full blocks are even (kMinSteppedShare); otherwise every block is
  // walked by index, as before the stepped walk existed.
  //
  // Inside a block the loop is unrolled only kWalkUnroll times: fully unrolled, the
  // index walk ran 1.21-1.32x on every other slot instead of 1.15-1.18x. The members
  // are read into locals first, so visit's writes (through a uint32_t&, say) cannot
  // force reloads.
  template <typename Entry, typename V>
  ABSL_ATTRIBUTE_ALWAYS_INLINE void WalkList(Entry* data, V&& visit) const {
    const uint32_t* const list = list_.get();
    const uint32_t n = list_size_;
    uint32_t k = 0;
    // n is tested first, so that an empty store's pass is one compare, as a contiguous
    // store's is (the article's Empty case).
    if (n >= kWalkBlock && stepped_blocks_ != 0 &&
        stepped_blocks_ * kMinSteppedShare >= n / kWalkBlock) {
      const uint8_t* const strides = block_stride_.get();
      for (; n - k >= kWalkBlock; k += kWalkBlock) {
        const uint32_t stride = strides[k / kWalkBlock];
        if (stride == 0) {
          VisitIndexedBlock(list, k, n, data, visit);
          continue;
        }
        uint32_t slot = list[k];
        Entry* entry = data + slot;
        // kWalkBlock - 1 steps, so the pointer never leaves the block's entries.
#pragma GCC unroll kWalkUnroll
        for (uint32_t j = 1; j < kWalkBlock; ++j) {
          visit(slot, *entry);
          slot += stride;
          entry += stride;
        }
        visit(slot, *entry);
      }
    } else {
      for (; n - k >= kWalkBlock; k += kWalkBlock) {
        VisitIndexedBlock(list, k, n, data, visit);
      }
    }
    for (; k < n; ++k) visit(list[k], data[list[k]]);
  }
  // VisitIndexedBlock: WalkList's index walk of the full block list[k, k + kWalkBlock).
  template <typename Entry, typename V>
  ABSL_ATTRIBUTE_ALWAYS_INLINE static void VisitIndexedBlock(const uint32_t* list,
                                                             uint32_t k, uint32_t n,
                                                             Entry* data, V& visit) {
    // Never past the end: the address is computed only while it is in the list.
    if (n - k > kWalkPrefetch) __builtin_prefetch(list + k + kWalkPrefetch);
    const uint32_t* const block = list + k;
#pragma GCC unroll kWalkUnroll
    for (uint32_t j = 0; j < kWalkBlock; ++j) visit(block[j], data[block[j]]);
  }
  // NOTE: 16 uint32_t slots = one 64-byte line of the list per block; 128 slots =
  // eight lines ahead (the distance that measured best, 64 and 256 did worse).
  // kWalkUnroll: 2 measured best; 1, 4, 8 and 16 were slower on Full/Slim or
  // HalfFullWorstCase/Slim. kMaxStride: the largest spacing block_stride_ records (it
  // is a byte). kMinSteppedShare: WalkList checks blocks while at least 1 in this many
  // full blocks is even.
  static constexpr uint32_t kWalkBlock = 16;
  static constexpr uint32_t kWalkPrefetch = 128;
  static constexpr uint32_t kWalkUnroll = 2;
  static constexpr uint32_t kMaxStride = 255;
  static constexpr uint32_t kMinSteppedShare = 4;
  static_assert(kWalkBlock % kWalkUnroll == 0);

  // UpdateBlockStride: records whether the list block starting at `begin` (a multiple
  // of kWalkBlock) is full and evenly spaced, ascending by 1 to kMaxStride slots.
  // O(kWalkBlock).
  void UpdateBlockStride(uint32_t begin) {
    uint8_t recorded = 0;
    if (list_size_ - begin >= kWalkBlock) {
      const uint32_t* const block = list_.get() + begin;
      // Unsigned: a descending pair gives a huge difference, rejected here.
      const uint32_t stride = block[1] - block[0];
      bool even = stride != 0 && stride <= kMaxStride;
      for (uint32_t j = 2; even && j < kWalkBlock; ++j) {
        even = block[j] - block[j - 1] == stride;
      }
      if (even) recorded = static_cast<uint8_t>(stride);
    }
    SetBlockStride(begin / kWalkBlock, recorded);
  }

  void SetBlockStride(uint32_t block, uint8_t stride) {
    if (block_stride_[block] != 0) --stepped_blocks_;
    if (stride != 0) ++stepped_blocks_;
    block_stride_[block] = stride;
  }

  void PushToList(uint32_t slot) {
    list_pos_[slot] = list_size_;
    list_[list_size_++] = slot;
    // A block's stride is read only while the block is full, and only a push (or
    // SortIterationList) makes a block full, so this is where it is recorded.
    if (list_size_ % kWalkBlock == 0) UpdateBlockStride(list_size_ - kWalkBlock);
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
  // block_stride_[b]: s when list_[16b, 16b + 16) is a full block listing the slots
  // first, first + s, ..., first + 15s (1 <= s <= kMaxStride), else 0. 0 is always
  // safe (the block is walked by index); a nonzero entry is always exact and only ever
  // on a full block: set by UpdateBlockStride, cleared by Remove. stepped_blocks_: the
  // nonzero entries.
  std::unique_ptr<uint8_t[]> block_stride_;
  uint32_t stepped_blocks_ = 0;
  uint32_t list_size_ = 0;
  // iterating_: a non-const ForEach or ForEachScan is running (see ForEachScope).
  bool iterating_ = false;
};

}  // namespace strata

#endif  // STRATA_ENTITY_SPARSE_STORE_H_
