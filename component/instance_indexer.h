// InstanceIndexer: keeps one World's EntityIndex in step with every component instance
// created or removed by any path, so properties by name see components made at run time
// and forget removed ones.
//
// Two kinds of store tell it, each in its own batches:
// - a ComponentManager (named components, the transform, a game's custom store) through
//   its InstanceListener (index/component_manager.h): Attach(manager);
// - the page store, through its StructureListener (iteration/entity_pages.h): Track(id,
//   manager, name) says which manager and name an EntityPages component id stands for,
//   so a system's own pages.Add / Remove / CreateFromBundle reach the index too.
// An entity's destruction leaves the index through the index's own destroy listener.
//
//   EntityIndex index;
//   InstanceIndexer indexer(pages, index);
//   indexer.Track(*sprites);      // a PageComponentManager<Sprite>
//   indexer.Attach(effects);      // a NamedComponentManager<PostEffect>
//   effects.Create(env, IdString32("Fog"));   // indexed: properties.Set(env, "Fog", ...)
//
// Conflicts: an entity has one component per name across all managers (EntityIndex).
// A manager's creation that would break this is refused (the manager undoes it); a page
// store's Add cannot be refused, so that instance stays out of the index and
// conflicts() counts it.
// Thread-safety: none; it runs inside the stores' mutations.
#ifndef STRATA_COMPONENT_INSTANCE_INDEXER_H_
#define STRATA_COMPONENT_INSTANCE_INDEXER_H_

#include <cstddef>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "component/page_component.h"
#include "entity/entity.h"
#include "index/component_manager.h"
#include "index/entity_index.h"
#include "iteration/entity_pages.h"

namespace strata {

class InstanceIndexer final : public InstanceListener, public StructureListener {
 public:
  // InstanceIndexer: installs itself as `pages`' structure listener, which must have
  // none (aborts otherwise, in every build). Both must outlive it.
  InstanceIndexer(EntityPages& pages, EntityIndex& index);
  // Uninstalls itself from the page store (managers attached must be gone or detached).
  ~InstanceIndexer() override;
  InstanceIndexer(const InstanceIndexer&) = delete;
  InstanceIndexer& operator=(const InstanceIndexer&) = delete;

  // Attach: `manager` tells this indexer of its instances from now on.
  void Attach(ComponentManager& manager) { manager.set_instance_listener(this); }
  // Track: page-store instances of `c` are `manager`'s, named `name`; untracked ids
  // are ignored.
  void Track(ComponentId c, ComponentManager* manager, InstanceId name);
  template <typename T>
  void Track(PageComponentManager<T>& manager) {
    Track(manager.component().id, &manager, manager.instance_id());
  }
  // conflicts: page-store instances left out of the index for a taken name.
  size_t conflicts() const { return conflicts_; }

  // InstanceListener: EntityIndex::AddInstance of the batch (all or nothing), and
  // RemoveInstance of the entries `manager` made.
  absl::Status OnCreated(ComponentManager& manager, InstanceId name,
                         absl::Span<const Entity> entities) override;
  void OnDestroyed(ComponentManager& manager, InstanceId name,
                   absl::Span<const Entity> entities) override;

  // StructureListener: the same for tracked page components, conflicts counted.
  void OnAdded(ComponentId c, absl::Span<const Entity> entities) override;
  void OnRemoved(ComponentId c, absl::Span<const Entity> entities) override;

 private:
  struct Tracked {
    ComponentManager* manager = nullptr;
    InstanceId name;
  };
  EntityPages* pages_;
  EntityIndex* index_;
  std::vector<Tracked> tracked_;  // by ComponentId
  size_t conflicts_ = 0;
};

}  // namespace strata

#endif  // STRATA_COMPONENT_INSTANCE_INDEXER_H_
