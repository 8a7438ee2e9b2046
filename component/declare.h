// ComponentDeclaration<T>: a game declares a component type once, from its struct, and
// gets everything else from that declaration: the level JSON compile function (with
// defaults, checks and precise errors), the instance layout in resource blobs and its
// fingerprint, the batch spawn function, property descriptors for every field,
// pretty-printing and export back to JSON, and save.
//
//   struct Health {
//     float hp = 100;
//     float max = 100;
//     Entity attacker;                         // an entity reference
//   };
//   absl::StatusOr<ComponentType> health = ComponentDeclaration<Health>("health")
//       .Field("hp", &Health::hp).Min(0)
//       .Field("max", &Health::max).Min(1)
//       .Field("attacker", &Health::attacker)
//       .Build();
//   ComponentRegistry registry;               // component/registry.h
//   registry.Add(*std::move(health));
//
// The struct's default member values are the fields' defaults. Field types follow the
// member types (component/field.h: float, double, the 8- to 64-bit integers, bool,
// Vector3, Vector4, Quaternion, IdString32, Entity, FixedString<N>; Color() marks a
// Vector4 as a color; Enum declares an enum member with its named values). RawField declares a field by
// offset, for structs described at run time; Build checks that it fits the struct and
// overlaps no other field.
//
// Every byte accounted for: Build refuses a declaration that leaves a byte of the
// struct's value (anything but padding) to no field, naming the byte range, since an
// undeclared member would be dropped by save and come back as its default. A member
// that is run-time state only (a cache, a handle of this run) is declared
// Transient(&T::member): it spawns with its default and is not saved.
//
// Storage: ComponentStorage::kPages (default) keeps one instance per entity in the
// world's page store, queryable with iteration/filter.h (World::Pages<T>); its
// instances are always named after the type. kNamed keeps any number per entity, each
// under its own name (World::Named<T>). kResource makes T a world resource (a
// singleton): one instance per World, reached by type (World::Resource<T>), its fields
// properties by name (World::GetResourceProperty) and saved by World::SaveAll:
//
//   struct GameRules { float gravity = 9.81f; int32_t lives = 3; };
//   registry.Add(ComponentDeclaration<GameRules>("game_rules", ComponentStorage::kResource)
//                    .Field("gravity", &GameRules::gravity)
//                    .Field("lives", &GameRules::lives).Min(0)
//                    .Build());
//   world.Resource<GameRules>().lives = 5;
//
// Level JSON: {"type": "health", "hp": 80, "attacker": "orc"}. Absent fields take their
// defaults; an unknown key is an error that lists the valid ones.
#ifndef STRATA_COMPONENT_DECLARE_H_
#define STRATA_COMPONENT_DECLARE_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "base/user_text.h"
#include "component/component_type.h"
#include "component/field.h"
#include "component/instance_indexer.h"
#include "component/named_component.h"
#include "component/page_component.h"
#include "iteration/filter.h"

namespace strata {

// kDefaultSpawnOrder: declared types spawn after the transform (spawn order 0).
inline constexpr int kDefaultSpawnOrder = 100;

namespace component_internal {

// ArrayTraits<M>: for M = E[N] or std::array<E, N>, kExtent N, Element E, and kCount
// the innermost elements (arrays of arrays multiply); for anything else kExtent 0 and
// kCount 1. ArrayLeaf<M>: the innermost element type.
template <typename M>
struct ArrayTraits {
  static constexpr size_t kExtent = 0;
  static constexpr size_t kCount = 1;
  using Element = M;
  using Leaf = M;
};
template <typename E, size_t N>
struct ArrayTraits<E[N]> {
  static constexpr size_t kExtent = N;
  static constexpr size_t kCount = N * ArrayTraits<E>::kCount;
  using Element = E;
  using Leaf = typename ArrayTraits<E>::Leaf;
};
template <typename E, size_t N>
struct ArrayTraits<std::array<E, N>> : ArrayTraits<E[N]> {
  static_assert(N > 0, "an array field has at least one element");
  static_assert(sizeof(std::array<E, N>) == N * sizeof(E), "std::array holds its elements only");
};
template <typename M>
using ArrayLeaf = typename ArrayTraits<M>::Leaf;

// CopyFields: the fields `writes` selects for instance i, from its decoded value into
// `object` (a struct of `type`).
inline void CopyFields(const ComponentType& type, const FieldWrites& writes, size_t i, std::byte* object) {
  const std::byte* from = writes.objects.data() + i * type.cpp_size();
  const absl::Span<const FieldInfo> fields = type.fields();
  for (size_t f = 0; f < fields.size(); ++f) {
    if (!writes.Writes(i, f)) continue;
    std::memcpy(object + fields[f].offset, from + fields[f].offset, FieldMemorySize(fields[f]));
  }
}

template <typename T>
class PageStore final : public ComponentStore {
 public:
  PageStore(const ComponentType& type, std::unique_ptr<PageComponentManager<T>> manager,
            const WorldServices& services)
      : type_(&type), manager_(std::move(manager)), services_(services) {}

  // Subscribes the type's declared observers to services.events (set when it has any);
  // they unsubscribe with the store.
  void SubscribeDeclaredObservers() {
    for (const ComponentType::DeclaredObserver& o : type_->observers()) {
      observers_.push_back(services_.events->On(o.event, manager_->component().id, o.observer));
    }
  }

  ComponentManager& manager() override { return *manager_; }
  void* typed() override { return manager_.get(); }
  const void* type_tag() const override { return TypeTag<PageComponentManager<T>>(); }

  absl::Status Spawn(const ComponentSpawnBatch& batch) override {
    absl::StatusOr<SpawnPlan> plan = PlanSpawn(*type_, batch);
    if (!plan.ok()) return plan.status();
    const std::vector<Entity> owners = SpawnOwners(batch);
    if (plan->identity) {
      return manager_->Spawn(owners, batch.names, batch.data);
    }
    std::vector<std::byte> objects;
    absl::Status decoded = DecodeInstances(*type_, *plan, batch, &objects);
    if (!decoded.ok()) return decoded;
    return manager_->Spawn(owners, batch.names, objects);
  }

  absl::Status Save(const SaveContext& context, ComponentTypeContents* out) override {
    for (uint32_t k = 0; k < context.entities.size(); ++k) {
      const T* object = Pages().TryGet(context.entities[k], manager_->component());
      if (object == nullptr) continue;
      EncodeInstance(*type_, reinterpret_cast<const std::byte*>(object), context.entities[k], context,
                     &out->data);
      out->entity_index.push_back(k);
      out->names.push_back(type_->id().value());
    }
    return absl::OkStatus();
  }

  absl::StatusOr<size_t> Write(const FieldWrites& writes) override {
    EntityPages& pages = *services_.pages;
    const ComponentId id = manager_->component().id;
    std::vector<Entity> written;
    for (size_t i = 0; i < writes.entities.size(); ++i) {
      void* object = pages.TryGet(writes.entities[i], id);
      if (object == nullptr) continue;
      CopyFields(*type_, writes, i, static_cast<std::byte*>(object));
      pages.MarkChanged(writes.entities[i], id);
      written.push_back(writes.entities[i]);
    }
    pages.NotifySet(id, written);
    return written.size();
  }
  bool writable() const override { return true; }

  void CollectEntities(std::vector<Entity>* out) const override {
    Filter filter;
    filter.Include(manager_->component());
    ForEachMatch(*services_.pages, filter, [out](Entity e, T&) { out->push_back(e); },
                 manager_->component());
  }
  size_t CountOf(Entity entity) const override {
    return Pages().TryGet(entity, manager_->component()) != nullptr ? 1 : 0;
  }
  size_t size() const override {
    std::vector<Entity> all;
    CollectEntities(&all);
    return all.size();
  }
  // The data lives in the world's page store, which reports its own memory.
  size_t MemoryUsage() const override { return 0; }

  absl::Status DescribeProperties(PropertySystem& properties) override {
    PageComponentManager<T>* m = manager_.get();
    std::vector<PropertyDescriptor> descriptors;
    for (const FieldInfo& field : type_->fields()) {
      // Reads through the const path (a property read is no write); a set counts as a
      // write for change detection and is an OnSet event.
      descriptors.push_back(FieldProperty(
          field,
          [m](Instance i) {
            const EntityPages& pages = m->pages();
            return const_cast<std::byte*>(static_cast<const std::byte*>(
                pages.TryGet(Entity(i.index, i.generation), m->component().id)));
          },
          [m](Instance i) {
            const Entity e(i.index, i.generation);
            m->pages().MarkChanged(e, m->component().id);
            m->pages().NotifySet(m->component().id, absl::MakeConstSpan(&e, 1));
          }));
    }
    return properties.Describe(m, std::move(descriptors));
  }

  // Pages: the store, read-only (reads are no writes for change detection).
  const EntityPages& Pages() const { return *services_.pages; }

 private:
  const ComponentType* type_;
  std::unique_ptr<PageComponentManager<T>> manager_;
  WorldServices services_;
  std::vector<ComponentEvents::Subscription> observers_;
};

template <typename T>
class NamedStore final : public ComponentStore {
 public:
  NamedStore(const ComponentType& type, const WorldServices& services)
      : type_(&type), manager_(*services.entities, type.name()), services_(services) {
    services.indexer->Attach(manager_);
  }

  ComponentManager& manager() override { return manager_; }
  void* typed() override { return &manager_; }
  const void* type_tag() const override { return TypeTag<NamedComponentManager<T>>(); }

  absl::Status Spawn(const ComponentSpawnBatch& batch) override {
    absl::StatusOr<SpawnPlan> plan = PlanSpawn(*type_, batch);
    if (!plan.ok()) return plan.status();
    const std::vector<Entity> owners = SpawnOwners(batch);
    std::vector<T> objects;
    absl::Span<const T> view;
    // NOTE: a validated blob's instance data is 16-byte aligned and holds
    // num_instances * sizeof(T) bytes laid out as T: used in place, unless T needs
    // more alignment (then copied, as a decode does).
    if (plan->identity && alignof(T) <= entity_resource_layout::kAlignment) {
      view = absl::MakeConstSpan(reinterpret_cast<const T*>(batch.data.data()), batch.num_instances);
    } else {
      std::vector<std::byte> bytes;
      absl::Status decoded = DecodeInstances(*type_, *plan, batch, &bytes);
      if (!decoded.ok()) return decoded;
      objects.resize(batch.num_instances);
      if (!bytes.empty()) std::memcpy(objects.data(), bytes.data(), bytes.size());
      view = objects;
    }
    // The manager tells the world's indexer, which registers the names.
    return manager_.Spawn(owners, batch.names, view);
  }

  absl::Status Save(const SaveContext& context, ComponentTypeContents* out) override {
    for (uint32_t k = 0; k < context.entities.size(); ++k) {
      for (InstanceId id : manager_.InstanceNames(context.entities[k])) {
        const T& object = manager_.Get(manager_.Lookup(context.entities[k], id));
        EncodeInstance(*type_, reinterpret_cast<const std::byte*>(&object), context.entities[k],
                       context, &out->data);
        out->entity_index.push_back(k);
        out->names.push_back(id.value());
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<size_t> Write(const FieldWrites& writes) override {
    size_t written = 0;
    for (size_t i = 0; i < writes.entities.size(); ++i) {
      const Instance instance = manager_.Lookup(writes.entities[i], IdString32::FromValue(writes.names[i]));
      if (!instance.is_valid()) continue;
      CopyFields(*type_, writes, i, reinterpret_cast<std::byte*>(&manager_.Get(instance)));
      ++written;
    }
    return written;
  }
  bool writable() const override { return true; }

  void CollectEntities(std::vector<Entity>* out) const override {
    for (uint32_t i = 0; i < manager_.size(); ++i) out->push_back(manager_.entity(Instance{i}));
  }
  size_t CountOf(Entity entity) const override { return manager_.CountOf(entity); }
  size_t size() const override { return manager_.size(); }
  size_t MemoryUsage() const override { return manager_.MemoryUsage(); }

  absl::Status DescribeProperties(PropertySystem& properties) override {
    NamedComponentManager<T>* m = &manager_;
    std::vector<PropertyDescriptor> descriptors;
    for (const FieldInfo& field : type_->fields()) {
      descriptors.push_back(FieldProperty(
          field, [m](Instance i) { return reinterpret_cast<std::byte*>(&m->Get(i)); }));
    }
    return properties.Describe(m, std::move(descriptors));
  }

 private:
  const ComponentType* type_;
  NamedComponentManager<T> manager_;
  WorldServices services_;
};

// ResourceManager: the ComponentManager face of a world resource, which no entity
// holds: it has no instances (Lookup finds none, Create refuses).
class ResourceManager final : public ComponentManager {
 public:
  explicit ResourceManager(const ComponentType& type) : type_(&type) {}
  absl::string_view type_name() const override { return type_->name(); }
  absl::StatusOr<Instance> Create(Entity, InstanceId) override {
    return absl::FailedPreconditionError(absl::StrCat(
        "\"", type_->name(), "\" is a world resource: no entity holds one (World::Resource<T>)"));
  }
  Instance Lookup(Entity, InstanceId) const override { return Instance(); }
  bool Destroy(Entity, InstanceId) override { return false; }

 private:
  const ComponentType* type_;
};

template <typename T>
class ResourceStore final : public WorldResourceStore {
 public:
  explicit ResourceStore(const ComponentType& type)
      : type_(&type), manager_(type), value_(std::make_unique<T>()) {
    for (const FieldInfo& field : type.fields()) {
      properties_.push_back(FieldProperty(
          field, [this](Instance) { return reinterpret_cast<std::byte*>(value_.get()); }));
    }
  }

  const ComponentType& type() const override { return *type_; }
  std::byte* value() override { return reinterpret_cast<std::byte*>(value_.get()); }
  absl::Span<const PropertyDescriptor> properties() const override { return properties_; }
  std::vector<Entity> TakeCarriers() override { return std::exchange(carriers_, {}); }
  bool AtDefaults() const override {
    // Field by field, as saved: padding and transient members do not count. An
    // entity field's default is no entity.
    auto number_of = [](Entity e) { return e.is_valid() ? 0u : kNoEntityRef; };
    std::vector<std::byte> value, defaults;
    EncodeInstance(*type_, reinterpret_cast<const std::byte*>(value_.get()), number_of, &value);
    EncodeInstance(*type_, type_->defaults().data(), number_of, &defaults);
    return value == defaults;
  }

  ComponentManager& manager() override { return manager_; }
  void* typed() override { return value_.get(); }
  // The struct's own tag: World::Resource<T> finds the value by it.
  const void* type_tag() const override { return TypeTag<T>(); }

  // Spawn: the one instance a resource may give becomes the world's value; its entity
  // is recorded as a carrier (the World drops it if it holds nothing else).
  absl::Status Spawn(const ComponentSpawnBatch& batch) override {
    if (batch.num_instances == 0) return absl::OkStatus();
    if (batch.num_instances > 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "world resource \"", type_->name(), "\": the resource gives ", batch.num_instances,
          " instances; a world holds one"));
    }
    absl::StatusOr<SpawnPlan> plan = PlanSpawn(*type_, batch);
    if (!plan.ok()) return plan.status();
    std::vector<std::byte> decoded;
    absl::Status status = DecodeInstances(*type_, *plan, batch, &decoded);
    if (!status.ok()) return status;
    std::memcpy(static_cast<void*>(value_.get()), decoded.data(), sizeof(T));
    carriers_.push_back(SpawnOwners(batch)[0]);
    return absl::OkStatus();
  }

  absl::Status Save(const SaveContext& context, ComponentTypeContents* out) override {
    if (context.resource_entity == kNoEntityRef || AtDefaults()) return absl::OkStatus();
    EncodeInstance(*type_, reinterpret_cast<const std::byte*>(value_.get()), Entity(), context,
                   &out->data);
    out->entity_index.push_back(context.resource_entity);
    out->names.push_back(type_->id().value());
    return absl::OkStatus();
  }

  void CollectEntities(std::vector<Entity>*) const override {}
  size_t CountOf(Entity) const override { return 0; }
  size_t size() const override { return 1; }
  size_t MemoryUsage() const override { return sizeof(T); }
  // Not in the entity-keyed property system: World::Get/SetResourceProperty.
  absl::Status DescribeProperties(PropertySystem&) override { return absl::OkStatus(); }

 private:
  const ComponentType* type_;
  ResourceManager manager_;
  // NOTE: on the heap: a declared struct may be large, and its address stays put.
  std::unique_ptr<T> value_;
  std::vector<PropertyDescriptor> properties_;
  std::vector<Entity> carriers_;
};

}  // namespace component_internal

template <typename T>
class ComponentDeclaration {
  static_assert(std::is_trivially_copyable_v<T> && std::is_default_constructible_v<T>,
                "a declared component is a plain struct, copied with memcpy");
  // A declaration reads a nested one's fields.
  template <typename S>
  friend class ComponentDeclaration;

 public:
  explicit ComponentDeclaration(std::string type_name,
                                ComponentStorage storage = ComponentStorage::kPages)
      : type_name_(std::move(type_name)), storage_(storage) {}

  // Field: a field for `member`; its type follows the member's C++ type. A member that
  // is an array (E[N] or std::array<E, N>, of any depth) of a field type is N fields,
  // "name[0]" .. "name[N-1]", a JSON array (of at most N elements: the rest take their
  // defaults). Options that follow (Min, ReadOnly, ...) apply to every element.
  template <typename M>
  ComponentDeclaration& Field(std::string name, M T::*member) {
    using Leaf = component_internal::ArrayLeaf<M>;
    static_assert(!std::is_enum_v<Leaf>, "declare an enum member with Enum(name, member, its named values)");
    static_assert(FieldTypeFor<Leaf>().has_value(), "no field type for this member type (see component/field.h)");
    return AddMember<M>(std::move(name), OffsetOf(member), 1, [this](const std::string& path, size_t offset) {
      return AddLeaf(path, offset, [](FieldInfo& f) {
        f.type = *FieldTypeFor<Leaf>();
        if constexpr (IsFixedString<Leaf>) f.capacity = static_cast<uint32_t>(Leaf::kCapacity);
      });
    });
  }
  // Field (nested): a member whose struct S (or an array of S) has a declaration of its
  // own, used as a field: S's fields become "name.field" (properties, layout), and the
  // member a JSON object of them; S's transients stay transient. The outer struct's
  // default member values are the defaults. Options that follow apply to all of S's
  // fields. The declaration's type name, storage and spawn order are not used.
  template <typename M, typename S>
  ComponentDeclaration& Field(std::string name, M T::*member, const ComponentDeclaration<S>& declaration) {
    static_assert(std::is_same_v<component_internal::ArrayLeaf<M>, S>,
                  "the declaration is of the member's struct (or of its array's elements)");
    if (!declaration.error_.ok() || !declaration.observers_.empty()) {
      if (error_.ok()) {
        error_ = !declaration.error_.ok()
                     ? declaration.error_
                     : absl::InvalidArgumentError(absl::StrCat("component type \"", type_name_, "\": field \"",
                                                               UserText(name), "\": a nested declaration's "
                                                               "observers would never run"));
      }
      return *this;
    }
    return AddMember<M>(std::move(name), OffsetOf(member), std::max<size_t>(declaration.fields_.size(), 1),
                        [this, &declaration](const std::string& path, size_t offset) {
                          return Splice(declaration, path, offset);
                        });
  }
  // Enum: an enum member (or an array of them), written by name in level JSON,
  // properties, inspect and export:
  // .Enum("faction", &Unit::faction, {{"neutral", Faction::kNeutral}, ...}).
  // Its integer type is the enum's underlying type (8 to 64 bits). Build refuses a
  // name that is not an identifier, a name or value given twice, and a default (the
  // struct's) that is none of the values. Blobs hold the integer; a blob written
  // before values were added or renumbered loads by name, and one holding a value
  // whose name was removed is refused naming it.
  template <typename M, typename E = component_internal::ArrayLeaf<M>>
  ComponentDeclaration& Enum(std::string name, M T::*member,
                             std::initializer_list<std::pair<std::string, std::type_identity_t<E>>> values) {
    static_assert(std::is_enum_v<E>, "Enum declares an enum member");
    using Underlying = std::underlying_type_t<E>;
    constexpr std::optional<FieldType> kInteger = FieldTypeFor<Underlying>();
    static_assert(kInteger.has_value() && kInteger != FieldType::kF32 && kInteger != FieldType::kF64,
                  "an enum's underlying type is one of int8_t .. uint64_t");
    constexpr FieldType kIntegerType = *kInteger;
    auto named = std::make_shared<std::vector<EnumValue>>();
    for (const auto& [value_name, value] : values) {
      // Sign-extended for signed types (EnumValue::value).
      const Underlying integer = static_cast<Underlying>(value);
      const uint64_t bits = std::is_signed_v<Underlying> ? static_cast<uint64_t>(static_cast<int64_t>(integer))
                                                         : static_cast<uint64_t>(integer);
      named->push_back(EnumValue{value_name, bits});
    }
    std::shared_ptr<const std::vector<EnumValue>> shared = std::move(named);
    return AddMember<M>(std::move(name), OffsetOf(member), 1, [this, &shared](const std::string& path, size_t offset) {
      return AddLeaf(path, offset, [&](FieldInfo& f) {
        f.type = FieldType::kEnum;
        f.integer = kIntegerType;
        f.enum_values = shared;
      });
    });
  }
  // Color: a Vector4 member as an RGBA color.
  ComponentDeclaration& Color(std::string name, Vector4 T::*member) {
    return RawField(std::move(name), FieldType::kColor, OffsetOf(member));
  }
  // RawField: a field of `type` at byte `offset` of T (checked by Build; an enum
  // needs its values, RawEnum, and a str its capacity, RawString).
  ComponentDeclaration& RawField(std::string name, FieldType type, size_t offset) {
    return AddMember<char>(std::move(name), offset, 1, [&](const std::string& path, size_t at) {
      return AddLeaf(path, at, [type](FieldInfo& f) { f.type = type; });
    });
  }
  // RawString: a str of `capacity` bytes at byte `offset` (a FixedString's layout).
  ComponentDeclaration& RawString(std::string name, size_t offset, uint32_t capacity) {
    return RawField(std::move(name), FieldType::kString, offset).Last([capacity](FieldInfo& f) {
      f.capacity = capacity;
    });
  }
  // RawEnum: an enum field held in `integer` (int8_t .. uint64_t) at byte `offset`.
  ComponentDeclaration& RawEnum(std::string name, FieldType integer, size_t offset,
                                std::vector<EnumValue> values) {
    auto shared = std::make_shared<const std::vector<EnumValue>>(std::move(values));
    return RawField(std::move(name), FieldType::kEnum, offset).Last([&](FieldInfo& f) {
      f.integer = integer;
      f.enum_values = shared;
    });
  }
  // Transient: `member` is not a field: spawned with its default, never saved,
  // compiled or exported. Every member of T is a field or transient (Build checks).
  template <typename M>
  ComponentDeclaration& Transient(M T::*member) {
    transients_.push_back({OffsetOf(member), sizeof(M)});
    return *this;
  }
  // TransientBytes: bytes [offset, offset + size) of T are transient (for structs
  // described at run time, beside RawField).
  ComponentDeclaration& TransientBytes(size_t offset, size_t size) {
    transients_.push_back({offset, size});
    return *this;
  }
  // Min / Max / Range / ReadOnly: options of the member declared last (of each of its
  // fields: an array's elements, a nested struct's fields).
  ComponentDeclaration& Min(double min) { return Last([min](FieldInfo& f) { f.min = min; }); }
  ComponentDeclaration& Max(double max) { return Last([max](FieldInfo& f) { f.max = max; }); }
  ComponentDeclaration& Range(double min, double max) { return Min(min).Max(max); }
  ComponentDeclaration& ReadOnly() { return Last([](FieldInfo& f) { f.read_only = true; }); }
  // SpawnOrder: types spawn in ascending order (default kDefaultSpawnOrder).
  ComponentDeclaration& SpawnOrder(int order) {
    spawn_order_ = order;
    return *this;
  }

  // OnAdd / OnRemove / OnSet: an observer of this type that every World made from the
  // registry holding it subscribes, as World::OnAdd<T> and its siblings would, for the
  // World's lifetime (same callbacks: fn(entities, commands) for OnAdd, fn(entities,
  // Span<const T> values, commands) for the others; see iteration/component_events.h).
  // A World may run it on entities of any level, so it keeps no state of one World
  // unless it is told which. Page-stored types only: Build refuses it on a kNamed one.
  template <typename Fn>
  ComponentDeclaration& OnAdd(Fn fn) {
    observers_.push_back({ComponentEvents::Event::kAdd,
                          ComponentEvents::EntitiesObserver(std::move(fn))});
    return *this;
  }
  template <typename Fn>
  ComponentDeclaration& OnRemove(Fn fn) {
    observers_.push_back({ComponentEvents::Event::kRemove,
                          ComponentEvents::ValuesObserver<T>(std::move(fn))});
    return *this;
  }
  template <typename Fn>
  ComponentDeclaration& OnSet(Fn fn) {
    observers_.push_back({ComponentEvents::Event::kSet,
                          ComponentEvents::ValuesObserver<T>(std::move(fn))});
    return *this;
  }

  // Build: the ComponentType. InvalidArgument for an empty or reserved type name, a
  // duplicate or reserved ("type", "name") field name, a field outside the struct or
  // overlapping another, an option given before any field, or bytes of the struct's
  // value that no field or transient member covers (the message gives the range).
  // O(sizeof(T) + fields^2).
  absl::StatusOr<ComponentType> Build() const {
    if (!error_.ok()) return error_;
    if (type_name_.empty()) return absl::InvalidArgumentError("component type name is empty");
    if (!observers_.empty() && storage_ != ComponentStorage::kPages) {
      return absl::InvalidArgumentError(absl::StrCat(
          "component type \"", type_name_, "\": observers need page storage (kPages)"));
    }
    absl::Status shape = component_internal::CheckShape(type_name_, shape_);
    if (!shape.ok()) return shape;
    absl::Status fields = component_internal::CheckDeclaredFields(type_name_, fields_, sizeof(T));
    if (!fields.ok()) return fields;
    absl::Status covered = component_internal::CheckEveryByteDeclared(
        type_name_, fields_, transients_, sizeof(T), ValueBytes(), alignof(T));
    if (!covered.ok()) return covered;
    ComponentType type;
    type.name_ = type_name_;
    type.id_ = IdString32(type_name_);
    type.spawn_order_ = spawn_order_;
    type.storage_ = storage_;
    type.max_per_entity_ = storage_ == ComponentStorage::kNamed ? 0 : 1;
    type.fields_ = fields_;
    type.shape_ = shape_;
    uint32_t blob_offset = 0;
    bool identity = true;
    for (FieldInfo& f : type.fields_) {
      f.blob_offset = blob_offset;
      identity = identity && f.offset == blob_offset && f.type != FieldType::kBool &&
                 f.type != FieldType::kEntity;
      blob_offset += FieldBlobSize(f);
    }
    type.identity_layout_ = identity && blob_offset == sizeof(T);
    type.cpp_type_ = TypeTag<T>();
    type.instance_size_ = blob_offset;
    type.layout_ = LayoutText(type.fields_);
    // A tag (no fields) declares no layout, as the compiler records none for it.
    type.fingerprint_ = type.layout_.empty() ? 0 : IdString32::Hash(type.layout_);
    type.defaults_.resize(sizeof(T));
    std::memcpy(type.defaults_.data(), &Probe(), sizeof(T));
    absl::Status defaults = component_internal::CheckDefaultsInRange(type_name_, fields_, type.defaults_);
    if (!defaults.ok()) return defaults;
    // NOTE: the functions capture a copy of nothing but refer to the ComponentType
    // they are called for: a registry keeps each type at a stable address.
    type.make_store_ = &MakeStore;
    type.observers_ = observers_;
    return type;
  }

 private:
  static absl::StatusOr<std::unique_ptr<ComponentStore>> MakeStore(const ComponentType& type,
                                                                   const WorldServices& services) {
    // A world resource is one value in its store; no entity, index or page holds it.
    if (type.storage() == ComponentStorage::kResource) {
      return std::unique_ptr<ComponentStore>(new component_internal::ResourceStore<T>(type));
    }
    // A named store lives beside the entity manager, a paged one in the page store;
    // the world's indexer hears of the instances of both.
    const bool named = type.storage() == ComponentStorage::kNamed;
    const char* missing = named && services.entities == nullptr ? "entity manager"
                          : !named && services.pages == nullptr ? "page store"
                          : services.indexer == nullptr         ? "instance indexer"
                          : services.index == nullptr           ? "entity index"
                                                                : nullptr;
    if (missing != nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("component type \"", type.name(), "\": the world has no ", missing));
    }
    if (named) {
      return std::unique_ptr<ComponentStore>(new component_internal::NamedStore<T>(type, services));
    }
    absl::StatusOr<std::unique_ptr<PageComponentManager<T>>> manager =
        PageComponentManager<T>::Register(*services.pages, type.name());
    if (!manager.ok()) return manager.status();
    if (!type.observers().empty() && services.events == nullptr) {
      return absl::FailedPreconditionError(absl::StrCat(
          "component type \"", type.name(), "\" declares observers: the world has no events"));
    }
    services.indexer->Track(**manager);
    auto store = std::make_unique<component_internal::PageStore<T>>(type, *std::move(manager), services);
    store->SubscribeDeclaredObservers();
    return std::unique_ptr<ComponentStore>(std::move(store));
  }

  // ValueBytes: for each byte of T, whether it belongs to a member's value (1) or is
  // padding (0), or empty where the compiler cannot tell (see CheckEveryByteDeclared).
  // NOTE: GCC's __builtin_clear_padding zeroes exactly the padding bits of an object,
  // nested structs' and the tail's included: every byte set, then padding cleared,
  // leaves the value bytes set. T is trivially copyable, so writing its bytes is
  // allowed; the object is never read as a T.
  static std::vector<uint8_t> ValueBytes() {
#if defined(__has_builtin)
#if __has_builtin(__builtin_clear_padding)
    auto object = std::make_unique<T>();
    std::memset(static_cast<void*>(object.get()), 0xFF, sizeof(T));
    __builtin_clear_padding(object.get());
    std::vector<uint8_t> value(sizeof(T));
    std::memcpy(value.data(), object.get(), sizeof(T));
    for (uint8_t& byte : value) byte = byte != 0 ? 1 : 0;
    return value;
#endif
#endif
    return {};
  }

  // Probe: a default-constructed T (the defaults), on the heap: a declared struct may be
  // larger than a thread's stack.
  const T& Probe() const {
    if (probe_ == nullptr) probe_ = std::make_unique<T>();
    return *probe_;
  }

  template <typename M>
  size_t OffsetOf(M T::*member) const {
    const T& probe = Probe();
    return static_cast<size_t>(reinterpret_cast<const std::byte*>(&(probe.*member)) -
                               reinterpret_cast<const std::byte*>(&probe));
  }

  // AddMember: the member `key` of type M at `offset`: its fields (M flattened, each
  // innermost element made by `emit(path, offset)`, which adds `per_element` fields)
  // and its node in the shape; options that follow apply to all of its fields.
  template <typename M, typename Emit>
  ComponentDeclaration& AddMember(std::string key, size_t offset, size_t per_element, const Emit& emit) {
    const size_t count = component_internal::ArrayTraits<M>::kCount * per_element;
    if (fields_.size() + count > component_internal::kMaxDeclaredFields) {
      if (error_.ok()) {
        error_ = absl::InvalidArgumentError(absl::StrCat(
            "component type \"", type_name_, "\": field \"", UserText(key), "\": ", count, " more fields, past ",
            component_internal::kMaxDeclaredFields, " (each array element is one)"));
      }
      return *this;
    }
    member_begin_ = fields_.size();
    FieldShape node = Flatten<M>(key, offset, emit);
    node.key = std::move(key);
    shape_.children.push_back(std::move(node));
    return *this;
  }

  // Flatten: the shape of a member of type M at `offset` named `path`: an array node
  // per array level, emit(path, offset) for each innermost element.
  template <typename M, typename Emit>
  FieldShape Flatten(const std::string& path, size_t offset, const Emit& emit) {
    using Traits = component_internal::ArrayTraits<M>;
    if constexpr (Traits::kExtent != 0) {
      using Element = typename Traits::Element;
      FieldShape array;
      array.kind = FieldShape::Kind::kArray;
      array.path = path;
      for (size_t i = 0; i < Traits::kExtent; ++i) {
        array.children.push_back(Flatten<Element>(absl::StrCat(path, "[", i, "]"), offset + i * sizeof(Element), emit));
      }
      return array;
    } else {
      return emit(path, offset);
    }
  }

  // AddLeaf: one field named `path` at `offset`, made by init(field).
  template <typename Init>
  FieldShape AddLeaf(const std::string& path, size_t offset, const Init& init) {
    FieldShape leaf;
    leaf.kind = FieldShape::Kind::kField;
    leaf.path = path;
    if (offset > std::numeric_limits<uint32_t>::max()) {
      if (error_.ok()) {
        error_ = absl::InvalidArgumentError(absl::StrCat(
            "component type \"", type_name_, "\": field \"", UserText(path), "\": offset ",
            offset, " is past 4 GiB"));
      }
      return leaf;
    }
    FieldInfo f;
    f.name = path;
    f.offset = static_cast<uint32_t>(offset);
    init(f);
    leaf.field = static_cast<uint32_t>(fields_.size());
    fields_.push_back(std::move(f));
    return leaf;
  }

  // Splice: the fields and transients of a nested declaration, at `offset` under
  // `path`, and its shape (an object).
  template <typename S>
  FieldShape Splice(const ComponentDeclaration<S>& nested, const std::string& path, size_t offset) {
    const uint32_t base = static_cast<uint32_t>(fields_.size());
    for (const FieldInfo& inner : nested.fields_) {
      if (inner.offset + uint64_t{FieldMemorySize(inner)} > sizeof(S) && error_.ok()) {
        error_ = absl::InvalidArgumentError(absl::StrCat("component type \"", type_name_, "\": field \"",
                                                         UserText(path), ".", UserText(inner.name),
                                                         "\": outside its struct's ", sizeof(S), " bytes"));
      }
      AddLeaf(absl::StrCat(path, ".", inner.name), offset + inner.offset, [&inner](FieldInfo& f) {
        const std::string name = std::move(f.name);
        const uint32_t at = f.offset;
        f = inner;
        f.name = name;
        f.offset = at;
      });
    }
    for (const component_internal::ByteRange& t : nested.transients_) transients_.push_back({offset + t.offset, t.size});
    FieldShape object = Prefixed(nested.shape_, base, path);
    object.path = path;
    return object;
  }
  // Prefixed: `node` of a nested declaration, its fields renumbered from `base` and its
  // paths under `path`.
  static FieldShape Prefixed(const FieldShape& node, uint32_t base, const std::string& path) {
    FieldShape out;
    out.kind = node.kind;
    out.key = node.key;
    out.path = node.path.empty() ? path : absl::StrCat(path, ".", node.path);
    out.field = node.field + base;
    for (const FieldShape& child : node.children) out.children.push_back(Prefixed(child, base, path));
    return out;
  }

  template <typename Fn>
  ComponentDeclaration& Last(Fn fn) {
    if (fields_.empty() || member_begin_ >= fields_.size()) {
      if (error_.ok()) {
        error_ = absl::InvalidArgumentError(
            absl::StrCat("component type \"", type_name_, "\": an option before any field"));
      }
    } else {
      for (size_t i = member_begin_; i < fields_.size(); ++i) fn(fields_[i]);
    }
    return *this;
  }

  std::string type_name_;
  ComponentStorage storage_;
  int spawn_order_ = kDefaultSpawnOrder;
  std::vector<FieldInfo> fields_;
  // member_begin_: the first field of the member declared last (options apply from it).
  size_t member_begin_ = 0;
  FieldShape shape_;
  std::vector<component_internal::ByteRange> transients_;
  absl::Status error_;
  std::vector<ComponentType::DeclaredObserver> observers_;
  mutable std::unique_ptr<T> probe_;
};

}  // namespace strata

#endif  // STRATA_COMPONENT_DECLARE_H_
