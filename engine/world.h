// World: one game world, composing Strata's subsystems the way the Bitsquid articles
// describe: an entity manager, the world's transform graph, the entity index with its
// property system, the page store the systems iterate, and one store per component
// type of the game's registry (component/registry.h), all spawned from and saved to
// entity resources.
//
//   ComponentRegistry registry;                    // the game declares its types here
//   registry.Add(ComponentDeclaration<Health>("health").Field("hp", &Health::hp).Build());
//   EntityCompiler compiler;
//   registry.RegisterCompilers(compiler);
//   absl::StatusOr<EntityCompiler::Result> level = compiler.Compile(json_text, {});
//   absl::StatusOr<EntityResourceView> view = EntityResourceView::Create(level->blob);
//   absl::StatusOr<std::unique_ptr<World>> world = World::Create(registry);
//   absl::StatusOr<std::vector<Entity>> spawned = (*world)->Spawn(*view);
//   (*world)->properties().Set((*spawned)[0], "health", "hp", PropertyValue(50.0f));
//   absl::StatusOr<PageComponentManager<Health>*> health = (*world)->Pages<Health>("health");
//   absl::StatusOr<std::vector<std::byte>> saved = (*world)->SaveAll();   // a blob again
//
// One destruction path: every store subscribes to the entity manager's destroy
// notification, so destroying an entity through the manager, by anyone, removes all of
// its components everywhere; World::Destroy also destroys the entity's transform
// descendants (World::DestroyKeepingChildren does not).
//
// Save writes the world's entities (those with a component or a name here) in the
// resource format: parents before children (the hierarchy is the transform
// hierarchy), every component's fields, entity references as entity numbers, and the
// names the world knows. Spawning the saved blob into a fresh world reproduces every
// value, and saving that world again gives the same bytes.
//
// Several worlds: `World::Create(registry, shared_manager)` lets worlds share one
// entity manager, so one entity can have a transform in both; the shared manager must
// outlive the worlds. The registry must outlive the world. A world has a store of the
// registry's types at Create; a type added to the registry later is not part of it
// (Store returns nullptr for it, Spawn skips it, Save writes the others unchanged).
//
// World resources: a type declared with ComponentStorage::kResource is held once per
// World, not by an entity: `world.Resource<GameRules>()` (by C++ type), its fields by
// name (`GetResourceProperty("game_rules", "lives")`). SaveAll writes those that
// differ from their defaults on one more entity at the end of the blob; a spawned
// resource blob that gives one sets the world's value (and an entity that carried
// nothing else is not kept).
//
// Thread-safety: none; a world belongs to one thread at a time (systems may fan out
// page queries to worker threads).
#ifndef STRATA_ENGINE_WORLD_H_
#define STRATA_ENGINE_WORLD_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/base/optimization.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "component/component_type.h"
#include "component/named_component.h"
#include "component/instance_indexer.h"
#include "component/page_component.h"
#include "component/registry.h"
#include "component/transform_properties.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "index/entity_index.h"
#include "index/property_system.h"
#include "iteration/command_buffer.h"
#include "iteration/component_events.h"
#include "iteration/declared_access.h"
#include "iteration/entity_pages.h"
#include "iteration/filter.h"
#include "iteration/parallel_query.h"
#include "resource/entity_spawner.h"
#include "resource/format.h"
#include "transform/transform_component.h"

namespace strata {

struct PrefabTable;

// WorldOptions: how a World is built (World::Options).
struct WorldOptions {
  // deferred_transforms: the transform component in deferred mode (SetLocal marks
  // dirty, UpdateTransforms() propagates) instead of immediate mode.
  bool deferred_transforms = false;
};

// SaveOptions: what World::Save writes.
struct SaveOptions {
  // keep_names: the entity names and instance-name texts the world knows.
  bool keep_names = true;
  // prefab_deltas: an entity made from a prefab (spawned from a level's prefab
  // instance, or World::Instantiate) is written as its prefab entity plus the
  // components and fields that differ: a field counts as overridden when the level
  // overrode it or when its value differs from the prefab's now (a value diff: a
  // field set back to the prefab's value follows later edits of the prefab again). A
  // component holding entity references, or of a custom layout, is written whole when
  // it differs. false: every entity in full, as a level without prefabs.
  bool prefab_deltas = true;
  // prefab_copies: a delta save carries a copy of each prefab it uses, so that it
  // loads where the prefab is not known (or no longer exists). false: it names them
  // only (smaller); spawning it then needs a world that knows each of them
  // (LoadPrefabs), else NotFound naming the prefab, and nothing is spawned.
  bool prefab_copies = true;
};

// HasTransform: the page-store tag by which a World mirrors its transforms into page
// queries (World::TrackTransformChanges).
struct HasTransform {};

// PrefabId: a prefab a World knows (World::FindPrefab), valid for that World's life.
struct PrefabId {
  uint32_t index = 0xFFFFFFFFu;
};

// ReloadReport: what World::Reload changed.
struct ReloadReport {
  // Entities of the level added (spawned), removed (destroyed) and kept.
  uint32_t entities_added = 0;
  uint32_t entities_removed = 0;
  uint32_t entities_kept = 0;
  // Component instances the file gave to or took from kept entities.
  uint32_t components_added = 0;
  uint32_t components_removed = 0;
  // Instances of kept entities with a field changed in the file, and those fields.
  uint32_t instances_written = 0;
  uint32_t fields_written = 0;
  // skipped: changes to what the game destroyed or removed at run time (a write to an
  // instance it removed, an add to an entity it destroyed), or an add of an instance
  // it had given the entity itself: left as the game has them.
  uint32_t skipped = 0;
  // written: per "type.field", how many instances had it written, by name.
  std::vector<std::pair<std::string, uint32_t>> written;
  // level_bytes: what the world keeps to diff the next reload against (the level's
  // blob and one handle per level entity).
  size_t level_bytes = 0;

  // Summary: one line, "2 added, 1 removed, 4039 kept; 3 fields written (sprite.size
  // x2, transform.local x1)".
  std::string Summary() const;
};

// With<Ts...> / Without<Ts...>: the components World::Each also requires / excludes.
template <typename... Ts>
struct With {};
template <typename... Ts>
struct Without {};

namespace world_internal {
// CallbackArgs<Fn>::type: std::tuple of the parameter types of a lambda or function.
template <typename Fn>
struct CallbackArgs : CallbackArgs<decltype(&std::remove_reference_t<Fn>::operator())> {};
template <typename C, typename R, typename... A>
struct CallbackArgs<R (C::*)(A...) const> {
  using type = std::tuple<A...>;
};
template <typename C, typename R, typename... A>
struct CallbackArgs<R (C::*)(A...)> {
  using type = std::tuple<A...>;
};
template <typename R, typename... A>
struct CallbackArgs<R (*)(A...)> {
  using type = std::tuple<A...>;
};
template <typename R, typename... A>
struct CallbackArgs<R (&)(A...)> {
  using type = std::tuple<A...>;
};
// TailOf<A, B...>::type: std::tuple<B...>.
template <typename... A>
struct TailOf;
template <typename A, typename... B>
struct TailOf<A, B...> {
  using type = std::tuple<B...>;
};
}  // namespace world_internal

class World {
 public:
  using Options = WorldOptions;

  // MemoryReport: bytes owned by each subsystem (container capacities).
  struct MemoryReport {
    size_t entity_manager = 0;  // 0 when the manager is shared (owned elsewhere)
    size_t transforms = 0;
    size_t entity_index = 0;
    size_t pages = 0;
    size_t components = 0;      // the stores that keep their own data (kNamed types)
    size_t total() const { return entity_manager + transforms + entity_index + pages + components; }
  };

  // Create: a world with its own entity manager, one store per type of `registry`
  // (which must outlive it). Errors of a store's creation (ResourceExhausted past the
  // page store's limit of component types).
  static absl::StatusOr<std::unique_ptr<World>> Create(const ComponentRegistry& registry,
                                                       const Options& options = Options());
  // Create(shared): a world over `shared`. Destroying the World after `shared` is
  // safe (its listeners are detached), but nothing else may be used then.
  static absl::StatusOr<std::unique_ptr<World>> Create(const ComponentRegistry& registry,
                                                       EntityManager& shared,
                                                       const Options& options = Options());
  // World(): a world of the transform alone (a registry of no game types).
  World();
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // Spawn: spawns a validated resource into this world: one CreateBatch for its
  // entities, then one batch per component type, each instance registered in the entity
  // index under its name. Types this world does not know are skipped (counted in
  // `stats`). On error every entity of this spawn is destroyed again (nothing stays
  // behind) and the error is returned: a layout that differs from the declaration is
  // FailedPrecondition naming the type and field. O(entities + instances).
  absl::StatusOr<std::vector<Entity>> Spawn(const EntityResourceView& view,
                                            SpawnStats* stats = nullptr);

  // SpawnLevel: Spawn(level.view()), keeping `level` (moved in, not copied) and the
  // spawned handles as this world's live level, which Reload patches. One live level
  // per world: a second SpawnLevel makes its level the live one (the first's entities
  // stay, no longer reloaded). Spawn's errors; then the live level is unchanged. The
  // form taking bytes validates them first (EntityResource::Create's errors).
  absl::StatusOr<std::vector<Entity>> SpawnLevel(EntityResource level, SpawnStats* stats = nullptr);
  absl::StatusOr<std::vector<Entity>> SpawnLevel(std::vector<std::byte> blob,
                                                 SpawnStats* stats = nullptr);

  // Reload: patches the live level to `level` (the level recompiled; moved in, it
  // becomes the live level), diffing it against the live level's blob:
  //   - entities are matched by identity, their path of names (resource/entity_match.h),
  //     never by position: inserting one entity anywhere is one add;
  //   - entities added in the file are spawned (a child of a kept entity is linked to
  //     its transform), removed ones are destroyed as World::Destroy does;
  //   - of a kept entity, each field whose value changed in the file is written and
  //     every other field keeps its run-time value; an instance the file added or
  //     removed is added or removed. A reference field changed when it names another
  //     entity (an entity renumbered by an insertion is the same entity). The
  //     transform's one field is its local matrix;
  //   - what the game destroyed or removed at run time stays so (ReloadReport::skipped).
  // Handles of kept entities stay valid, and so do references to them; a reference to
  // a removed entity is one to a destroyed entity. Observers hear of the adds, removes
  // and sets (written instances of page-stored types are OnSet events and are marked
  // changed) at the flush that ends the reload. The level's prefabs replace the known
  // ones of the same name.
  // A component type whose layout changed since the last blob migrates as a spawn
  // does (an added field compares against its default). Refused, with the world left
  // exactly as it was: FailedPrecondition with no live level, or naming the type and
  // field of a layout a spawn would refuse (and a custom type whose store cannot write
  // fields, ComponentStore::writable); the errors of EntityResource::Create (the form
  // taking bytes), and DataLoss for contents a spawn would refuse (a reference out of range, a malformed
  // names or prefab section). Cost: a diff of the two blobs at about memory speed
  // when the entities' names and parents are unchanged, plus the changed part
  // (resource/entity_match.h for the rest).
  absl::StatusOr<ReloadReport> Reload(EntityResource level);
  absl::StatusOr<ReloadReport> Reload(std::vector<std::byte> blob);
  // LevelEntities: the live level's entity for each of its entity numbers (one the
  // game destroyed included); empty without one.
  absl::Span<const Entity> LevelEntities() const;

  // LoadPrefabs: the prefabs `view` declares (its strata.prefabs section,
  // resource/prefab.h) become known to this world, copied; one of the same name as a
  // known prefab replaces it (PrefabIds stay valid and name the new one). Spawn does
  // this for every resource it spawns (a delta save's prefabs named without a copy
  // are skipped: nothing to load). DataLoss for a corrupt section.
  absl::Status LoadPrefabs(const EntityResourceView& view);
  // FindPrefab: the known prefab named `name`; NotFound naming it.
  absl::StatusOr<PrefabId> FindPrefab(absl::string_view name) const;
  // Instantiate: `count` new instances of `prefab` (its root and children each, with
  // references inside the prefab to the instance's own entities); returns the roots in
  // order. Spawned instances are named as in the prefab (the root by its name); bundle
  // ones (below) have no name. A
  // prefab of one entity whose components are all page-stored and hold no
  // entity reference costs what creating the same values does (one CreateBatch, one
  // CreateFromBundle); any other spawns the prefab's resource once per instance.
  // Observers hear of the adds before it returns. InvalidArgument for an unknown id.
  absl::StatusOr<std::vector<Entity>> Instantiate(PrefabId prefab, size_t count = 1);
  // Instantiate(commands, prefab): records one instance's creation in `commands` (made
  // for pages()), a pending handle until playback. FailedPrecondition for a prefab
  // Instantiate cannot create as a bundle (children, other storage, references).
  absl::StatusOr<Entity> Instantiate(CommandBuffer& commands, PrefabId prefab) const;

  // Save: a resource blob of `entities` (in that order, moved as needed so parents
  // precede children; a parent outside the set makes its child a root). Errors, with
  // nothing written: NotFound for an entity not alive in this world's manager,
  // InvalidArgument for a repeated entity or a reference to a live entity outside the
  // set, naming the holder, its component and field and the target (a reference to a
  // dead one is saved as none).
  absl::StatusOr<std::vector<std::byte>> Save(absl::Span<const Entity> entities,
                                              const SaveOptions& options = SaveOptions()) const;
  // Save writes no world resources (list no entity for them); SaveAll does. Entities
  // made from prefabs are written as deltas (SaveOptions::prefab_deltas): a spawn of
  // the blob takes every field an entity did not override from the prefab of that
  // name the world knows then (LoadPrefabs a changed prefab first: its instances get
  // its new values), or from the copy the blob carries.
  // SaveAll: Save(Entities()), plus every live entity a saved component refers to
  // (an entity with no component and no name is saved as such, so the reference holds
  // after a load), plus one last entity that carries the world resources whose fields
  // differ from their defaults (none when all hold them, so the save of a freshly
  // spawned level is that level). O(Save); a world with such references is saved
  // twice. Spawning the blob into a fresh world and saving that gives the same bytes.
  absl::StatusOr<std::vector<std::byte>> SaveAll(const SaveOptions& options = SaveOptions()) const;
  // Entities: every live entity with a component or a name in this world, by index.
  std::vector<Entity> Entities() const;

  // Destroy / DestroyBatch: destroys the entities and every entity below them in this
  // world's transform hierarchy (a destroyed parent takes its children, as in the
  // peers), in one EntityManager::DestroyBatch; every subsystem drops them. NotFound for
  // a dead or foreign entity: nothing changes. O(entities + descendants); a batch none
  // of whose entities has a transform child costs what the manager's does.
  absl::Status Destroy(Entity entity) { return DestroyBatch(absl::MakeConstSpan(&entity, 1)); }
  absl::Status DestroyBatch(absl::Span<const Entity> entities);
  // DestroyKeepingChildren / DestroyBatchKeepingChildren: the entities alone; their
  // transform children become roots whose world is their local. A destroy through the
  // entity manager (entities().Destroy, a command buffer's Destroy) does this too.
  absl::Status DestroyKeepingChildren(Entity entity) { return entities_->Destroy(entity); }
  absl::Status DestroyBatchKeepingChildren(absl::Span<const Entity> entities) {
    return entities_->DestroyBatch(entities);
  }

  // ComponentCount: how many components `entity` has in this world across every store
  // plus its entity index entries, for tests and tools checking that nothing is left
  // behind. O(types).
  size_t ComponentCount(Entity entity) const;

  // UpdateTransforms: deferred mode: propagates dirty transforms. Then, with
  // TrackTransformChanges on, brings the mirror below up to date.
  void UpdateTransforms();

  // TrackTransformChanges: mirrors the transform store into page queries, so that
  // "sprites whose transform changed" is one query:
  //   Filter f;
  //   f.Include(sprites).Changed(world.has_transform(), last_run_tick);
  // From the call on, every entity with a transform carries the tag HasTransform in
  // pages() (tracked by change detection), and each change to its world matrix (a new
  // local, a new parent or none, its parent destroyed) marks it written. The mirror
  // follows the transform store at sync points: UpdateTransforms() and the end of a
  // Spawn, as the world matrices of deferred mode follow at UpdateTransforms; a query
  // between sees the state of the last one. Cost: O(transforms) for this call, then per
  // sync O(changed nodes) (a moved node's subtree counts). Not inside a walk of
  // pages() (the mirror adds and removes the tag). Idempotent.
  absl::Status TrackTransformChanges();
  Component<HasTransform> has_transform() const { return has_transform_; }

  MemoryReport Memory() const;

  // EntityName: the name `entity` had in the resource it was spawned from, or "".
  absl::string_view EntityName(Entity entity) const;

  // Store: the store of `type`, or nullptr. Store<M>(type): the typed manager behind
  // it (a custom type's own, e.g. TransformComponentManager); NotFound for an unknown
  // type, InvalidArgument if its manager is not an M.
  ComponentStore* Store(absl::string_view type) const;
  template <typename M>
  absl::StatusOr<M*> Store(absl::string_view type) const {
    return Typed<M>(type);
  }

  // Pages<T>() / Named<T>(): the manager of the one declared type of this world whose
  // struct is T, found by C++ type (World::Create records each declared struct once):
  // no name to misspell, no Status to handle. Asking for a struct that no type
  // declares, that two types declare, or that is stored the other way is a programming
  // error: aborts with a message, in every build. TryPages / TryNamed: nullptr then.
  template <typename T>
  PageComponentManager<T>& Pages() const {
    return *CheckedTyped<PageComponentManager<T>>(TypeTag<T>(), "Pages<T>");
  }
  template <typename T>
  NamedComponentManager<T>& Named() const {
    return *CheckedTyped<NamedComponentManager<T>>(TypeTag<T>(), "Named<T>");
  }
  template <typename T>
  PageComponentManager<T>* TryPages() const {
    return TypedByCpp<PageComponentManager<T>>(TypeTag<T>());
  }
  template <typename T>
  NamedComponentManager<T>* TryNamed() const {
    return TypedByCpp<NamedComponentManager<T>>(TypeTag<T>());
  }
  // Pages<T>(name) / Named<T>(name): by type name, for names that come from data.
  // NotFound for an unknown name, InvalidArgument if it is not stored that way with T.
  template <typename T>
  absl::StatusOr<PageComponentManager<T>*> Pages(absl::string_view type) const {
    return Typed<PageComponentManager<T>>(type);
  }
  template <typename T>
  absl::StatusOr<NamedComponentManager<T>*> Named(absl::string_view type) const {
    return Typed<NamedComponentManager<T>>(type);
  }

  // Resource<T>() / ReadResource<T>(): the world resource whose struct is T (declared
  // with ComponentStorage::kResource), found by C++ type: its defaults until a system,
  // a property set or a spawned resource changes it. Valid for the World's life.
  // Inside a system of a Schedule over this world the system must have declared it,
  // Writes(WorldResource<T>(world)) for Resource, Reads or Writes for ReadResource
  // (engine/world_schedule.h): otherwise aborts, naming the system and the resource,
  // in every build mode. Asking for a struct no resource type declares (or two do)
  // aborts as Pages<T>() does; TryResource returns nullptr then (checked as Resource).
  template <typename T>
  T& Resource() const {
    WorldResourceStore& store = CheckedResource(TypeTag<T>(), "Resource<T>");
    CheckResourceAccess(store, /*write=*/true, "World::Resource<T>");
    return *reinterpret_cast<T*>(store.value());
  }
  template <typename T>
  const T& ReadResource() const {
    WorldResourceStore& store = CheckedResource(TypeTag<T>(), "ReadResource<T>");
    CheckResourceAccess(store, /*write=*/false, "World::ReadResource<T>");
    return *reinterpret_cast<const T*>(store.value());
  }
  template <typename T>
  T* TryResource() const {
    WorldResourceStore* store = ResourceOfCpp(TypeTag<T>());
    if (store == nullptr) return nullptr;
    CheckResourceAccess(*store, /*write=*/true, "World::TryResource<T>");
    return reinterpret_cast<T*>(store->value());
  }
  // ResourceName<T>(): the type name of world resource T (aborts as Resource<T>).
  template <typename T>
  absl::string_view ResourceName() const {
    return CheckedResource(TypeTag<T>(), "ResourceName<T>").type().name();
  }
  // GetResourceProperty / SetResourceProperty: field `property` of the world resource
  // of type `type`, by name, as PropertySystem does for components (and checked inside
  // a system as ReadResource / Resource). NotFound for an unknown resource type or
  // field (the message lists the fields), InvalidArgument for a value of another type,
  // FailedPrecondition for a read-only field.
  absl::StatusOr<PropertyValue> GetResourceProperty(absl::string_view type,
                                                    absl::string_view property) const;
  absl::Status SetResourceProperty(absl::string_view type, absl::string_view property,
                                   const PropertyValue& value);

  // Each: a page query over the entities that have every component the callback takes
  // by reference, each found by its C++ type, so nothing is listed twice:
  //   world.Each([](Position& p, const Velocity& v) { p.x += v.x; });
  //   world.Each(With<Burning>(), Without<Frozen>(), [](Entity e, Health& h, Armor* a) {});
  // The callback takes an optional leading Entity, then `T&` / `const T&` (required),
  // then `U*` (optional: null where absent), as ForEachMatch (iteration/filter.h),
  // whose walk and rules it is. With<...> requires more components without handing
  // them over (tags, which have no data, come in this way); Without<...> excludes
  // entities with any of its types. Every type must be declared once, page-stored.
  template <typename Fn>
  void Each(Fn&& fn) const {
    Each(With<>(), Without<>(), std::forward<Fn>(fn));
  }
  template <typename... Excluded, typename Fn>
  void Each(Without<Excluded...> without, Fn&& fn) const {
    Each(With<>(), without, std::forward<Fn>(fn));
  }
  template <typename... Required, typename Fn>
  void Each(With<Required...> with, Fn&& fn) const {
    Each(with, Without<>(), std::forward<Fn>(fn));
  }
  template <typename... Required, typename... Excluded, typename Fn>
  void Each(With<Required...>, Without<Excluded...>, Fn&& fn) const {
    Filter filter;
    (filter.Include(Pages<Required>().component()), ...);
    (filter.Exclude(Pages<Excluded>().component()), ...);
    EachWith(filter, fn, static_cast<typename world_internal::CallbackArgs<Fn>::type*>(nullptr));
  }

  // OnAdd / OnRemove / OnSet: observers of a page-stored type T, told in batches at
  // the next flush point (Flush, Playback, the end of Spawn). See
  // iteration/component_events.h for which writes are events:
  //   auto sub = world.OnRemove<Spark>([&](absl::Span<const Entity> dead,
  //                                        absl::Span<const Spark> last, CommandBuffer&) {
  //     for (const Spark& s : last) lifetime_total += s.max_lifetime;
  //   });
  // OnAdd's callback takes (entities, commands); OnRemove's and OnSet's (entities,
  // values, commands). An observer changes structure only through `commands`. The
  // subscription unsubscribes when destroyed; it must not outlive the World.
  template <typename T, typename Fn>
  [[nodiscard]] ComponentEvents::Subscription OnAdd(Fn fn) const {
    return events_->OnAdd(Pages<T>().component(), std::move(fn));
  }
  template <typename T, typename Fn>
  [[nodiscard]] ComponentEvents::Subscription OnRemove(Fn fn) const {
    return events_->OnRemove(Pages<T>().component(), std::move(fn));
  }
  template <typename T, typename Fn>
  [[nodiscard]] ComponentEvents::Subscription OnSet(Fn fn) const {
    return events_->OnSet(Pages<T>().component(), std::move(fn));
  }
  // Flush: delivers pending events to the observers (ComponentEvents::Flush's errors).
  absl::Status Flush() { return events_->Flush(); }
  // Playback: plays `commands` (made for pages()) back, then flushes. The playback's
  // result; the flush's error.
  absl::StatusOr<CommandBuffer::Result> Playback(CommandBuffer& commands);
  absl::StatusOr<CommandBuffer::Result> Playback(ParallelCommands& commands);
  ComponentEvents& events() const { return *events_; }

  const ComponentRegistry& registry() const { return *registry_; }
  EntityManager& entities() const { return *entities_; }
  TransformComponent& transforms() const { return *transforms_; }
  TransformComponentManager& transform_manager() const { return *transform_manager_; }
  EntityIndex& index() const { return *index_; }
  PropertySystem& properties() const { return *properties_; }
  EntityPages& pages() const { return *pages_; }
  EntitySpawner& spawner() const { return *spawner_; }
  size_t num_transforms() const { return transforms_->size(); }

 private:
  World(const ComponentRegistry* registry, std::unique_ptr<EntityManager> owned,
        EntityManager* shared, const Options& options);
  absl::Status Init();
  // SaveSet: Save; with `unsaved` set, a reference to a live entity outside the set is
  // appended there (once per entity) instead of failing the save. With
  // `with_resources`, the world resources on one more entity, last.
  absl::StatusOr<std::vector<std::byte>> SaveSet(absl::Span<const Entity> entities,
                                                 const SaveOptions& options,
                                                 std::vector<Entity>* unsaved,
                                                 bool with_resources) const;

  // The store of the world resource whose struct has TypeTag `cpp`: nullptr if none or
  // several; CheckedResource aborts then. ResourceNamed: by type name, or nullptr.
  WorldResourceStore* ResourceOfCpp(const void* cpp) const {
    auto it = resource_by_cpp_.find(cpp);
    return it == resource_by_cpp_.end() ? nullptr : it->second;
  }
  WorldResourceStore& CheckedResource(const void* cpp, const char* what) const {
    WorldResourceStore* store = ResourceOfCpp(cpp);
    if (store == nullptr) [[unlikely]] TypedAccessFailed(cpp, what);
    return *store;
  }
  WorldResourceStore* ResourceNamed(absl::string_view type) const;
  // Inside a system of a Schedule over pages_: the system declared the resource.
  void CheckResourceAccess(const WorldResourceStore& store, bool write, const char* what) const {
    const DeclaredAccess* access = DeclaredAccess::Current();
    if (ABSL_PREDICT_TRUE(access == nullptr) || &access->pages() != pages_.get()) return;
    access->CheckResource(store.type().name(), write, what);
  }

  // The store of the one declared type whose struct has TypeTag `cpp`: nullptr if none
  // or several.
  ComponentStore* StoreOfCpp(const void* cpp) const;
  template <typename M>
  M* TypedByCpp(const void* cpp) const {
    ComponentStore* store = StoreOfCpp(cpp);
    if (store == nullptr || store->type_tag() != TypeTag<M>()) return nullptr;
    return static_cast<M*>(store->typed());
  }
  template <typename M>
  M* CheckedTyped(const void* cpp, const char* what) const {
    M* typed = TypedByCpp<M>(cpp);
    if (typed == nullptr) [[unlikely]] TypedAccessFailed(cpp, what);
    return typed;
  }
  [[noreturn]] void TypedAccessFailed(const void* cpp, const char* what) const;
  // Applies the transform store's change log to the HasTransform mirror.
  void SyncTransformMirror();

  template <typename Fn, typename... Args>
  void EachWith(Filter filter, Fn& fn, std::tuple<Args...>*) const {
    if constexpr (sizeof...(Args) > 0 &&
                  std::is_same_v<std::decay_t<std::tuple_element_t<0, std::tuple<Args...>>>,
                                 Entity>) {
      EachComponents(filter, fn, static_cast<typename world_internal::TailOf<Args...>::type*>(nullptr));
    } else {
      EachComponents(filter, fn, static_cast<std::tuple<Args...>*>(nullptr));
    }
  }
  template <typename Fn, typename... Args>
  void EachComponents(Filter filter, Fn& fn, std::tuple<Args...>*) const {
    static_assert(((std::is_reference_v<Args> || std::is_pointer_v<Args>) && ...),
                  "World::Each: take each component as T&, const T& or T* (optional)");
    std::apply(
        [&](auto... components) {
          (IncludeIfRequired(filter, components), ...);
          ForEachMatch(*pages_, filter, fn, components...);
        },
        std::make_tuple(ComponentArg<Args>()...));
  }
  // A reference parameter's component is required; a pointer's (Optional) is not.
  template <typename T>
  static void IncludeIfRequired(Filter& filter, Component<T> c) {
    filter.Include(c);
  }
  template <typename T>
  static void IncludeIfRequired(Filter&, OptionalComponent<T>) {}
  template <typename A>
  auto ComponentArg() const {
    using T = std::remove_cv_t<std::remove_pointer_t<std::remove_reference_t<A>>>;
    static_assert(!std::is_empty_v<T>,
                  "World::Each: a tag has no data to hand over: require it with With<Tag>()");
    if constexpr (std::is_pointer_v<A>) {
      return Optional(Pages<T>().component());
    } else {
      return Pages<T>().component();
    }
  }

  template <typename M>
  absl::StatusOr<M*> Typed(absl::string_view type) const {
    ComponentStore* store = Store(type);
    if (store == nullptr) return absl::NotFoundError(absl::StrCat("no component type \"", type, "\""));
    if (store->type_tag() != TypeTag<M>()) {
      return absl::InvalidArgumentError(
          absl::StrCat("component type \"", type, "\" is not stored as the requested manager"));
    }
    return static_cast<M*>(store->typed());
  }

  const ComponentRegistry* registry_;
  // NOTE: declaration order is construction order; members that listen to the entity
  // manager are destroyed (and unsubscribe) before an owned manager goes.
  std::unique_ptr<EntityManager> owned_entities_;
  EntityManager* entities_;
  std::unique_ptr<TransformComponent> transforms_;
  std::unique_ptr<TransformComponentManager> transform_manager_;
  std::unique_ptr<EntityIndex> index_;
  EntityManager::Subscription listener_;
  std::unique_ptr<EntityPages> pages_;
  // Keeps index_ in step with pages_ (every page component added or removed).
  std::unique_ptr<InstanceIndexer> indexer_;
  // In front of indexer_ on pages_ (destroyed first, which puts the indexer back).
  std::unique_ptr<ComponentEvents> events_;
  std::unique_ptr<PropertySystem> properties_;
  Component<HasTransform> has_transform_;
  // stores_[s]: the store of types_[s], the registry's types in its order at Create
  // (a type added to the registry later has no store in this world).
  std::vector<std::unique_ptr<ComponentStore>> stores_;
  std::vector<const ComponentType*> types_;
  absl::flat_hash_map<uint32_t, ComponentStore*> store_by_id_;
  // store_by_cpp_[TypeTag<T>()]: the store of the declared type whose struct is T;
  // nullptr when several types declare T.
  absl::flat_hash_map<const void*, ComponentStore*> store_by_cpp_;
  // The stores of the world resources (kResource types), in stores_ order, and by
  // their struct's TypeTag (nullptr when several resource types declare it).
  std::vector<WorldResourceStore*> resource_stores_;
  absl::flat_hash_map<const void*, WorldResourceStore*> resource_by_cpp_;
  std::unique_ptr<EntitySpawner> spawner_;
  // The prefabs this world knows: each one's resource (copied) and, when it can be
  // created as one bundle of page components, that bundle.
  struct KnownPrefab {
    std::string name;
    std::vector<std::byte> blob;
    std::optional<EntityResourceView> view;
    std::optional<ComponentBundle> bundle;
  };
  absl::Status LoadPrefab(absl::string_view name, const EntityResourceView& view);
  std::vector<std::unique_ptr<KnownPrefab>> prefabs_;
  // Where an entity came from (a spawned level's prefab instance, Instantiate): entity
  // `node` of prefabs_[prefab]; by entity index, for that generation.
  static constexpr uint32_t kNoPrefab = 0xFFFFFFFFu;
  struct PrefabOrigin {
    uint32_t generation = 0;
    uint32_t prefab = kNoPrefab;
    uint32_t node = 0;
  };
  std::vector<PrefabOrigin> prefab_origins_;
  // The fields the level (or a loaded save) overrode, per component of an entity from
  // a prefab (all of them for a component the prefab lacks). Dropped with the entity.
  struct LevelOverride {
    uint32_t type = 0;
    uint32_t name = 0;
    bool all = false;
    std::vector<uint32_t> mask;
  };
  absl::flat_hash_map<Entity, std::vector<LevelOverride>> level_overrides_;
  void SetPrefabOrigin(Entity e, uint32_t prefab, uint32_t node);
  const PrefabOrigin* PrefabOriginOf(Entity e) const;
  // RecordPrefabOrigins: the origins and level overrides `prefabs` (a spawned flat
  // resource's section) gives `spawned` (by entity number), once its prefabs are known.
  void RecordPrefabOrigins(const PrefabTable& prefabs, absl::Span<const Entity> spawned);
  // The live level (SpawnLevel, Reload): its blob, a view of it, and the entity of each
  // of its entity numbers.
  struct LiveLevel {
    std::optional<EntityResource> resource;
    std::vector<Entity> entities;
  };
  std::unique_ptr<LiveLevel> level_;
  // SetEntityName: the name World::EntityName gives `e`.
  void SetEntityName(Entity e, absl::string_view name);
  absl::flat_hash_map<std::string, uint32_t> prefab_by_name_;
  // entity_names_[index]: the name of the entity of that index and generation. A
  // vector, not a hash map, so naming a spawned level's entities costs one string
  // assignment each (names are short: most fit the string's inline buffer).
  struct NameSlot {
    uint32_t generation = 0;
    std::string name;
  };
  std::vector<NameSlot> entity_names_;
  absl::flat_hash_map<uint32_t, std::string> name_texts_;
};

}  // namespace strata

#endif  // STRATA_ENGINE_WORLD_H_
