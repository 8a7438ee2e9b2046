#include "iteration/command_buffer.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/check.h"
#include "entity/entity.h"

namespace strata {

uint32_t CommandBuffer::NewTag() {
  // Distinct across buffers and playbacks (until 2^31 of them), never all ones: a
  // pending handle is never the invalid Entity.
  static std::atomic<uint32_t> next{0};
  return kPendingBit | (next.fetch_add(1, std::memory_order_relaxed) % 0x7FFFFFFFu);
}

CommandBuffer::CommandBuffer(const EntityPages& pages) : pages_(&pages), tag_(NewTag()) {}

Entity CommandBuffer::Create(const ComponentBundle& bundle) {
  // Consecutive creations from equal bundles share one bundle and one run.
  if (bundles_.empty() || runs_.empty() || runs_.back().op != Op::kCreate ||
      !(bundles_.back() == bundle)) {
    bundles_.push_back(bundle);
  }
  const Entity pending(pending_++, tag_);
  Append(Op::kCreate, static_cast<ComponentId>(bundles_.size() - 1), pending, nullptr, 0);
  return pending;
}

Entity CommandBuffer::Create() { return Create(ComponentBundle()); }

void CommandBuffer::Destroy(Entity e) { Append(Op::kDestroy, kNoComponent, e, nullptr, 0); }

void CommandBuffer::CheckTypeSlow(ComponentId c, size_t size) {
  STRATA_CHECK(c < pages_->num_component_types(),
               "CommandBuffer: the component is not registered in the buffer's store");
  STRATA_CHECK(size == kAnySize || size == pages_->component_size(c),
               "CommandBuffer: the value's size is not the component's registered size");
  checked_component_ = c;
  checked_size_ = pages_->component_size(c);
}

void CommandBuffer::CheckPendingTarget(Entity e) const {
  STRATA_CHECK(e.generation() == tag_ && e.index() < pending_,
               "CommandBuffer: a pending handle of another buffer or of an earlier playback");
}

void CommandBuffer::Clear() {
  runs_.clear();
  targets_.clear();
  values_.clear();
  bundles_.clear();
  pending_ = 0;
  tag_ = NewTag();
}

size_t CommandBuffer::MemoryUsage() const {
  size_t bytes = runs_.capacity() * sizeof(Run) + targets_.capacity() * sizeof(Entity) +
                 played_targets_.capacity() * sizeof(Entity) + values_.capacity() +
                 bundles_.capacity() * sizeof(ComponentBundle) +
                 created_.capacity() * sizeof(Entity) + scratch_.capacity() * sizeof(Entity);
  for (const ComponentBundle& bundle : bundles_) bytes += bundle.MemoryUsage();
  return bytes;
}

size_t CommandBuffer::RecordedBytes() const {
  size_t bytes = runs_.size() * sizeof(Run) + targets_.size() * sizeof(Entity) + values_.size();
  for (const ComponentBundle& bundle : bundles_) bytes += sizeof(bundle) + bundle.MemoryUsage();
  return bytes;
}

Entity CommandBuffer::Resolve(Entity e) const {
  if (!IsPending(e)) return e;
  if (e.generation() != played_tag_ || e.index() >= created_.size()) return Entity();
  return created_[e.index()];
}

void CommandBuffer::CountSkipped(const EntityManager& entities, Entity e, Result& result) const {
  if (entities.Alive(e)) {
    ++result.skipped_conflict;
  } else {
    ++result.skipped_dead;
  }
}

CommandBuffer::Result CommandBuffer::Playback(EntityManager& entities, EntityPages& pages) {
  STRATA_CHECK(&pages == pages_, "CommandBuffer: played back into another store");
  STRATA_CHECK(!lent_, "CommandBuffer: played back by an observer of its own playback");
  Result result;
  created_.assign(pending_, Entity());
  for (size_t r = 0; r < runs_.size(); ++r) {
    runs_[r].count = (r + 1 < runs_.size() ? runs_[r + 1].first : targets_.size()) - runs_[r].first;
  }
  for (const Run& run : runs_) {
    switch (run.op) {
      case Op::kCreate:
        PlayCreate(run, entities, pages, result);
        break;
      case Op::kDestroy:
        PlayDestroy(run, entities, result);
        break;
      case Op::kAdd:
        PlayAdd(run, entities, pages, result);
        break;
      case Op::kRemove:
        PlayRemove(run, entities, pages, result);
        break;
      case Op::kSet:
        PlaySet(run, entities, pages, result);
        break;
    }
  }
  const uint32_t played = tag_;
  // The played targets stay as they are (see HoldsPlayed); the older array takes the
  // next commands.
  targets_.swap(played_targets_);
  Clear();
  played_tag_ = played;
  return result;
}

bool CommandBuffer::HoldsPlayed(absl::Span<const Entity> entities) const {
  return Within(entities, targets_) || Within(entities, played_targets_) ||
         Within(entities, created_);
}

void CommandBuffer::PlayCreate(const Run& run, EntityManager& entities, EntityPages& pages,
                               Result& result) {
  // The run's pending handles are consecutive creation numbers.
  const uint32_t first = targets_[run.first].index();
  absl::Span<Entity> made = absl::MakeSpan(created_).subspan(first, run.count);
  entities.CreateBatch(made);
  const ComponentBundle& bundle = bundles_[run.component];
  if (!bundle.empty()) {
    // Fresh entities and a bundle checked at record time: the only failures left are
    // the store's own (a bundle naming a type of the wrong size), programmer errors.
    const absl::Status status = pages.CreateFromBundle(made, bundle);
    STRATA_CHECK(status.ok(), absl::StrCat("CommandBuffer: ", status.message()).c_str());
  }
  result.applied += run.count;
}

void CommandBuffer::PlayDestroy(const Run& run, EntityManager& entities, Result& result) {
  // DestroyBatch is all or nothing: the live, first-named targets only.
  scratch_.clear();
  absl::flat_hash_set<Entity> seen;
  for (size_t k = run.first; k < run.first + run.count; ++k) {
    const Entity e = Resolved(targets_[k]);
    if (!entities.Alive(e) || (run.count > 1 && !seen.insert(e).second)) {
      ++result.skipped_dead;
      continue;
    }
    scratch_.push_back(e);
  }
  const absl::Status status = entities.DestroyBatch(scratch_);
  STRATA_CHECK(status.ok(), absl::StrCat("CommandBuffer: ", status.message()).c_str());
  result.applied += scratch_.size();
}

void CommandBuffer::PlayAdd(const Run& run, EntityManager& entities, EntityPages& pages,
                            Result& result) {
  absl::Span<Entity> targets = absl::MakeSpan(targets_).subspan(run.first, run.count);
  for (Entity& e : targets) e = Resolved(e);
  const size_t size = pages.component_size(run.component);
  absl::Span<const std::byte> values =
      absl::MakeConstSpan(values_).subspan(run.value_offset, run.count * size);
  // The span Add stops at the first entity that cannot take the component: count it
  // and go on after it.
  while (!targets.empty()) {
    size_t done = 0;
    const absl::Status status = pages.AddEach(targets, run.component, values, &done);
    result.applied += done;
    if (status.ok()) break;
    CountSkipped(entities, targets[done], result);
    targets = targets.subspan(done + 1);
    values = values.subspan((done + 1) * size);
  }
}

void CommandBuffer::PlayRemove(const Run& run, EntityManager& entities, EntityPages& pages,
                               Result& result) {
  absl::Span<Entity> targets = absl::MakeSpan(targets_).subspan(run.first, run.count);
  for (Entity& e : targets) e = Resolved(e);
  while (!targets.empty()) {
    size_t done = 0;
    const absl::Status status = pages.Remove(targets, run.component, &done);
    result.applied += done;
    if (status.ok()) break;
    CountSkipped(entities, targets[done], result);
    targets = targets.subspan(done + 1);
  }
}

void CommandBuffer::PlaySet(const Run& run, EntityManager& entities, EntityPages& pages,
                            Result& result) {
  const size_t size = pages.component_size(run.component);
  const std::byte* value = values_.data() + run.value_offset;
  scratch_.clear();
  for (size_t k = run.first; k < run.first + run.count; ++k, value += size) {
    const Entity e = Resolved(targets_[k]);
    void* data = pages.TryGet(e, run.component);
    if (data == nullptr) {
      CountSkipped(entities, e, result);
      continue;
    }
    if (size != 0) std::memcpy(data, value, size);
    pages.MarkChanged(e, run.component);
    scratch_.push_back(e);
  }
  result.applied += scratch_.size();
  // Observers hear of the run's sets in one batch (an entity set twice, twice).
  pages.NotifySet(run.component, scratch_);
}

}  // namespace strata
