// World, the half that talks to the property system. It must not include
// transform/matrix.h or transform/transform_component.h (see world.h's NOTE).
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "engine/world.h"
#include "index/property_system.h"

namespace strata {

void World::PropertiesDeleter::operator()(PropertySystem* p) const { delete p; }

std::unique_ptr<PropertySystem, World::PropertiesDeleter> World::MakeProperties(World& world) {
  std::unique_ptr<PropertySystem, PropertiesDeleter> properties(
      new PropertySystem(world.index_.get()));
  // Each manager is described once, with distinct property names, so these cannot fail.
  DescribeTransformProperties(*properties, *world.transform_manager_).IgnoreError();
  properties->Describe(world.render_data_.get(), world.render_data_->DescribeProperties())
      .IgnoreError();
  properties->Describe(world.sprites_.get(), DescribeSpriteProperties(*world.sprites_))
      .IgnoreError();
  properties->Describe(world.sparks_.get(), DescribeSparkProperties(*world.sparks_))
      .IgnoreError();
  properties->Describe(world.emitters_.get(), DescribeSparkEmitterProperties(*world.emitters_))
      .IgnoreError();
  return properties;
}

absl::Status World::SetFloatProperty(Entity entity, absl::string_view component,
                                     absl::string_view property, float value) {
  return properties_->Set(entity, component, property, PropertyValue(value));
}

absl::StatusOr<float> World::GetFloatProperty(Entity entity, absl::string_view component,
                                              absl::string_view property) const {
  absl::StatusOr<PropertyValue> value = properties_->Get(entity, component, property);
  if (!value.ok()) return value.status();
  if (const float* f = std::get_if<float>(&*value)) return *f;
  return absl::InvalidArgumentError(absl::StrCat(
      "property '", property, "' of component '", component, "' is a ",
      PropertyTypeName(TypeOf(*value)), ", not a float"));
}

}  // namespace strata
