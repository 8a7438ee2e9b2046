// ContiguousStore<T>: fixed-capacity entity storage kept dense by swap-remove, the
// design "Entity Memory Contiguity" starts from and measures SparseStore against.
//
// Active entries occupy [0, active_size()) of one array, so iteration is a plain loop
// that stops at the last live entry. Removing an entry moves the last active entry
// into its place; pending (partially initialised) entries live after the active ones
// (the article's queue "stored after the last active entity") and Activate() swaps
// one into the active range. Because entries move, a handle (StoreHandle: id +
// generation) goes through an id -> dense index table; raw pointers are invalidated
// by any Add, Activate or Remove (see each method). Same handle semantics as
// SparseStore: stale handles resolve to nullptr, ids are reused FIFO, an id whose
// generation reaches Options::max_generation is retired.
//
//   strata::ContiguousStore<Npc> npcs(/*capacity=*/4096);
//   STRATA_ASSIGN_OR_RETURN(strata::StoreHandle h, npcs.Add(Npc{"guard"}));
//   for (Npc& npc : npcs.active_entries()) npc.Think();    // dense, no holes
//   if (Npc* npc = npcs.TryGet(h)) npc->health -= 10;      // valid until next change
//   STRATA_RETURN_IF_ERROR(npcs.Remove(h));
//
// Add, AddPending, Activate and Remove abort, in every build mode, when called inside
// the store's own non-const ForEach (see ForEach).
//
// Requires T to be nothrow move-constructible and swappable (entries move).
// Thread-safety: none; concurrent const access is safe.
#ifndef STRATA_ENTITY_CONTIGUOUS_STORE_H_
#define STRATA_ENTITY_CONTIGUOUS_STORE_H_

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
class ContiguousStore {
  static_assert(std::is_nothrow_move_constructible_v<T> && std::is_swappable_v<T>,
                "ContiguousStore moves entries: T must be movable and swappable");

 public:
  struct Options {
    // max_generation: an id removed at this generation is retired (never reused).
    // At most 2^31 - 1. Tests lower it to reach retirement quickly.
    uint32_t max_generation = 0x7FFFFFFFu;
  };

  // Make: a store of `capacity` entries, or InvalidArgument when capacity is
  // 2^32 - 1 or more, or options.max_generation is above 2^31 - 1: the form for sizes
  // that come from configuration. O(capacity).
  static absl::StatusOr<std::unique_ptr<ContiguousStore>> Make(uint32_t capacity,
                                                        const Options& options = Options()) {
    if (absl::Status s = entity_internal::HandlePool::Validate("ContiguousStore", capacity,
                                                               options.max_generation);
        !s.ok()) {
      return s;
    }
    return std::make_unique<ContiguousStore>(capacity, options);
  }

  // ContiguousStore: room for `capacity` entries (< 2^32 - 1), allocated now, never
  // grown. O(capacity). Aborts, in every build mode, on the values Make rejects.
  explicit ContiguousStore(uint32_t capacity) : ContiguousStore(capacity, Options()) {}
  ContiguousStore(uint32_t capacity, const Options& options)
      : pool_(capacity, options.max_generation),
        dense_(std::allocator<T>().allocate(capacity)),
        dense_to_id_(new uint32_t[capacity]),
        id_to_dense_(new uint32_t[capacity]) {}

  ContiguousStore(const ContiguousStore&) = delete;
  ContiguousStore& operator=(const ContiguousStore&) = delete;

  // ~ContiguousStore: destroys every stored entry. O(size).
  ~ContiguousStore() {
    std::destroy(dense_, dense_ + size_);
    std::allocator<T>().deallocate(dense_, capacity());
  }

  // Add: constructs T(args...) as a new active entry at the end of the active range.
  // ResourceExhausted when every id is in use or retired; then nothing changes. O(1).
  // Moves one pending entry (if any) to make room: pointers to pending entries are
  // invalidated; pointers to active entries stay valid. Aborts inside ForEach.
  template <typename... Args>
  absl::StatusOr<StoreHandle> Add(Args&&... args) {
    STRATA_CHECK(!iterating_, "ContiguousStore::Add: called inside this store's ForEach");
    StoreHandle h;
    if (ABSL_PREDICT_FALSE(!pool_.Acquire(&h))) return FullError();
    // Construct first, at the end, so args may refer to an entry of this store.
    Place(size_, h.index(), std::forward<Args>(args)...);
    if (size_ != active_) SwapEntries(size_, active_);
    ++size_;
    ++active_;
    return h;
  }

  // AddPending: constructs T(args...) as a pending entry after the active range:
  // reachable by TryGet, skipped by ForEach until Activate(). O(1); moves nothing.
  // Aborts inside ForEach.
  template <typename... Args>
  absl::StatusOr<StoreHandle> AddPending(Args&&... args) {
    STRATA_CHECK(!iterating_, "ContiguousStore::AddPending: called inside this store's ForEach");
    StoreHandle h;
    if (ABSL_PREDICT_FALSE(!pool_.Acquire(&h))) return FullError();
    Place(size_, h.index(), std::forward<Args>(args)...);
    ++size_;
    return h;
  }

  // Activate: makes pending entry `h` active by swapping it with the first pending
  // entry. NotFound if `h` is stale, invalid or never issued; FailedPrecondition if it
  // is already active. O(1). Invalidates pointers to those two pending entries.
  // Aborts inside ForEach.
  absl::Status Activate(StoreHandle h) {
    STRATA_CHECK(!iterating_, "ContiguousStore::Activate: called inside this store's ForEach");
    if (ABSL_PREDICT_FALSE(!pool_.Contains(h))) return StaleError("Activate", h);
    const uint32_t d = id_to_dense_[h.index()];
    if (ABSL_PREDICT_FALSE(d < active_)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "ContiguousStore::Activate: ", h.DebugString(), " is already active"));
    }
    if (d != active_) SwapEntries(d, active_);
    ++active_;
    return absl::OkStatus();
  }

  // Remove: destroys entry `h`; `h` and its copies go stale. NotFound if `h` is stale,
  // invalid or never issued; then nothing changes. O(1). Swap-remove: the last active
  // entry moves into the hole and the last pending entry into the active range's
  // end, so pointers to those (and to `h`) are invalidated. Aborts inside ForEach.
  absl::Status Remove(StoreHandle h) {
    STRATA_CHECK(!iterating_, "ContiguousStore::Remove: called inside this store's ForEach");
    if (ABSL_PREDICT_FALSE(!pool_.Contains(h))) return StaleError("Remove", h);
    uint32_t hole = id_to_dense_[h.index()];
    std::destroy_at(dense_ + hole);
    pool_.Release(h.index());
    if (hole < active_) {
      --active_;
      if (hole != active_) {
        MoveInto(hole, active_);
        hole = active_;
      }
    }
    --size_;
    if (hole != size_) MoveInto(hole, size_);
    return absl::OkStatus();
  }

  // Contains / IsActive / IsPending: `h` names a stored entry (in that state). O(1).
  bool Contains(StoreHandle h) const { return pool_.Contains(h); }
  bool IsActive(StoreHandle h) const {
    return pool_.Contains(h) && id_to_dense_[h.index()] < active_;
  }
  bool IsPending(StoreHandle h) const {
    return pool_.Contains(h) && id_to_dense_[h.index()] >= active_;
  }

  // TryGet: the entry `h` names (pending or active), or nullptr if `h` is stale,
  // invalid or never issued. O(1): one extra lookup through the id table. The pointer
  // is valid until the next Add, Activate or Remove.
  T* TryGet(StoreHandle h) {
    return pool_.Contains(h) ? dense_ + id_to_dense_[h.index()] : nullptr;
  }
  const T* TryGet(StoreHandle h) const {
    return pool_.Contains(h) ? dense_ + id_to_dense_[h.index()] : nullptr;
  }

  // HandleOf: the handle of the stored entry at `entry`, or the invalid handle if
  // `entry` is not a stored entry of this store. O(1).
  StoreHandle HandleOf(const T* entry) const {
    uint32_t d;
    if (!entity_internal::ElementIndex<T>(dense_, size_, entry, &d)) return StoreHandle();
    return pool_.HandleAt(dense_to_id_[d]);
  }

  // active_entries: the active entries, densely packed. Invalidated by any change.
  absl::Span<T> active_entries() { return absl::MakeSpan(dense_, active_); }
  absl::Span<const T> active_entries() const { return absl::MakeConstSpan(dense_, active_); }

  // ForEach: calls fn(T&) or fn(StoreHandle, T&) for every active entry in dense order.
  // O(active entries). fn must not add, activate or remove entries of this store: the
  // non-const ForEach enforces it in every build mode, the mutators abort inside it (one
  // flag set and restored per pass, not per entry; nested walks are fine). The const
  // overload cannot mark the store (concurrent const walks are allowed), and a loop
  // over active_entries() is the caller's own: a change inside those is not caught.
  template <typename F>
  void ForEach(F&& fn) {
    const entity_internal::ForEachScope scope(iterating_);
    const uint32_t n = active_;  // a local: fn's writes cannot force reloads
    for (uint32_t d = 0; d < n; ++d) Invoke(fn, d);
  }
  template <typename F>
  void ForEach(F&& fn) const {
    const uint32_t n = active_;
    for (uint32_t d = 0; d < n; ++d) Invoke(fn, d);
  }

  uint32_t capacity() const { return pool_.capacity(); }
  // size: stored entries, pending or active.
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t active_size() const { return active_; }
  size_t pending_size() const { return size_ - active_; }
  // retired_slots: ids whose generation ran out.
  size_t retired_slots() const { return pool_.retired_slots(); }
  // MemoryUsage: bytes allocated by the store (fixed at construction).
  size_t MemoryUsage() const {
    return size_t{capacity()} * (sizeof(T) + 2 * sizeof(uint32_t)) + pool_.MemoryUsage();
  }

 private:
  template <typename F>
  void Invoke(F& fn, uint32_t d) {
    if constexpr (std::is_invocable_v<F&, StoreHandle, T&>) {
      fn(pool_.HandleAt(dense_to_id_[d]), dense_[d]);
    } else {
      fn(dense_[d]);
    }
  }
  template <typename F>
  void Invoke(F& fn, uint32_t d) const {
    if constexpr (std::is_invocable_v<F&, StoreHandle, const T&>) {
      fn(pool_.HandleAt(dense_to_id_[d]), static_cast<const T&>(dense_[d]));
    } else {
      fn(static_cast<const T&>(dense_[d]));
    }
  }

  template <typename... Args>
  void Place(uint32_t d, uint32_t id, Args&&... args) {
    std::construct_at(dense_ + d, std::forward<Args>(args)...);
    dense_to_id_[d] = id;
    id_to_dense_[id] = d;
  }
  // MoveInto: moves the entry at `from` into the empty position `to`; `from` is left
  // empty (destroyed).
  void MoveInto(uint32_t to, uint32_t from) {
    std::construct_at(dense_ + to, std::move(dense_[from]));
    std::destroy_at(dense_ + from);
    const uint32_t id = dense_to_id_[from];
    dense_to_id_[to] = id;
    id_to_dense_[id] = to;
  }
  void SwapEntries(uint32_t a, uint32_t b) {
    using std::swap;
    swap(dense_[a], dense_[b]);
    swap(dense_to_id_[a], dense_to_id_[b]);
    id_to_dense_[dense_to_id_[a]] = a;
    id_to_dense_[dense_to_id_[b]] = b;
  }

  absl::Status FullError() const {
    return absl::ResourceExhaustedError(absl::StrCat(
        "ContiguousStore: no free id (capacity ", capacity(), ", ", size(), " stored, ",
        retired_slots(), " retired)"));
  }
  static absl::Status StaleError(const char* op, StoreHandle h) {
    return absl::NotFoundError(absl::StrCat("ContiguousStore::", op, ": ",
                                            h.DebugString(),
                                            " is stale, invalid or never issued"));
  }

  entity_internal::HandlePool pool_;
  // NOTE: dense_ is raw storage: [0, active_) active, [active_, size_) pending, the
  // rest unconstructed. dense_to_id_ / id_to_dense_ are inverse on [0, size_).
  T* dense_;
  std::unique_ptr<uint32_t[]> dense_to_id_;
  std::unique_ptr<uint32_t[]> id_to_dense_;
  uint32_t active_ = 0;
  uint32_t size_ = 0;
  // iterating_: a non-const ForEach is running (see ForEachScope).
  bool iterating_ = false;
};

}  // namespace strata

#endif  // STRATA_ENTITY_CONTIGUOUS_STORE_H_
