// TransformComponent: the SoA block (its layout and growth), the stable ids, the
// prefault of a large CreateBatch, and the memory report. The rest of the component is
// in transform_component.cc and the files it lists.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/check.h"
#include "base/huge_page_allocator.h"
#include "base/matrix.h"
#include "base/prefault.h"
#include "entity/entity.h"
#include "entity/generation_table.h"
#include "transform/transform_component.h"

namespace strata {
namespace {

// NOTE: every column starts on a 64-byte boundary, so a matrix is one cache line.
constexpr size_t kColumnAlignment = 64;

size_t AlignUp(size_t n) { return (n + kColumnAlignment - 1) & ~(kColumnAlignment - 1); }

// The byte offset of every column in the SoA block of `capacity` positions, and the
// block's size: the one description of the layout, for Reserve and MemoryUsage.
struct ColumnLayout {
  size_t local, world, entity, parent, first_child, next_sibling, prev_sibling, id, mark,
      idle;
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
  layout.bytes = offset;
  return layout;
}

}  // namespace

void TransformComponent::FreeBuffer::operator()(void* p) const {
  DeallocateLarge(p, bytes, kColumnAlignment);
}

absl::Status TransformComponent::Reserve(size_t min_capacity) {
  if (min_capacity > kMaxCapacity) {
    return absl::InvalidArgumentError(absl::StrCat("TransformComponent::Reserve: ",
                                                   min_capacity, " is above kMaxCapacity (",
                                                   kMaxCapacity, ")"));
  }
  Grow(min_capacity);
  return absl::OkStatus();
}

absl::Span<const Matrix4x4> TransformComponent::OutsideBlock(absl::Span<const Matrix4x4> locals,
                                                             std::vector<Matrix4x4>& copy) const {
  if (locals.empty() || buffer_ == nullptr) return locals;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(buffer_.get());
  const uintptr_t end = begin + buffer_.get_deleter().bytes;
  const uintptr_t first = reinterpret_cast<uintptr_t>(locals.data());
  const uintptr_t last = first + locals.size() * sizeof(Matrix4x4);
  if (last <= begin || first >= end) return locals;
  copy.assign(locals.begin(), locals.end());
  return copy;
}

void TransformComponent::Grow(size_t min_capacity) {
  if (min_capacity <= capacity_) return;
  // Positions and ids are 32-bit with kNone reserved, and the spare slot needs one more.
  static_assert(kMaxCapacity == kNone - 2);
  size_t new_capacity = std::max<size_t>({min_capacity, capacity_ * 2, 16});
  new_capacity = std::min<size_t>(new_capacity, kMaxCapacity);
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
  marks_stale_ = true;  // cleared by the first batch that needs marks
  move_column(idle_, layout.idle, size_);
  buffer_ = std::move(buffer);
  capacity_ = new_capacity;
  // Ids are reused before new ones are made (min_free_indices 0), so live ids stay
  // below capacity_ and these never grow inside a batch.
  ids_.Reserve(new_capacity);
  if (id_slots_.size() < new_capacity) id_slots_.resize(new_capacity);
}

GenerationTable::Options TransformComponent::IdTableOptions() {
  GenerationTable::Options options;
  // Freed ids are reused first (oldest first), so the per-id columns stay as long as
  // the most instances ever alive; the generation already makes old handles stale.
  options.min_free_indices = 0;
  return options;
}

uint32_t TransformComponent::AllocateId(uint32_t pos) {
  uint32_t id, generation;
  // Fails only with every id below 2^32 - 2 live or retired (retired after 2^31
  // destroys each), far past kMaxCapacity live instances.
  const bool acquired = ids_.Acquire(&id, &generation);
  STRATA_CHECK(acquired, "TransformComponent: every stable id is live or retired");
  id_limit_ = static_cast<uint32_t>(ids_.size());  // IsValid's bound
  // Only retired ids (never reissued) can push an id past capacity_.
  if (ABSL_PREDICT_FALSE(id >= id_slots_.size())) id_slots_.resize(size_t{id} + 1);
  id_slots_[id] = IdSlot{generation, pos};
  return id;
}

void TransformComponent::FreeId(uint32_t id) {
  ++layout_version_;  // a prepared batch holding it must find it stale
  // The generation advances so every old handle is stale; at the largest generation
  // the id is retired instead of wrapping.
  ids_.Release(id);
  id_slots_[id].generation = ids_.words()[id];  // the next generation | kFreeBit
}

BackgroundPrefault TransformComponent::PrefaultNewNodes(uint32_t first, size_t n) {
  if (n < options_.prefault_min_nodes || n == 0) return BackgroundPrefault();
  // The columns CreateBatch writes for positions [first, first + n), side by side as
  // it writes them (the marks are not written). New ids continue from ids_.size() when
  // no freed id waits; reused ones are already faulted in.
  auto range = [first, n](auto* column) {
    return BackgroundPrefault::Range{column + first, n * sizeof(*column)};
  };
  std::vector<BackgroundPrefault::Range> ranges = {
      range(local_),        range(world_),        range(entity_),
      range(parent_),       range(first_child_),  range(next_sibling_),
      range(prev_sibling_), range(id_),           range(idle_)};
  if (ids_.size() < id_slots_.size()) {
    const size_t fresh_ids = std::min(n, id_slots_.size() - ids_.size());
    ranges.push_back({id_slots_.data() + ids_.size(), fresh_ids * sizeof(IdSlot)});
  }
  return BackgroundPrefault(std::move(ranges));
}

size_t TransformComponent::MemoryUsage() const {
  size_t bytes = 0;
  if (capacity_ > 0) bytes += LayoutFor(capacity_).bytes;
  bytes += ids_.MemoryUsage() + id_slots_.capacity() * sizeof(IdSlot);
  bytes += entity_pages_.capacity() * sizeof(entity_pages_[0]) +
           entity_pages_allocated_ * kEntityPageSize * sizeof(EntitySlot);
  bytes += entity_overflow_.bucket_count() * (sizeof(std::pair<Entity, uint32_t>) + 1);
  bytes += (scratch_positions_.capacity() + scratch_roots_.capacity() +
            scratch_path_.capacity() + scratch_splits_.capacity() +
            scratch_inner_.capacity()) *
           sizeof(uint32_t);
  bytes += changes_.capacity() * sizeof(LoggedChange);
  return bytes;
}

}  // namespace strata
