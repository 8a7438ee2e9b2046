// EntityManager: creates and destroys generational Entity handles.
//
// Each entity owns a slot index while alive. Destroying it bumps the slot's generation,
// so every copy of the old handle becomes stale and is rejected. Freed slots go to the
// back of a FIFO queue and are reused only while the queue holds more than
// `min_free_indices` entries, so a slot is reused rarely and its generation advances
// slowly. A slot whose generation reaches `max_generation` is retired: never reissued.
//
//   EntityManager manager;
//   Entity e = manager.Create();
//   std::vector<Entity> level(1000);
//   manager.CreateBatch(absl::MakeSpan(level));
//   manager.AddDestroyListener([&](absl::Span<const Entity> dead) {
//     for (Entity d : dead) transforms.Destroy(d);
//   });
//   absl::Status s = manager.Destroy(e);   // OK
//   s = manager.Destroy(e);                // NotFound: already destroyed, nothing changes
//
// Thread-safety: none; one manager belongs to one thread at a time.
#ifndef STRATA_ENTITY_ENTITY_MANAGER_H_
#define STRATA_ENTITY_ENTITY_MANAGER_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "entity/entity.h"

namespace strata {

class EntityManager {
 public:
  struct Options {
    // min_free_indices: a freed slot is reused only once more than this many slots
    // are free, so reuse of any one slot is delayed by at least this many destroys.
    uint32_t min_free_indices = 1024;
    // max_generation: a slot destroyed at this generation is retired, never reissued.
    // Must be < 2^31 (the top bit of a slot marks it free). Tests lower it.
    uint32_t max_generation = 0x7FFFFFFFu;
  };

  // DestroyListener: told of entities being destroyed, once per Destroy (a span of
  // one) or DestroyBatch (the whole batch). Called after the entities are released:
  // their handles are already stale and serve only as keys. A listener must not
  // destroy entities nor add or remove listeners (checked by assert in debug builds);
  // it may create entities.
  using DestroyListener = std::function<void(absl::Span<const Entity>)>;
  using ListenerId = uint32_t;

  EntityManager() : EntityManager(Options()) {}
  explicit EntityManager(const Options& options);

  EntityManager(const EntityManager&) = delete;
  EntityManager& operator=(const EntityManager&) = delete;

  // Create: a new live entity. Amortised O(1).
  Entity Create();

  // CreateBatch: fills `out` with new live entities in one pass. Equivalent to calling
  // Create() out.size() times, in order.
  void CreateBatch(absl::Span<Entity> out);

  // Alive: true if `e` was issued by this manager and not destroyed since. O(1).
  // A handle with the top generation bit set is never issued (see kFreeBit), so a
  // forged one cannot match a free slot.
  bool Alive(Entity e) const {
    return e.index() < slots_.size() && (e.generation() & kFreeBit) == 0 &&
           slots_[e.index()] == e.generation();
  }

  // Destroy: destroys `e` and notifies the listeners. NotFound if `e` is invalid,
  // stale, already destroyed or was never issued; then nothing changes.
  absl::Status Destroy(Entity e);

  // DestroyBatch: destroys every entity in `entities`, all or nothing: if any is not
  // alive (or appears twice) returns NotFound naming it and nothing changes. Listeners
  // are called once with the whole batch. O(entities.size()) plus the listeners.
  absl::Status DestroyBatch(absl::Span<const Entity> entities);

  // size: the number of live entities: every slot ever handed out is live, free or
  // retired.
  size_t size() const { return slots_.size() - free_count_ - retired_count_; }
  // slots_used: slots ever handed out, live or not (the largest index + 1).
  size_t slots_used() const { return slots_.size(); }
  // retired_slots: slots that reached max_generation and are never reissued.
  size_t retired_slots() const { return retired_count_; }
  // free_slots: slots waiting in the free queue.
  size_t free_slots() const { return free_count_; }

  // AddDestroyListener: registers `listener`; returns an id for RemoveDestroyListener.
  ListenerId AddDestroyListener(DestroyListener listener);
  // RemoveDestroyListener: unregisters; false if `id` is unknown.
  bool RemoveDestroyListener(ListenerId id);

  // MemoryUsage: bytes owned by the manager's tables.
  size_t MemoryUsage() const;

 private:
  // NOTE: a slot is the generation of its live entity, with kFreeBit set while the
  // slot is free or retired, so Alive() is one compare (handle generations never have
  // the bit set).
  static constexpr uint32_t kFreeBit = 0x80000000u;

  // Makes room in the free ring for `n` more indices (capacity stays a power of two).
  void ReserveFree(size_t n);
  // Marks a validated slot free: bumps its generation, or retires it.
  void Release(uint32_t index, uint32_t generation);
  void NotifyDestroyed(absl::Span<const Entity> entities);

  Options options_;
  std::vector<uint32_t> slots_;
  // FIFO of free indices: a ring buffer, free_count_ entries from free_head_. Power-of-
  // two capacity so positions wrap with a mask; pops never move memory.
  std::unique_ptr<uint32_t[]> free_ring_;
  size_t free_capacity_ = 0;
  size_t free_head_ = 0;
  size_t free_count_ = 0;
  size_t retired_count_ = 0;
  struct Listener {
    ListenerId id;
    DestroyListener callback;
  };
  std::vector<Listener> listeners_;
  ListenerId next_listener_id_ = 0;
  // True while listeners run: guards the reentrancy rules of DestroyListener.
  bool notifying_ = false;
};

}  // namespace strata

#endif  // STRATA_ENTITY_ENTITY_MANAGER_H_
