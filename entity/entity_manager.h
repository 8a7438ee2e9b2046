// EntityManager: creates and destroys generational Entity handles.
//
// Each entity owns a slot index while alive. Destroying it bumps the slot's generation,
// so every copy of the old handle becomes stale and is rejected. The slots are a
// GenerationTable (entity/generation_table.h) and follow its policy: freed slots go to
// the back of a FIFO queue and are reused only while the queue holds more than
// `min_free_indices` entries, so a slot is reused rarely and its generation advances
// slowly. A slot whose generation reaches `max_generation` is retired: never reissued.
//
//   EntityManager manager;
//   Entity e = manager.Create();
//   std::vector<Entity> level(1000);
//   manager.CreateBatch(absl::MakeSpan(level));
//   EntityManager::Subscription listening =
//       manager.AddDestroyListener([&](absl::Span<const Entity> dead) {
//         for (Entity d : dead) transforms.DestroyEntity(d);
//       });                              // listens until `listening` or `manager` dies
//   absl::Status s = manager.Destroy(e);   // OK
//   s = manager.Destroy(e);                // NotFound: already destroyed, nothing changes
//
// Options from configuration: EntityManager::Make(options) returns InvalidArgument for
// options the handle cannot honour; the constructor aborts on them in every build mode.
//
// Lifetimes: a store that listens holds the Subscription AddDestroyListener returns.
// Either may be destroyed first. When the manager dies first, it detaches every
// subscription: the store's listener is never called again, and the subscription then
// reads as an empty manager (no entity alive), so a store that checks liveness
// through it sees every entity of the dead manager as dead.
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
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "entity/entity.h"
#include "entity/generation_table.h"

namespace strata {

class EntityManager {
 public:
  struct Options {
    // min_free_indices: a freed slot is reused only once more than this many slots
    // are free, so reuse of any one slot is delayed by at least this many destroys.
    uint32_t min_free_indices = 1024;
    // max_generation: a slot destroyed at this generation is retired, never reissued.
    // At most kMaxGeneration (the top bit of a slot marks it free). Tests lower it.
    uint32_t max_generation = kMaxGeneration;

    // Validate: OK, or InvalidArgument naming the option the manager cannot honour.
    absl::Status Validate() const;
  };

  // kMaxGeneration: the largest max_generation, 2^31 - 1.
  static constexpr uint32_t kMaxGeneration = GenerationTable::kMaxGeneration;

  // DestroyListener: told of entities being destroyed, once per Destroy (a span of
  // one) or DestroyBatch (the whole batch). Called after the entities are released:
  // their handles are already stale and serve only as keys. A listener may create
  // entities. It must not add or remove listeners: AddDestroyListener and removing a
  // registered Subscription (Reset, assigning over it, destroying it, e.g. with the
  // store that holds it) abort inside a listener in every build mode; moving one is
  // fine. It must not destroy entities: Destroy and DestroyBatch abort inside a
  // listener in every build mode too (one predicted branch per call).
  using DestroyListener = std::function<void(absl::Span<const Entity>)>;

  // Subscription: a registered DestroyListener, owned by whoever listens (a store
  // keeps it as a member). Movable, not copyable.
  // - Destroying it (or Reset()) unregisters the listener, if its manager still lives.
  // - Destroying the manager first detaches it: the listener is never called again,
  //   expired() becomes true and manager() is an empty manager (slots_used() 0, no
  //   entity alive), so a store's liveness checks through it keep working and answer
  //   "dead"; destroying the subscription afterwards touches nothing of the manager.
  // Reads through it cost what reads through an EntityManager* cost (one pointer,
  // never null).
  class Subscription {
   public:
    // Subscription(): listens to nothing; manager() is the empty manager.
    Subscription() noexcept;
    Subscription(Subscription&& other) noexcept;
    Subscription& operator=(Subscription&& other) noexcept;
    ~Subscription() { Reset(); }

    // Reset: unregisters the listener now (if its manager lives) and forgets the
    // manager: afterwards active() and expired() are false. O(listeners). Aborts, as
    // destroying or assigning over an active subscription does, inside one of the
    // manager's DestroyListeners.
    void Reset();

    // active: registered with a live manager.
    bool active() const { return manager_ != nullptr; }
    // expired: was registered with a manager that has been destroyed since.
    bool expired() const { return expired_; }

    // manager / operator->: the manager while active(); otherwise an empty manager.
    const EntityManager& manager() const { return *view_; }
    const EntityManager* operator->() const { return view_; }

   private:
    friend class EntityManager;
    Subscription(EntityManager* manager, uint32_t id);
    // Called by the dying manager.
    void Detach();

    EntityManager* manager_ = nullptr;  // the live manager, for unregistering
    const EntityManager* view_;         // manager_, or the empty manager; never null
    uint32_t id_ = 0;
    bool expired_ = false;
  };

  EntityManager() : EntityManager(Options()) {}
  // EntityManager(options): aborts (in every build mode) unless options.Validate() is
  // OK. Options that come from configuration go through Make instead.
  explicit EntityManager(const Options& options);
  // Make: a manager with `options`, or InvalidArgument (from Options::Validate) when
  // the manager cannot honour them.
  static absl::StatusOr<std::unique_ptr<EntityManager>> Make(const Options& options);

  EntityManager(const EntityManager&) = delete;
  EntityManager& operator=(const EntityManager&) = delete;

  // ~EntityManager: detaches every Subscription still registered (see Subscription).
  ~EntityManager();

  // Create: a new live entity. Amortised O(1).
  Entity Create();

  // CreateBatch: fills `out` with new live entities in one pass. Equivalent to calling
  // Create() out.size() times, in order.
  void CreateBatch(absl::Span<Entity> out);

  // Alive: true if `e` was issued by this manager and not destroyed since. O(1).
  // A handle with the top generation bit set is never issued, so a forged one cannot
  // match a free slot.
  bool Alive(Entity e) const { return slots_.Contains(e.index(), e.generation()); }

  // Destroy: destroys `e` and notifies the listeners. NotFound if `e` is invalid,
  // stale, already destroyed or was never issued; then nothing changes.
  absl::Status Destroy(Entity e);

  // DestroyBatch: destroys every entity in `entities`, all or nothing: if any is not
  // alive (or appears twice) returns NotFound naming it and nothing changes. Listeners
  // are called once with the whole batch. O(entities.size()) plus the listeners.
  absl::Status DestroyBatch(absl::Span<const Entity> entities);

  // size: the number of live entities: every slot ever handed out is live, free or
  // retired.
  size_t size() const { return slots_.live(); }
  // slots_used: slots ever handed out, live or not (the largest index + 1).
  size_t slots_used() const { return slots_.size(); }
  // retired_slots: slots that reached max_generation and are never reissued.
  size_t retired_slots() const { return slots_.retired_slots(); }
  // free_slots: slots waiting in the free queue.
  size_t free_slots() const { return slots_.free_slots(); }

  // AddDestroyListener: registers `listener` (called after the ones registered
  // before) for as long as the returned Subscription lives and is not Reset().
  // Discarding the result unregisters at once. O(1) amortised. Aborts when called from
  // a DestroyListener (see there).
  [[nodiscard]] Subscription AddDestroyListener(DestroyListener listener);
  // destroy_listeners: listeners registered now.
  size_t destroy_listeners() const { return listeners_.size(); }

  // MemoryUsage: bytes owned by the manager's tables.
  size_t MemoryUsage() const;

 private:
  void NotifyDestroyed(absl::Span<const Entity> entities);
  // Subscription's side: unregisters `id`, or points its entry at its moved owner.
  void RemoveListener(uint32_t id);
  void MoveListener(uint32_t id, Subscription* owner);
  // The manager an inactive Subscription reads: no slots, never destroyed.
  static const EntityManager& Empty();

  static GenerationTable::Options TableOptions(const Options& options);
  // TableOptions, after aborting (every build mode) on options Validate rejects.
  static GenerationTable::Options CheckedTableOptions(const Options& options);

  GenerationTable slots_;
  struct Listener {
    uint32_t id;
    DestroyListener callback;
    Subscription* owner;  // detached when the manager dies
  };
  std::vector<Listener> listeners_;
  uint32_t next_listener_id_ = 0;
  // True while listeners run: guards the reentrancy rules of DestroyListener.
  bool notifying_ = false;
};

}  // namespace strata

#endif  // STRATA_ENTITY_ENTITY_MANAGER_H_
