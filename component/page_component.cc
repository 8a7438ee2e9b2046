#include "component/page_component.h"

#include <cstddef>

#include "absl/types/span.h"
#include "base/check.h"
#include "entity/entity.h"

namespace strata {

PageComponentIndexer::PageComponentIndexer(EntityPages& pages, EntityIndex& index)
    : pages_(&pages), index_(&index) {
  STRATA_CHECK(pages.structure_listener() == nullptr,
               "PageComponentIndexer: the page store already has a listener");
  pages.set_structure_listener(this);
}

PageComponentIndexer::~PageComponentIndexer() { pages_->set_structure_listener(nullptr); }

void PageComponentIndexer::Track(ComponentId c, ComponentManager* manager, InstanceId name) {
  if (c >= tracked_.size()) tracked_.resize(size_t{c} + 1);
  tracked_[c] = Tracked{manager, name};
}

void PageComponentIndexer::OnAdded(ComponentId c, absl::Span<const Entity> entities) {
  if (c >= tracked_.size() || tracked_[c].manager == nullptr) return;
  const Tracked& t = tracked_[c];
  // The batch form is all or nothing; on a conflict, one at a time keeps the others.
  if (index_->AddInstance(entities, t.manager, t.name).ok()) return;
  for (Entity e : entities) {
    if (index_->FindComponentManager(e, t.name) == t.manager) continue;
    if (!index_->AddInstance(e, t.manager, t.name).ok()) ++conflicts_;
  }
}

void PageComponentIndexer::OnRemoved(ComponentId c, absl::Span<const Entity> entities) {
  if (c >= tracked_.size() || tracked_[c].manager == nullptr) return;
  const Tracked& t = tracked_[c];
  for (Entity e : entities) {
    // Only the entry this component made: a conflicting name belongs to another manager.
    if (index_->FindComponentManager(e, t.name) == t.manager) {
      index_->RemoveInstance(e, t.name).IgnoreError();
    }
  }
}

}  // namespace strata
