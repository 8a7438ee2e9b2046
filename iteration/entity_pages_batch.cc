// EntityPages' batch Add and Remove (see iteration/entity_pages.h): the per-entity
// fast paths over a span, with the store's tables in locals. The typed batch Add is a
// template in internal/entity_pages_inl.h.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "base/check.h"
#include "entity/entity.h"
#include "iteration/entity_pages.h"

namespace strata {

absl::Status EntityPages::BatchError(const absl::Status& status, size_t position) {
  return absl::Status(status.code(),
                      absl::StrCat("entity ", position, " of the batch: ", status.message()));
}

absl::Status EntityPages::Add(absl::Span<const Entity> entities, ComponentId c,
                              const void* value) {
  return AddBatchWith<kUntypedSize>(entities, c, [value](std::byte* dst, uint32_t size) {
    WriteValue(dst, value, size);
  });
}

absl::Status EntityPages::AddEach(absl::Span<const Entity> entities, ComponentId c,
                                  absl::Span<const std::byte> values, size_t* done) {
  if (done != nullptr) *done = 0;
  if (c >= types_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("AddEach: unregistered component id ", c));
  }
  const size_t size = types_[c].size;
  if (values.size() != entities.size() * size) {
    return absl::InvalidArgumentError(absl::StrCat(
        "AddEach: ", values.size(), " bytes of values for ", entities.size(), " entities of '",
        types_[c].name, "' (", size, " bytes each)"));
  }
  // The loop calls the writer once per entity, in order, for each entity it adds.
  return AddBatchWith<kUntypedSize>(
      entities, c, [next = values.data()](std::byte* dst, uint32_t bytes) mutable {
        if (bytes != 0) std::memcpy(dst, next, bytes);
        next += bytes;
      },
      done);
}

absl::Status EntityPages::ValueCountError(size_t entities, size_t values) {
  return absl::InvalidArgumentError(
      absl::StrCat("AddEach: ", values, " values for ", entities, " entities"));
}

void EntityPages::WalkViolation(const char* what) const {
  const std::string message = absl::StrCat(
      "EntityPages::", what,
      " inside a walk of the store (a ForEachMatch callback or an open WalkScope): record it "
      "in a CommandBuffer and play it back after the walk");
  base_internal::CheckFailed(__FILE__, __LINE__, "!walking()", message.c_str());
}

void EntityPages::NotifyAdded(ComponentId c, Entity e) {
  MarkAddedEntities(absl::MakeConstSpan(&e, 1), c);
  if (listener_ != nullptr) listener_->OnAdded(c, absl::MakeConstSpan(&e, 1));
}

void EntityPages::NotifyRemoving(ComponentId c, Entity e) {
  listener_->OnRemoving(c, absl::MakeConstSpan(&e, 1));
}

size_t EntityPages::RemovingPrefix(absl::Span<const Entity> entities, ComponentId c) const {
  // The batch Remove stops at the first entity without `c`; an entity listed twice
  // has lost it by its second turn.
  absl::flat_hash_set<Entity> seen;
  for (size_t i = 0; i < entities.size(); ++i) {
    if (!Has(entities[i], c) || (entities.size() > 1 && !seen.insert(entities[i]).second)) return i;
  }
  return entities.size();
}

void EntityPages::NotifyRemovingEntities(absl::Span<const Entity> entities) {
  std::vector<Entity> group;
  for (ComponentId c = 0; c < types_.size(); ++c) {
    group.clear();
    for (Entity e : entities) {
      if (Has(e, c)) group.push_back(e);
    }
    if (!group.empty()) listener_->OnRemoving(c, group);
  }
}

void EntityPages::NotifyRemoved(ComponentId c, Entity e) {
  listener_->OnRemoved(c, absl::MakeConstSpan(&e, 1));
}

absl::Status EntityPages::Remove(absl::Span<const Entity> entities, ComponentId c,
                                 size_t* done) {
  CheckNotWalking("Remove");
  if (WantsRemoving()) {
    const size_t removing = RemovingPrefix(entities, c);
    if (removing > 0) listener_->OnRemoving(c, entities.first(removing));
  }
  size_t removed = 0;
  const absl::Status status = RemoveBatch(entities, c, &removed);
  if (done != nullptr) *done = removed;
  // The entities before a failing one took the change (see the batch contract).
  if (listener_ != nullptr && removed > 0) listener_->OnRemoved(c, entities.first(removed));
  return status;
}

absl::Status EntityPages::RemoveBatch(absl::Span<const Entity> entities, ComponentId c,
                                      size_t* done) {
  const Entity* const entity = entities.data();
  const size_t n = entities.size();
  size_t i = 0;
  while (i < n) {
    // The tables in locals, reloaded after RemoveSlow (see AddBatchWith).
    const HotType& hot = HotById(c);
    uint32_t* const masks = hot.masks;
    // An unregistered id sends every entity to RemoveSlow, which reports it.
    const size_t direct_pages = hot.id == c ? hot.direct_pages : 0;
    const IndexTables tables = index_tables();
    uint16_t* const count = count_.data();
    const size_t start = i;
    // The mask of the page being walked, in a register (see AddBatchWith).
    uint32_t run_page = kNoSlot;
    uint32_t run_mask = 0;
    for (; i < n; ++i) {
      // Remove's fast path, the same conditions (see there).
      const uint32_t index = entity[i].index();
      const uint32_t generation = entity[i].generation();
      if (ABSL_PREDICT_FALSE(!tables.InStore(index, generation))) break;
      const uint32_t slot = tables.Slot(index);
      const uint32_t page = slot >> kEntityPageShift;
      const uint32_t flag = uint32_t{1} << (slot & (kEntityPageSize - 1));
      if (page != run_page) {
        if (ABSL_PREDICT_FALSE(page >= direct_pages)) break;
        if (run_page != kNoSlot) masks[run_page] = run_mask;
        run_page = page;
        run_mask = masks[page];
      }
      if (ABSL_PREDICT_FALSE((run_mask & flag) == 0)) break;
      run_mask &= ~flag;
      if (ABSL_PREDICT_FALSE(--count[slot] == 0 || run_mask == 0)) {
        // The page goes on the dirty list, an emptied slot is freed. Neither changes
        // a table the loop holds (a freed entity's generation entry is read through
        // the pointer), so the loop goes on without reloading them.
        masks[run_page] = run_mask;
        RemoveEmptied(index, slot);
      }
    }
    if (run_page != kNoSlot) masks[run_page] = run_mask;
    if (i != start) layout_changed_ = true;
    if (i == n) break;
    const absl::Status status = RemoveSlow(entity[i].index(), entity[i].generation(), c);
    if (ABSL_PREDICT_FALSE(!status.ok())) {
      *done = i;
      return BatchError(status, i);
    }
    ++i;
  }
  *done = n;
  return absl::OkStatus();
}

}  // namespace strata
