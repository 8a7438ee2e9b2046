// TransformComponent: the transform graph of one world (seed 002, part 3).
//
// Each instance positions one entity: a local matrix relative to its parent, and a world
// matrix (local * parent world, row vectors). Instances link into a hierarchy of parents
// and children. One TransformComponent serves one world; an entity may have a transform
// in several worlds (one per component), each independent.
//
//   EntityManager entities;
//   TransformComponent transforms;                       // immediate mode
//   transforms.ConnectTo(entities);                      // entity destroyed -> transform too
//   Entity car = entities.Create(), wheel = entities.Create();
//   TransformHandle c = *transforms.Create(car, Matrix4x4::Translation(10, 0, 0));
//   TransformHandle w = *transforms.Create(wheel, Matrix4x4::Translation(1, 0, 0));
//   absl::Status s = transforms.Link(w, c);              // wheel follows the car
//   transforms.SetLocal(c, Matrix4x4::Translation(20, 0, 0));
//   transforms.World(w);                                 // translation (21, 0, 0), at once
//   transforms.Link(c, w);                               // InvalidArgument: a cycle
//
// Modes (Options::mode, fixed at construction):
// - kImmediate (default): SetLocal recomputes the world matrices of the node and its
//   whole subtree before returning, so World() is always current. Setting every node of
//   a chain of n one by one costs O(n^2); SetLocalBatch sets many and propagates once.
// - kDeferred: SetLocal only stores the local matrix and marks the node dirty; World()
//   returns the matrices of the last UpdateWorld(). UpdateWorld() recomputes every dirty
//   node in one linear pass. Dirty nodes sit at the end of the arrays, parents before
//   children; a node not set for `idle_updates_before_clean` updates leaves that range.
//
// Storage (NOTE: SoA, one allocation): per position, entity, local, world, parent,
// first_child, next_sibling, prev_sibling, the stable id and a few bookkeeping bytes;
// plus, per stable id, its position and generation. Matrices are 64-byte aligned. Nodes
// move between positions (swap-erase on Destroy, the dirty range in deferred mode),
// always through the article's three-step swap via the spare slot at `size`, which keeps
// every link intact.
//
// Handles: a TransformHandle is a stable id plus a generation, so it stays valid while the
// node moves and is rejected (never silently reused) once the node is destroyed. An
// TransformHandle belongs to the component that issued it; passing it to another component is
// a bug those checks cannot always catch.
//
// Thread-safety: none; one component belongs to one thread at a time. Const member
// functions may run concurrently with each other. Internally, large SetLocalBatch and
// UpdateWorld calls use oneTBB worker threads (Options::parallel_min_nodes) and return
// only when they are done.
#ifndef STRATA_TRANSFORM_TRANSFORM_COMPONENT_H_
#define STRATA_TRANSFORM_TRANSFORM_COMPONENT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/check.h"
#include "base/huge_page_allocator.h"
#include "base/matrix.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "entity/generation_table.h"

namespace strata {

class BackgroundPrefault;

namespace transform_internal {
struct HierarchyView;
}  // namespace transform_internal

// TransformHandle: a handle to one transform of a TransformComponent. Invalid by default.
class TransformHandle {
 public:
  constexpr TransformHandle() = default;
  constexpr bool is_valid() const { return id_ != kInvalidId; }
  constexpr uint32_t id() const { return id_; }
  constexpr uint32_t generation() const { return generation_; }
  friend constexpr bool operator==(TransformHandle a, TransformHandle b) {
    return a.id_ == b.id_ && a.generation_ == b.generation_;
  }
  friend constexpr bool operator!=(TransformHandle a, TransformHandle b) { return !(a == b); }
  template <typename H>
  friend H AbslHashValue(H h, TransformHandle i) {
    return H::combine(std::move(h), i.id_, i.generation_);
  }

 private:
  friend class TransformComponent;
  static constexpr uint32_t kInvalidId = 0xFFFFFFFFu;
  constexpr TransformHandle(uint32_t id, uint32_t generation) : id_(id), generation_(generation) {}
  uint32_t id_ = kInvalidId;
  uint32_t generation_ = 0;
};

class TransformComponent {
 public:
  enum class Mode { kImmediate, kDeferred };

  struct Options {
    Mode mode = Mode::kImmediate;
    // initial_capacity: instances allocated up front (grows by doubling after). At most
    // kMaxCapacity.
    size_t initial_capacity = 0;
    // idle_updates_before_clean: deferred mode; a dirty node whose local was not set
    // for this many UpdateWorld() calls (and whose parent is clean) leaves the dirty
    // range. Small values swap more, large values recompute idle nodes longer.
    uint32_t idle_updates_before_clean = 5;
    // Large updates (see README "Benchmark"): SetLocalBatch in immediate mode and
    // UpdateWorld in deferred mode.
    // parallel_min_nodes: an update with at least this many independent subtree roots
    // (SetLocalBatch) or dirty nodes (UpdateWorld) is split across oneTBB's worker
    // threads, by whole subtrees; smaller ones run on the calling thread. Same results.
    size_t parallel_min_nodes = size_t{1} << 14;
    // stream_min_nodes: a SetLocalBatch known to write at least this many nodes (the
    // distinct nodes set) writes the set locals and the worlds of nodes without
    // children with non-temporal stores: they bypass the caches, so the update moves
    // fewer bytes, but the renderer then reads those worlds from memory. Smaller
    // batches keep them in cache. Same results. (UpdateWorld never streams: measured
    // slower there, see README.)
    size_t stream_min_nodes = size_t{1} << 16;
    // prefault_min_nodes: a CreateBatch of at least this many nodes has a helper thread
    // fault the storage it is about to write in ahead of it (base/prefault.h), so the
    // kernel zeroes fresh pages on another core: the first spawn into new storage then
    // costs about what a respawn costs. Storage already in use costs a page-table walk.
    // Same results.
    size_t prefault_min_nodes = size_t{1} << 16;
  };

  // PreparedBatch: a list of instances checked and resolved to positions once (by
  // PrepareBatch), for SetLocalBatch calls that set the same instances again and again,
  // typically every frame (an animation system's movers). SetLocalBatch then checks one
  // layout counter instead of every handle (at 1M nodes that pass reads about 40 bytes
  // per node, a fifth of the update's memory traffic). When the layout has changed
  // since (a node moved in the arrays or was destroyed, a link changed: Create alone
  // does not count), SetLocalBatch resolves the stored handles again, O(n), and keeps
  // the result. Belongs to the component that prepared it; copyable and movable; holds
  // about 12 bytes per instance (16 with a hierarchy below the set nodes).
  class PreparedBatch {
   public:
    PreparedBatch() = default;
    // size: the number of instances (repeats included).
    size_t size() const { return instances_.size(); }

   private:
    friend class TransformComponent;
    // Immediate mode: how SetLocalBatch runs the update (decided when resolved).
    enum class Shape : uint8_t {
      kFlatRun,  // positions first_ + k, none with a parent or a child: a plain copy
      kRoots,    // roots only, positions strictly increasing: one walk each
      kMarked,   // anything else: walks from roots_, inner_ only take their local
    };
    uint64_t owner_ = 0;           // the serial number of the component; 0: none
    uint64_t layout_version_ = 0;  // the component's layout version when resolved
    std::vector<TransformHandle> instances_;
    std::vector<uint32_t> positions_;  // per instance, valid at layout_version_
    Shape shape_ = Shape::kRoots;
    uint32_t first_ = 0;          // kFlatRun: the position of instances_[0]
    size_t written_ = 0;          // distinct nodes set (the stream_min_nodes test)
    std::vector<uint32_t> roots_;  // kMarked: indices starting a walk, memory order
    std::vector<uint32_t> inner_;  // kMarked: indices below a set node (last of repeats)
  };

  // kMaxCapacity: the most instances a component holds (positions and ids are 32-bit,
  // with one value reserved and one spare slot).
  static constexpr size_t kMaxCapacity = 0xFFFFFFFDu;

  TransformComponent() : TransformComponent(Options()) {}
  // TransformComponent(options): aborts, in every build mode, if
  // options.initial_capacity is above kMaxCapacity; Make returns a Status instead.
  explicit TransformComponent(const Options& options);
  // Make: a component with `options`, or InvalidArgument if initial_capacity is above
  // kMaxCapacity: the form for options that come from configuration.
  static absl::StatusOr<std::unique_ptr<TransformComponent>> Make(const Options& options);
  ~TransformComponent();

  TransformComponent(const TransformComponent&) = delete;
  TransformComponent& operator=(const TransformComponent&) = delete;

  Mode mode() const { return options_.mode; }

  // Create: a root transform for `entity` with world == local. InvalidArgument for the
  // invalid entity, AlreadyExists if `entity` has a transform here, NotFound while
  // connected (ConnectTo) if `entity` is not alive in that manager (dead, stale, never
  // issued, or the manager has been destroyed), ResourceExhausted at kMaxCapacity.
  // Amortised O(1); may reallocate (instances stay valid, pointers from Local/World do
  // not). `local` may be this component's own Local or World of a node: it is copied
  // before the storage grows.
  absl::StatusOr<TransformHandle> Create(Entity entity, const Matrix4x4& local);

  // CreateBatch: creates roots for entities[i] with locals[i], writes the handles to
  // out[i]. All or nothing: InvalidArgument if the spans differ in size or an entity is
  // invalid or repeated, AlreadyExists if one has a transform, NotFound (naming the
  // index) as Create for an entity that is not alive, ResourceExhausted past
  // kMaxCapacity; then nothing changes.
  // O(n), one growth at most; the new instances take consecutive positions in order,
  // so spawning parents before children keeps families close in memory. `locals` may
  // point at this component's own matrices (a node's Local or World): they are then
  // copied first.
  absl::Status CreateBatch(absl::Span<const Entity> entities,
                           absl::Span<const Matrix4x4> locals, absl::Span<TransformHandle> out);

  // kNoBatchParent: parents[i] of an instance that CreateBatch leaves a root.
  static constexpr uint32_t kNoBatchParent = 0xFFFFFFFFu;

  // CreateBatch (with parents): as CreateBatch, then out[i] becomes a child of
  // out[parents[i]] for every i with parents[i] != kNoBatchParent, as LinkBatch of those
  // pairs in order of i would do (same links, same sibling order, same world matrices).
  // `out` may be empty (the handles are not written). A parent comes first:
  // InvalidArgument, before the entity checks, if parents.size() differs from
  // entities.size() or some parents[i] >= i; otherwise the errors of
  // CreateBatch, all or nothing. O(n): in immediate mode the links are made as the
  // instances are written and every world is computed once, in batch order (parents
  // first), with no per-link update; in deferred mode it is CreateBatch then LinkBatch.
  absl::Status CreateBatch(absl::Span<const Entity> entities,
                           absl::Span<const Matrix4x4> locals,
                           absl::Span<const uint32_t> parents, absl::Span<TransformHandle> out);

  // Lookup: the transform of `entity`, or the invalid TransformHandle. O(1): one slot of
  // a table indexed by Entity::index() (a hash lookup only for an entity whose slot
  // holds another generation of its index, which only a disconnected component sees).
  TransformHandle Lookup(Entity entity) const {
    const uint32_t id = FindId(entity);
    return id == kNone ? TransformHandle() : TransformHandle(id, id_slots_[id].generation);
  }

  // IsValid: true if `i` was issued here and not destroyed since. O(1).
  bool IsValid(TransformHandle i) const {
    // The id's generation is read from its slot beside its position (one cache line
    // for IsValid + PositionOf). The bound is id_limit_, a 32-bit copy of ids_.size()
    // in this object's first cache line, not ids_.size() itself: see id_limit_.
    return i.id_ < id_limit_ && (i.generation_ & GenerationTable::kFreeBit) == 0 &&
           id_slots_[i.id_].generation == i.generation_;
  }

  // entity: the entity of `i`; the invalid Entity for an invalid instance. O(1).
  Entity entity(TransformHandle i) const {
    return IsValid(i) ? entity_[id_slots_[i.id_].position] : Entity();
  }

  // Destroy: removes `i`. Its children become roots whose world is their local (their
  // subtrees are updated as by SetLocal). NotFound for an invalid or stale instance.
  // O(children + their subtrees in immediate mode); other instances stay valid.
  absl::Status Destroy(TransformHandle i);

  // DestroyEntity: Destroy(Lookup(entity)); false if `entity` has no transform here.
  bool DestroyEntity(Entity entity);

  // ConnectTo: destroys an entity's transform whenever `manager` destroys the entity
  // (an EntityManager destroy listener), and makes Create accept only entities alive
  // in `manager`. One manager at a time: connecting again moves the connection. Either
  // may be destroyed first: when the manager dies, the component stays connected to
  // "no manager" (its transforms remain; Create returns NotFound) until Disconnect()
  // or another ConnectTo.
  void ConnectTo(EntityManager& manager);
  // Disconnect: removes the listener; Create then accepts any valid entity. No-op when
  // not connected.
  void Disconnect();

  // Link: makes `child` a child of `parent` (moving it from its old parent, if any); the
  // child keeps its local matrix, so its world changes. InvalidArgument if `child` is
  // `parent` or an ancestor of it (a cycle), NotFound if either is invalid or stale;
  // on error nothing changes. The cycle check costs O(min(depth of parent, size of the
  // child's subtree)); the update O(size of the child's subtree).
  absl::Status Link(TransformHandle child, TransformHandle parent);

  // LinkBatch: Link(children[i], parents[i]) in order. InvalidArgument if the spans
  // differ in size. Stops at the first failing pair and returns its error (naming the
  // index); the pairs before it stay linked.
  absl::Status LinkBatch(absl::Span<const TransformHandle> children,
                         absl::Span<const TransformHandle> parents);

  // Unlink: makes `child` a root (world = local); OK if it is one already. NotFound for
  // an invalid or stale instance. O(size of the child's subtree).
  absl::Status Unlink(TransformHandle child);

  // SetLocal: sets the local matrix. Immediate mode: recomputes the world matrices of
  // the node and its subtree now, without recursion (O(subtree)). Deferred mode: marks
  // the node and its subtree dirty (O(1) if already dirty, else O(subtree) swaps).
  // Returns false, changing nothing, for an invalid or stale instance.
  bool SetLocal(TransformHandle i, const Matrix4x4& local);

  // SetLocalBatch: SetLocal(instances[k], locals[k]) for all k, with one propagation in
  // immediate mode: each affected node is computed once, O(k + ancestors of the set
  // nodes + their subtrees), so a chain of n set together costs O(n), not O(n^2). A
  // repeated instance takes its last matrix. All or nothing: InvalidArgument if the
  // spans differ in size, NotFound (naming the index) if an instance is invalid or
  // stale; then nothing changes.
  absl::Status SetLocalBatch(absl::Span<const TransformHandle> instances,
                             absl::Span<const Matrix4x4> locals);

  // PrepareBatch: checks `instances` and resolves them for SetLocalBatch(PreparedBatch&,
  // ...) (see PreparedBatch). NotFound (naming the index) if one is invalid or stale.
  // O(n); repeats allowed (the last matrix wins, as in SetLocalBatch).
  absl::StatusOr<PreparedBatch> PrepareBatch(absl::Span<const TransformHandle> instances);

  // SetLocalBatch (prepared): as SetLocalBatch(batch's instances, locals), same results
  // bit for bit, without checking each handle when nothing moved since the batch was
  // resolved (O(1) check, then the update alone); otherwise re-resolves `batch` first
  // (O(n)). All or nothing: InvalidArgument if the sizes differ or `batch` comes from
  // another component (or none), NotFound (naming the index) if an instance has been
  // destroyed since; then nothing changes (`batch` may have been re-resolved).
  absl::Status SetLocalBatch(PreparedBatch& batch, absl::Span<const Matrix4x4> locals);

  // Local / World: the matrices of `i`. World is current in immediate mode and as of the
  // last UpdateWorld() in deferred mode. O(1). The reference is invalidated by any
  // non-const call. Requires IsValid(i): an invalid, stale or foreign handle aborts in
  // every build mode (the check is the IsValid compare the identity fallback made
  // before). A caller holding handles from outside (a saved list, another system) asks
  // IsValid(i) first, the non-aborting check, as SetLocal's bool is for writes.
  const Matrix4x4& Local(TransformHandle i) const;
  const Matrix4x4& World(TransformHandle i) const;

  // Parent / FirstChild / NextSibling / PrevSibling: the hierarchy links, invalid
  // TransformHandle where there is none or `i` is invalid. O(1).
  TransformHandle Parent(TransformHandle i) const { return LinkOf(i, parent_); }
  TransformHandle FirstChild(TransformHandle i) const { return LinkOf(i, first_child_); }
  TransformHandle NextSibling(TransformHandle i) const { return LinkOf(i, next_sibling_); }
  TransformHandle PrevSibling(TransformHandle i) const { return LinkOf(i, prev_sibling_); }

  // UpdateWorld: deferred mode: recomputes the world matrix of every dirty node in one
  // linear pass (parents first), and moves nodes idle long enough out of the dirty
  // range. O(dirty nodes). Immediate mode: nothing to do.
  void UpdateWorld();

  // size: live instances. dirty_count: nodes in the dirty range (deferred mode).
  size_t size() const { return size_; }
  // EntityAt: the entity of the instance at array position `position` < size(), for
  // walking every transform (positions change on Destroy and in deferred updates).
  // Aborts, in every build mode, for a position past size(): one compare per call.
  Entity EntityAt(size_t position) const {
    STRATA_CHECK(position < size_, "TransformComponent::EntityAt: position past size()");
    return entity_[position];
  }
  size_t dirty_count() const { return size_ - first_dirty_; }
  size_t capacity() const { return capacity_; }
  // Reserve: makes room for `min_capacity` instances (one allocation, no other
  // change); OK if there is room already. InvalidArgument above kMaxCapacity, and then
  // nothing changes. O(size) when it grows: instances stay valid, pointers from
  // Local/World do not.
  absl::Status Reserve(size_t min_capacity);
  // MemoryUsage: bytes owned (the SoA block, the entity map, scratch vectors).
  size_t MemoryUsage() const;

  // CheckInvariants: O(n) audit of every link, table and ordering invariant; OK or
  // Internal naming the first broken one. For tests and debugging.
  absl::Status CheckInvariants() const;

  // Change log, for whoever mirrors the transforms elsewhere (a World's page queries
  // ask "whose transform changed since tick t"). Off by default; while on, every call
  // that creates or destroys a node, or changes a world matrix (SetLocal, SetLocalBatch,
  // Link, Unlink, the orphaning of a Destroy), records the entity, O(1) per call and
  // per instance of a batch: the subtree below a moved node is not walked until taken.
  enum class Change : uint8_t { kCreated, kMoved, kDestroyed };
  // set_change_log: starts (clearing what an earlier log held) or stops recording.
  void set_change_log(bool on);
  bool change_log() const { return change_log_; }
  // TakeChanges: calls fn(entity, change) for each recorded change in order, and for a
  // moved node once for it and once for every node of its subtree as it is now (a node
  // linked below it later was recorded by its Link; one moved away, by its Unlink): so
  // every node whose world matrix changed is reported at least once, some twice. A
  // node destroyed since its kMoved is skipped. Then forgets them. Deferred mode: a
  // kMoved only once an UpdateWorld() has applied it (later ones wait for the next),
  // so a reported matrix is the one World() returns; creations and destructions at
  // once. O(changes + moved subtrees). `fn` must not change this component.
  void TakeChanges(absl::FunctionRef<void(Entity, Change)> fn);

 private:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;

  TransformHandle LinkOf(TransformHandle i, const uint32_t* column) const;

  // The entity -> id table (see entity_pages_). FindId: `entity`'s id, kNone if it has
  // no transform here. InsertEntity: records `entity` (which has none) with `id`;
  // EraseEntity: forgets it (it has one).
  uint32_t FindId(Entity entity) const {
    const uint32_t page = entity.index() >> kEntityPageBits;
    if (page < entity_pages_.size() && entity_pages_[page] != nullptr) [[likely]] {
      const EntitySlot& slot = entity_pages_[page][entity.index() & (kEntityPageSize - 1)];
      if (slot.generation == entity.generation() && slot.id_plus_one != 0) {
        return slot.id_plus_one - 1;
      }
    }
    return entity_overflow_.empty() ? kNone : FindOverflowId(entity);
  }
  uint32_t FindOverflowId(Entity entity) const;
  void InsertEntity(Entity entity, uint32_t id);
  void EraseEntity(Entity entity);
  struct EntitySlot;
  EntitySlot& EntitySlotAt(uint32_t index) {  // allocates its page
    const uint32_t page = index >> kEntityPageBits;
    if (page < entity_pages_.size() && entity_pages_[page] != nullptr) [[likely]] {
      return entity_pages_[page][index & (kEntityPageSize - 1)];
    }
    return EntitySlotAtNewPage(index);
  }
  EntitySlot& EntitySlotAtNewPage(uint32_t index);
  // CreateBatch's checks, in order for each k: invalid, not alive, has a transform,
  // repeated. Claims each checked entity's slot (kClaimed) so a repeat is seen, and
  // lists in *overflow those whose slot holds another entity; on error releases every
  // claim. Then FillEntity(entity, id) records each, claimed or overflowing.
  absl::Status ClaimEntities(absl::Span<const Entity> entities,
                             std::vector<Entity>* overflow);
  void ReleaseClaims(absl::Span<const Entity> entities);
  void FillEntity(Entity entity, uint32_t id) {
    EntitySlot& slot = entity_pages_[entity.index() >> kEntityPageBits]
                                    [entity.index() & (kEntityPageSize - 1)];
    if (slot.generation == entity.generation() && slot.id_plus_one == kClaimed) [[likely]] {
      slot.id_plus_one = id + 1;
      ++entity_slots_used_;
    } else {
      entity_overflow_.emplace(entity, id);
    }
  }
  // Create's errors: NotFound for an entity not alive in the connected manager;
  // ResourceExhausted for `more` instances past kMaxCapacity.
  absl::Status NotAlive(absl::string_view context, Entity entity) const;
  absl::Status Full(size_t more) const;
  // Memoised for SetLocalBatch: is `pos` or one of its ancestors in the batch?
  bool InBatchOrBelowOne(uint32_t pos);
  // SetLocalBatch's split of a batch (positions[0..n)) into walk roots and inner nodes
  // (indices; below another set node), through the marks: a repeat keeps its last
  // index. `roots` in forward memory order. Returns the distinct nodes set.
  size_t FindWalkRoots(const uint32_t* positions, size_t n, std::vector<uint32_t>& roots,
                       std::vector<uint32_t>& inner);
  // (Re)resolves batch.instances_ at the current layout; NotFound as PrepareBatch.
  absl::Status Resolve(PreparedBatch& batch);
  uint32_t PositionOf(TransformHandle i) const { return id_slots_[i.id_].position; }
  TransformHandle HandleAt(uint32_t pos) const {
    return TransformHandle(id_[pos], id_slots_[id_[pos]].generation);
  }
  bool IsDirty(uint32_t pos) const { return pos >= first_dirty_; }
  // The columns the kernels of transform/internal/transform_kernels.h walk.
  transform_internal::HierarchyView View() const;

  // Grows to at least min_capacity (<= kMaxCapacity, checked by the caller).
  void Grow(size_t min_capacity);
  // OutsideBlock: `locals`, or a copy of them in `copy` if they overlap the SoA block (a
  // caller passing a node's Local or World), which Grow frees and Append's swaps move.
  // Two compares unless they do.
  absl::Span<const Matrix4x4> OutsideBlock(absl::Span<const Matrix4x4> locals,
                                           std::vector<Matrix4x4>& copy) const;
  // CreateBatch's helper: with n >= prefault_min_nodes, starts faulting in the columns
  // of positions [first, first + n) and the id slots new ids take (from ids_.size()
  // on); returns the running prefault (idle below the threshold), which the caller
  // keeps in scope while it writes them.
  BackgroundPrefault PrefaultNewNodes(uint32_t first, size_t n);
  // The stable ids: a GenerationTable (its policy, with min_free_indices 0).
  static GenerationTable::Options IdTableOptions();
  // AllocateId: a new id for the node at `pos` (its slot filled); FreeId: releases it.
  uint32_t AllocateId(uint32_t pos);
  void FreeId(uint32_t id);
  // Writes an unlinked node at position `pos` (its local, entity and a new id; not its
  // world) and returns the id. Append and CreateBatch's immediate path share it.
  uint32_t WriteNewNode(uint32_t pos, Entity entity, const Matrix4x4& local);
  // Appends a root node at position size_ (capacity must allow size_ + 2: the node and
  // the spare slot).
  uint32_t Append(Entity entity, const Matrix4x4& local);
  // Three-step swap plumbing: MoveNode moves every column of `from` to the free slot
  // `to` and redirects every reference to it. Swap exchanges two positions via size_.
  void MoveNode(uint32_t from, uint32_t to);
  void Swap(uint32_t a, uint32_t b);

  void Detach(uint32_t pos);                  // unlinks from parent and siblings
  void Attach(uint32_t pos, uint32_t parent);  // as the first child of `parent`
  bool IsAncestorOrSelf(uint32_t ancestor, uint32_t node) const;
  // World changed at `pos` (new local or new parent): recompute now (immediate) or
  // mark dirty with its subtree (deferred). Returns the node's position afterwards.
  uint32_t Touch(uint32_t pos);
  // Deferred: moves a clean node and its clean descendants to the front of the dirty
  // range, parents before children. Returns the node's new position.
  uint32_t MarkDirty(uint32_t pos);
  // Deferred: puts the dirty range in preorder (parents before children).
  void OrderDirtyRange();
  // Deferred, large updates: scans the dirty range backwards; tells whether every
  // parent in it sits before its children, and (when it does) fills scratch_splits_
  // with about `chunks` + 1 ascending positions from first_dirty_ to size_ such that no
  // node has its parent in another chunk.
  struct DirtyRangeScan {
    bool ordered;            // every parent before its children
    uint32_t largest_chunk;  // nodes in the largest chunk found
  };
  DirtyRangeScan ScanDirtyRange(size_t chunks);
  // Immediate: runs SetAndUpdateSubtrees, split across threads when num_roots reaches
  // options_.parallel_min_nodes.
  void SetAndUpdate(const uint32_t* positions, const Matrix4x4* locals, const uint32_t* roots,
                    size_t num_roots, bool stream);
  void DestroyAt(uint32_t pos);
  void OnEntitiesDestroyed(absl::Span<const Entity> entities);

  Options options_;
  size_t size_ = 0;
  size_t capacity_ = 0;     // usable positions; the buffer has one more (the spare)
  uint32_t first_dirty_ = 0;  // == size_ in immediate mode
  // id_limit_: ids issued, always ids_.size() (AllocateId sets it; CheckInvariants
  // audits it). IsValid, on every SetLocal, compares with it in one instruction; with
  // ids_.size() (a vector's end minus begin) the compiler set up SetLocal's stack frame
  // before the check and added two loads, and deferred SetLocal, whose only cache miss
  // per call is the id slot, got slower (fewer calls' misses overlap in the
  // out-of-order window). See docs/notes/transform.md, the id table.
  uint32_t id_limit_ = 0;
  // Deferred: the dirty range is in preorder with contiguous subtrees (set by
  // OrderDirtyRange, cleared by any Swap, Attach or Detach).
  bool dirty_range_preordered_ = false;
  // Identifies this component to its PreparedBatches (never 0, never reused).
  uint64_t serial_ = 0;
  // Advances whenever a node changes position or links, or is destroyed (MoveNode,
  // Attach, Detach, FreeId): a PreparedBatch resolved at another value is re-resolved.
  uint64_t layout_version_ = 0;

  // The single SoA block and its columns (per position unless noted).
  // Frees the block with the size it was allocated with (DeallocateLarge needs it).
  struct FreeBuffer {
    size_t bytes;  // no initializer: it would stop unique_ptr<void, FreeBuffer>() compiling here
    void operator()(void* p) const;
  };
  std::unique_ptr<void, FreeBuffer> buffer_;
  Matrix4x4* local_ = nullptr;
  Matrix4x4* world_ = nullptr;
  Entity* entity_ = nullptr;
  uint32_t* parent_ = nullptr;
  uint32_t* first_child_ = nullptr;
  uint32_t* next_sibling_ = nullptr;
  uint32_t* prev_sibling_ = nullptr;
  uint32_t* id_ = nullptr;             // position -> stable id
  uint32_t* mark_ = nullptr;           // SetLocalBatch scratch: epoch << 2 | flags
  // The mark column holds garbage until the first batch that needs marks clears it:
  // Grow does not, so a spawn never writes (and faults in) a column it does not use.
  bool marks_stale_ = true;
  uint8_t* idle_ = nullptr;            // deferred: updates since the last SetLocal
  GenerationTable ids_{IdTableOptions()};  // per id: generation, free queue
  // Per id below ids_.size(): its position while live, and a copy of its word in ids_
  // (the generation, with kFreeBit while free or retired), so resolving a handle reads
  // one cache line, not one in ids_ and one here. ids_ keeps the policy; AllocateId
  // and FreeId keep the copy equal to it (CheckInvariants audits that). Huge-page
  // backed like the block; resize() leaves new slots unwritten (each is written when
  // its id is issued, and ids at or above ids_.size() are never read).
  struct IdSlot {
    uint32_t generation;
    uint32_t position;
  };
  std::vector<IdSlot, UninitializedHugePageAllocator<IdSlot>> id_slots_;

  // Entity -> id, by Entity::index(): pages of kEntityPageSize slots, allocated on first
  // use (zeroed: free), each {generation, id + 1} (0: no transform). A bulk spawn writes
  // consecutive slots, where a hash map scattered them over a table of 16+ bytes per
  // entry. NOTE: the page directory has one pointer per 4096 indices up to the largest
  // index seen (8 MB at index 2^32 - 2, only if such an entity gets a transform).
  // An entity whose slot holds another generation of its index (a disconnected
  // component given entities the slot's owner outlived) goes to entity_overflow_.
  struct EntitySlot {
    uint32_t generation;
    uint32_t id_plus_one;
  };
  static constexpr uint32_t kEntityPageBits = 12;
  static constexpr uint32_t kEntityPageSize = 1u << kEntityPageBits;
  // CreateBatch's mark on a slot while it checks the batch (id_plus_one never reaches it:
  // ids stay below kMaxCapacity).
  static constexpr uint32_t kClaimed = 0xFFFFFFFFu;
  std::vector<std::unique_ptr<EntitySlot[]>> entity_pages_;
  size_t entity_pages_allocated_ = 0;
  size_t entity_slots_used_ = 0;  // slots with a transform (not counting the overflow)
  absl::flat_hash_map<Entity, uint32_t> entity_overflow_;
  uint32_t batch_epoch_ = 0;
  std::vector<uint32_t> scratch_positions_;
  std::vector<uint32_t> scratch_roots_;
  std::vector<uint32_t> scratch_path_;
  std::vector<uint32_t> scratch_splits_;
  std::vector<uint32_t> scratch_inner_;

  // The change log (see set_change_log): entries in order; in deferred mode those
  // before change_log_applied_ are the ones the last UpdateWorld applied.
  struct LoggedChange {
    Entity entity;
    Change change;
  };
  void LogChange(Entity entity, Change change) {
    if (change_log_) [[unlikely]] changes_.push_back({entity, change});
  }
  void LogCreated(absl::Span<const Entity> entities) {
    if (change_log_) [[unlikely]] {
      for (Entity e : entities) changes_.push_back({e, Change::kCreated});
    }
  }
  bool change_log_ = false;
  std::vector<LoggedChange> changes_;
  size_t change_log_applied_ = 0;

  // The manager ConnectTo chose; active() or expired() while connected.
  EntityManager::Subscription manager_;
  bool connected() const { return manager_.active() || manager_.expired(); }
};

}  // namespace strata

#endif  // STRATA_TRANSFORM_TRANSFORM_COMPONENT_H_
