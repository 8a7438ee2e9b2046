#include "entity/entity_manager.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "base/status_macros.h"

namespace strata {
namespace {

// DestroyBatch's failure path, kept out of line so the hot loop keeps its registers:
// restores the slots entities[0, failed) had before the batch and names the culprit.
ABSL_ATTRIBUTE_NOINLINE absl::Status UndoDestroyBatch(uint32_t* slots,
                                                      absl::Span<const Entity> entities,
                                                      size_t failed) {
  for (size_t k = 0; k < failed; ++k) slots[entities[k].index()] = entities[k].generation();
  return absl::NotFoundError(absl::StrCat(
      "EntityManager::DestroyBatch: entities[", failed, "] = ",
      entities[failed].DebugString(),
      " is not alive (invalid, stale, already destroyed, never issued or repeated ",
      "in the batch); nothing was destroyed"));
}

}  // namespace

absl::Status EntityManager::Options::Validate() const {
  if (max_generation > kMaxGeneration) {
    return absl::InvalidArgumentError(absl::StrCat(
        "EntityManager::Options: max_generation ", max_generation, " is above the largest ",
        "generation a handle can hold (", kMaxGeneration, ")"));
  }
  return absl::OkStatus();
}

EntityManager::EntityManager(const Options& options) : options_(options) {
  static_assert(kMaxGeneration < kFreeBit, "issued generations never have the free bit");
  STRATA_CHECK(options_.max_generation <= kMaxGeneration,
               "EntityManager: Options::max_generation above kMaxGeneration (use Make to "
               "get a Status instead)");
}

absl::StatusOr<std::unique_ptr<EntityManager>> EntityManager::Make(const Options& options) {
  STRATA_RETURN_IF_ERROR(options.Validate());
  return std::make_unique<EntityManager>(options);
}

EntityManager::~EntityManager() {
  for (Listener& listener : listeners_) listener.owner->Detach();
}

const EntityManager& EntityManager::Empty() {
  // Never destroyed: subscriptions may read it during static destruction.
  static const EntityManager* const empty = new EntityManager();
  return *empty;
}

// ---- Subscription ----------------------------------------------------------------------

EntityManager::Subscription::Subscription() noexcept : view_(&EntityManager::Empty()) {}

EntityManager::Subscription::Subscription(EntityManager* manager, uint32_t id)
    : manager_(manager), view_(manager), id_(id) {}

EntityManager::Subscription::Subscription(Subscription&& other) noexcept
    : manager_(other.manager_), view_(other.view_), id_(other.id_), expired_(other.expired_) {
  if (manager_ != nullptr) manager_->MoveListener(id_, this);
  other.manager_ = nullptr;
  other.view_ = &EntityManager::Empty();
  other.expired_ = false;
}

EntityManager::Subscription& EntityManager::Subscription::operator=(
    Subscription&& other) noexcept {
  if (this == &other) return *this;
  Reset();
  manager_ = other.manager_;
  view_ = other.view_;
  id_ = other.id_;
  expired_ = other.expired_;
  if (manager_ != nullptr) manager_->MoveListener(id_, this);
  other.manager_ = nullptr;
  other.view_ = &EntityManager::Empty();
  other.expired_ = false;
  return *this;
}

void EntityManager::Subscription::Reset() {
  if (manager_ != nullptr) manager_->RemoveListener(id_);
  manager_ = nullptr;
  view_ = &EntityManager::Empty();
  expired_ = false;
}

void EntityManager::Subscription::Detach() {
  manager_ = nullptr;
  view_ = &EntityManager::Empty();
  expired_ = true;
}

void EntityManager::ReserveFree(size_t n) {
  if (free_capacity_ - free_count_ >= n) return;
  size_t capacity = free_capacity_ == 0 ? 1024 : free_capacity_;
  while (capacity < free_count_ + n) capacity *= 2;
  std::unique_ptr<uint32_t[]> ring(new uint32_t[capacity]);  // no zero fill
  const size_t mask = free_capacity_ - 1;
  for (size_t i = 0; i < free_count_; ++i) ring[i] = free_ring_[(free_head_ + i) & mask];
  free_ring_ = std::move(ring);
  free_capacity_ = capacity;
  free_head_ = 0;
}

Entity EntityManager::Create() {
  if (free_count_ > options_.min_free_indices) {
    const uint32_t index = free_ring_[free_head_];
    free_head_ = (free_head_ + 1) & (free_capacity_ - 1);
    --free_count_;
    const uint32_t generation = slots_[index] & ~kFreeBit;
    slots_[index] = generation;
    return Entity(index, generation);
  }
  const size_t index = slots_.size();
  STRATA_CHECK(index < Entity::kInvalidIndex, "EntityManager: 2^32 - 1 slots in use");
  slots_.push_back(0);
  return Entity(static_cast<uint32_t>(index), 0);
}

void EntityManager::CreateBatch(absl::Span<Entity> out) {
  const size_t reusable =
      free_count_ > options_.min_free_indices ? free_count_ - options_.min_free_indices : 0;
  const size_t from_queue = std::min(reusable, out.size());
  if (from_queue > 0) {
    const uint32_t* const ring = free_ring_.get();
    uint32_t* const slots = slots_.data();
    const size_t mask = free_capacity_ - 1;
    for (size_t i = 0; i < from_queue; ++i) {
      const uint32_t index = ring[(free_head_ + i) & mask];
      const uint32_t generation = slots[index] & ~kFreeBit;
      slots[index] = generation;
      out[i] = Entity(index, generation);
    }
    free_head_ = (free_head_ + from_queue) & mask;
    free_count_ -= from_queue;
  }
  // Fresh slots: generation 0, which resize() writes for us.
  const size_t first = slots_.size();
  const size_t fresh = out.size() - from_queue;
  STRATA_CHECK(first + fresh <= Entity::kInvalidIndex,
               "EntityManager::CreateBatch: more than 2^32 - 1 slots");
  slots_.resize(first + fresh);
  Entity* const dst = out.data() + from_queue;
  for (size_t k = 0; k < fresh; ++k) dst[k] = Entity(static_cast<uint32_t>(first + k), 0);
}

void EntityManager::Release(uint32_t index, uint32_t generation) {
  if (generation >= options_.max_generation) {
    slots_[index] = generation | kFreeBit;  // retired: never matches, never queued
    ++retired_count_;
    return;
  }
  slots_[index] = (generation + 1) | kFreeBit;
  ReserveFree(1);
  free_ring_[(free_head_ + free_count_) & (free_capacity_ - 1)] = index;
  ++free_count_;
}

absl::Status EntityManager::Destroy(Entity e) {
  assert(!notifying_ && "a DestroyListener must not destroy entities");
  if (ABSL_PREDICT_FALSE(!Alive(e))) {
    return absl::NotFoundError(
        absl::StrCat("EntityManager::Destroy: ", e.DebugString(), " is not alive (invalid, stale, ",
                     "already destroyed or never issued)"));
  }
  Release(e.index(), e.generation());
  NotifyDestroyed(absl::MakeConstSpan(&e, 1));
  return absl::OkStatus();
}

absl::Status EntityManager::DestroyBatch(absl::Span<const Entity> entities) {
  assert(!notifying_ && "a DestroyListener must not destroy entities");
  const size_t n = entities.size();
  // One pass validates, frees and queues each entity. A duplicate fails the check
  // because its first occurrence already set the slot's free bit. On error the pass is
  // undone (slots restored; the queue's count was not yet raised), so nothing changes.
  // NOTE: the ring may grow even when the batch then fails; that is capacity only.
  ReserveFree(n);
  uint32_t* const slots = slots_.data();
  const size_t slot_count = slots_.size();
  uint32_t* const ring = free_ring_.get();
  const size_t mask = free_capacity_ - 1;
  const size_t tail = free_head_ + free_count_;
  const uint32_t max_generation = options_.max_generation;
  size_t pushed = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t index = entities[i].index();
    const uint32_t generation = entities[i].generation();
    if (ABSL_PREDICT_FALSE(index >= slot_count || (generation & kFreeBit) != 0 ||
                           slots[index] != generation)) {
      return UndoDestroyBatch(slots, entities, i);
    }
    // Branch-free Release(): the next generation is queued, or at max_generation the
    // slot keeps its generation, is not queued (the write lands past the queue's end,
    // inside the reserved room) and is retired.
    const uint32_t reusable = generation < max_generation ? 1 : 0;
    slots[index] = (generation + reusable) | kFreeBit;
    ring[(tail + pushed) & mask] = index;
    pushed += reusable;
  }
  free_count_ += pushed;
  retired_count_ += n - pushed;
  NotifyDestroyed(entities);
  return absl::OkStatus();
}

void EntityManager::NotifyDestroyed(absl::Span<const Entity> entities) {
  if (listeners_.empty()) return;
  notifying_ = true;
  for (const Listener& listener : listeners_) listener.callback(entities);
  notifying_ = false;
}

EntityManager::Subscription EntityManager::AddDestroyListener(DestroyListener listener) {
  assert(!notifying_ && "a DestroyListener must not add listeners");
  const uint32_t id = next_listener_id_++;
  // The entry's owner is set once the Subscription exists (it is built in place in the
  // caller's object: guaranteed copy elision; a later move updates it).
  listeners_.push_back({id, std::move(listener), nullptr});
  Subscription subscription(this, id);
  listeners_.back().owner = &subscription;
  return subscription;
}

void EntityManager::RemoveListener(uint32_t id) {
  assert(!notifying_ && "a DestroyListener must not remove listeners");
  auto it = std::find_if(listeners_.begin(), listeners_.end(),
                         [id](const Listener& l) { return l.id == id; });
  assert(it != listeners_.end());
  listeners_.erase(it);
}

void EntityManager::MoveListener(uint32_t id, Subscription* owner) {
  auto it = std::find_if(listeners_.begin(), listeners_.end(),
                         [id](const Listener& l) { return l.id == id; });
  assert(it != listeners_.end());
  it->owner = owner;
}

size_t EntityManager::MemoryUsage() const {
  return slots_.capacity() * sizeof(uint32_t) + free_capacity_ * sizeof(uint32_t) +
         listeners_.capacity() * sizeof(Listener);
}

}  // namespace strata
