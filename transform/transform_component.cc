#include "transform/transform_component.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#include "absl/base/macros.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/check.h"
#include "base/huge_page_allocator.h"
#include "base/parallel_for.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/parallel_reduce.h"
#include "oneapi/tbb/task_arena.h"
#include "transform/internal/transform_kernels.h"
#include "transform/matrix.h"

namespace strata {
namespace {

using transform_internal::HierarchyView;

// NOTE: every column starts on a 64-byte boundary, so a matrix is one cache line.
constexpr size_t kColumnAlignment = 64;

size_t AlignUp(size_t n) { return (n + kColumnAlignment - 1) & ~(kColumnAlignment - 1); }

// The byte offset of every column in the SoA block of `capacity` positions, and the
// block's size: the one description of the layout, for Reserve and MemoryUsage.
struct ColumnLayout {
  size_t local, world, entity, parent, first_child, next_sibling, prev_sibling, id, mark,
      idle, id_position, id_generation;
  size_t bytes;
};

ColumnLayout LayoutFor(size_t capacity) {
  const size_t slots = capacity + 1;  // + the spare slot of the three-step swap
  size_t offset = 0;
  auto column = [&offset](size_t bytes) {
    const size_t at = offset;
    offset += AlignUp(bytes);
    return at;
  };
  ColumnLayout layout;
  layout.local = column(slots * sizeof(Matrix4x4));
  layout.world = column(slots * sizeof(Matrix4x4));
  layout.entity = column(slots * sizeof(Entity));
  layout.parent = column(slots * sizeof(uint32_t));
  layout.first_child = column(slots * sizeof(uint32_t));
  layout.next_sibling = column(slots * sizeof(uint32_t));
  layout.prev_sibling = column(slots * sizeof(uint32_t));
  layout.id = column(slots * sizeof(uint32_t));
  layout.mark = column(slots * sizeof(uint32_t));
  layout.idle = column(slots * sizeof(uint8_t));
  layout.id_position = column(capacity * sizeof(uint32_t));
  layout.id_generation = column(capacity * sizeof(uint32_t));
  layout.bytes = offset;
  return layout;
}

// SetLocalBatch marks: (epoch << kMarkShift) | flags, valid only while the epoch matches.
constexpr uint32_t kMarkShift = 4;
constexpr uint32_t kInBatch = 1;     // the node is set by this batch
constexpr uint32_t kKnown = 2;       // kCovered below is computed
constexpr uint32_t kCovered = 4;     // the node or an ancestor is set by this batch
constexpr uint32_t kClaimedBit = 8;  // the node's (last) matrix is taken
constexpr uint32_t kMaxEpoch = (1u << (32 - kMarkShift)) - 1;

const Matrix4x4 kIdentity = Matrix4x4::Identity();

// Parallel updates: a SetLocalBatch task takes at least 1/16 of the smallest parallel
// batch (with the default parallel_min_nodes, 1024 roots: at least 1024 matrices, some
// 4 us of work against about 1 us of scheduling); UpdateWorld cuts its dirty range in
// kChunksPerThread chunks per worker thread, slack for TBB to balance uneven chunks.
constexpr size_t kParallelGrainDivisor = 16;
constexpr size_t kChunksPerThread = 4;

// SetLocalBatch's check of a range of handles: the first invalid index, whether a node
// has a parent, and whether positions strictly increase (first/last: the range's first
// and last position, -1 while empty).
struct BatchScan {
  size_t first_invalid = SIZE_MAX;
  bool parented = false;
  bool increasing = true;
  int64_t first = -1;
  int64_t last = -1;

  // The scan of this range followed by `right`'s.
  BatchScan Then(const BatchScan& right) const {
    BatchScan both;
    both.first_invalid = std::min(first_invalid, right.first_invalid);
    both.parented = parented || right.parented;
    both.increasing = increasing && right.increasing &&
                      (last < 0 || right.first < 0 || last < right.first);
    both.first = first >= 0 ? first : right.first;
    both.last = right.last >= 0 ? right.last : last;
    return both;
  }
};

// ParallelReduce: fn(begin, end, acc) -> acc over disjoint ranges covering [0, n), each
// at least `grain` long (but the last), on several threads, combined left to right
// with Then (associative, not commutative): oneTBB's parallel_reduce. Under TSan (see
// base/parallel_for.h for why) up to kTsanThreads parts on std::threads through
// ParallelFor, which the update loops use directly.
#if defined(__SANITIZE_THREAD__)
constexpr size_t kTsanThreads = 4;

template <typename Fn>
BatchScan ParallelReduce(size_t n, size_t grain, const Fn& fn) {
  const size_t threads = std::clamp<size_t>(n / std::max<size_t>(grain, 1), 1, kTsanThreads);
  std::vector<BatchScan> parts(threads);
  ParallelFor(threads, 1, [&](size_t begin, size_t end) {
    for (size_t t = begin; t < end; ++t) {
      parts[t] = fn(n * t / threads, n * (t + 1) / threads, BatchScan());
    }
  });
  BatchScan all;
  for (const BatchScan& part : parts) all = all.Then(part);
  return all;
}
#else
template <typename Fn>
BatchScan ParallelReduce(size_t n, size_t grain, const Fn& fn) {
  return tbb::parallel_reduce(
      tbb::blocked_range<size_t>(0, n, std::max<size_t>(grain, 1)), BatchScan(),
      [&fn](const tbb::blocked_range<size_t>& r, const BatchScan& acc) {
        return fn(r.begin(), r.end(), acc);
      },
      // parallel_reduce keeps left-to-right order (it needs associativity only).
      [](const BatchScan& left, const BatchScan& right) { return left.Then(right); });
}
#endif

}  // namespace

void TransformComponent::FreeBuffer::operator()(void* p) const {
  DeallocateLarge(p, bytes, kColumnAlignment);
}

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

absl::Status TransformComponent::Reserve(size_t min_capacity) {
  if (min_capacity > kMaxCapacity) {
    return absl::InvalidArgumentError(absl::StrCat("TransformComponent::Reserve: ",
                                                   min_capacity, " is above kMaxCapacity (",
                                                   kMaxCapacity, ")"));
  }
  Grow(min_capacity);
  return absl::OkStatus();
}

void TransformComponent::Grow(size_t min_capacity) {
  if (min_capacity <= capacity_) return;
  // Positions and ids are 32-bit with kNone reserved, and the spare slot needs one more.
  static_assert(kMaxCapacity == kNone - 2);
  size_t new_capacity = std::max<size_t>({min_capacity, capacity_ * 2, 16});
  new_capacity = std::min<size_t>(new_capacity, kMaxCapacity);
  const size_t slots = new_capacity + 1;  // + the spare slot of the three-step swap
  const ColumnLayout layout = LayoutFor(new_capacity);
  // NOTE: a large block (from 1 MiB) is 2 MiB aligned and advised for transparent huge
  // pages: a million nodes span 64 MB per matrix column, and with 4 KiB pages every
  // 64 nodes of a column is another TLB miss.
  std::unique_ptr<void, FreeBuffer> buffer(AllocateLarge(layout.bytes, kColumnAlignment),
                                           FreeBuffer{layout.bytes});
  std::byte* base = static_cast<std::byte*>(buffer.get());

  auto move_column = [&](auto*& old_column, size_t at, size_t count) {
    using T = std::remove_reference_t<decltype(*old_column)>;
    T* fresh = reinterpret_cast<T*>(base + at);
    if (count > 0) std::memcpy(fresh, old_column, count * sizeof(T));
    old_column = fresh;
  };
  move_column(local_, layout.local, size_);
  move_column(world_, layout.world, size_);
  move_column(entity_, layout.entity, size_);
  move_column(parent_, layout.parent, size_);
  move_column(first_child_, layout.first_child, size_);
  move_column(next_sibling_, layout.next_sibling, size_);
  move_column(prev_sibling_, layout.prev_sibling, size_);
  move_column(id_, layout.id, size_);
  move_column(mark_, layout.mark, 0);
  std::memset(mark_, 0, slots * sizeof(uint32_t));  // marks of no epoch
  move_column(idle_, layout.idle, size_);
  move_column(id_position_, layout.id_position, id_limit_);
  move_column(id_generation_, layout.id_generation, id_limit_);
  buffer_ = std::move(buffer);
  capacity_ = new_capacity;
}

uint32_t TransformComponent::AllocateId() {
  if (free_id_head_ != kNone) {
    const uint32_t id = free_id_head_;
    free_id_head_ = id_position_[id];
    id_generation_[id] &= ~kFreeBit;
    return id;
  }
  // Live ids never outnumber positions, so id_limit_ <= capacity_.
  const uint32_t id = id_limit_++;
  id_generation_[id] = 0;
  return id;
}

void TransformComponent::FreeId(uint32_t id) {
  ++layout_version_;  // a prepared batch holding it must find it stale
  // The generation advances (31 bits, wrapping) so every old handle is stale.
  id_generation_[id] = ((id_generation_[id] + 1) & ~kFreeBit) | kFreeBit;
  id_position_[id] = free_id_head_;
  free_id_head_ = id;
}

uint32_t TransformComponent::Append(Entity entity, const Matrix4x4& local) {
  const uint32_t pos = static_cast<uint32_t>(size_);
  local_[pos] = local;
  world_[pos] = local;
  entity_[pos] = entity;
  parent_[pos] = kNone;
  first_child_[pos] = kNone;
  next_sibling_[pos] = kNone;
  prev_sibling_[pos] = kNone;
  idle_[pos] = 0;
  const uint32_t id = AllocateId();
  id_[pos] = id;
  id_position_[id] = pos;
  entity_to_id_.emplace(entity, id);
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

absl::StatusOr<TransformComponent::Instance> TransformComponent::Create(
    Entity entity, const Matrix4x4& local) {
  if (!entity.is_valid()) return absl::InvalidArgumentError("Create: invalid entity");
  if (connected() && !manager_->Alive(entity)) return NotAlive("Create: ", entity);
  if (entity_to_id_.contains(entity)) {
    return absl::AlreadyExistsError(
        absl::StrCat("Create: ", entity.DebugString(), " already has a transform"));
  }
  if (size_ == kMaxCapacity) return Full(1);
  Grow(size_ + 1);
  const uint32_t pos = Append(entity, local);
  return InstanceAt(pos);
}

absl::Status TransformComponent::CreateBatch(absl::Span<const Entity> entities,
                                             absl::Span<const Matrix4x4> locals,
                                             absl::Span<Instance> out) {
  if (entities.size() != locals.size() || entities.size() != out.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "CreateBatch: span sizes differ (entities ", entities.size(), ", locals ",
        locals.size(), ", out ", out.size(), ")"));
  }
  absl::flat_hash_set<Entity> seen;
  seen.reserve(entities.size());
  for (size_t k = 0; k < entities.size(); ++k) {
    const Entity e = entities[k];
    if (!e.is_valid()) {
      return absl::InvalidArgumentError(absl::StrCat("CreateBatch: entities[", k, "] is invalid"));
    }
    if (connected() && !manager_->Alive(e)) {
      return NotAlive(absl::StrCat("CreateBatch: entities[", k, "] "), e);
    }
    if (entity_to_id_.contains(e)) {
      return absl::AlreadyExistsError(absl::StrCat("CreateBatch: entities[", k, "] ",
                                                   e.DebugString(), " already has a transform"));
    }
    if (!seen.insert(e).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("CreateBatch: entities[", k, "] ", e.DebugString(), " is repeated"));
    }
  }
  if (entities.size() > kMaxCapacity - size_) return Full(entities.size());
  Grow(size_ + entities.size());
  entity_to_id_.reserve(size_ + entities.size());
  for (size_t k = 0; k < entities.size(); ++k) {
    out[k] = InstanceAt(Append(entities[k], locals[k]));
  }
  return absl::OkStatus();
}

TransformComponent::Instance TransformComponent::Lookup(Entity entity) const {
  auto it = entity_to_id_.find(entity);
  if (it == entity_to_id_.end()) return Instance();
  return Instance(it->second, id_generation_[it->second]);
}

TransformComponent::Instance TransformComponent::LinkOf(Instance i,
                                                        const uint32_t* column) const {
  if (!IsValid(i)) return Instance();
  const uint32_t other = column[PositionOf(i)];
  return other == kNone ? Instance() : InstanceAt(other);
}

const Matrix4x4& TransformComponent::Local(Instance i) const {
  ABSL_HARDENING_ASSERT(IsValid(i));
  return IsValid(i) ? local_[PositionOf(i)] : kIdentity;
}

const Matrix4x4& TransformComponent::World(Instance i) const {
  ABSL_HARDENING_ASSERT(IsValid(i));
  return IsValid(i) ? world_[PositionOf(i)] : kIdentity;
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
  id_position_[id_[to]] = to;
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

// ---- Hierarchy -----------------------------------------------------------------------

void TransformComponent::Detach(uint32_t pos) {
  const uint32_t p = parent_[pos];
  if (p == kNone) return;
  dirty_range_preordered_ = false;
  ++layout_version_;
  const uint32_t prev = prev_sibling_[pos];
  const uint32_t next = next_sibling_[pos];
  if (prev != kNone) {
    next_sibling_[prev] = next;
  } else {
    first_child_[p] = next;
  }
  if (next != kNone) prev_sibling_[next] = prev;
  parent_[pos] = kNone;
  prev_sibling_[pos] = kNone;
  next_sibling_[pos] = kNone;
}

void TransformComponent::Attach(uint32_t pos, uint32_t parent) {
  dirty_range_preordered_ = false;
  ++layout_version_;
  const uint32_t old_first = first_child_[parent];
  next_sibling_[pos] = old_first;
  prev_sibling_[pos] = kNone;
  if (old_first != kNone) prev_sibling_[old_first] = pos;
  first_child_[parent] = pos;
  parent_[pos] = parent;
}

bool TransformComponent::IsAncestorOrSelf(uint32_t ancestor, uint32_t node) const {
  if (ancestor == node) return true;
  if (first_child_[ancestor] == kNone) return false;
  // Walk up from `node` and through `ancestor`'s subtree in lockstep; whichever ends
  // first answers, so the cost is O(min(depth of node, size of the subtree)).
  uint32_t up = node;
  uint32_t down = first_child_[ancestor];
  for (;;) {
    up = parent_[up];
    if (up == ancestor) return true;
    if (up == kNone) return false;
    if (down == node) return true;
    if (first_child_[down] != kNone) {
      down = first_child_[down];
      continue;
    }
    while (next_sibling_[down] == kNone) {
      down = parent_[down];
      if (down == ancestor) return false;
    }
    down = next_sibling_[down];
  }
}

uint32_t TransformComponent::Touch(uint32_t pos) {
  if (options_.mode == Mode::kImmediate) {
    const HierarchyView view = View();
    transform_internal::UpdateSubtrees(view, &pos, 1);
    return pos;
  }
  idle_[pos] = 0;
  return IsDirty(pos) ? pos : MarkDirty(pos);
}

uint32_t TransformComponent::MarkDirty(uint32_t pos) {
  const uint32_t old_front = first_dirty_;
  auto move_to_front = [this](uint32_t p) {
    --first_dirty_;
    Swap(p, first_dirty_);
    idle_[first_dirty_] = 0;
    return first_dirty_;
  };
  move_to_front(pos);
  // Breadth-first over the nodes just moved, which sit at old_front - 1, old_front - 2,
  // ... in insertion order; their clean children join the front of the range. Swaps
  // only touch positions below first_dirty_, so the block already built stays put.
  // (Children that are already dirty have only dirty descendants: nothing to pull.)
  for (int64_t q = int64_t{old_front} - 1; q >= int64_t{first_dirty_}; --q) {
    for (uint32_t c = first_child_[q]; c != kNone; c = next_sibling_[c]) {
      if (c < first_dirty_) c = move_to_front(c);
    }
  }
  // The block holds the subtree in reverse breadth-first order; reverse it so parents
  // come before children.
  for (uint32_t i = first_dirty_, j = old_front - 1; i < j; ++i, --j) Swap(i, j);
  return first_dirty_;
}

absl::Status TransformComponent::Link(Instance child, Instance parent) {
  if (!IsValid(child)) return absl::NotFoundError("Link: child instance is invalid or stale");
  if (!IsValid(parent)) {
    return absl::NotFoundError("Link: parent instance is invalid or stale");
  }
  const uint32_t c = PositionOf(child);
  const uint32_t p = PositionOf(parent);
  if (IsAncestorOrSelf(c, p)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Link: linking ", entity_[c].DebugString(), " under ", entity_[p].DebugString(),
        " would make a cycle"));
  }
  if (parent_[c] == p) return absl::OkStatus();
  Detach(c);
  Attach(c, p);
  Touch(c);
  return absl::OkStatus();
}

absl::Status TransformComponent::LinkBatch(absl::Span<const Instance> children,
                                           absl::Span<const Instance> parents) {
  if (children.size() != parents.size()) {
    return absl::InvalidArgumentError(absl::StrCat("LinkBatch: span sizes differ (children ",
                                                   children.size(), ", parents ",
                                                   parents.size(), ")"));
  }
  for (size_t k = 0; k < children.size(); ++k) {
    absl::Status s = Link(children[k], parents[k]);
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat("LinkBatch: pair ", k, ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

absl::Status TransformComponent::Unlink(Instance child) {
  if (!IsValid(child)) return absl::NotFoundError("Unlink: instance is invalid or stale");
  const uint32_t c = PositionOf(child);
  if (parent_[c] == kNone) return absl::OkStatus();
  Detach(c);
  Touch(c);
  return absl::OkStatus();
}

// ---- Local matrices ------------------------------------------------------------------

bool TransformComponent::SetLocal(Instance i, const Matrix4x4& local) {
  if (!IsValid(i)) return false;
  uint32_t pos = PositionOf(i);
  if (options_.mode == Mode::kImmediate) {
    if (parent_[pos] == kNone && first_child_[pos] == kNone) {
      // A lone root, the common case: world == local, no dispatch.
      local_[pos] = local;
      world_[pos] = local;
      return true;
    }
    const HierarchyView view = View();
    const uint32_t source = 0;
    transform_internal::SetAndUpdateSubtrees(view, &pos, &local, &source, 1,
                                             /*stream=*/false);
    return true;
  }
  local_[pos] = local;
  Touch(pos);
  return true;
}

bool TransformComponent::InBatchOrBelowOne(uint32_t pos) {
  const uint32_t tag = batch_epoch_ << kMarkShift;
  // Climb until a node whose answer is known (or the root), then fill in the path.
  scratch_path_.clear();
  uint32_t x = pos;
  bool covered = false;
  while (x != kNone) {
    const uint32_t mark = mark_[x];
    if ((mark & ~((1u << kMarkShift) - 1)) == tag && (mark & kKnown)) {
      covered = (mark & kCovered) != 0;
      break;
    }
    scratch_path_.push_back(x);
    x = parent_[x];
  }
  for (size_t k = scratch_path_.size(); k-- > 0;) {
    const uint32_t y = scratch_path_[k];
    uint32_t mark = mark_[y];
    if ((mark & ~((1u << kMarkShift) - 1)) != tag) mark = tag;
    covered = covered || (mark & kInBatch) != 0;
    mark_[y] = mark | kKnown | (covered ? kCovered : 0);
  }
  return covered;
}

absl::Status TransformComponent::SetLocalBatch(absl::Span<const Instance> instances,
                                               absl::Span<const Matrix4x4> locals) {
  if (instances.size() != locals.size()) {
    return absl::InvalidArgumentError(absl::StrCat("SetLocalBatch: span sizes differ (instances ",
                                                   instances.size(), ", locals ",
                                                   locals.size(), ")"));
  }
  auto not_found = [](size_t k) {
    return absl::NotFoundError(
        absl::StrCat("SetLocalBatch: instances[", k, "] is invalid or stale"));
  };
  if (options_.mode == Mode::kDeferred) {
    for (size_t k = 0; k < instances.size(); ++k) {
      if (!IsValid(instances[k])) return not_found(k);
    }
    for (size_t k = 0; k < instances.size(); ++k) {
      const uint32_t pos = PositionOf(instances[k]);
      local_[pos] = locals[k];
      Touch(pos);
    }
    return absl::OkStatus();
  }

  // Immediate: one propagation. Only nodes with no set ancestor start a walk ("roots");
  // the others just take their local, and the roots' walks recompute them.
  // One read-only pass (it writes only scratch_positions_) checks every handle and
  // resolves its position before anything changes (all or nothing), split across
  // threads for large batches: at 1M nodes it reads 20 bytes per node, which one core
  // alone would spend longer on than both cores on the update itself.
  const size_t n = instances.size();
  scratch_positions_.resize(n);
  const BatchScan scan = [&] {
    // The columns in locals: the stores to `out` could alias the members otherwise.
    const Instance* in = instances.data();
    uint32_t* const out = scratch_positions_.data();
    const uint32_t* const generation = id_generation_;
    const uint32_t* const position = id_position_;
    const uint32_t* const parent = parent_;
    const uint32_t id_limit = id_limit_;
    auto scan_range = [=](size_t begin, size_t end, BatchScan acc) {
      bool parented = false;
      bool increasing = true;
      int64_t last = acc.last;
      for (size_t k = begin; k < end; ++k) {
        const uint32_t id = in[k].id_;
        if (id >= id_limit || generation[id] != in[k].generation_) {
          acc.first_invalid = std::min(acc.first_invalid, k);
          continue;
        }
        const uint32_t pos = position[id];
        out[k] = pos;
        parented |= parent[pos] != kNone;
        increasing &= int64_t{pos} > last;
        if (acc.first < 0) acc.first = pos;
        last = pos;
      }
      acc.parented |= parented;
      acc.increasing &= increasing;
      acc.last = last;
      return acc;
    };
    if (n < options_.parallel_min_nodes) return scan_range(0, n, BatchScan());
    // NOTE (no data race): tasks read the component and write disjoint ranges of
    // scratch_positions_ (sized above, never resized inside).
    const size_t grain =
        std::max<size_t>(1, options_.parallel_min_nodes / kParallelGrainDivisor);
    return ParallelReduce(n, grain, scan_range);
  }();
  if (scan.first_invalid != SIZE_MAX) return not_found(scan.first_invalid);
  const bool any_parented = scan.parented;
  const bool increasing = scan.increasing;  // positions strictly increasing: no repeats
  if (!any_parented && (increasing || n < options_.parallel_min_nodes)) {
    // Only roots (flat scenes, moving parents): none lies below another, so each starts
    // its own walk, in batch order; a repeated root is walked again and its last matrix
    // wins (serial only: a parallel batch has no repeats). No marks needed.
    SetAndUpdate(scratch_positions_.data(), locals.data(), nullptr, n,
                 /*stream=*/n >= options_.stream_min_nodes);
    return absl::OkStatus();
  }
  const size_t written =
      FindWalkRoots(scratch_positions_.data(), n, scratch_roots_, scratch_inner_);
  for (uint32_t k : scratch_inner_) local_[scratch_positions_[k]] = locals[k];
  SetAndUpdate(scratch_positions_.data(), locals.data(), scratch_roots_.data(),
               scratch_roots_.size(), /*stream=*/written >= options_.stream_min_nodes);
  return absl::OkStatus();
}

size_t TransformComponent::FindWalkRoots(const uint32_t* positions, size_t n,
                                         std::vector<uint32_t>& roots,
                                         std::vector<uint32_t>& inner) {
  if (batch_epoch_ == kMaxEpoch) {
    std::memset(mark_, 0, (capacity_ + 1) * sizeof(uint32_t));
    batch_epoch_ = 0;
  }
  const uint32_t tag = ++batch_epoch_ << kMarkShift;
  for (size_t k = 0; k < n; ++k) mark_[positions[k]] = tag | kInBatch;
  roots.clear();
  inner.clear();
  size_t written = 0;  // distinct nodes set
  // Backwards, so that a repeated instance keeps its last matrix: the first visit (in
  // this order) claims the node.
  for (size_t k = n; k-- > 0;) {
    const uint32_t pos = positions[k];
    if (mark_[pos] & kClaimedBit) continue;
    mark_[pos] |= kClaimedBit;
    ++written;
    const uint32_t parent = parent_[pos];
    if (parent != kNone && InBatchOrBelowOne(parent)) {
      inner.push_back(static_cast<uint32_t>(k));
    } else {
      roots.push_back(static_cast<uint32_t>(k));
    }
  }
  std::reverse(roots.begin(), roots.end());  // forward memory order
  return written;
}

// ---- Prepared batches ----------------------------------------------------------------

absl::StatusOr<TransformComponent::PreparedBatch> TransformComponent::PrepareBatch(
    absl::Span<const Instance> instances) {
  PreparedBatch batch;
  batch.owner_ = serial_;
  batch.instances_.assign(instances.begin(), instances.end());
  absl::Status s = Resolve(batch);
  if (!s.ok()) return s;
  return batch;
}

absl::Status TransformComponent::Resolve(PreparedBatch& batch) {
  const size_t n = batch.instances_.size();
  for (size_t k = 0; k < n; ++k) {
    if (!IsValid(batch.instances_[k])) {
      return absl::NotFoundError(
          absl::StrCat("PreparedBatch: instances[", k, "] is invalid or stale"));
    }
  }
  batch.positions_.resize(n);
  bool parented = false;
  bool increasing = true;
  bool run = true;  // positions[k] == positions[0] + k, none with a child
  for (size_t k = 0; k < n; ++k) {
    const uint32_t pos = PositionOf(batch.instances_[k]);
    batch.positions_[k] = pos;
    parented |= parent_[pos] != kNone;
    increasing &= k == 0 || pos > batch.positions_[k - 1];
    run &= pos == batch.positions_[0] + k && first_child_[pos] == kNone;
  }
  batch.layout_version_ = layout_version_;
  batch.first_ = n > 0 ? batch.positions_[0] : 0;
  batch.roots_.clear();
  batch.inner_.clear();
  batch.written_ = n;
  if (!parented && increasing) {
    batch.shape_ = run ? PreparedBatch::Shape::kFlatRun : PreparedBatch::Shape::kRoots;
  } else {
    batch.shape_ = PreparedBatch::Shape::kMarked;
    batch.written_ = FindWalkRoots(batch.positions_.data(), n, batch.roots_, batch.inner_);
  }
  // Capacity beyond n would only be carried from frame to frame.
  batch.roots_.shrink_to_fit();
  batch.inner_.shrink_to_fit();
  return absl::OkStatus();
}

absl::Status TransformComponent::SetLocalBatch(PreparedBatch& batch,
                                               absl::Span<const Matrix4x4> locals) {
  if (batch.owner_ != serial_) {
    return absl::InvalidArgumentError("SetLocalBatch: the batch was not prepared here");
  }
  const size_t n = batch.instances_.size();
  if (locals.size() != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "SetLocalBatch: span sizes differ (batch ", n, ", locals ", locals.size(), ")"));
  }
  if (n == 0) return absl::OkStatus();
  if (batch.layout_version_ != layout_version_) {
    absl::Status s = Resolve(batch);
    if (!s.ok()) return s;
  }
  const uint32_t* positions = batch.positions_.data();
  if (options_.mode == Mode::kDeferred) {
    // Touch may move nodes (a clean node joins the dirty range by swaps), which would
    // invalidate the positions still to be read: first every local (last of repeats
    // wins), then the clean nodes by id. Same locals and dirty set as SetLocal in
    // order, so UpdateWorld computes the same worlds.
    scratch_path_.clear();
    for (size_t k = 0; k < n; ++k) {
      const uint32_t pos = positions[k];
      local_[pos] = locals[k];
      if (IsDirty(pos)) {
        idle_[pos] = 0;
      } else {
        scratch_path_.push_back(id_[pos]);
      }
    }
    for (uint32_t id : scratch_path_) Touch(id_position_[id]);
    return absl::OkStatus();
  }
  const bool stream = batch.written_ >= options_.stream_min_nodes;
  switch (batch.shape_) {
    case PreparedBatch::Shape::kFlatRun: {
      const HierarchyView view = View();
      const uint32_t first = batch.first_;
      if (n < options_.parallel_min_nodes) {
        transform_internal::SetRootRun(view, first, locals.data(), n, stream);
        break;
      }
      // NOTE (no data race): each task writes the locals and worlds of its own range of
      // positions and reads nothing the others write.
      const size_t grain =
          std::max<size_t>(1, options_.parallel_min_nodes / kParallelGrainDivisor);
      ParallelFor(n, grain, [&](size_t begin, size_t end) {
        transform_internal::SetRootRun(view, first + static_cast<uint32_t>(begin),
                                       locals.data() + begin, end - begin, stream);
      });
      break;
    }
    case PreparedBatch::Shape::kRoots:
      SetAndUpdate(positions, locals.data(), nullptr, n, stream);
      break;
    case PreparedBatch::Shape::kMarked:
      for (uint32_t k : batch.inner_) local_[positions[k]] = locals[k];
      SetAndUpdate(positions, locals.data(), batch.roots_.data(), batch.roots_.size(), stream);
      break;
  }
  return absl::OkStatus();
}

void TransformComponent::SetAndUpdate(const uint32_t* positions, const Matrix4x4* locals,
                                      const uint32_t* roots, size_t num_roots, bool stream) {
  const HierarchyView view = View();
  if (num_roots < options_.parallel_min_nodes) {
    transform_internal::SetAndUpdateSubtrees(view, positions, locals, roots, num_roots,
                                             stream);
    return;
  }
  // NOTE (no data race): each task takes a disjoint range of the roots; no root is
  // in another's subtree (roots are distinct nodes, none set below another: checked
  // above by the strictly increasing positions of an all-roots batch, or by the marks),
  // so each node's local and world are written by exactly one task, and the parent
  // worlds a task reads are either in its own subtrees (written by it, before, in
  // preorder) or ancestors of its roots, which no task writes. parallel_for returns
  // after every task (a happens-before edge), and each task fenced its streamed stores.
  const size_t grain = std::max<size_t>(1, options_.parallel_min_nodes / kParallelGrainDivisor);
  ParallelFor(num_roots, grain, [&](size_t begin, size_t end) {
    if (roots == nullptr) {
      transform_internal::SetAndUpdateSubtrees(view, positions + begin, locals + begin,
                                               nullptr, end - begin, stream);
    } else {
      transform_internal::SetAndUpdateSubtrees(view, positions, locals, roots + begin,
                                               end - begin, stream);
    }
  });
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
  entity_to_id_.erase(entity_[pos]);
  FreeId(id_[pos]);
  --size_;

  // The orphans' world is now their local: update their subtrees.
  if (options_.mode == Mode::kImmediate) {
    for (uint32_t& id : orphan_ids) id = id_position_[id];
    const HierarchyView view = View();
    transform_internal::UpdateSubtrees(view, orphan_ids.data(), orphan_ids.size());
  } else {
    for (uint32_t id : orphan_ids) Touch(id_position_[id]);
  }
}

absl::Status TransformComponent::Destroy(Instance i) {
  if (!IsValid(i)) return absl::NotFoundError("Destroy: instance is invalid or stale");
  DestroyAt(PositionOf(i));
  return absl::OkStatus();
}

bool TransformComponent::DestroyEntity(Entity entity) {
  auto it = entity_to_id_.find(entity);
  if (it == entity_to_id_.end()) return false;
  DestroyAt(id_position_[it->second]);
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

// ---- Deferred update -----------------------------------------------------------------

void TransformComponent::UpdateWorld() {
  if (options_.mode == Mode::kImmediate || first_dirty_ == size_) return;
  const uint32_t end = static_cast<uint32_t>(size_);
  const uint32_t idle_limit = options_.idle_updates_before_clean;
  // Pass 1: age the dirty nodes; a node idle long enough under a clean parent (or none)
  // has a final world matrix, so it leaves the range by a swap with the range's front.
  // (The swap may put a dirty node after its children; pass 2 repairs that.)
  for (uint32_t i = first_dirty_; i < end; ++i) {
    if (idle_[i] >= idle_limit) {
      const uint32_t p = parent_[i];
      if (p == kNone || p < first_dirty_) {
        Swap(i, first_dirty_);
        ++first_dirty_;
        continue;
      }
    }
    if (idle_[i] < 255) ++idle_[i];
  }
  const size_t dirty = end - first_dirty_;
  // No streaming stores here, unlike SetLocalBatch: in 12 alternating A/B pairs (each
  // the median of 5 repetitions) Hierarchy/Deferred took 14.3 ns per node (median)
  // with them and 13.0 without, faster without in 10 pairs; MovingRoot/Deferred/97656
  // (6 MB of worlds, which L3 holds) 10.2 against 8.7 (9 pairs); FlatAll/Deferred was
  // even. A streamed store evicts the line if a cache holds it, and here many are
  // held: a stable dirty range is rewritten every frame.
  const HierarchyView view = View();
  if (dirty >= options_.parallel_min_nodes) {
    // Pass 2, large: the same order check, scanning backwards to find where the range
    // splits into independent chunks; pass 3 runs the chunks in parallel.
    const size_t threads = static_cast<size_t>(tbb::this_task_arena::max_concurrency());
    DirtyRangeScan scan = ScanDirtyRange(kChunksPerThread * threads);
    // Put the range in preorder when it is out of order, or when its subtrees are not
    // contiguous so that it does not split for every thread (moving a parent whose
    // children were already dirty leaves [parents...][children...]: ordered, but no
    // cut separates the families). The permutation costs O(dirty) swaps once; the
    // order then lasts while the dirty range does not change (dirty_range_preordered_),
    // so a range that does not split because one subtree is that large is not
    // reordered again every update.
    if (!scan.ordered ||
        (scan.largest_chunk > dirty / threads && !dirty_range_preordered_)) {
      OrderDirtyRange();
      scan = ScanDirtyRange(kChunksPerThread * threads);
    }
    // NOTE (no data race): no node of a chunk has its parent in another chunk (see
    // ScanDirtyRange), so a task writes only its chunk's worlds and reads worlds of its
    // own chunk (parents first: the range is ordered) or of clean nodes, which no task
    // writes. parallel_for returns after every task.
    const std::vector<uint32_t>& splits = scratch_splits_;
    ParallelFor(splits.size() - 1, 1, [&](size_t begin, size_t end) {
      for (size_t c = begin; c < end; ++c) {
        transform_internal::UpdateRange(view, splits[c], splits[c + 1]);
      }
    });
    return;
  }
  // Pass 2: parents before children. Usually already true (a scan of the parent
  // column); otherwise the range is put in preorder by one permutation of swaps.
  bool ordered = true;
  for (uint32_t i = first_dirty_; i < end; ++i) {
    const uint32_t p = parent_[i];
    if (p != kNone && p > i) {
      ordered = false;
      break;
    }
  }
  if (!ordered) OrderDirtyRange();
  // Pass 3: one linear pass of multiplies.
  transform_internal::UpdateRange(view, first_dirty_, end);
}

TransformComponent::DirtyRangeScan TransformComponent::ScanDirtyRange(size_t chunks) {
  // Position s splits the range if no node at or after s has a dirty parent before s;
  // given parents before children, nodes before s have none at or after s either. One
  // backward scan keeps the smallest dirty parent of the nodes seen so far (min_parent)
  // and cuts at the first valid s at or below each target, about every `step` nodes.
  const uint32_t begin = first_dirty_;
  const uint32_t end = static_cast<uint32_t>(size_);
  const int64_t step = std::max<int64_t>(1, (int64_t{end} - begin) / std::max<size_t>(chunks, 1));
  scratch_splits_.clear();
  scratch_splits_.push_back(end);
  bool ordered = true;
  uint32_t min_parent = kNone;
  int64_t target = int64_t{end} - step;
  for (uint32_t i = end; i-- > begin;) {
    const uint32_t p = parent_[i];
    if (p != kNone && p >= begin) {
      ordered &= p < i;
      min_parent = std::min(min_parent, p);
    }
    if (int64_t{i} <= target && min_parent >= i && i > begin) {
      scratch_splits_.push_back(i);
      target = int64_t{i} - step;
    }
  }
  scratch_splits_.push_back(begin);
  std::reverse(scratch_splits_.begin(), scratch_splits_.end());
  DirtyRangeScan scan{ordered, 0};
  for (size_t c = 0; c + 1 < scratch_splits_.size(); ++c) {
    scan.largest_chunk = std::max(scan.largest_chunk, scratch_splits_[c + 1] - scratch_splits_[c]);
  }
  return scan;
}

void TransformComponent::OrderDirtyRange() {
  // The article swaps a child with its later parent as the pass meets it; on a reversed
  // chain of n that is O(n^2) swaps. Instead: list the dirty subtrees in preorder (every
  // descendant of a dirty node is dirty), then place each listed node with one swap.
  // O(dirty nodes), and each subtree ends up contiguous.
  const uint32_t end = static_cast<uint32_t>(size_);
  std::vector<uint32_t>& order = scratch_roots_;  // ids in the wanted order
  order.clear();
  for (uint32_t i = first_dirty_; i < end; ++i) {
    const uint32_t p = parent_[i];
    if (p != kNone && IsDirty(p)) continue;  // reached from its dirty ancestor
    order.push_back(id_[i]);
    uint32_t x = first_child_[i];
    while (x != kNone) {
      order.push_back(id_[x]);
      if (first_child_[x] != kNone) {
        x = first_child_[x];
        continue;
      }
      while (x != kNone && next_sibling_[x] == kNone) {
        x = parent_[x];
        if (x == i) x = kNone;
      }
      if (x != kNone) x = next_sibling_[x];
    }
  }
  ABSL_HARDENING_ASSERT(order.size() == end - first_dirty_);
  for (uint32_t k = 0; k < order.size(); ++k) {
    // Positions before first_dirty_ + k are final, so the node is at or after it.
    Swap(first_dirty_ + k, id_position_[order[k]]);
  }
  dirty_range_preordered_ = true;  // until the next Swap, Attach or Detach
}

// ---- Introspection -------------------------------------------------------------------

size_t TransformComponent::MemoryUsage() const {
  size_t bytes = 0;
  if (capacity_ > 0) bytes += LayoutFor(capacity_).bytes;
  bytes += entity_to_id_.bucket_count() * (sizeof(std::pair<Entity, uint32_t>) + 1);
  bytes += (scratch_positions_.capacity() + scratch_roots_.capacity() +
            scratch_path_.capacity() + scratch_splits_.capacity() +
            scratch_inner_.capacity()) *
           sizeof(uint32_t);
  return bytes;
}

absl::Status TransformComponent::CheckInvariants() const {
  auto fail = [](auto&&... parts) { return absl::InternalError(absl::StrCat(parts...)); };
  if (size_ > capacity_ && size_ > 0) return fail("size ", size_, " > capacity ", capacity_);
  if (first_dirty_ > size_) return fail("first_dirty ", first_dirty_, " > size ", size_);
  if (options_.mode == Mode::kImmediate && first_dirty_ != size_) {
    return fail("immediate mode with a dirty range");
  }
  if (entity_to_id_.size() != size_) {
    return fail("entity map holds ", entity_to_id_.size(), " of ", size_);
  }
  const uint32_t n = static_cast<uint32_t>(size_);
  size_t parented = 0;
  size_t listed = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t id = id_[i];
    if (id >= id_limit_ || (id_generation_[id] & kFreeBit) || id_position_[id] != i) {
      return fail("position ", i, ": id table broken");
    }
    auto it = entity_to_id_.find(entity_[i]);
    if (it == entity_to_id_.end() || it->second != id) {
      return fail("position ", i, ": entity map broken");
    }
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
  uint32_t free_ids = 0;
  for (uint32_t id = free_id_head_; id != kNone; id = id_position_[id]) {
    if (id >= id_limit_ || !(id_generation_[id] & kFreeBit)) return fail("free id list broken");
    if (++free_ids > id_limit_) return fail("free id list cycles");
  }
  if (free_ids + n != id_limit_) return fail("ids leak: ", free_ids, " free + ", n, " live");
  return absl::OkStatus();
}

}  // namespace strata
