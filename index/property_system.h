// PropertySystem: get and set a component's properties by (entity, component name,
// property name), for visual scripting and tools ("Rebuilding the Entity Index":
// "Property System and Entity Index").
//
// A component manager opts in by describing its properties once: name, type, a getter
// and (unless read-only) a setter that work on one of its Instances. The system finds
// the manager through the EntityIndex, the instance through the manager's Lookup with
// InstanceId = IdString32(component name), and the property in the description.
//
//   PropertySystem properties(&entity_index);
//   properties.Describe(&render_data, {
//       PropertyDescriptor::Make<float>("density",
//           [&](Instance i) { return render_data.density(i); },
//           [&](Instance i, float v) { render_data.set_density(i, v); })});
//   absl::Status s = properties.Set(e, "Fog", "density", 0.5f);
//   absl::StatusOr<PropertyValue> v = properties.Get(e, "Fog", "density");  // 0.5f
//   properties.Get(e, "Fog", "colour");  // NotFound: ... has no property 'colour'
//
// Errors (each with its own message naming the entity, component and property):
// NotFound for no such entity, no component of that name, a component the manager no
// longer has, a manager that describes no properties, no property of that name;
// InvalidArgument for a value of the wrong type; FailedPrecondition for a read-only
// property. Thread-safety: none.
//
// Lifetimes: the index must outlive the system. The system keeps each described
// manager's pointer and its descriptors (whose getters and setters usually capture the
// manager): before destroying a described manager, call Forget(manager) (and
// EntityIndex::RemoveManager); otherwise a Get or Set reaching it through a stale
// index entry calls into a destroyed manager, and a new manager at the same address
// would find the old description (Describe: AlreadyExists).
#ifndef STRATA_INDEX_PROPERTY_SYSTEM_H_
#define STRATA_INDEX_PROPERTY_SYSTEM_H_

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/check.h"
#include "base/id_string.h"
#include "base/matrix.h"
#include "entity/entity.h"
#include "index/component_manager.h"
#include "index/entity_index.h"

namespace strata {

// NOTE: the value types (Vector3, Vector4, Quaternion, Matrix4x4) are the transform
// package's math types from //base:matrix, a leaf library with no other Strata
// dependency, so a property holds exactly what the transform graph computes with and
// no conversion or second definition of strata::Vector3 exists anywhere.

// PropertyType: the alternatives of PropertyValue, in the same order.
enum class PropertyType : uint8_t {
  kBool,
  kInt32,
  kFloat,
  kVector3,
  kVector4,
  kQuaternion,
  kMatrix4x4,
  kString,
  kUint32,
  kName,
  kEntity,
  kDouble,
  kInt64,
  kUint64,
};

// PropertyValue: a typed property value; index() is the PropertyType.
using PropertyValue =
    std::variant<bool, int32_t, float, Vector3, Vector4, Quaternion, Matrix4x4,
                 std::string, uint32_t, IdString32, Entity, double, int64_t, uint64_t>;

namespace index_internal {
template <typename T, typename... Ts>
constexpr size_t AlternativeIndex(const std::variant<Ts...>*) {
  constexpr bool kMatches[] = {std::is_same_v<T, Ts>...};
  for (size_t i = 0; i < sizeof...(Ts); ++i) {
    if (kMatches[i]) return i;
  }
  return sizeof...(Ts);
}
}  // namespace index_internal

// PropertyTypeOf<T>: the PropertyType of alternative T (compile error for others).
template <typename T>
constexpr PropertyType PropertyTypeOf() {
  constexpr size_t kIndex =
      index_internal::AlternativeIndex<T>(static_cast<const PropertyValue*>(nullptr));
  static_assert(kIndex < std::variant_size_v<PropertyValue>, "not a PropertyValue type");
  return static_cast<PropertyType>(kIndex);
}

// TypeOf: the type a value holds.
inline PropertyType TypeOf(const PropertyValue& value) {
  return static_cast<PropertyType>(value.index());
}
// PropertyTypeName: "bool", "int32", "float", "vector3", "vector4", "quaternion", "matrix4x4",
// "string", "uint32", "name" (an IdString32), "entity" (an Entity handle), "double",
// "int64", "uint64".
absl::string_view PropertyTypeName(PropertyType type);

// PropertyDescriptor: one property of a manager's components. The getter and setter
// receive a valid Instance of the described manager; the system checks the value's
// type before calling the setter, which may still reject the value with a Status.
struct PropertyDescriptor {
  using Getter = std::function<PropertyValue(Instance)>;
  using Setter = std::function<absl::Status(Instance, const PropertyValue&)>;

  std::string name;
  PropertyType type = PropertyType::kBool;
  Getter get;
  Setter set;  // empty: read-only

  // Make<T>: a descriptor from typed accessors; `set` returns void or absl::Status.
  template <typename T, typename Get>
  static PropertyDescriptor Make(std::string name, Get get) {
    return PropertyDescriptor{std::move(name), PropertyTypeOf<T>(),
                              [get](Instance i) { return PropertyValue(T(get(i))); },
                              nullptr};
  }
  template <typename T, typename Get, typename Set>
  static PropertyDescriptor Make(std::string name, Get get, Set set) {
    PropertyDescriptor d = Make<T>(std::move(name), std::move(get));
    d.set = [set](Instance i, const PropertyValue& v) -> absl::Status {
      if constexpr (std::is_same_v<decltype(set(i, std::get<T>(v))), void>) {
        set(i, std::get<T>(v));
        return absl::OkStatus();
      } else {
        return set(i, std::get<T>(v));
      }
    };
    return d;
  }
};

class PropertySystem {
 public:
  // PropertySystem(index): resolves component names through `index` (not owned, must
  // outlive the system). Aborts, in every build mode, if `index` is null.
  explicit PropertySystem(const EntityIndex* index) : index_(index) {
    STRATA_CHECK(index != nullptr, "PropertySystem: the index is null");
  }

  // Describe: the properties of `manager`'s components, once per manager.
  // InvalidArgument for a null manager, an empty or duplicate property name (or one
  // whose IdString32 collides with another) or a missing getter; AlreadyExists if
  // `manager` was described before.
  absl::Status Describe(ComponentManager* manager,
                        std::vector<PropertyDescriptor> properties);

  // Get: the value of `property` of `entity`'s component `component`. O(chain depth)
  // plus the manager's Lookup and two hash lookups.
  absl::StatusOr<PropertyValue> Get(Entity entity, absl::string_view component,
                                    absl::string_view property) const;
  // Set: assigns `value` (whose type must match the property's) through the setter.
  absl::Status Set(Entity entity, absl::string_view component, absl::string_view property,
                   const PropertyValue& value);

  // Forget: drops `manager`'s description, for a manager about to be destroyed (see
  // Lifetimes above); false if it had none. O(its properties).
  bool Forget(const ComponentManager* manager) { return tables_.erase(manager) != 0; }

  // FindProperty: the descriptor of `property` of `manager`, or nullptr.
  const PropertyDescriptor* FindProperty(const ComponentManager* manager,
                                         absl::string_view property) const;

 private:
  struct Resolved {
    Instance instance;
    const PropertyDescriptor* descriptor;
  };
  absl::StatusOr<Resolved> Resolve(Entity entity, absl::string_view component,
                                   absl::string_view property) const;

  struct Table {
    std::vector<PropertyDescriptor> properties;
    absl::flat_hash_map<IdString32, uint32_t> by_name;
  };
  // The descriptor of `property` in `table`, or nullptr.
  static const PropertyDescriptor* FindInTable(const Table& table,
                                               absl::string_view property);
  const EntityIndex* index_;
  absl::flat_hash_map<const ComponentManager*, Table> tables_;
};

}  // namespace strata

#endif  // STRATA_INDEX_PROPERTY_SYSTEM_H_
