#include "entity/entity_manager.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "absl/base/optimization.h"
#include "absl/strings/str_cat.h"

namespace strata {

EntityManager::EntityManager(const Options& options) : options_(options) {
  ABSL_HARDENING_ASSERT(options_.max_generation < kFreeBit);
}

uint32_t EntityManager::PopFreeIndex() {
  const uint32_t index = free_queue_[free_head_++];
  // Compact the queue once its consumed prefix dominates, keeping pops O(1) amortised.
  if (free_head_ >= 4096 && free_head_ * 2 >= free_queue_.size()) {
    free_queue_.erase(free_queue_.begin(),
                      free_queue_.begin() + static_cast<std::ptrdiff_t>(free_head_));
    free_head_ = 0;
  }
  return index;
}

Entity EntityManager::Create() {
  ++live_count_;
  if (free_slots() > options_.min_free_indices) {
    const uint32_t index = PopFreeIndex();
    const uint32_t generation = slots_[index] & ~kFreeBit;
    slots_[index] = generation;
    return Entity(index, generation);
  }
  const size_t index = slots_.size();
  ABSL_HARDENING_ASSERT(index < Entity::kInvalidIndex);
  slots_.push_back(0);
  return Entity(static_cast<uint32_t>(index), 0);
}

void EntityManager::CreateBatch(absl::Span<Entity> out) {
  size_t i = 0;
  const size_t reusable = free_slots() > options_.min_free_indices
                              ? free_slots() - options_.min_free_indices
                              : 0;
  const size_t from_queue = std::min(reusable, out.size());
  for (; i < from_queue; ++i) {
    const uint32_t index = free_queue_[free_head_ + i];
    const uint32_t generation = slots_[index] & ~kFreeBit;
    slots_[index] = generation;
    out[i] = Entity(index, generation);
  }
  free_head_ += from_queue;
  if (from_queue > 0 && free_head_ * 2 >= free_queue_.size()) {
    free_queue_.erase(free_queue_.begin(),
                      free_queue_.begin() + static_cast<std::ptrdiff_t>(free_head_));
    free_head_ = 0;
  }
  // Fresh slots: generation 0, which resize() writes for us.
  const size_t first = slots_.size();
  const size_t fresh = out.size() - i;
  ABSL_HARDENING_ASSERT(first + fresh <= Entity::kInvalidIndex);
  slots_.resize(first + fresh);
  for (size_t k = 0; k < fresh; ++k) {
    out[i + k] = Entity(static_cast<uint32_t>(first + k), 0);
  }
  live_count_ += out.size();
}

void EntityManager::Release(uint32_t index, uint32_t generation) {
  if (generation >= options_.max_generation) {
    slots_[index] = generation | kFreeBit;  // retired: never matches, never queued
    ++retired_count_;
    return;
  }
  slots_[index] = (generation + 1) | kFreeBit;
  free_queue_.push_back(index);
}

absl::Status EntityManager::Destroy(Entity e) {
  assert(!notifying_ && "a DestroyListener must not destroy entities");
  if (ABSL_PREDICT_FALSE(!Alive(e))) {
    return absl::NotFoundError(
        absl::StrCat("EntityManager::Destroy: ", e.DebugString(), " is not alive (invalid, stale, ",
                     "already destroyed or never issued)"));
  }
  Release(e.index(), e.generation());
  --live_count_;
  NotifyDestroyed(absl::MakeConstSpan(&e, 1));
  return absl::OkStatus();
}

absl::Status EntityManager::DestroyBatch(absl::Span<const Entity> entities) {
  assert(!notifying_ && "a DestroyListener must not destroy entities");
  // Pass 1 validates and marks each slot free (so a duplicate fails the check); on
  // error the marks are undone and nothing has changed.
  for (size_t i = 0; i < entities.size(); ++i) {
    const Entity e = entities[i];
    if (ABSL_PREDICT_FALSE(!Alive(e))) {
      for (size_t k = 0; k < i; ++k) {
        slots_[entities[k].index()] = entities[k].generation();
      }
      return absl::NotFoundError(absl::StrCat(
          "EntityManager::DestroyBatch: entities[", i, "] = ", e.DebugString(),
          " is not alive (invalid, stale, already destroyed, never issued or repeated ",
          "in the batch); nothing was destroyed"));
    }
    slots_[e.index()] |= kFreeBit;
  }
  // Pass 2 is Release() inlined. Growth stays geometric: an exact reserve per batch
  // would reallocate on every small batch (quadratic).
  const size_t queued = free_queue_.size();
  if (free_queue_.capacity() - queued < entities.size()) {
    free_queue_.reserve(std::max(queued + entities.size(), 2 * free_queue_.capacity()));
  }
  const uint32_t max_generation = options_.max_generation;
  for (const Entity e : entities) {
    const uint32_t generation = e.generation();
    if (ABSL_PREDICT_FALSE(generation >= max_generation)) {
      slots_[e.index()] = generation | kFreeBit;  // retired: never matches, never queued
      ++retired_count_;
      continue;
    }
    slots_[e.index()] = (generation + 1) | kFreeBit;
    free_queue_.push_back(e.index());
  }
  live_count_ -= entities.size();
  NotifyDestroyed(entities);
  return absl::OkStatus();
}

void EntityManager::NotifyDestroyed(absl::Span<const Entity> entities) {
  if (listeners_.empty()) return;
  notifying_ = true;
  for (const Listener& listener : listeners_) listener.callback(entities);
  notifying_ = false;
}

EntityManager::ListenerId EntityManager::AddDestroyListener(DestroyListener listener) {
  assert(!notifying_ && "a DestroyListener must not add listeners");
  const ListenerId id = next_listener_id_++;
  listeners_.push_back({id, std::move(listener)});
  return id;
}

bool EntityManager::RemoveDestroyListener(ListenerId id) {
  assert(!notifying_ && "a DestroyListener must not remove listeners");
  auto it = std::find_if(listeners_.begin(), listeners_.end(),
                         [id](const Listener& l) { return l.id == id; });
  if (it == listeners_.end()) return false;
  listeners_.erase(it);
  return true;
}

size_t EntityManager::MemoryUsage() const {
  return slots_.capacity() * sizeof(uint32_t) + free_queue_.capacity() * sizeof(uint32_t) +
         listeners_.capacity() * sizeof(Listener);
}

}  // namespace strata
