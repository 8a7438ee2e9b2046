// CommandBuffer: structural changes recorded now and applied later, in one batch, to an
// EntityPages store and its EntityManager. A walk may not change the store it walks
// (EntityPages::WalkScope); it records the change here instead, and the caller plays
// the buffer back after the walk.
//
//   CommandBuffer commands(pages);
//   ForEachMatch(pages, burning, [&](Entity e, Health& h) {
//     h.hp -= 1;
//     if (h.hp <= 0) commands.Destroy(e);
//     if (h.hp < 10) commands.Add(e, fleeing, Fleeing{});
//   }, health);
//   Entity spark = commands.Create(spark_bundle);        // a pending handle
//   commands.Add(spark, glow, Glow{2.0f});                // usable in this buffer
//   CommandBuffer::Result result = commands.Playback(manager, pages);
//   Entity real = commands.Resolve(spark);               // the created entity
//
// Commands: Create (an entity with a ComponentBundle's components, or none), Destroy,
// Add (a typed value, or the bytes of a registered type), Remove, Set (overwrite the
// value of a component the entity has). A command names an existing entity or one this
// buffer created (its pending handle, from Create).
//
// Playback applies the commands in record order, as if each ran alone, but in batches:
// consecutive commands of one kind and component become one span call (Add/AddEach,
// Remove, CreateBatch + CreateFromBundle, DestroyBatch). A command whose target is dead
// or stale is skipped and counted in Result::skipped_dead; one that cannot apply (Add of
// a component the entity has, Remove or Set of one it lacks) in skipped_conflict. So
// playback never fails half-way and needs no error path: what it skipped is in the
// result. A pending handle of another buffer, a component not registered in the store
// the buffer was made for, or a value of the wrong size is a programmer error
// (STRATA_CHECK at record time, every build).
//
// Handles are deterministic: a buffer's creations take their handles in record order at
// playback, so the same buffers played in the same order give the same handles, and
// saves stay byte-identical. ParallelForEachMatchWithCommands (iteration/
// parallel_query.h) gives each fixed range of pages its own buffer and plays them back
// in page order, which makes the result independent of the thread count.
//
// Cost: recording appends the target and the value to flat arrays (a run record per
// change of kind or component); memory is kept across Clear for the next frame.
// Thread-safety: one buffer per thread; playback mutates the store (not inside a walk).
#ifndef STRATA_ITERATION_COMMAND_BUFFER_H_
#define STRATA_ITERATION_COMMAND_BUFFER_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "absl/base/optimization.h"
#include "absl/types/span.h"
#include "base/check.h"
#include "base/huge_page_allocator.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "iteration/components.h"
#include "iteration/entity_pages.h"

namespace strata {

class CommandBuffer {
 public:
  // Result: what a playback did.
  struct Result {
    size_t applied = 0;           // commands that changed the store or the manager
    size_t skipped_dead = 0;      // the target was dead or stale
    size_t skipped_conflict = 0;  // Add of a present component, Remove/Set of an absent one
    bool operator==(const Result&) const = default;
  };

  // CommandBuffer(pages): records commands for `pages` (read at record time for
  // component sizes; it must outlive the buffer).
  explicit CommandBuffer(const EntityPages& pages);
  CommandBuffer(CommandBuffer&&) noexcept = default;
  CommandBuffer& operator=(CommandBuffer&&) noexcept = default;
  CommandBuffer(const CommandBuffer&) = delete;
  CommandBuffer& operator=(const CommandBuffer&) = delete;

  // Create: an entity with `bundle`'s components and values (none: an entity with no
  // components). Returns its pending handle: a target for this buffer's commands, and
  // Resolve's argument after playback. It is not a live entity: give it to nothing else.
  Entity Create(const ComponentBundle& bundle);
  Entity Create();

  void Destroy(Entity e);

  template <typename T>
  ABSL_ATTRIBUTE_ALWAYS_INLINE void Add(Entity e, Component<T> c, const T& value) {
    CheckType(c.id, std::is_empty_v<T> ? 0 : sizeof(T));
    Append(Op::kAdd, c.id, e, &value, std::is_empty_v<T> ? 0 : sizeof(T));
  }
  // Add (bytes): `value` holds the registered size of `c` (empty for a tag).
  void Add(Entity e, ComponentId c, absl::Span<const std::byte> value) {
    CheckType(c, value.size());
    Append(Op::kAdd, c, e, value.data(), value.size());
  }

  template <typename T>
  void Remove(Entity e, Component<T> c) {
    Remove(e, c.id);
  }
  void Remove(Entity e, ComponentId c) {
    CheckType(c, kAnySize);
    Append(Op::kRemove, c, e, nullptr, 0);
  }

  template <typename T>
  void Set(Entity e, Component<T> c, const T& value) {
    CheckType(c.id, std::is_empty_v<T> ? 0 : sizeof(T));
    Append(Op::kSet, c.id, e, &value, std::is_empty_v<T> ? 0 : sizeof(T));
  }
  void Set(Entity e, ComponentId c, absl::Span<const std::byte> value) {
    CheckType(c, value.size());
    Append(Op::kSet, c, e, value.data(), value.size());
  }

  // Playback: applies every command (see above) to `pages` and its manager `entities`,
  // then empties the buffer (keeping its memory and the handles for Resolve). Aborts,
  // as the store's calls do, inside a walk of `pages`. `pages` must be the store the
  // buffer was made for.
  //
  // The entities the playback handed to the store (its targets, resolved, and the
  // entities it created) stay in the buffer, unchanged, until its next playback begins:
  // ComponentEvents::Playback delivers events from them instead of copying them.
  Result Playback(EntityManager& entities, EntityPages& pages);
  // HoldsPlayed: `entities` lies in the arrays the playback in progress or the last one
  // handed to the store, which stay unchanged until the next playback begins.
  bool HoldsPlayed(absl::Span<const Entity> entities) const;

  // Resolve: what `e` names after the last playback: the created entity for a pending
  // handle of this buffer, `e` itself for any other. A pending handle not yet played
  // back resolves to the invalid Entity.
  Entity Resolve(Entity e) const;
  // IsPending: `e` is a pending handle (of any buffer).
  static bool IsPending(Entity e) { return (e.generation() & kPendingBit) != 0 && e.is_valid(); }

  // size: commands recorded since the last playback or Clear. empty: none.
  size_t size() const { return targets_.size(); }
  bool empty() const { return targets_.empty(); }
  // created: the entities the last playback created, in record order.
  absl::Span<const Entity> created() const { return created_; }
  // Clear: forgets the commands (not the memory, nor the last playback's handles).
  void Clear();
  // MemoryUsage: bytes held (capacities). RecordedBytes: bytes the recorded commands
  // take (targets, values, run records and bundles).
  size_t MemoryUsage() const;
  size_t RecordedBytes() const;

 private:
  enum class Op : uint8_t { kCreate, kDestroy, kAdd, kRemove, kSet };
  // Run: consecutive commands of one op and component (for kCreate, `component` is
  // the index of the bundle in bundles_): targets_[first, first + count), their
  // values from values_[value_offset] on. `count` is set at playback (until then a
  // run ends where the next one starts).
  struct Run {
    Op op;
    ComponentId component;
    size_t first;
    size_t count;
    size_t value_offset;
  };
  static constexpr size_t kAnySize = ~size_t{0};
  // A pending handle: generation kPendingBit | tag_ (a real generation is below 2^31),
  // index the creation number.
  static constexpr uint32_t kPendingBit = 0x80000000u;

  // CheckType: `c` is registered in the store with `size` bytes (kAnySize: any);
  // aborts otherwise. The last accepted pair is remembered (a type's size never
  // changes), so a run of commands on one type pays one comparison each.
  ABSL_ATTRIBUTE_ALWAYS_INLINE void CheckType(ComponentId c, size_t size) {
    if (ABSL_PREDICT_TRUE(c == checked_component_ &&
                          (size == checked_size_ || size == kAnySize))) {
      return;
    }
    CheckTypeSlow(c, size);
  }
  void CheckTypeSlow(ComponentId c, size_t size);
  // CheckTarget: a pending target is one of this buffer's current handles.
  ABSL_ATTRIBUTE_ALWAYS_INLINE void CheckTarget(Entity e) const {
    if (ABSL_PREDICT_FALSE(IsPending(e))) CheckPendingTarget(e);
  }
  void CheckPendingTarget(Entity e) const;

  ABSL_ATTRIBUTE_ALWAYS_INLINE void Append(Op op, ComponentId c, Entity e, const void* value,
                                           size_t size) {
    CheckTarget(e);
    // A run's count is left to Playback: a command stores only its target and value.
    if (ABSL_PREDICT_FALSE(runs_.empty() || runs_.back().op != op ||
                           runs_.back().component != c)) {
      runs_.push_back(Run{op, c, targets_.size(), 0, values_.size()});
    }
    targets_.push_back(e);
    if (size != 0) {
      // values_ leaves grown bytes unwritten (its allocator), and `size` is a constant
      // in the typed forms: the copy is a few moves, not a call.
      const size_t at = values_.size();
      values_.resize(at + size);
      std::memcpy(values_.data() + at, value, size);
    }
  }
  // Resolved: during playback, `e` with a pending handle replaced by its entity.
  Entity Resolved(Entity e) const { return IsPending(e) ? created_[e.index()] : e; }
  static uint32_t NewTag();
  static bool Within(absl::Span<const Entity> inner, const std::vector<Entity>& outer) {
    return !outer.empty() && inner.data() >= outer.data() &&
           inner.data() + inner.size() <= outer.data() + outer.size();
  }
  void PlayCreate(const Run& run, EntityManager& entities, EntityPages& pages, Result& result);
  void PlayDestroy(const Run& run, EntityManager& entities, Result& result);
  void PlayAdd(const Run& run, EntityManager& entities, EntityPages& pages, Result& result);
  void PlayRemove(const Run& run, EntityManager& entities, EntityPages& pages, Result& result);
  void PlaySet(const Run& run, EntityManager& entities, EntityPages& pages, Result& result);
  void CountSkipped(const EntityManager& entities, Entity e, Result& result) const;

  const EntityPages* pages_;
  ComponentId checked_component_ = kNoComponent;
  size_t checked_size_ = 0;
  // tag_: the pending handles being recorded; played_tag_: those of the last
  // playback, which Resolve answers. A new tag per playback or Clear, so a pending
  // handle kept from an earlier frame is caught, not confused with a new one.
  uint32_t tag_;
  uint32_t played_tag_ = 0;
  std::vector<Run> runs_;
  std::vector<Entity> targets_;
  // played_targets_: the last playback's targets, resolved (see Playback), swapped out
  // of targets_ rather than cleared; the older array is recorded into next.
  std::vector<Entity> played_targets_;
  std::vector<std::byte, UninitializedHugePageAllocator<std::byte>> values_;
  std::vector<ComponentBundle> bundles_;
  // pending_: creations recorded since the last playback; created_: by creation
  // number, the entities of the last playback.
  uint32_t pending_ = 0;
  std::vector<Entity> created_;
  // Scratch for playback (kept for the next frame).
  std::vector<Entity> scratch_;
  // lent_: a ComponentEvents reads the last playback's arrays (see HoldsPlayed) until
  // its flush ends; playing the buffer back before then would change them.
  bool lent_ = false;
  friend class ComponentEvents;
};

}  // namespace strata

#endif  // STRATA_ITERATION_COMMAND_BUFFER_H_
