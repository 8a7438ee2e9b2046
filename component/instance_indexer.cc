#include "component/instance_indexer.h"

#include <cstddef>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "base/check.h"
#include "entity/entity.h"

namespace strata {

InstanceIndexer::InstanceIndexer(EntityPages& pages, EntityIndex& index)
    : pages_(&pages), index_(&index) {
  STRATA_CHECK(pages.structure_listener() == nullptr,
               "InstanceIndexer: the page store already has a listener");
  pages.set_structure_listener(this);
}

InstanceIndexer::~InstanceIndexer() { pages_->set_structure_listener(nullptr); }

void InstanceIndexer::Track(ComponentId c, ComponentManager* manager, InstanceId name) {
  if (c >= tracked_.size()) tracked_.resize(size_t{c} + 1);
  tracked_[c] = Tracked{manager, name};
}

absl::Status InstanceIndexer::OnCreated(ComponentManager& manager, InstanceId name,
                                        absl::Span<const Entity> entities) {
  return index_->AddInstance(entities, &manager, name);
}

void InstanceIndexer::OnDestroyed(ComponentManager& manager, InstanceId name,
                                  absl::Span<const Entity> entities) {
  for (Entity e : entities) {
    // Only the entry this manager made: a conflicting name belongs to another one.
    if (index_->FindComponentManager(e, name) == &manager) {
      index_->RemoveInstance(e, name).IgnoreError();
    }
  }
}

void InstanceIndexer::OnAdded(ComponentId c, absl::Span<const Entity> entities) {
  if (c >= tracked_.size() || tracked_[c].manager == nullptr) return;
  const Tracked& t = tracked_[c];
  // The batch form is all or nothing; on a conflict, one at a time keeps the others.
  if (index_->AddInstance(entities, t.manager, t.name).ok()) return;
  for (Entity e : entities) {
    if (index_->FindComponentManager(e, t.name) == t.manager) continue;
    if (!index_->AddInstance(e, t.manager, t.name).ok()) ++conflicts_;
  }
}

void InstanceIndexer::OnRemoved(ComponentId c, absl::Span<const Entity> entities) {
  if (c >= tracked_.size() || tracked_[c].manager == nullptr) return;
  OnDestroyed(*tracked_[c].manager, tracked_[c].name, entities);
}

}  // namespace strata
