#include "index/property_system.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace strata {

absl::string_view PropertyTypeName(PropertyType type) {
  switch (type) {
    case PropertyType::kBool:
      return "bool";
    case PropertyType::kInt32:
      return "int32";
    case PropertyType::kFloat:
      return "float";
    case PropertyType::kVector3:
      return "vector3";
    case PropertyType::kVector4:
      return "vector4";
    case PropertyType::kQuaternion:
      return "quaternion";
    case PropertyType::kMatrix4x4:
      return "matrix4x4";
    case PropertyType::kString:
      return "string";
    case PropertyType::kUint32:
      return "uint32";
    case PropertyType::kName:
      return "name";
    case PropertyType::kDouble:
      return "double";
    case PropertyType::kInt64:
      return "int64";
    case PropertyType::kUint64:
      return "uint64";
    case PropertyType::kEntity:
      return "entity";
  }
  return "unknown";
}

absl::Status PropertySystem::Describe(ComponentManager* manager,
                                      std::vector<PropertyDescriptor> properties) {
  if (manager == nullptr) {
    return absl::InvalidArgumentError("Describe: null component manager");
  }
  if (tables_.contains(manager)) {
    return absl::AlreadyExistsError(absl::StrCat("Describe: component manager '",
                                                 manager->type_name(),
                                                 "' is already described"));
  }
  Table table;
  for (uint32_t i = 0; i < properties.size(); ++i) {
    const PropertyDescriptor& p = properties[i];
    if (p.name.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Describe: property #", i, " of '", manager->type_name(), "' has no name"));
    }
    if (!p.get) {
      return absl::InvalidArgumentError(absl::StrCat("Describe: property '", p.name,
                                                     "' of '", manager->type_name(),
                                                     "' has no getter"));
    }
    if (!table.by_name.try_emplace(IdString32(p.name), i).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("Describe: property '", p.name, "' of '", manager->type_name(),
                       "' is described twice (or its name hash collides)"));
    }
  }
  table.properties = std::move(properties);
  tables_.emplace(manager, std::move(table));
  return absl::OkStatus();
}

const PropertyDescriptor* PropertySystem::FindInTable(const Table& table,
                                                      absl::string_view property) {
  auto it = table.by_name.find(IdString32(property));
  if (it == table.by_name.end()) return nullptr;
  const PropertyDescriptor& d = table.properties[it->second];
  // The name hash matched; the name itself must too.
  return d.name == property ? &d : nullptr;
}

const PropertyDescriptor* PropertySystem::FindProperty(const ComponentManager* manager,
                                                       absl::string_view property) const {
  auto table = tables_.find(manager);
  if (table == tables_.end()) return nullptr;
  return FindInTable(table->second, property);
}

absl::StatusOr<PropertySystem::Resolved> PropertySystem::Resolve(
    Entity entity, absl::string_view component, absl::string_view property) const {
  if (!index_->Contains(entity)) {
    return absl::NotFoundError(
        absl::StrCat("no such entity: ", entity.DebugString(), " has no components"));
  }
  const IdString32 component_id(component);
  ComponentManager* manager = index_->FindComponentManager(entity, component_id);
  if (manager == nullptr) {
    return absl::NotFoundError(absl::StrCat(entity.DebugString(),
                                            " has no component named '", component, "'"));
  }
  const Instance instance = manager->Lookup(entity, component_id);
  if (!instance.is_valid()) {
    return absl::NotFoundError(absl::StrCat(
        "component '", component, "' of ", entity.DebugString(), " is indexed in '",
        manager->type_name(), "' but that manager has no such instance"));
  }
  auto table = tables_.find(manager);
  if (table == tables_.end()) {
    return absl::NotFoundError(absl::StrCat("component '", component, "' of ",
                                            entity.DebugString(), " ('",
                                            manager->type_name(),
                                            "') has no described properties"));
  }
  const PropertyDescriptor* descriptor = FindInTable(table->second, property);
  if (descriptor == nullptr) {
    return absl::NotFoundError(absl::StrCat("component '", component, "' of ",
                                            entity.DebugString(), " ('",
                                            manager->type_name(),
                                            "') has no property named '", property, "'"));
  }
  return Resolved{instance, descriptor};
}

absl::StatusOr<PropertyValue> PropertySystem::Get(Entity entity,
                                                  absl::string_view component,
                                                  absl::string_view property) const {
  STRATA_ASSIGN_OR_RETURN(const Resolved resolved, Resolve(entity, component, property));
  return resolved.descriptor->get(resolved.instance);
}

absl::Status PropertySystem::Set(Entity entity, absl::string_view component,
                                 absl::string_view property, const PropertyValue& value) {
  STRATA_ASSIGN_OR_RETURN(const Resolved resolved, Resolve(entity, component, property));
  const PropertyDescriptor& d = *resolved.descriptor;
  if (TypeOf(value) != d.type) {
    return absl::InvalidArgumentError(absl::StrCat(
        "wrong type: property '", property, "' of component '", component, "' of ",
        entity.DebugString(), " is ", PropertyTypeName(d.type), ", not ",
        PropertyTypeName(TypeOf(value))));
  }
  if (!d.set) {
    return absl::FailedPreconditionError(absl::StrCat("property '", property,
                                                      "' of component '", component,
                                                      "' of ", entity.DebugString(),
                                                      " is read-only"));
  }
  return d.set(resolved.instance, value);
}

}  // namespace strata
