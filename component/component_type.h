// ComponentType: everything Strata knows of one component type, in one value: its
// name, spawn order, instance layout in resource blobs (and that layout's
// fingerprint), how level JSON compiles into it, how a blob instance exports back to
// JSON, and how a World stores it (a ComponentStore made per world).
//
// Games do not build these by hand: ComponentDeclaration<T> (component/declare.h)
// derives one from a struct and its fields. A type with its own storage and codec (the
// transform, component/transform_type.h) fills ComponentType::Custom and plugs in
// through the same door.
//
// ComponentStore: one world's live instances of one type. The World creates one per
// registered type and reaches every type through this interface only: spawn, save,
// count, memory, properties.
#ifndef STRATA_COMPONENT_COMPONENT_TYPE_H_
#define STRATA_COMPONENT_COMPONENT_TYPE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/id_string.h"
#include "component/field.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "index/component_manager.h"
#include "index/entity_index.h"
#include "index/property_system.h"
#include "iteration/component_events.h"
#include "iteration/entity_pages.h"
#include "nlohmann/json_fwd.hpp"
#include "resource/entity_compiler.h"
#include "resource/entity_spawner.h"
#include "resource/format.h"

namespace strata {

class InstanceIndexer;

// TypeTag<M>(): a distinct address per C++ type M.
template <typename M>
const void* TypeTag() {
  static const char tag = 0;
  return &tag;
}

// WorldServices: the subsystems of one world a store may use (none owned). Beyond
// the four every world has, a world lends what else it composes (the transform graph
// and its manager, a game's own subsystems) by C++ type: a custom store asks
// `services.Find<TransformComponent>()`. WorldServices names no component type.
struct WorldServices {
  EntityManager* entities = nullptr;
  EntityPages* pages = nullptr;
  EntityIndex* index = nullptr;
  // indexer: keeps `index` in step with every store (component/instance_indexer.h): a
  // store attaches its manager there, a page-stored type tracks its component id.
  InstanceIndexer* indexer = nullptr;
  // events: the world's observers (iteration/component_events.h); a page-stored type
  // subscribes its declared observers there.
  ComponentEvents* events = nullptr;

  // Lend / Find: a subsystem of type T lent by the world, or nullptr.
  template <typename T>
  void Lend(T* subsystem) {
    lent_.emplace_back(TypeTag<T>(), subsystem);
  }
  template <typename T>
  T* Find() const {
    for (const auto& [tag, subsystem] : lent_) {
      if (tag == TypeTag<T>()) return static_cast<T*>(subsystem);
    }
    return nullptr;
  }

 private:
  std::vector<std::pair<const void*, void*>> lent_;
};

// SaveContext: what a store needs to write its instances of the saved entities.
struct SaveContext {
  // entities: the saved entities; entity k of the blob is entities[k].
  absl::Span<const Entity> entities;
  // number_of: the blob number of a saved entity; kNoEntityRef for one that is not
  // saved (the world records an error if it is alive: a reference would dangle).
  std::function<uint32_t(Entity)> number_of;
  // reference: the blob number for a reference to `target` held in field `field` of
  // `holder`'s instance of `component`: number_of(target), but a live target that is
  // not saved is reported by name (holder, component and field) in the save's error,
  // or, for World::SaveAll, saved too. Stores of declared types call it for every
  // entity field; nullptr: number_of is used.
  std::function<uint32_t(Entity target, Entity holder, absl::string_view component,
                         absl::string_view field)>
      reference;
  // name_of: the InstanceId under which `entity`'s instance of `manager` is indexed
  // (its instance name), or nullopt if the entity index does not know it.
  std::function<std::optional<IdString32>(Entity, const ComponentManager*)> name_of;
  // resource_entity: the blob number of the entity that carries the world's resources
  // (kResource types: World::SaveAll), or kNoEntityRef when they are not saved. A
  // resource whose fields all hold their defaults is not written.
  uint32_t resource_entity = kNoEntityRef;
};

// FieldWrites: values a live reload (World::Reload) writes into existing instances,
// handed to ComponentStore::Write.
struct FieldWrites {
  // Instance i is `entities[i]`'s instance named `names[i]`.
  absl::Span<const Entity> entities;
  absl::Span<const uint32_t> names;
  // objects: one value per instance, decoded as Spawn decodes (DecodeInstances): the
  // declared struct (cpp_size() bytes each) for a declared type, the blob instance
  // (instance_size() bytes each) for a custom one.
  absl::Span<const std::byte> objects;
  // masks: mask_words words per instance; bit f of instance i: write field f (the
  // order of fields()); a custom type has one field, the whole instance (bit 0).
  absl::Span<const uint32_t> masks;
  size_t mask_words = 1;

  bool Writes(size_t i, size_t field) const {
    return (masks[i * mask_words + field / 32] >> (field % 32) & 1) != 0;
  }
};

class ComponentType;

// FieldShape: how a declared type's fields nest in level JSON. Fields are flat, in
// declaration order, named by their path ("hp", "stats.armor", "slots[2].count"); the
// shape gives them back their JSON form: the component is an object of its members, a
// nested declared struct an object, an array member an array, a field a leaf.
struct FieldShape {
  enum class Kind : uint8_t { kObject, kArray, kField };
  Kind kind = Kind::kObject;
  // key: the member's name in its parent object (empty for array elements and the
  // root). path: the member's path, for messages ("stats", "slots[2]"; empty at the root).
  std::string key;
  std::string path;
  // field: kField's index in ComponentType::fields().
  uint32_t field = 0;
  // children: an object's members in declaration order, an array's elements.
  std::vector<FieldShape> children;
};

namespace component_internal {
// The compile function of a declared type: checks keys, then compiles every field.
absl::Status CompileDeclared(const ComponentType& type, const nlohmann::json& config,
                             ComponentDataWriter& out);
// The export function of a declared type: every field by name.
absl::StatusOr<nlohmann::json> ExportDeclared(const ComponentType& type,
                                              absl::Span<const std::byte> instance,
                                              const FieldTextLookup& lookup);
// Declared-type checks: names, sizes, overlaps, bounds that are numbers (not NaN), at
// most kMaxDeclaredFields fields. InvalidArgument naming the field. O(n log n).
absl::Status CheckDeclaredFields(absl::string_view type_name, absl::Span<const FieldInfo> fields,
                                 size_t struct_size);
// kMaxDeclaredFields: the most fields a type declares (each array element counts).
inline constexpr size_t kMaxDeclaredFields = 4096;
// The member names of `shape`'s objects hold none of '.', '[', ']' (a field's path
// uses them). InvalidArgument naming the member.
absl::Status CheckShape(absl::string_view type_name, const FieldShape& shape);
// ByteRange: bytes [offset, offset + size) of a struct.
struct ByteRange {
  size_t offset = 0;
  size_t size = 0;
};
// Every byte of a struct's value is a field's or a transient member's: `value_bytes`
// (one per byte of the struct, 1 for a value byte, 0 for padding) less the fields'
// and transients' bytes must be empty. InvalidArgument naming the first uncovered
// byte range, or a transient range outside the struct. With no `value_bytes` (a
// compiler without __builtin_clear_padding) a gap narrower than `alignment`, the
// struct's, passes as padding: a weaker check. O(struct_size).
absl::Status CheckEveryByteDeclared(absl::string_view type_name, absl::Span<const FieldInfo> fields,
                                    absl::Span<const ByteRange> transients, size_t struct_size,
                                    absl::Span<const uint8_t> value_bytes, size_t alignment);
// Every ranged field's default (in `defaults`, the struct's bytes) lies in its range:
// a default the compiler would refuse to write is a declaration error, not a level's.
absl::Status CheckDefaultsInRange(absl::string_view type_name, absl::Span<const FieldInfo> fields,
                                  absl::Span<const std::byte> defaults);
}  // namespace component_internal

// ComponentStore: the live instances of one component type in one world.
class ComponentStore {
 public:
  virtual ~ComponentStore() = default;

  // manager: the store seen by the entity index and the property system.
  virtual ComponentManager& manager() = 0;
  // Spawn: creates the batch's instances and registers them in the entity index under
  // their names. All or nothing is not required: on error the spawner destroys the
  // spawn's entities, and the store drops what it created through its destroy listener.
  virtual absl::Status Spawn(const ComponentSpawnBatch& batch) = 0;
  // Save: the instances of context.entities, in blob order (entity, then instance
  // order within the entity), into `out` (type, stride, fingerprint already set).
  virtual absl::Status Save(const SaveContext& context, ComponentTypeContents* out) = 0;
  // Write: writes the fields `writes` selects into those of its instances that exist
  // (an instance the world no longer has is passed over) and returns how many it
  // wrote. Each written instance is marked changed and, for a page-stored type, is one
  // OnSet event, as a property set is. Writes nothing and returns Unimplemented where
  // writable() is false (the default: a custom type that does not support reloads).
  virtual absl::StatusOr<size_t> Write(const FieldWrites& writes);
  // writable: whether Write is supported.
  virtual bool writable() const { return false; }
  // CollectEntities: appends every entity with an instance here (in any order).
  virtual void CollectEntities(std::vector<Entity>* out) const = 0;
  // CountOf: instances `entity` has here. size: all instances. MemoryUsage: bytes held.
  virtual size_t CountOf(Entity entity) const = 0;
  virtual size_t size() const = 0;
  virtual size_t MemoryUsage() const = 0;
  // DescribeProperties: describes the store's properties in `properties`.
  virtual absl::Status DescribeProperties(PropertySystem& properties) = 0;
  // typed: the typed manager behind the store (PageComponentManager<T>*,
  // NamedComponentManager<T>*, TransformComponentManager*), and a tag of its C++ type,
  // for World::Store<T> to check before casting.
  virtual void* typed() = 0;
  virtual const void* type_tag() const = 0;
};

// WorldResourceStore: the store of a kResource type in one world: its one instance
// (defaults until set), its fields as property descriptors (called with any Instance;
// World::GetResourceProperty), and the entities whose instances its spawns took.
class WorldResourceStore : public ComponentStore {
 public:
  virtual const ComponentType& type() const = 0;
  // value: the instance, type().cpp_size() bytes of the declared struct.
  virtual std::byte* value() = 0;
  virtual absl::Span<const PropertyDescriptor> properties() const = 0;
  // TakeCarriers: the entities whose instance a Spawn took since the last call.
  virtual std::vector<Entity> TakeCarriers() = 0;
  // AtDefaults: every field holds the declaration's default (Save then writes nothing:
  // a fresh world has it already). O(fields).
  virtual bool AtDefaults() const = 0;
};

// ExportFunction: the level JSON fields of one instance (native blob bytes), without
// "type" and "name", which the caller adds.
using ExportFunction = std::function<absl::StatusOr<nlohmann::json>(
    absl::Span<const std::byte> instance, const FieldTextLookup& lookup)>;
// StoreFactory: makes a world's store of the type.
using StoreFactory = std::function<absl::StatusOr<std::unique_ptr<ComponentStore>>(
    const ComponentType& type, const WorldServices& services)>;

// How a declared type is stored in a world.
enum class ComponentStorage : uint8_t {
  kPages,  // iteration/entity_pages.h: one per entity, named after the type, queryable
  kNamed,  // several per entity, each under its own instance name ("Fog", "Vignette")
  // kResource: a world resource (a singleton): one instance per World, held by the
  // World and reached by type (World::Resource<T>); no entity has it. In a resource
  // blob at most one entity carries it (a level may set it there; World::SaveAll
  // writes it on one entity of its own), and a World's spawn takes the value.
  kResource,
  kCustom, // the type's own store (the transform)
};

class ComponentType {
 public:
  // Custom: a type with its own codec and store.
  struct Custom {
    std::string name;
    int spawn_order = 0;
    uint32_t instance_size = 0;
    uint32_t max_per_entity = 0;
    std::string layout;
    CompileFunction compile;
    ExportFunction export_instance;
    StoreFactory make_store;
  };
  // FromCustom: InvalidArgument for an empty name or function.
  static absl::StatusOr<ComponentType> FromCustom(Custom custom);

  const std::string& name() const { return name_; }
  IdString32 id() const { return id_; }
  int spawn_order() const { return spawn_order_; }
  ComponentStorage storage() const { return storage_; }
  // instance_size: bytes per instance in a blob (the packed fields for declared types).
  uint32_t instance_size() const { return instance_size_; }
  // max_per_entity: 1 for page-stored types and the transform, 0 (any) for named ones.
  uint32_t max_per_entity() const { return max_per_entity_; }
  // layout: "name:type:bytes;..." of the blob instance; fingerprint: its XXH32.
  const std::string& layout() const { return layout_; }
  uint32_t fingerprint() const { return fingerprint_; }
  // fields: the declared fields (empty for custom types), flattened: a nested struct's
  // and an array's are one per leaf ("stats.hp", "slots[2]").
  absl::Span<const FieldInfo> fields() const { return fields_; }
  // shape: how the fields nest in level JSON (an object with no members for custom
  // types).
  const FieldShape& shape() const { return shape_; }
  // defaults: the bytes of a default-constructed struct (declared types).
  absl::Span<const std::byte> defaults() const { return defaults_; }
  // cpp_size: sizeof the declared struct (0 for custom types).
  size_t cpp_size() const { return defaults_.size(); }
  // cpp_type: TypeTag<T>() of the declared struct T (nullptr for custom types), so a
  // World finds a type's store from its C++ type (World::Pages<T>()).
  const void* cpp_type() const { return cpp_type_; }
  // DeclaredObserver: an observer the declaration gave (ComponentDeclaration::OnAdd and
  // its siblings); each World's store of the type subscribes it.
  struct DeclaredObserver {
    ComponentEvents::Event event;
    ComponentEvents::Observer observer;
  };
  absl::Span<const DeclaredObserver> observers() const { return observers_; }
  // identity_layout: the blob instance is the struct's bytes (fields packed in order,
  // covering the struct, none a bool or an entity), so conversions are memcpy.
  bool identity_layout() const { return identity_layout_; }

  // RegisterCompiler: registers this type's compile function in `compiler`. The
  // function refers to this ComponentType, which must outlive the compiler (a
  // ComponentRegistry keeps its types at stable addresses).
  absl::Status RegisterCompiler(EntityCompiler& compiler) const;
  // Compile: one component's JSON into instance bytes (what RegisterCompiler registers).
  absl::Status Compile(const nlohmann::json& config, ComponentDataWriter& out) const;
  // Export: one instance's fields as level JSON.
  absl::StatusOr<nlohmann::json> Export(absl::Span<const std::byte> instance,
                                        const FieldTextLookup& lookup) const;
  // MakeStore: this type's store in a world. FailedPrecondition when `services` lack
  // what the store needs: for a declared type the entity index, and the page store
  // (kPages) or the entity manager (kNamed); for the transform its component, manager
  // and the index. Errors of registering in the page store (kPages).
  absl::StatusOr<std::unique_ptr<ComponentStore>> MakeStore(const WorldServices& services) const {
    return make_store_(*this, services);
  }

 private:
  template <typename T>
  friend class ComponentDeclaration;
  ComponentType() = default;

  std::string name_;
  IdString32 id_;
  int spawn_order_ = 0;
  ComponentStorage storage_ = ComponentStorage::kCustom;
  uint32_t instance_size_ = 0;
  uint32_t max_per_entity_ = 0;
  std::string layout_;
  uint32_t fingerprint_ = 0;
  std::vector<FieldInfo> fields_;
  FieldShape shape_;
  std::vector<std::byte> defaults_;
  bool identity_layout_ = false;
  const void* cpp_type_ = nullptr;
  std::vector<DeclaredObserver> observers_;
  CompileFunction compile_;
  ExportFunction export_;
  StoreFactory make_store_;
};

// LayoutText: the layout description of `fields` ("hp:f32:4;attacker:entity:4").
std::string LayoutText(absl::Span<const FieldInfo> fields);

// SpawnPlan: how a blob section's instances become structs of a declared type.
struct SpawnPlan {
  // identity: the blob instance is the struct's bytes (memcpy in place).
  bool identity = false;
  // For each declared field, its offset in the blob instance, or -1: not in the blob
  // (filled with its default: a field added since the blob was written).
  std::vector<int64_t> blob_offset;
  // For each declared field, how its blob bytes are read (PlanFieldMigration); empty:
  // every field as declared.
  std::vector<FieldMigration> migrations;
};

// PlanSpawn: compares the batch's declared layout with `type`'s. FailedPrecondition,
// naming the type and the first differing field, when the blob's fields cannot be
// read as this declaration: a field of another type, a field the declaration lacks
// (its data would be lost), an enum value the declaration no longer names held by an
// instance (naming it), no declared layout at all, or a stride that disagrees. An
// enum whose values were added or renumbered is read by name.
absl::StatusOr<SpawnPlan> PlanSpawn(const ComponentType& type, const ComponentSpawnBatch& batch);

// DecodeInstances: the batch's instances as `type` structs, one after another in
// `out` (resized to num_instances * cpp_size), following `plan`, which PlanSpawn made
// for this type and batch: a plan of another type, or a batch whose data is shorter
// than num_instances * instance_stride or whose stride the plan's fields do not fit,
// is a programmer error (STRATA_CHECK; O(fields) once per batch). Errors of
// DecodeField (DataLoss: an entity number out of range, a bool not 0 or 1) name the
// instance.
absl::Status DecodeInstances(const ComponentType& type, const SpawnPlan& plan,
                             const ComponentSpawnBatch& batch, std::vector<std::byte>* out);

// EncodeInstance: `object` (a `type` struct) as blob bytes appended to `out`.
void EncodeInstance(const ComponentType& type, const std::byte* object,
                    const std::function<uint32_t(Entity)>& number_of, std::vector<std::byte>* out);
// EncodeInstance (saving): the same for `holder`'s instance, its entity fields
// numbered through context.reference (context.number_of if that is empty).
void EncodeInstance(const ComponentType& type, const std::byte* object, Entity holder,
                    const SaveContext& context, std::vector<std::byte>* out);

// RegisterSpawnedByName: registers owners[i] under names[i] in `index` for `manager`,
// one batch call per distinct name. InvalidArgument (nothing registered) when owners
// and names differ in size; errors of EntityIndex::AddInstance.
absl::Status RegisterSpawnedByName(EntityIndex& index, ComponentManager* manager,
                                   absl::Span<const Entity> owners,
                                   absl::Span<const uint32_t> names);

// RegisterSpawnedByName (batch): the same for every instance of `batch`, owners taken
// from batch.entities in place when batch.in_entity_order (no copy).
absl::Status RegisterSpawnedByName(EntityIndex& index, ComponentManager* manager,
                                   const ComponentSpawnBatch& batch);

// SpawnOwners: the entity of every instance of `batch`.
std::vector<Entity> SpawnOwners(const ComponentSpawnBatch& batch);

}  // namespace strata

#endif  // STRATA_COMPONENT_COMPONENT_TYPE_H_
