// TransformComponent: creation, lookup, the three-step swap, destruction, the
// EntityManager connection and the invariant audit. The other responsibilities live
// beside it: transform_component_storage.cc (the SoA block, its growth and prefault, the
// stable ids), transform_component_links.cc (links, SetLocal),
// transform_component_batch.cc (batches) and transform_component_deferred.cc
// (UpdateWorld).
#include "transform/transform_component.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "absl/base/macros.h"
#include "absl/base/optimization.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/check.h"
#include "base/matrix.h"
#include "base/prefault.h"
#include "base/status_macros.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "transform/internal/transform_kernels.h"

namespace strata {
namespace {

using transform_internal::HierarchyView;

}  // namespace

TransformComponent::TransformComponent(const Options& options) : options_(options) {
  static std::atomic<uint64_t> components{0};
  serial_ = components.fetch_add(1, std::memory_order_relaxed) + 1;
  if (options_.idle_updates_before_clean == 0) options_.idle_updates_before_clean = 1;
  if (options_.idle_updates_before_clean > 255) options_.idle_updates_before_clean = 255;
  STRATA_CHECK(options_.initial_capacity <= kMaxCapacity,
               "TransformComponent: Options::initial_capacity above kMaxCapacity (use Make "
               "to get a Status instead)");
  if (options_.initial_capacity > 0) Grow(options_.initial_capacity);
}

absl::StatusOr<std::unique_ptr<TransformComponent>> TransformComponent::Make(
    const Options& options) {
  if (options.initial_capacity > kMaxCapacity) {
    return absl::InvalidArgumentError(
        absl::StrCat("TransformComponent: Options::initial_capacity ", options.initial_capacity,
                     " is above kMaxCapacity (", kMaxCapacity, ")"));
  }
  return std::make_unique<TransformComponent>(options);
}

TransformComponent::~TransformComponent() = default;

inline uint32_t TransformComponent::WriteNewNode(uint32_t pos, Entity entity, const Matrix4x4& local) {
  local_[pos] = local;
  entity_[pos] = entity;
  parent_[pos] = kNone;
  first_child_[pos] = kNone;
  next_sibling_[pos] = kNone;
  prev_sibling_[pos] = kNone;
  idle_[pos] = 0;
  const uint32_t id = AllocateId(pos);
  id_[pos] = id;
  return id;
}

uint32_t TransformComponent::Append(Entity entity, const Matrix4x4& local) {
  const uint32_t pos = static_cast<uint32_t>(size_);
  WriteNewNode(pos, entity, local);
  world_[pos] = local;
  const bool dirty_range_empty = first_dirty_ == size_;
  ++size_;
  if (dirty_range_empty) {
    first_dirty_ = static_cast<uint32_t>(size_);
    return pos;
  }
  // Deferred mode with dirty nodes: a new root is already correct (world == local), so
  // it joins the clean part; the dirty node it displaces keeps its place in the range
  // up to the order fix of the next UpdateWorld.
  Swap(pos, first_dirty_);
  return first_dirty_++;
}

absl::Status TransformComponent::NotAlive(absl::string_view context, Entity entity) const {
  return absl::NotFoundError(absl::StrCat(
      context, entity.DebugString(), " is not alive in the EntityManager the component is ",
      "connected to", manager_.expired() ? " (that manager has been destroyed)" : ""));
}

absl::Status TransformComponent::Full(size_t more) const {
  return absl::ResourceExhaustedError(absl::StrCat("TransformComponent: ", size_, " + ", more,
                                                   " instances exceed kMaxCapacity (",
                                                   kMaxCapacity, ")"));
}

absl::StatusOr<TransformHandle> TransformComponent::Create(
    Entity entity, const Matrix4x4& local) {
  if (!entity.is_valid()) return absl::InvalidArgumentError("Create: invalid entity");
  if (connected() && !manager_->Alive(entity)) return NotAlive("Create: ", entity);
  if (FindId(entity) != kNone) {
    return absl::AlreadyExistsError(
        absl::StrCat("Create: ", entity.DebugString(), " already has a transform"));
  }
  if (size_ == kMaxCapacity) return Full(1);
  // `local` may be a matrix of this component (Local or World of a node), which Grow
  // frees: take it first.
  const Matrix4x4 copy = local;
  Grow(size_ + 1);
  const uint32_t pos = Append(entity, copy);
  InsertEntity(entity, id_[pos]);
  LogChange(entity, Change::kCreated);
  return HandleAt(pos);
}

// ---- The entity -> id table ---------------------------------------------------------

TransformComponent::EntitySlot& TransformComponent::EntitySlotAtNewPage(uint32_t index) {
  const uint32_t page = index >> kEntityPageBits;
  if (page >= entity_pages_.size()) entity_pages_.resize(size_t{page} + 1);
  if (entity_pages_[page] == nullptr) {
    entity_pages_[page] = std::make_unique<EntitySlot[]>(kEntityPageSize);  // zeroed: free
    ++entity_pages_allocated_;
  }
  return entity_pages_[page][index & (kEntityPageSize - 1)];
}

uint32_t TransformComponent::FindOverflowId(Entity entity) const {
  auto it = entity_overflow_.find(entity);
  return it == entity_overflow_.end() ? kNone : it->second;
}

void TransformComponent::InsertEntity(Entity entity, uint32_t id) {
  EntitySlot& slot = EntitySlotAt(entity.index());
  if (slot.id_plus_one == 0) {
    slot = EntitySlot{entity.generation(), id + 1};
    ++entity_slots_used_;
  } else {
    entity_overflow_.emplace(entity, id);
  }
}

void TransformComponent::EraseEntity(Entity entity) {
  const uint32_t page = entity.index() >> kEntityPageBits;
  if (page < entity_pages_.size() && entity_pages_[page] != nullptr) {
    EntitySlot& slot = entity_pages_[page][entity.index() & (kEntityPageSize - 1)];
    if (slot.generation == entity.generation() && slot.id_plus_one != 0) {
      slot.id_plus_one = 0;
      --entity_slots_used_;
      return;
    }
  }
  entity_overflow_.erase(entity);
}

absl::Status TransformComponent::ClaimEntities(absl::Span<const Entity> entities,
                                               std::vector<Entity>* overflow) {
  // Overflowing entities of this batch (rare: see entity_pages_), for the repeat check.
  absl::flat_hash_set<Entity> overflow_seen;
  for (size_t k = 0; k < entities.size(); ++k) {
    const Entity e = entities[k];
    absl::Status error;
    if (!e.is_valid()) {
      error = absl::InvalidArgumentError(absl::StrCat("CreateBatch: entities[", k, "] is invalid"));
    } else if (connected() && !manager_->Alive(e)) {
      error = NotAlive(absl::StrCat("CreateBatch: entities[", k, "] "), e);
    } else {
      EntitySlot& slot = EntitySlotAt(e.index());
      bool has = false;
      bool repeated = false;
      if (slot.id_plus_one == 0) {
        slot = EntitySlot{e.generation(), kClaimed};
      } else if (slot.generation == e.generation()) {
        has = slot.id_plus_one != kClaimed;
        repeated = !has;
      } else {
        has = entity_overflow_.contains(e);
        repeated = !has && !overflow_seen.insert(e).second;
        if (!has && !repeated) overflow->push_back(e);
      }
      if (has) {
        error = absl::AlreadyExistsError(absl::StrCat("CreateBatch: entities[", k, "] ",
                                                      e.DebugString(), " already has a transform"));
      } else if (repeated) {
        error = absl::InvalidArgumentError(
            absl::StrCat("CreateBatch: entities[", k, "] ", e.DebugString(), " is repeated"));
      }
    }
    if (!error.ok()) [[unlikely]] {
      ReleaseClaims(entities.first(k));
      overflow->clear();
      return error;
    }
  }
  return absl::OkStatus();
}

void TransformComponent::ReleaseClaims(absl::Span<const Entity> entities) {
  for (const Entity e : entities) {
    EntitySlot& slot = EntitySlotAt(e.index());
    if (slot.generation == e.generation() && slot.id_plus_one == kClaimed) slot.id_plus_one = 0;
  }
}


absl::Status TransformComponent::CreateBatch(absl::Span<const Entity> entities,
                                             absl::Span<const Matrix4x4> locals,
                                             absl::Span<TransformHandle> out) {
  if (entities.size() != locals.size() || entities.size() != out.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CreateBatch: span sizes differ (entities ", entities.size(), ", locals ",
        locals.size(), ", out ", out.size(), ")"));
  }
  std::vector<Entity> overflow;
  STRATA_RETURN_IF_ERROR(ClaimEntities(entities, &overflow));
  if (entities.size() > kMaxCapacity - size_) {
    ReleaseClaims(entities);
    return Full(entities.size());
  }
  std::vector<Matrix4x4> own_locals;
  locals = OutsideBlock(locals, own_locals);
  Grow(size_ + entities.size());
  const BackgroundPrefault prefault =
      PrefaultNewNodes(static_cast<uint32_t>(size_), entities.size());
  for (size_t k = 0; k < entities.size(); ++k) {
    const uint32_t pos = Append(entities[k], locals[k]);
    FillEntity(entities[k], id_[pos]);
    out[k] = HandleAt(pos);
  }
  LogCreated(entities);
  return absl::OkStatus();
}

absl::Status TransformComponent::CreateBatch(absl::Span<const Entity> entities,
                                             absl::Span<const Matrix4x4> locals,
                                             absl::Span<const uint32_t> parents,
                                             absl::Span<TransformHandle> out) {
  const size_t n = entities.size();
  if (n != locals.size() || (n != out.size() && !out.empty()) || n != parents.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CreateBatch: span sizes differ (entities ", n, ", locals ", locals.size(),
        ", parents ", parents.size(), ", out ", out.size(), ")"));
  }
  for (size_t k = 0; k < n; ++k) {
    if (parents[k] != kNoBatchParent && parents[k] >= k) {
      return absl::InvalidArgumentError(absl::StrCat("CreateBatch: parents[", k, "] is ",
                                                     parents[k], ", not an earlier instance"));
    }
  }
  if (options_.mode == Mode::kDeferred) {
    // Link marks dirty and moves nodes: the general path.
    std::vector<TransformHandle> created;
    if (out.empty()) created.resize(n);
    const absl::Span<TransformHandle> handles = out.empty() ? absl::MakeSpan(created) : out;
    STRATA_RETURN_IF_ERROR(CreateBatch(entities, locals, handles));
    for (size_t k = 0; k < n; ++k) {
      if (parents[k] == kNoBatchParent) continue;
      absl::Status s = Link(handles[k], handles[parents[k]]);
      // Fresh nodes, parents first: no cycle, no stale handle.
      ABSL_HARDENING_ASSERT(s.ok());
      s.IgnoreError();
    }
    return absl::OkStatus();
  }
  std::vector<Entity> overflow;
  STRATA_RETURN_IF_ERROR(ClaimEntities(entities, &overflow));
  if (n > kMaxCapacity - size_) {
    ReleaseClaims(entities);
    return Full(n);
  }
  std::vector<Matrix4x4> own_locals;
  locals = OutsideBlock(locals, own_locals);
  Grow(size_ + n);
  const BackgroundPrefault prefault = PrefaultNewNodes(static_cast<uint32_t>(size_), n);
  // Immediate mode: no dirty range, so instance k lands at position first + k. Each
  // chunk is written, then its worlds computed while it is still in cache (parents sit
  // before children, in this chunk or an earlier one: UpdateRange's requirement).
  const uint32_t first = static_cast<uint32_t>(size_);
  constexpr size_t kChunk = 512;
  const HierarchyView view = View();
  for (size_t begin = 0; begin < n; begin += kChunk) {
    const size_t end = std::min(n, begin + kChunk);
    for (size_t k = begin; k < end; ++k) {
      const uint32_t pos = first + static_cast<uint32_t>(k);
      const uint32_t id = WriteNewNode(pos, entities[k], locals[k]);
      FillEntity(entities[k], id);
      if (!out.empty()) out[k] = TransformHandle(id, id_slots_[id].generation);
      if (parents[k] != kNoBatchParent) Attach(pos, first + parents[k]);
    }
    size_ = first + end;
    transform_internal::UpdateRange(view, first + static_cast<uint32_t>(begin),
                                    first + static_cast<uint32_t>(end));
  }
  first_dirty_ = static_cast<uint32_t>(size_);
  LogCreated(entities);
  return absl::OkStatus();
}

TransformHandle TransformComponent::LinkOf(TransformHandle i,
                                                        const uint32_t* column) const {
  if (!IsValid(i)) return TransformHandle();
  const uint32_t other = column[PositionOf(i)];
  return other == kNone ? TransformHandle() : HandleAt(other);
}

const Matrix4x4& TransformComponent::Local(TransformHandle i) const {
  STRATA_CHECK(IsValid(i), "TransformComponent::Local: the handle is invalid or stale");
  return local_[PositionOf(i)];
}

const Matrix4x4& TransformComponent::World(TransformHandle i) const {
  STRATA_CHECK(IsValid(i), "TransformComponent::World: the handle is invalid or stale");
  return world_[PositionOf(i)];
}

HierarchyView TransformComponent::View() const {
  return HierarchyView{local_, world_, parent_, first_child_, next_sibling_};
}

// ---- The three-step swap ------------------------------------------------------------

void TransformComponent::MoveNode(uint32_t from, uint32_t to) {
  ++layout_version_;
  local_[to] = local_[from];
  world_[to] = world_[from];
  entity_[to] = entity_[from];
  parent_[to] = parent_[from];
  first_child_[to] = first_child_[from];
  next_sibling_[to] = next_sibling_[from];
  prev_sibling_[to] = prev_sibling_[from];
  id_[to] = id_[from];
  idle_[to] = idle_[from];
  // Every reference to `from` now names `to`.
  const uint32_t p = parent_[to];
  if (p != kNone && first_child_[p] == from) first_child_[p] = to;
  if (prev_sibling_[to] != kNone) next_sibling_[prev_sibling_[to]] = to;
  if (next_sibling_[to] != kNone) prev_sibling_[next_sibling_[to]] = to;
  for (uint32_t c = first_child_[to]; c != kNone; c = next_sibling_[c]) parent_[c] = to;
  id_slots_[id_[to]].position = to;
}

void TransformComponent::Swap(uint32_t a, uint32_t b) {
  if (a == b) return;
  dirty_range_preordered_ = false;
  // Through the spare slot at size_: after each step nothing refers to the slot just
  // vacated, so links are never walked half-updated.
  const uint32_t spare = static_cast<uint32_t>(size_);
  MoveNode(a, spare);
  MoveNode(b, a);
  MoveNode(spare, b);
}

// ---- Destruction ---------------------------------------------------------------------

void TransformComponent::DestroyAt(uint32_t pos) {
  // Orphan the children first (as roots), remembering them by id: positions move below.
  std::vector<uint32_t> orphan_ids;
  for (uint32_t c = first_child_[pos]; c != kNone;) {
    const uint32_t next = next_sibling_[c];
    parent_[c] = kNone;
    prev_sibling_[c] = kNone;
    next_sibling_[c] = kNone;
    orphan_ids.push_back(id_[c]);
    c = next;
  }
  first_child_[pos] = kNone;
  Detach(pos);

  // Swap-erase. The node first joins the front of the dirty range (in immediate mode
  // that range is empty, so this is the plain swap with the last instance), then swaps
  // with the last instance, so a dirty node never lands in the clean part.
  if (pos < first_dirty_) {
    --first_dirty_;
    Swap(pos, first_dirty_);
    pos = first_dirty_;
  }
  Swap(pos, static_cast<uint32_t>(size_ - 1));
  pos = static_cast<uint32_t>(size_ - 1);
  LogChange(entity_[pos], Change::kDestroyed);
  EraseEntity(entity_[pos]);
  FreeId(id_[pos]);
  --size_;

  // The orphans' world is now their local: update their subtrees.
  if (change_log_) [[unlikely]] {
    for (uint32_t id : orphan_ids) {
      changes_.push_back({entity_[id_slots_[id].position], Change::kMoved});
    }
  }
  if (options_.mode == Mode::kImmediate) {
    for (uint32_t& id : orphan_ids) id = id_slots_[id].position;
    const HierarchyView view = View();
    transform_internal::UpdateSubtrees(view, orphan_ids.data(), orphan_ids.size());
  } else {
    for (uint32_t id : orphan_ids) Touch(id_slots_[id].position);
  }
}

void TransformComponent::set_change_log(bool on) {
  change_log_ = on;
  changes_.clear();
  changes_.shrink_to_fit();
  change_log_applied_ = 0;
}

void TransformComponent::TakeChanges(absl::FunctionRef<void(Entity, Change)> fn) {
  // Deferred mode keeps the moves after change_log_applied_ (not applied yet), in order.
  const size_t applied =
      options_.mode == Mode::kImmediate ? changes_.size() : change_log_applied_;
  size_t kept = 0;
  for (size_t k = 0; k < changes_.size(); ++k) {
    const LoggedChange c = changes_[k];
    if (c.change != Change::kMoved) {
      fn(c.entity, c.change);
      continue;
    }
    if (k >= applied) {
      changes_[kept++] = c;
      continue;
    }
    const uint32_t id = FindId(c.entity);
    if (id == kNone) continue;  // destroyed since
    // The subtree in preorder, without recursion: first_child / next_sibling, up
    // through parent_ until a sibling or the start.
    const uint32_t start = id_slots_[id].position;
    uint32_t node = start;
    while (true) {
      fn(entity_[node], Change::kMoved);
      if (first_child_[node] != kNone) {
        node = first_child_[node];
        continue;
      }
      while (node != start && next_sibling_[node] == kNone) node = parent_[node];
      if (node == start) break;
      node = next_sibling_[node];
    }
  }
  changes_.resize(kept);
  change_log_applied_ = 0;
}

absl::Status TransformComponent::Destroy(TransformHandle i) {
  if (!IsValid(i)) return absl::NotFoundError("Destroy: instance is invalid or stale");
  DestroyAt(PositionOf(i));
  return absl::OkStatus();
}

bool TransformComponent::DestroyEntity(Entity entity) {
  const uint32_t id = FindId(entity);
  if (id == kNone) return false;
  DestroyAt(id_slots_[id].position);
  return true;
}

void TransformComponent::ConnectTo(EntityManager& manager) {
  manager_ = manager.AddDestroyListener(
      [this](absl::Span<const Entity> entities) { OnEntitiesDestroyed(entities); });
}

void TransformComponent::Disconnect() { manager_.Reset(); }

void TransformComponent::OnEntitiesDestroyed(absl::Span<const Entity> entities) {
  for (Entity e : entities) DestroyEntity(e);
}

// ---- Introspection -------------------------------------------------------------------

absl::Status TransformComponent::CheckInvariants() const {
  auto fail = [](auto&&... parts) { return absl::InternalError(absl::StrCat(parts...)); };
  if (size_ > capacity_ && size_ > 0) return fail("size ", size_, " > capacity ", capacity_);
  if (first_dirty_ > size_) return fail("first_dirty ", first_dirty_, " > size ", size_);
  if (options_.mode == Mode::kImmediate && first_dirty_ != size_) {
    return fail("immediate mode with a dirty range");
  }
  if (entity_slots_used_ + entity_overflow_.size() != size_) {
    return fail("entity map holds ", entity_slots_used_ + entity_overflow_.size(), " of ", size_);
  }
  const uint32_t n = static_cast<uint32_t>(size_);
  size_t parented = 0;
  size_t listed = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t id = id_[i];
    if (!ids_.in_use(id) || id_slots_[id].position != i ||
        id_slots_[id].generation != ids_.generation(id)) {
      return fail("position ", i, ": id table broken");
    }
    if (FindId(entity_[i]) != id) return fail("position ", i, ": entity map broken");
    const uint32_t p = parent_[i];
    if (p != kNone) {
      if (p >= n) return fail("position ", i, ": parent out of range");
      ++parented;
      if (IsDirty(p) && !IsDirty(i)) return fail("position ", i, ": clean under dirty parent");
    } else if (prev_sibling_[i] != kNone || next_sibling_[i] != kNone) {
      return fail("position ", i, ": root with siblings");
    }
    uint32_t listed_here = 0;
    for (uint32_t c = first_child_[i], prev = kNone; c != kNone; prev = c, c = next_sibling_[c]) {
      if (c >= n || parent_[c] != i || prev_sibling_[c] != prev || ++listed_here > n) {
        return fail("position ", i, ": child list broken at ", c);
      }
    }
    listed += listed_here;
  }
  // Every listed child names its parent and lists have no repeats, so equal counts mean
  // every node with a parent is on its parent's list.
  if (listed != parented) return fail(parented, " nodes have parents, ", listed, " listed");
  // No cycle: colour the walks up (1 = on the current path, 2 = known to reach a root).
  std::vector<uint8_t> state(n, 0);
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t x = i;
    while (x != kNone && state[x] == 0) {
      state[x] = 1;
      x = parent_[x];
    }
    if (x != kNone && state[x] == 1) return fail("position ", x, ": parent cycle");
    for (x = i; x != kNone && state[x] == 1; x = parent_[x]) state[x] = 2;
  }
  if (ids_.live() != n) return fail("ids leak: ", ids_.live(), " ids live for ", n, " nodes");
  if (id_slots_.size() < ids_.size()) return fail("id slot column too short");
  if (id_limit_ != ids_.size()) return fail("id limit ", id_limit_, " != ids issued ", ids_.size());
  for (uint32_t id = 0; id < ids_.size(); ++id) {
    // A free or retired id's copy holds the table's word, free bit included.
    if (!ids_.in_use(id) && id_slots_[id].generation != (ids_.words()[id])) {
      return fail("id ", id, ": generation copy differs from the id table");
    }
  }
  return absl::OkStatus();
}

}  // namespace strata
