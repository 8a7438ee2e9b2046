#include "engine/world.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "base/check.h"
#include "base/status_macros.h"
#include "resource/metadata.h"
#include "resource/prefab.h"
#include "resource/prefab_delta.h"

namespace strata {
namespace {

// The registry of a World(): the transform type alone.
const ComponentRegistry& TransformOnlyRegistry() {
  static const ComponentRegistry* registry = new ComponentRegistry();
  return *registry;
}

}  // namespace

absl::StatusOr<std::unique_ptr<World>> World::Create(const ComponentRegistry& registry,
                                                     const Options& options) {
  std::unique_ptr<World> world(new World(&registry, std::make_unique<EntityManager>(), nullptr, options));
  STRATA_RETURN_IF_ERROR(world->Init());
  return world;
}

absl::StatusOr<std::unique_ptr<World>> World::Create(const ComponentRegistry& registry,
                                                     EntityManager& shared, const Options& options) {
  std::unique_ptr<World> world(new World(&registry, nullptr, &shared, options));
  STRATA_RETURN_IF_ERROR(world->Init());
  return world;
}

World::World() : World(&TransformOnlyRegistry(), std::make_unique<EntityManager>(), nullptr, Options()) {
  // The transform type's store needs only the transform component: cannot fail.
  Init().IgnoreError();
}

World::World(const ComponentRegistry* registry, std::unique_ptr<EntityManager> owned,
             EntityManager* shared, const Options& options)
    : registry_(registry),
      owned_entities_(std::move(owned)),
      entities_(owned_entities_ != nullptr ? owned_entities_.get() : shared) {
  TransformComponent::Options transform_options;
  transform_options.mode = options.deferred_transforms ? TransformComponent::Mode::kDeferred
                                                       : TransformComponent::Mode::kImmediate;
  transforms_.reset(new TransformComponent(transform_options));
  transforms_->ConnectTo(*entities_);
  transform_manager_ = std::make_unique<TransformComponentManager>(transforms_.get());
  index_ = std::make_unique<EntityIndex>();
  listener_ = entities_->AddDestroyListener([this](absl::Span<const Entity> dead) {
    index_->RemoveEntity(dead);
    if (!level_overrides_.empty()) {
      for (Entity e : dead) level_overrides_.erase(e);
    }
    if (!entity_names_.empty()) {
      for (Entity e : dead) {
        if (e.index() < entity_names_.size() && entity_names_[e.index()].generation == e.generation()) {
          entity_names_[e.index()].name.clear();
        }
      }
    }
  });
  pages_ = std::make_unique<EntityPages>(*entities_);
  indexer_ = std::make_unique<InstanceIndexer>(*pages_, *index_);
  events_ = std::make_unique<ComponentEvents>(*entities_, *pages_);
  properties_ = std::make_unique<PropertySystem>(index_.get());
  spawner_ = std::make_unique<EntitySpawner>();
}

absl::Status World::Init() {
  WorldServices services;
  services.entities = entities_;
  services.pages = pages_.get();
  services.index = index_.get();
  services.indexer = indexer_.get();
  services.events = events_.get();
  services.Lend(transforms_.get());
  services.Lend(transform_manager_.get());
  for (const ComponentType* type : registry_->types()) {
    STRATA_ASSIGN_OR_RETURN(std::unique_ptr<ComponentStore> store, type->MakeStore(services));
    STRATA_RETURN_IF_ERROR(store->DescribeProperties(*properties_));
    ComponentStore* raw = store.get();
    STRATA_RETURN_IF_ERROR(spawner_->RegisterComponentSpawner(
        type->name(), [raw](const ComponentSpawnBatch& batch) { return raw->Spawn(batch); }));
    store_by_id_.emplace(type->id().value(), raw);
    if (type->cpp_type() != nullptr) {
      // A struct two types declare names neither: Pages<T>() must not pick one.
      auto [it, inserted] = store_by_cpp_.try_emplace(type->cpp_type(), raw);
      if (!inserted) it->second = nullptr;
    }
    if (type->storage() == ComponentStorage::kResource) {
      auto* resource = static_cast<WorldResourceStore*>(raw);
      resource_stores_.push_back(resource);
      auto [it, inserted] = resource_by_cpp_.try_emplace(type->cpp_type(), resource);
      if (!inserted) it->second = nullptr;
    }
    stores_.push_back(std::move(store));
    types_.push_back(type);
  }
  // After the declared types, whose page ids stay as they were without the mirror.
  STRATA_ASSIGN_OR_RETURN(has_transform_, pages_->RegisterComponent<HasTransform>("has_transform"));
  return absl::OkStatus();
}

absl::Status World::TrackTransformChanges() {
  if (transforms_->change_log()) return absl::OkStatus();
  std::vector<Entity> with_transform(transforms_->size());
  for (size_t pos = 0; pos < with_transform.size(); ++pos) {
    with_transform[pos] = transforms_->EntityAt(pos);
  }
  STRATA_RETURN_IF_ERROR(pages_->TrackChanges(has_transform_.id));
  STRATA_RETURN_IF_ERROR(pages_->Add(with_transform, has_transform_, HasTransform{}));
  transforms_->set_change_log(true);
  return absl::OkStatus();
}

void World::SyncTransformMirror() {
  if (!transforms_->change_log()) return;
  const Component<HasTransform> tag = has_transform_;
  EntityPages& pages = *pages_;
  transforms_->TakeChanges([&](Entity e, TransformComponent::Change change) {
    switch (change) {
      case TransformComponent::Change::kCreated:
        // Gone again since (its entity destroyed): its kDestroyed follows.
        // Alive, registered and absent: the Add cannot fail.
        if (entities_->Alive(e) && !pages.Has(e, tag.id)) pages.Add(e, tag, HasTransform{}).IgnoreError();
        break;
      case TransformComponent::Change::kDestroyed:
        if (pages.Has(e, tag.id)) pages.Remove(e, tag).IgnoreError();  // present: cannot fail
        break;
      case TransformComponent::Change::kMoved:
        pages.MarkChanged(e, tag.id);
        break;
    }
  });
}

// Every listener (the stores' and listener_) is a Subscription: it unsubscribes when
// destroyed, before an owned manager (declared first) goes, and is merely detached if a
// shared manager was destroyed before the World. The stores go first: they refer to
// the pages and the index.
World::~World() {
  stores_.clear();
  // The transform manager outlives the indexer it tells (declared before it).
  transform_manager_->set_instance_listener(nullptr);
}

ComponentStore* World::Store(absl::string_view type) const {
  const ComponentType* t = registry_->Find(type);
  if (t == nullptr) return nullptr;
  auto it = store_by_id_.find(t->id().value());
  return it == store_by_id_.end() ? nullptr : it->second;
}

ComponentStore* World::StoreOfCpp(const void* cpp) const {
  auto it = store_by_cpp_.find(cpp);
  return it == store_by_cpp_.end() ? nullptr : it->second;
}

void World::TypedAccessFailed(const void* cpp, const char* what) const {
  ComponentStore* store = StoreOfCpp(cpp);
  // Recorded with no store: declared by several types.
  const bool ambiguous = store == nullptr && store_by_cpp_.contains(cpp);
  std::string declared;
  for (const ComponentType* type : types_) {
    if (type->cpp_type() == cpp) absl::StrAppend(&declared, declared.empty() ? "" : ", ", type->name());
  }
  const std::string message =
      ambiguous ? absl::StrCat("World::", what, ": several component types declare this struct (",
                               declared, "): use the form that takes the type's name")
      : store == nullptr
          ? absl::StrCat("World::", what, ": no component type of this world declares this struct")
          : absl::StrCat("World::", what, ": component type \"", declared,
                         "\" is not stored that way (Pages<T> for page storage, Named<T> for "
                         "named, Resource<T> for a world resource)");
  STRATA_CHECK(false, message.c_str());
  std::abort();  // not reached: STRATA_CHECK(false) aborts
}

absl::StatusOr<CommandBuffer::Result> World::Playback(CommandBuffer& commands) {
  return events_->Playback(commands);
}

absl::StatusOr<CommandBuffer::Result> World::Playback(ParallelCommands& commands) {
  return events_->Playback(commands.buffers());
}

absl::StatusOr<std::vector<Entity>> World::Spawn(const EntityResourceView& view, SpawnStats* stats) {
  // Names first: a malformed names section fails the spawn before anything exists.
  ComponentTypeView entity_names;
  std::vector<absl::string_view> names;
  for (const ComponentTypeView& section : view.component_types()) {
    if (section.type == IdString32(kEntityNamesSection)) {
      entity_names = section;
      STRATA_ASSIGN_OR_RETURN(names, ReadStringSection(section));
    } else if (section.type == IdString32(kNameStringsSection)) {
      STRATA_ASSIGN_OR_RETURN(std::vector<absl::string_view> texts, ReadStringSection(section));
      for (size_t i = 0; i < texts.size(); ++i) {
        if (IdString32::Hash(texts[i]) == section.names[i]) {
          name_texts_.try_emplace(section.names[i], std::string(texts[i]));
        }
      }
    }
  }
  // A corrupt prefab section fails the spawn before anything exists, too.
  STRATA_ASSIGN_OR_RETURN(const PrefabTable prefabs, ReadPrefabTable(view));
  if (prefabs.delta) {
    // A delta (a save of entities made from prefabs): made whole with the prefabs this
    // world knows by those names (the blob's own copies for the others; NotFound
    // naming a prefab it has neither of), then spawned.
    std::vector<EntityResourceView> bases;
    bases.reserve(prefabs.prefabs.size());
    for (const PrefabTable::Prefab& prefab : prefabs.prefabs) {
      auto known = prefab_by_name_.find(prefab.name);
      bases.push_back(known != prefab_by_name_.end() ? *prefabs_[known->second]->view : prefab.view);
    }
    STRATA_ASSIGN_OR_RETURN(const std::vector<std::byte> whole, ExpandPrefabDeltas(view, prefabs, bases));
    STRATA_ASSIGN_OR_RETURN(const EntityResourceView whole_view, EntityResourceView::Create(whole));
    return Spawn(whole_view, stats);
  }
  // A failed spawn leaves the world resources as they were (a spawn that gives one
  // overwrites the world's value as its section spawns).
  std::vector<std::vector<std::byte>> resources_before;
  for (WorldResourceStore* r : resource_stores_) {
    resources_before.emplace_back(r->value(), r->value() + r->type().cpp_size());
  }
  absl::StatusOr<std::vector<Entity>> spawned_or =
      spawner_->Spawn(view, *entities_, this, SpawnOptions(), stats);
  if (!spawned_or.ok()) {
    for (size_t r = 0; r < resource_stores_.size(); ++r) {
      std::memcpy(resource_stores_[r]->value(), resources_before[r].data(), resources_before[r].size());
      resource_stores_[r]->TakeCarriers();
    }
    return spawned_or.status();
  }
  std::vector<Entity> spawned = *std::move(spawned_or);
  if (!names.empty()) {
    uint32_t max_index = 0;
    for (Entity e : spawned) max_index = std::max(max_index, e.index());
    if (entity_names_.size() <= max_index) entity_names_.resize(size_t{max_index} + 1);
    for (size_t i = 0; i < names.size(); ++i) {
      const Entity e = spawned[entity_names.entity_index[i]];
      NameSlot& slot = entity_names_[e.index()];
      slot.generation = e.generation();
      slot.name.assign(names[i].data(), names[i].size());
    }
  }
  // An entity that only carried world resources (a level's settings entity, the one
  // SaveAll writes) has done its job: it is not kept.
  std::vector<Entity> carriers;
  for (WorldResourceStore* r : resource_stores_) {
    for (Entity e : r->TakeCarriers()) {
      if (ComponentCount(e) == 0) carriers.push_back(e);
    }
  }
  if (!carriers.empty()) {
    std::sort(carriers.begin(), carriers.end());
    carriers.erase(std::unique(carriers.begin(), carriers.end()), carriers.end());
    STRATA_RETURN_IF_ERROR(entities_->DestroyBatch(carriers));
  }
  SyncTransformMirror();
  for (const PrefabTable::Prefab& prefab : prefabs.prefabs) {
    STRATA_RETURN_IF_ERROR(LoadPrefab(prefab.name, prefab.view));
  }
  RecordPrefabOrigins(prefabs, spawned);
  // The spawn's adds reach the observers now.
  STRATA_RETURN_IF_ERROR(events_->Flush());
  return spawned;
}

absl::Status World::DestroyBatch(absl::Span<const Entity> entities) {
  bool has_children = false;
  for (const Entity e : entities) {
    const TransformHandle t = transforms_->Lookup(e);
    if (t.is_valid() && transforms_->FirstChild(t).is_valid()) {
      has_children = true;
      break;
    }
  }
  if (!has_children) return entities_->DestroyBatch(entities);
  // Breadth-first below the given entities; each descendant once, whatever the batch
  // already names (the manager judges repeats among the given ones, as before).
  std::vector<Entity> all(entities.begin(), entities.end());
  absl::flat_hash_set<Entity> in_batch(entities.begin(), entities.end());
  for (size_t i = 0; i < all.size(); ++i) {
    const TransformHandle t = transforms_->Lookup(all[i]);
    if (!t.is_valid()) continue;
    for (TransformHandle c = transforms_->FirstChild(t); c.is_valid(); c = transforms_->NextSibling(c)) {
      const Entity child = transforms_->entity(c);
      if (in_batch.insert(child).second) all.push_back(child);
    }
  }
  return entities_->DestroyBatch(all);
}

absl::Status World::LoadPrefabs(const EntityResourceView& view) {
  STRATA_ASSIGN_OR_RETURN(const PrefabTable prefabs, ReadPrefabTable(view));
  for (const PrefabTable::Prefab& prefab : prefabs.prefabs) {
    if (prefab.by_name) continue;  // a delta's name without a copy: nothing to load
    STRATA_RETURN_IF_ERROR(LoadPrefab(prefab.name, prefab.view));
  }
  return absl::OkStatus();
}

absl::Status World::LoadPrefab(absl::string_view name, const EntityResourceView& view) {
  auto known = std::make_unique<KnownPrefab>();
  known->name = std::string(name);
  // NOTE: std::vector's storage is 16-byte aligned (operator new), as a view requires.
  known->blob.assign(view.blob().begin(), view.blob().end());
  STRATA_ASSIGN_OR_RETURN(EntityResourceView copied, EntityResourceView::Create(known->blob));
  known->view = copied;
  // One entity of page components without references: a bundle of their values.
  bool bundle_ok = copied.num_entities() == 1;
  ComponentBundle bundle;
  for (const ComponentTypeView& section : copied.component_types()) {
    if (!bundle_ok) break;
    if (IsMetadataSection(section.type)) continue;
    const ComponentType* type = registry_->Find(section.type);
    if (type == nullptr || !store_by_id_.contains(section.type.value()) || type->storage() != ComponentStorage::kPages ||
        section.num_instances != 1) {
      bundle_ok = false;
      break;
    }
    for (const FieldInfo& field : type->fields()) {
      if (field.type == FieldType::kEntity) bundle_ok = false;
    }
    if (!bundle_ok) break;
    ComponentSpawnBatch batch;
    batch.type = section.type;
    const Entity placeholder = Entity();
    batch.entities = absl::MakeConstSpan(&placeholder, 1);
    batch.num_instances = 1;
    batch.entity_index = section.entity_index;
    batch.names = section.names;
    batch.instance_stride = section.instance_stride;
    batch.data = section.data;
    batch.layout_fingerprint = section.layout_fingerprint;
    STRATA_ASSIGN_OR_RETURN(const ResourceMetadata meta, ReadResourceMetadata(copied));
    if (auto it = meta.layouts.find(section.type.value()); it != meta.layouts.end()) batch.layout = it->second;
    STRATA_ASSIGN_OR_RETURN(const SpawnPlan plan, PlanSpawn(*type, batch));
    std::vector<std::byte> value;
    STRATA_RETURN_IF_ERROR(DecodeInstances(*type, plan, batch, &value));
    STRATA_ASSIGN_OR_RETURN(const ComponentId id, pages_->FindComponent(type->name()));
    bundle.SetRaw(id, value);
  }
  if (bundle_ok) known->bundle = std::move(bundle);
  auto [it, inserted] = prefab_by_name_.try_emplace(known->name, static_cast<uint32_t>(prefabs_.size()));
  if (inserted) {
    prefabs_.push_back(std::move(known));
  } else {
    prefabs_[it->second] = std::move(known);
  }
  return absl::OkStatus();
}

void World::SetPrefabOrigin(Entity e, uint32_t prefab, uint32_t node) {
  if (prefab_origins_.size() <= e.index()) prefab_origins_.resize(size_t{e.index()} + 1);
  prefab_origins_[e.index()] = PrefabOrigin{e.generation(), prefab, node};
}

const World::PrefabOrigin* World::PrefabOriginOf(Entity e) const {
  if (e.index() >= prefab_origins_.size()) return nullptr;
  const PrefabOrigin& origin = prefab_origins_[e.index()];
  if (origin.prefab == kNoPrefab || origin.generation != e.generation() || origin.prefab >= prefabs_.size()) {
    return nullptr;
  }
  return &origin;
}

void World::RecordPrefabOrigins(const PrefabTable& prefabs, absl::Span<const Entity> spawned) {
  for (const PrefabEntityRecord& r : prefabs.entities) {
    auto known = prefab_by_name_.find(prefabs.prefabs[r.prefab].name);
    if (known == prefab_by_name_.end() || !entities_->Alive(spawned[r.entity])) continue;
    SetPrefabOrigin(spawned[r.entity], known->second, r.node);
  }
  for (const PrefabOverrideRecord& o : prefabs.overrides) {
    const Entity e = spawned[o.entity];
    if (o.removed || !entities_->Alive(e)) continue;
    level_overrides_[e].push_back(LevelOverride{o.type, o.name, o.added, o.mask});
  }
}

absl::StatusOr<PrefabId> World::FindPrefab(absl::string_view name) const {
  auto it = prefab_by_name_.find(name);
  if (it == prefab_by_name_.end()) {
    return absl::NotFoundError(absl::StrCat("no prefab named \"", name, "\" is known to this world"));
  }
  return PrefabId{it->second};
}

absl::StatusOr<std::vector<Entity>> World::Instantiate(PrefabId prefab, size_t count) {
  if (prefab.index >= prefabs_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("Instantiate: no prefab ", prefab.index));
  }
  const KnownPrefab& known = *prefabs_[prefab.index];
  std::vector<Entity> roots(count);
  if (known.bundle.has_value()) {
    entities_->CreateBatch(absl::MakeSpan(roots));
    if (absl::Status created = pages_->CreateFromBundle(roots, *known.bundle); !created.ok()) {
      (void)entities_->DestroyBatch(roots);
      return created;
    }
    for (const Entity root : roots) SetPrefabOrigin(root, prefab.index, 0);
  } else {
    for (size_t i = 0; i < count; ++i) {
      absl::StatusOr<std::vector<Entity>> spawned = Spawn(*known.view);
      if (!spawned.ok()) {
        (void)entities_->DestroyBatch(absl::MakeConstSpan(roots.data(), i));
        return spawned.status();
      }
      roots[i] = (*spawned)[0];
      for (uint32_t node = 0; node < spawned->size(); ++node) {
        if (entities_->Alive((*spawned)[node])) SetPrefabOrigin((*spawned)[node], prefab.index, node);
      }
    }
  }
  STRATA_RETURN_IF_ERROR(events_->Flush());
  return roots;
}

absl::StatusOr<Entity> World::Instantiate(CommandBuffer& commands, PrefabId prefab) const {
  if (prefab.index >= prefabs_.size()) {
    return absl::InvalidArgumentError(absl::StrCat("Instantiate: no prefab ", prefab.index));
  }
  const KnownPrefab& known = *prefabs_[prefab.index];
  if (!known.bundle.has_value()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "prefab \"", known.name, "\" is not one entity of page components without references: "
        "instantiate it with World::Instantiate"));
  }
  return commands.Create(*known.bundle);
}

namespace {

// PrefabDeltaWriter: what SaveSet writes of the entities made from prefabs (see
// SaveOptions::prefab_deltas): per component type, it drops the instances equal to
// their prefab's that the level did not override, and records the masks of those it
// keeps in part and the prefab components an entity no longer has.
class PrefabDeltaWriter {
 public:
  // LevelMask: the level's override of (entity, type, name): nullopt if none, an empty
  // span with all = true for every field.
  struct LevelMask {
    bool all = false;
    absl::Span<const uint32_t> mask;
  };
  using LevelLookup = std::function<std::optional<LevelMask>(Entity, uint32_t type, uint32_t name)>;

  explicit PrefabDeltaWriter(uint32_t num_saved) : origin_(num_saved) {}

  // Add: saved entity k is entity `node` of the world's prefab `prefab` (`name`, whose
  // resource is `view`).
  void Add(uint32_t k, uint32_t prefab, absl::string_view name, const EntityResourceView& view, uint32_t node) {
    auto [it, inserted] = number_of_prefab_.try_emplace(prefab, static_cast<uint32_t>(prefabs_.size()));
    if (inserted) prefabs_.push_back(Used{std::string(name), view});
    origin_[k] = {it->second, node};
    records_.push_back(PrefabEntityRecord{k, it->second, node});
  }
  bool active() const { return !records_.empty(); }

  // Filter: `section` holds `type`'s instances of the saved entities in full
  // (declared layout); those equal to their prefab's are dropped.
  void Filter(const ComponentType& type, absl::Span<const Entity> saved, const LevelLookup& level,
              ComponentTypeContents* section) {
    const uint32_t stride = section->instance_stride;
    const size_t n = section->entity_index.size();
    const bool custom = type.fields().empty();
    const size_t num_fields = custom ? 1 : type.fields().size();
    const size_t words = (num_fields + 31) / 32;
    bool comparable = stride > 0 && section->data.size() == n * size_t{stride};
    for (const FieldInfo& f : type.fields()) comparable &= f.type != FieldType::kEntity;
    // The prefabs' instances of this type: (prefab, node, name) -> bytes in the
    // declared layout, or nullptr when the prefab's layout is another.
    absl::flat_hash_map<std::tuple<uint32_t, uint32_t, uint32_t>, const std::byte*> base;
    std::vector<std::vector<std::vector<uint32_t>>> names_by_node(prefabs_.size());
    for (uint32_t p = 0; p < prefabs_.size(); ++p) {
      names_by_node[p].resize(prefabs_[p].view.num_entities());
      for (const ComponentTypeView& s : prefabs_[p].view.component_types()) {
        if (s.type != type.id()) continue;
        const bool same_layout = s.layout_fingerprint == type.fingerprint() && s.instance_stride == stride;
        for (uint32_t i = 0; i < s.num_instances; ++i) {
          const std::byte* bytes = same_layout ? s.data.data() + size_t{i} * stride : nullptr;
          base.try_emplace(std::make_tuple(p, s.entity_index[i], s.names[i]), bytes);
          names_by_node[p][s.entity_index[i]].push_back(s.names[i]);
        }
      }
    }
    absl::flat_hash_set<std::pair<uint32_t, uint32_t>> seen;  // (k, name) of entities from prefabs
    std::vector<uint32_t> mask(words);
    std::vector<uint32_t> value_only(words);
    size_t kept = 0;
    for (size_t i = 0; i < n; ++i) {
      const uint32_t k = section->entity_index[i];
      const uint32_t name = section->names[i];
      bool keep = true;
      if (origin_[k].prefab != kNoOrigin) {
        seen.insert({k, name});
        auto found = base.find(std::make_tuple(origin_[k].prefab, origin_[k].node, name));
        if (found != base.end() && found->second != nullptr && comparable) {
          // `mask`: the fields whose value differs from the prefab's now.
          std::fill(mask.begin(), mask.end(), 0u);
          const std::byte* mine = section->data.data() + i * stride;
          const std::byte* theirs = found->second;
          if (custom) {
            mask[0] = std::memcmp(mine, theirs, stride) != 0 ? 1u : 0u;
          } else {
            for (size_t f = 0; f < num_fields; ++f) {
              const FieldInfo& field = type.fields()[f];
              if (std::memcmp(mine + field.blob_offset, theirs + field.blob_offset, FieldBlobSize(field)) != 0) {
                mask[f / 32] |= uint32_t{1} << (f % 32);
              }
            }
          }
          // Of those, the ones the level did not override; then `mask` takes the
          // level's in: every field that is the entity's own.
          bool all_fields = false;
          value_only = mask;
          if (const std::optional<LevelMask> by_level = level(saved[k], type.id().value(), name)) {
            all_fields = by_level->all;
            for (size_t w = 0; w < words; ++w) {
              const uint32_t by_level_word = all_fields ? ~0u : w < by_level->mask.size() ? by_level->mask[w] : 0u;
              value_only[w] &= ~by_level_word;
              mask[w] |= by_level_word;
            }
          }
          size_t set = 0;
          for (size_t f = 0; f < num_fields; ++f) set += mask[f / 32] >> (f % 32) & 1;
          if (set == 0) {
            keep = false;  // the prefab's: a load takes it from there
          } else {
            if (set < num_fields) {
              PrefabOverrideRecord record;
              record.type = type.id().value();
              record.entity = k;
              record.name = name;
              record.mask = mask;
              overrides_.push_back(std::move(record));
            }
            if (std::any_of(value_only.begin(), value_only.end(), [](uint32_t w) { return w != 0; })) {
              PrefabOverrideRecord record;
              record.type = type.id().value();
              record.entity = k;
              record.name = name;
              record.mask = value_only;
              record.value_diff = true;
              overrides_.push_back(std::move(record));
            }
          }
          // set == num_fields: written whole with no merge record (all of it is the
          // entity's own). A component the prefab lacks, or not compared, likewise.
        }
      }
      if (!keep) continue;
      if (kept != i) {
        section->entity_index[kept] = k;
        section->names[kept] = name;
        if (stride > 0) {
          std::memmove(section->data.data() + kept * stride, section->data.data() + i * stride, stride);
        }
      }
      ++kept;
    }
    section->entity_index.resize(kept);
    section->names.resize(kept);
    if (stride > 0) section->data.resize(kept * size_t{stride});
    // The prefab's components of this type an entity no longer has.
    for (const PrefabEntityRecord& r : records_) {
      if (r.node >= names_by_node[r.prefab].size()) continue;
      for (const uint32_t name : names_by_node[r.prefab][r.node]) {
        if (seen.contains({r.entity, name})) continue;
        PrefabOverrideRecord removed;
        removed.type = type.id().value();
        removed.entity = r.entity;
        removed.name = name;
        removed.removed = true;
        overrides_.push_back(std::move(removed));
      }
    }
  }

  // Section: the delta prefab section of what Add and Filter saw, with copies of the
  // prefabs or (copies false) their names only.
  ComponentTypeContents Section(bool copies) const {
    std::vector<PrefabDefinition> definitions;
    definitions.reserve(prefabs_.size());
    for (const Used& p : prefabs_) {
      PrefabDefinition& d = definitions.emplace_back();
      d.name = p.name;
      if (copies) d.blob.assign(p.view.blob().begin(), p.view.blob().end());
    }
    return MakePrefabSection(definitions, records_, overrides_, kNativeEndianness, /*delta=*/true);
  }

 private:
  static constexpr uint32_t kNoOrigin = 0xFFFFFFFFu;
  struct Origin {
    uint32_t prefab = kNoOrigin;
    uint32_t node = 0;
  };
  struct Used {
    std::string name;
    EntityResourceView view;
  };
  std::vector<Origin> origin_;  // by saved entity number
  absl::flat_hash_map<uint32_t, uint32_t> number_of_prefab_;  // world prefab -> saved number
  std::vector<Used> prefabs_;
  std::vector<PrefabEntityRecord> records_;  // ascending entity
  std::vector<PrefabOverrideRecord> overrides_;
};

}  // namespace

std::vector<Entity> World::Entities() const {
  std::vector<Entity> all;
  for (const auto& store : stores_) store->CollectEntities(&all);
  for (uint32_t i = 0; i < entity_names_.size(); ++i) {
    if (!entity_names_[i].name.empty()) all.emplace_back(i, entity_names_[i].generation);
  }
  // Deduplicated and ordered by index without a sort: one word per entity index
  // (generation + 1; 0: none), then one pass in index order.
  uint32_t max_index = 0;
  for (Entity e : all) max_index = std::max(max_index, e.index());
  std::vector<uint64_t> by_index(all.empty() ? 0 : size_t{max_index} + 1, 0);
  for (Entity e : all) {
    if (entities_->Alive(e)) by_index[e.index()] = uint64_t{e.generation()} + 1;
  }
  all.clear();
  for (uint32_t i = 0; i < by_index.size(); ++i) {
    if (by_index[i] != 0) all.emplace_back(i, static_cast<uint32_t>(by_index[i] - 1));
  }
  return all;
}

absl::StatusOr<std::vector<std::byte>> World::SaveAll(const SaveOptions& options) const {
  std::vector<Entity> entities = Entities();
  // An entity with no component and no name is not in Entities(); one a component
  // refers to joins the set. It has no components, so it refers to nothing itself:
  // the second pass finds no more (the loop is a guard, not a fixpoint search).
  for (;;) {
    std::vector<Entity> unsaved;
    absl::StatusOr<std::vector<std::byte>> blob =
        SaveSet(entities, options, &unsaved, /*with_resources=*/true);
    if (!blob.ok() || unsaved.empty()) return blob;
    entities.insert(entities.end(), unsaved.begin(), unsaved.end());
    // By index, as Entities() orders them: a world spawned from this save numbers its
    // entities in blob order, so saving it again gives the same bytes.
    std::sort(entities.begin(), entities.end(),
              [](Entity a, Entity b) { return a.index() < b.index(); });
  }
}

absl::StatusOr<std::vector<std::byte>> World::Save(absl::Span<const Entity> entities,
                                                   const SaveOptions& options) const {
  return SaveSet(entities, options, nullptr, /*with_resources=*/false);
}

absl::StatusOr<std::vector<std::byte>> World::SaveSet(absl::Span<const Entity> entities,
                                                      const SaveOptions& options,
                                                      std::vector<Entity>* unsaved,
                                                      bool with_resources) const {
  // Check the set, and find each entity's nearest transform ancestor inside it.
  // position_by_index[e.index()]: e's position in `entities` (kNone if not given), a
  // dense table since live indices are below the manager's capacity.
  constexpr uint32_t kNone = 0xFFFFFFFFu;
  uint32_t max_index = 0;
  for (const Entity e : entities) {
    if (!entities_->Alive(e)) {
      return absl::NotFoundError(absl::StrCat("Save: ", e.DebugString(), " is not alive in this world"));
    }
    max_index = std::max(max_index, e.index());
  }
  std::vector<uint32_t> position_by_index(entities.empty() ? 0 : size_t{max_index} + 1, kNone);
  for (uint32_t i = 0; i < entities.size(); ++i) {
    // All alive, so an index seen before is the same handle.
    uint32_t& slot = position_by_index[entities[i].index()];
    if (slot != kNone) {
      return absl::InvalidArgumentError(
          absl::StrCat("Save: ", entities[i].DebugString(), " is given twice"));
    }
    slot = i;
  }
  // position: e's position in `entities`, or kNone.
  auto position = [&](Entity e) -> uint32_t {
    if (e.index() >= position_by_index.size()) return kNone;
    const uint32_t i = position_by_index[e.index()];
    return i != kNone && entities[i] == e ? i : kNone;
  };
  std::vector<uint32_t> parent(entities.size(), kNone);
  for (uint32_t i = 0; i < entities.size(); ++i) {
    TransformHandle t = transforms_->Lookup(entities[i]);
    if (!t.is_valid()) continue;
    for (t = transforms_->Parent(t); t.is_valid(); t = transforms_->Parent(t)) {
      if (const uint32_t p = position(transforms_->entity(t)); p != kNone) {
        parent[i] = p;
        break;
      }
    }
  }
  // Blob order: depth-first from the roots in the given order, children in the given
  // order, so parents precede children and the order is a function of the input.
  // Children lists in one array (counting sort by parent): child_begin[i] .. [i + 1).
  const uint32_t n = static_cast<uint32_t>(entities.size());
  std::vector<uint32_t> child_begin(n + 1, 0);
  for (uint32_t i = 0; i < n; ++i) {
    if (parent[i] != kNone) ++child_begin[parent[i] + 1];
  }
  for (uint32_t i = 0; i < n; ++i) child_begin[i + 1] += child_begin[i];
  std::vector<uint32_t> child(child_begin[n]);
  {
    std::vector<uint32_t> fill(child_begin.begin(), child_begin.end() - 1);
    for (uint32_t i = 0; i < n; ++i) {
      if (parent[i] != kNone) child[fill[parent[i]]++] = i;
    }
  }
  std::vector<uint32_t> order;
  order.reserve(n);
  std::vector<uint32_t> stack;
  for (uint32_t root = n; root-- > 0;) {
    if (parent[root] == kNone) stack.push_back(root);
  }
  while (!stack.empty()) {
    const uint32_t i = stack.back();
    stack.pop_back();
    order.push_back(i);
    for (uint32_t c = child_begin[i + 1]; c-- > child_begin[i];) stack.push_back(child[c]);
  }
  std::vector<uint32_t> number(entities.size());
  std::vector<Entity> saved(entities.size());
  for (uint32_t k = 0; k < order.size(); ++k) {
    number[order[k]] = k;
    saved[k] = entities[order[k]];
  }

  EntityResourceContents contents;
  contents.parent_index.resize(saved.size());
  for (uint32_t k = 0; k < order.size(); ++k) {
    const uint32_t p = parent[order[k]];
    contents.parent_index[k] = p == kNone ? kNoParent : number[p];
  }

  absl::Status dangling;
  absl::flat_hash_set<Entity> unsaved_seen;
  // A live entity outside the set: collected for SaveAll, else the save's error.
  auto outside = [&](Entity target, absl::string_view where) {
    if (unsaved != nullptr) {
      if (unsaved_seen.insert(target).second) unsaved->push_back(target);
    } else if (dangling.ok()) {
      dangling = absl::InvalidArgumentError(absl::StrCat(
          "Save: ", where, " refers to ", target.DebugString(),
          ", which is alive but not saved; save it too, or clear the reference"));
    }
  };
  auto describe = [this](Entity e) {
    const absl::string_view name = EntityName(e);
    return name.empty() ? e.DebugString() : absl::StrCat(e.DebugString(), " \"", name, "\"");
  };
  SaveContext context;
  context.entities = saved;
  const bool resources_to_save =
      with_resources && std::any_of(resource_stores_.begin(), resource_stores_.end(),
                                    [](const WorldResourceStore* r) { return !r->AtDefaults(); });
  if (resources_to_save) {
    // One more entity, a root after the saved ones, carries the world resources that
    // differ from their defaults.
    context.resource_entity = static_cast<uint32_t>(saved.size());
    contents.parent_index.push_back(kNoParent);
  }
  context.number_of = [&](Entity e) -> uint32_t {
    if (const uint32_t p = position(e); p != kNone) return number[p];
    if (entities_->Alive(e)) outside(e, "a saved component");
    return kNoEntityRef;
  };
  context.reference = [&](Entity target, Entity holder, absl::string_view component,
                          absl::string_view field) -> uint32_t {
    if (const uint32_t p = position(target); p != kNone) return number[p];
    if (entities_->Alive(target)) {
      outside(target, absl::StrCat(describe(holder), "'s ", component, " field \"", field, "\""));
    }
    return kNoEntityRef;
  };
  // Most instances of a type share one name ("Transform"): try the last one found
  // with one O(1) lookup before listing the entity's components.
  absl::flat_hash_map<const ComponentManager*, IdString32> last_name;
  context.name_of = [this, &last_name](Entity e,
                                       const ComponentManager* manager) -> std::optional<IdString32> {
    auto last = last_name.find(manager);
    if (last != last_name.end() && index_->FindComponentManager(e, last->second) == manager) {
      return last->second;
    }
    for (const EntityIndex::ComponentEntry& entry : index_->Components(e)) {
      if (entry.manager == manager) {
        last_name[manager] = entry.name;
        return entry.name;
      }
    }
    return std::nullopt;
  };

  // Entities made from prefabs, written as deltas.
  PrefabDeltaWriter delta(static_cast<uint32_t>(saved.size()));
  if (options.prefab_deltas) {
    for (uint32_t k = 0; k < saved.size(); ++k) {
      const PrefabOrigin* origin = PrefabOriginOf(saved[k]);
      if (origin == nullptr) continue;
      const KnownPrefab& known = *prefabs_[origin->prefab];
      if (origin->node >= known.view->num_entities()) continue;  // replaced by a smaller one
      delta.Add(k, origin->prefab, known.name, *known.view, origin->node);
    }
  }
  const PrefabDeltaWriter::LevelLookup level_mask =
      [this](Entity e, uint32_t type, uint32_t name) -> std::optional<PrefabDeltaWriter::LevelMask> {
    auto it = level_overrides_.find(e);
    if (it == level_overrides_.end()) return std::nullopt;
    for (const LevelOverride& o : it->second) {
      if (o.type == type && o.name == name) return PrefabDeltaWriter::LevelMask{o.all, o.mask};
    }
    return std::nullopt;
  };

  std::vector<ComponentTypeContents> sections;
  absl::flat_hash_set<uint32_t> used_names;
  MetadataSections metadata;
  // The types this world was built with: the registry's order changes when a type is
  // added to it later, stores_ does not.
  for (size_t s = 0; s < stores_.size(); ++s) {
    const ComponentType& type = *types_[s];
    ComponentTypeContents section;
    section.type = type.id();
    section.instance_stride = type.instance_size();
    section.layout_fingerprint = type.fingerprint();
    STRATA_RETURN_IF_ERROR(stores_[s]->Save(context, &section));
    if (!dangling.ok()) return dangling;
    if (delta.active()) delta.Filter(type, saved, level_mask, &section);
    if (section.entity_index.empty()) continue;
    for (uint32_t name : section.names) {
      if (name != type.id().value()) used_names.insert(name);
    }
    for (const FieldInfo& f : type.fields()) {
      if (f.type != FieldType::kName) continue;
      for (size_t i = 0; i < section.entity_index.size(); ++i) {
        uint32_t id;
        std::memcpy(&id, section.data.data() + i * type.instance_size() + f.blob_offset, 4);
        used_names.insert(id);
      }
    }
    if (!type.layout().empty()) {
      metadata.layout_types.push_back(type.id().value());
      metadata.layouts.push_back(type.layout());
    }
    sections.push_back(std::move(section));
  }

  // Metadata first, as the compiler writes it (MetadataSections).
  if (options.keep_names) {
    for (uint32_t k = 0; k < saved.size(); ++k) {
      const absl::string_view name = EntityName(saved[k]);
      if (name.empty()) continue;
      metadata.named_entities.push_back(k);
      metadata.entity_names.emplace_back(name);
    }
    for (uint32_t id : used_names) {
      auto text = name_texts_.find(id);
      if (text != name_texts_.end()) metadata.name_texts.emplace_back(id, text->second);
    }
  }
  std::move(metadata).AppendTo(contents.component_types, kNativeEndianness);
  if (delta.active()) contents.component_types.push_back(delta.Section(options.prefab_copies));
  for (ComponentTypeContents& section : sections) contents.component_types.push_back(std::move(section));
  return WriteEntityResource(contents);
}

WorldResourceStore* World::ResourceNamed(absl::string_view type) const {
  for (WorldResourceStore* r : resource_stores_) {
    if (r->type().name() == type) return r;
  }
  return nullptr;
}

namespace {

absl::StatusOr<const PropertyDescriptor*> FindResourceProperty(const WorldResourceStore* store,
                                                               absl::string_view type,
                                                               absl::string_view property) {
  if (store == nullptr) {
    return absl::NotFoundError(absl::StrCat("no world resource \"", type, "\" in this world"));
  }
  std::vector<absl::string_view> names;
  for (const PropertyDescriptor& d : store->properties()) {
    if (d.name == property) return &d;
    names.push_back(d.name);
  }
  return absl::NotFoundError(absl::StrCat("world resource \"", type, "\" has no property \"",
                                          property, "\" (it has: ",
                                          names.empty() ? "none" : absl::StrJoin(names, ", "), ")"));
}

}  // namespace

absl::StatusOr<PropertyValue> World::GetResourceProperty(absl::string_view type,
                                                         absl::string_view property) const {
  const WorldResourceStore* store = ResourceNamed(type);
  STRATA_ASSIGN_OR_RETURN(const PropertyDescriptor* d, FindResourceProperty(store, type, property));
  CheckResourceAccess(*store, /*write=*/false, "World::GetResourceProperty");
  return d->get(Instance{0, 0});
}

absl::Status World::SetResourceProperty(absl::string_view type, absl::string_view property,
                                        const PropertyValue& value) {
  const WorldResourceStore* store = ResourceNamed(type);
  STRATA_ASSIGN_OR_RETURN(const PropertyDescriptor* d, FindResourceProperty(store, type, property));
  if (TypeOf(value) != d->type) {
    return absl::InvalidArgumentError(absl::StrCat("wrong type: property \"", property,
                                                   "\" of world resource \"", type, "\" is ",
                                                   PropertyTypeName(d->type), ", not ",
                                                   PropertyTypeName(TypeOf(value))));
  }
  if (!d->set) {
    return absl::FailedPreconditionError(absl::StrCat("property \"", property,
                                                      "\" of world resource \"", type,
                                                      "\" is read-only"));
  }
  CheckResourceAccess(*store, /*write=*/true, "World::SetResourceProperty");
  return d->set(Instance{0, 0}, value);
}

void World::SetEntityName(Entity e, absl::string_view name) {
  if (entity_names_.size() <= e.index()) entity_names_.resize(size_t{e.index()} + 1);
  NameSlot& slot = entity_names_[e.index()];
  slot.generation = e.generation();
  slot.name.assign(name.data(), name.size());
}

absl::string_view World::EntityName(Entity entity) const {
  if (entity.index() >= entity_names_.size()) return absl::string_view();
  const NameSlot& slot = entity_names_[entity.index()];
  return slot.generation == entity.generation() ? absl::string_view(slot.name) : absl::string_view();
}

void World::UpdateTransforms() {
  transforms_->UpdateWorld();
  SyncTransformMirror();
}

size_t World::ComponentCount(Entity entity) const {
  size_t n = index_->Components(entity).size();
  for (const auto& store : stores_) n += store->CountOf(entity);
  return n;
}

World::MemoryReport World::Memory() const {
  MemoryReport m;
  m.entity_manager = owned_entities_ != nullptr ? entities_->MemoryUsage() : 0;
  m.transforms = transforms_->MemoryUsage();
  m.entity_index = index_->MemoryUsage();
  m.pages = pages_->MemoryUsage();
  for (const auto& store : stores_) m.components += store->MemoryUsage();
  return m;
}

}  // namespace strata
