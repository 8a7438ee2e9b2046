// ComponentEvents: observers of the components of an EntityPages store. An observer
// names an event (a component added, removed or set) and a component type, and is told
// of the entities in batches at a flush point, never one call per entity as it happens.
//
//   ComponentEvents events(manager, pages);
//   ComponentEvents::Subscription dying = events.OnRemove<Spark>(spark,
//       [&](absl::Span<const Entity> sparks, absl::Span<const Spark> last, CommandBuffer&) {
//         for (const Spark& s : last) total_lifetime += s.max_lifetime;
//       });
//   manager.DestroyBatch(dead);     // recorded, with the sparks' values
//   events.Flush();                 // the observer runs once, with every dead spark
//
// Which writes are events:
// - kAdd: every path that adds (Add, AddEach, the span Add, CreateFromBundle, a command
//   buffer's playback, a spawn). The observer gets the entities; it reads the values in
//   the store (an entity that lost the component again before the flush reads null, and
//   its kRemove follows).
// - kRemove: every path that removes: Remove (single and span), Delete, destroying an
//   entity (through the store's destroy listener: the component events of a destroy
//   are this, not a second mechanism), a command's Remove or Destroy. The observer gets
//   the values the entities had, copied just before the removal, and their handles (stale
//   for destroyed entities).
// - kSet: writes through a set path (a command buffer's Set, a World's property set;
//   EntityPages::NotifySet). Writes in place through a T& from a walk or TryGet are not
//   events: change detection is for those. The observer gets the values written.
// Events are delivered in the order they happened, consecutive events of one kind and
// component as one batch; observers of one event in the order they subscribed.
//
// Flush points: Flush(), which a World calls after a command buffer's playback, after a
// spawn and at World::Flush(). An observer may record structural changes in the
// CommandBuffer it is handed, never make them directly (a WalkScope is open: they
// abort). After each round of observers the buffer is played back, which may raise new
// events: Flush repeats until none are left, or fails with FailedPrecondition after
// kMaxRounds rounds (the events of the last round stay pending).
//
// Cost: nothing is recorded for an event and component nobody observes; a store pays one
// virtual call per batch for this listener. Recording a batch appends its entities (and
// for kRemove / kSet the values) to flat arrays kept from flush to flush. Playback(),
// which plays command buffers back and flushes in one call, records a batch that names
// the buffers' own entities (their targets, or the entities they created) by reference
// instead: an observed playback of 1M adds then costs the playback plus the observers'
// own work, where the copy was a third more.
//
// The listener installed on the store before this one (a World's instance indexer)
// keeps hearing of every change, after this one; the destructor puts it back.
// Thread-safety: none (the store's mutations are single-threaded).
#ifndef STRATA_ITERATION_COMPONENT_EVENTS_H_
#define STRATA_ITERATION_COMPONENT_EVENTS_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "iteration/command_buffer.h"
#include "iteration/components.h"
#include "iteration/entity_pages.h"

namespace strata {

class ComponentEvents final : public StructureListener {
 public:
  enum class Event : uint8_t { kAdd = 0, kRemove = 1, kSet = 2 };
  // kMaxRounds: observer rounds per Flush before it gives up.
  static constexpr int kMaxRounds = 16;

  // Observer: one batch of one event: the entities, the values (component_size bytes
  // each, in entity order: kRemove the values removed, kSet those written; empty for
  // kAdd and for tags), and the buffer for the observer's structural changes.
  using Observer = std::function<void(absl::Span<const Entity> entities,
                                      absl::Span<const std::byte> values,
                                      CommandBuffer& commands)>;

  // Subscription: the observer stays subscribed while this lives (or until Reset).
  // Movable. It must not outlive the ComponentEvents (or must be Reset first).
  class Subscription {
   public:
    Subscription() = default;
    Subscription(Subscription&& other) noexcept
        : events_(std::exchange(other.events_, nullptr)), id_(other.id_) {}
    Subscription& operator=(Subscription&& other) noexcept {
      if (this != &other) {
        Reset();
        events_ = std::exchange(other.events_, nullptr);
        id_ = other.id_;
      }
      return *this;
    }
    ~Subscription() { Reset(); }
    void Reset();
    bool active() const { return events_ != nullptr; }

   private:
    friend class ComponentEvents;
    Subscription(ComponentEvents* events, uint64_t id) : events_(events), id_(id) {}
    ComponentEvents* events_ = nullptr;
    uint64_t id_ = 0;
  };

  // ComponentEvents: installs itself as `pages`' structure listener, in front of the one
  // already there. Both must outlive it.
  ComponentEvents(EntityManager& manager, EntityPages& pages);
  ~ComponentEvents() override;
  ComponentEvents(const ComponentEvents&) = delete;
  ComponentEvents& operator=(const ComponentEvents&) = delete;

  // On: subscribes `observer` to `event` of component `c` (registered in the store:
  // aborts otherwise, every build).
  [[nodiscard]] Subscription On(Event event, ComponentId c, Observer observer);
  // Typed forms: OnAdd(c, fn(entities, commands)); OnRemove / OnSet(c, fn(entities,
  // values as Span<const T>, commands)).
  template <typename T, typename Fn>
  [[nodiscard]] Subscription OnAdd(Component<T> c, Fn fn) {
    return On(Event::kAdd, c.id, EntitiesObserver(std::move(fn)));
  }
  template <typename T, typename Fn>
  [[nodiscard]] Subscription OnRemove(Component<T> c, Fn fn) {
    return On(Event::kRemove, c.id, ValuesObserver<T>(std::move(fn)));
  }
  template <typename T, typename Fn>
  [[nodiscard]] Subscription OnSet(Component<T> c, Fn fn) {
    return On(Event::kSet, c.id, ValuesObserver<T>(std::move(fn)));
  }
  // EntitiesObserver / ValuesObserver<T>: the Observer the typed forms subscribe, for
  // callers that keep observers before they subscribe them (a ComponentDeclaration's).
  // fn(entities, commands); fn(entities, values as Span<const T>, commands).
  template <typename Fn>
  static Observer EntitiesObserver(Fn fn) {
    return [fn = std::move(fn)](absl::Span<const Entity> entities, absl::Span<const std::byte>,
                                CommandBuffer& commands) mutable { fn(entities, commands); };
  }
  template <typename T, typename Fn>
  static Observer ValuesObserver(Fn fn) {
    static_assert(alignof(T) <= kValueAlignment, "an observed component aligned past 16 bytes");
    return [fn = std::move(fn)](absl::Span<const Entity> entities,
                                absl::Span<const std::byte> values, CommandBuffer& commands) mutable {
      if constexpr (std::is_empty_v<T>) {
        // A tag has no bytes: a T per entity, all alike.
        (void)values;
        const std::vector<T> tags(entities.size());
        fn(entities, absl::MakeConstSpan(tags), commands);
      } else {
        fn(entities,
           absl::MakeConstSpan(reinterpret_cast<const T*>(values.data()), entities.size()),
           commands);
      }
    };
  }

  // Flush: delivers the pending events (see above). OK when none are left;
  // FailedPrecondition after kMaxRounds rounds. Aborts if called by an observer.
  absl::Status Flush();
  // Playback: plays `buffers` back into the store in order (CommandBuffer::Playback,
  // the results summed), then Flush(): what the flush returns, or the summed result.
  // The same as doing both by hand, minus the copy of the entities the events name (see
  // Cost). A buffer played back again before the flush ends (by an observer) aborts.
  absl::StatusOr<CommandBuffer::Result> Playback(absl::Span<CommandBuffer> buffers);
  absl::StatusOr<CommandBuffer::Result> Playback(CommandBuffer& commands) {
    return Playback(absl::MakeSpan(&commands, 1));
  }
  // pending: entities in events not yet delivered.
  size_t pending() const;
  // observers: subscribed observers.
  size_t observers() const;

  // StructureListener.
  void OnAdded(ComponentId c, absl::Span<const Entity> entities) override;
  void OnRemoved(ComponentId c, absl::Span<const Entity> entities) override;
  void OnRemoving(ComponentId c, absl::Span<const Entity> entities) override;
  void OnSet(ComponentId c, absl::Span<const Entity> entities) override;

 private:
  // Values are kept 16-byte aligned per batch, so the typed forms can view them as T.
  static constexpr size_t kValueAlignment = 16;
  // Batch: `count` entities from entities_[first] on, or, when `lent` is set, from
  // there: a lending buffer's own array (see Playback).
  struct Batch {
    Event event;
    ComponentId component;
    size_t first;
    size_t count;
    size_t value_offset;
    const Entity* lent;
  };
  struct Subscriber {
    uint64_t id;
    Event event;
    ComponentId component;
    Observer observer;
    bool active;
  };


  bool Observed(Event event, ComponentId c) const {
    return c < kMaxTypes && counts_[static_cast<size_t>(event)][c] != 0;
  }
  // Record: appends a batch (copying the values from the store when `with_values`).
  void Record(Event event, ComponentId c, absl::Span<const Entity> entities, bool with_values);
  // Lent: `entities` lies in a lending buffer's arrays (see Playback).
  bool Lent(absl::Span<const Entity> entities) const;
  // PlayLending: `buffer.Playback`, its arrays lent to the events it raises until
  // ReleaseLent, after the batches that name them are delivered.
  CommandBuffer::Result PlayLending(CommandBuffer& buffer);
  void ReleaseLent();
  void Unsubscribe(uint64_t id);
  void UpdateWantsRemoving();

  static constexpr size_t kMaxTypes = EntityPages::kMaxComponentTypes;
  EntityManager* manager_;
  EntityPages* pages_;
  StructureListener* next_;
  std::vector<Subscriber> subscribers_;
  uint64_t next_id_ = 1;
  // counts_[event][c]: active observers.
  std::vector<uint32_t> counts_[3];
  // The pending events, and the ones being delivered (swapped in at each round).
  std::vector<Batch> records_;
  std::vector<Entity> entities_;
  std::vector<std::byte> values_;
  std::vector<Batch> delivering_records_;
  std::vector<Entity> delivering_entities_;
  std::vector<std::byte> delivering_values_;
  CommandBuffer commands_;
  // lenders_: the buffers being played back by Playback or a flush round; lent_: every
  // buffer whose arrays pending batches name (flagged lent_ until they are delivered).
  std::vector<const CommandBuffer*> lenders_;
  std::vector<CommandBuffer*> lent_;
  bool flushing_ = false;
};

}  // namespace strata

#endif  // STRATA_ITERATION_COMPONENT_EVENTS_H_
