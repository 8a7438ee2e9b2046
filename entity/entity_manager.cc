#include "entity/entity_manager.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cassert>
#include <utility>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "base/status_macros.h"

namespace strata {
namespace {

// DestroyBatch's error, out of line so the hot loop keeps its registers (inlined, the
// message's temporaries made the compiler spill the queue pointer and mask).
ABSL_ATTRIBUTE_NOINLINE absl::Status DestroyBatchError(absl::Span<const Entity> entities,
                                                       size_t failed) {
  return absl::NotFoundError(absl::StrCat(
      "EntityManager::DestroyBatch: entities[", failed, "] = ",
      entities[failed].DebugString(),
      " is not alive (invalid, stale, already destroyed, never issued or repeated ",
      "in the batch); nothing was destroyed"));
}

}  // namespace

GenerationTable::Options EntityManager::TableOptions(const Options& options) {
  GenerationTable::Options table;
  table.min_free_indices = options.min_free_indices;
  table.max_generation = options.max_generation;
  static_assert(GenerationTable::kMaxSlots < Entity::kInvalidIndex);
  table.max_slots = GenerationTable::kMaxSlots;
  return table;
}

absl::Status EntityManager::Options::Validate() const {
  return TableOptions(*this).Validate("EntityManager");
}

EntityManager::EntityManager(const Options& options)
    : slots_(CheckedTableOptions(options)) {}

GenerationTable::Options EntityManager::CheckedTableOptions(const Options& options) {
  // Checked before the table sees them, so the message names the manager.
  STRATA_CHECK(options.max_generation <= kMaxGeneration,
               "EntityManager: Options::max_generation above kMaxGeneration (use Make to "
               "get a Status instead)");
  return TableOptions(options);
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

Entity EntityManager::Create() {
  uint32_t index, generation;
  const bool acquired = slots_.Acquire(&index, &generation);
  STRATA_CHECK(acquired, "EntityManager: 2^32 - 2 slots in use or retired");
  return Entity(index, generation);
}

void EntityManager::CreateBatch(absl::Span<Entity> out) {
  // NOTE: through the Span, as before the table existed: with a raw pointer g++ 12
  // packs each Entity in a vector register first, which measured slower.
  const bool acquired =
      slots_.AcquireBatch(out.size(), [out](size_t k, uint32_t index, uint32_t generation) {
        out[k] = Entity(index, generation);
      });
  STRATA_CHECK(acquired, "EntityManager::CreateBatch: more than 2^32 - 2 slots in use or retired");
}

absl::Status EntityManager::Destroy(Entity e) {
  STRATA_CHECK(!notifying_, "EntityManager::Destroy: called from a DestroyListener");
  if (ABSL_PREDICT_FALSE(!Alive(e))) {
    return absl::NotFoundError(
        absl::StrCat("EntityManager::Destroy: ", e.DebugString(), " is not alive (invalid, stale, ",
                     "already destroyed or never issued)"));
  }
  slots_.Release(e.index());
  NotifyDestroyed(absl::MakeConstSpan(&e, 1));
  return absl::OkStatus();
}

absl::Status EntityManager::DestroyBatch(absl::Span<const Entity> entities) {
  STRATA_CHECK(!notifying_, "EntityManager::DestroyBatch: called from a DestroyListener");
  const size_t released = slots_.ReleaseBatch(entities);
  if (ABSL_PREDICT_FALSE(released != entities.size())) {
    return DestroyBatchError(entities, released);
  }
  NotifyDestroyed(entities);
  return absl::OkStatus();
}

void EntityManager::NotifyDestroyed(absl::Span<const Entity> entities) {
  if (listeners_.empty()) return;
  // Restored, not cleared: a listener's (forbidden, checked) Destroy must not end
  // the outer notification's guard.
  const bool outer = notifying_;
  notifying_ = true;
  for (const Listener& listener : listeners_) listener.callback(entities);
  notifying_ = outer;
}

EntityManager::Subscription EntityManager::AddDestroyListener(DestroyListener listener) {
  // push_back could reallocate the list NotifyDestroyed is walking.
  STRATA_CHECK(!notifying_, "EntityManager::AddDestroyListener: called from a DestroyListener");
  const uint32_t id = next_listener_id_++;
  // The entry's owner is set once the Subscription exists (it is built in place in the
  // caller's object: guaranteed copy elision; a later move updates it).
  listeners_.push_back({id, std::move(listener), nullptr});
  Subscription subscription(this, id);
  listeners_.back().owner = &subscription;
  return subscription;
}

void EntityManager::RemoveListener(uint32_t id) {
  // erase would move the list NotifyDestroyed is walking (and could destroy the
  // listener running now).
  STRATA_CHECK(!notifying_,
               "EntityManager::RemoveListener: called from a DestroyListener (a Subscription "
               "reset, reassigned or destroyed while the manager notifies)");
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
  return slots_.MemoryUsage() + listeners_.capacity() * sizeof(Listener);
}

}  // namespace strata
