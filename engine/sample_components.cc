#include "engine/sample_components.h"

#include <variant>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "component/declare.h"

namespace strata {

absl::Status RegisterSampleComponents(ComponentRegistry& registry) {
  STRATA_RETURN_IF_ERROR(registry.Add(ComponentDeclaration<RenderData>(std::string(kRenderDataTypeName),
                                                                       ComponentStorage::kNamed)
                                          .Field("density", &RenderData::density).Min(0)
                                          .Color("color", &RenderData::color)
                                          .SpawnOrder(10)
                                          .Build()));
  STRATA_RETURN_IF_ERROR(registry.Add(ComponentDeclaration<Sprite>(std::string(kSpriteTypeName))
                                          .Field("position", &Sprite::position)
                                          .Field("size", &Sprite::size).Min(0)
                                          .Color("color", &Sprite::color)
                                          .SpawnOrder(20)
                                          .Build()));
  STRATA_RETURN_IF_ERROR(registry.Add(ComponentDeclaration<Spark>(std::string(kSparkTypeName))
                                          .Field("velocity", &Spark::velocity)
                                          .Field("lifetime", &Spark::lifetime).Min(0)
                                          .Field("max_lifetime", &Spark::max_lifetime).Min(0).ReadOnly()
                                          .SpawnOrder(30)
                                          .Build()));
  STRATA_RETURN_IF_ERROR(registry.Add(ComponentDeclaration<SparkEmitter>(std::string(kSparkEmitterTypeName))
                                          .Field("speed", &SparkEmitter::speed).Min(0)
                                          .Field("spread", &SparkEmitter::spread).Min(0)
                                          .Field("lifetime", &SparkEmitter::lifetime).Min(0)
                                          .Color("color", &SparkEmitter::color)
                                          .SpawnOrder(40)
                                          .Build()));
  STRATA_RETURN_IF_ERROR(registry.Add(ComponentDeclaration<Smoke>(std::string(kSmokeTypeName))
                                          .Field("origin", &Smoke::origin)
                                          .Field("velocity", &Smoke::velocity)
                                          .Field("age", &Smoke::age).Min(0)
                                          .Field("lifetime", &Smoke::lifetime).Min(0)
                                          .SpawnOrder(50)
                                          .Build()));
  STRATA_RETURN_IF_ERROR(registry.Add(ComponentDeclaration<Puff>(std::string(kPuffTypeName))
                                          .Field("position", &Puff::position)
                                          .Field("size", &Puff::size).Min(0)
                                          .Field("alpha", &Puff::alpha)
                                          .SpawnOrder(60)
                                          .Build()));
  STRATA_RETURN_IF_ERROR(registry.Add(ComponentDeclaration<FrameClock>(std::string(kFrameClockTypeName),
                                                                       ComponentStorage::kResource)
                                          .Field("dt", &FrameClock::dt).Min(0)
                                          .Field("seconds", &FrameClock::seconds)
                                          .Field("frame", &FrameClock::frame)
                                          .Build()));
  return registry.Add(ComponentDeclaration<SparkRules>(std::string(kSparkRulesTypeName),
                                                       ComponentStorage::kResource)
                          .Field("gravity", &SparkRules::gravity)
                          .Build());
}

const ComponentRegistry& SampleRegistry() {
  static const ComponentRegistry* registry = [] {
    auto* r = new ComponentRegistry();
    // Fixed declarations with distinct names: checked by the tests, cannot fail.
    RegisterSampleComponents(*r).IgnoreError();
    return r;
  }();
  return *registry;
}

absl::StatusOr<std::unique_ptr<DemoWorld>> DemoWorld::Create(const World::Options& options) {
  std::unique_ptr<DemoWorld> demo(new DemoWorld());
  STRATA_ASSIGN_OR_RETURN(demo->world_, World::Create(SampleRegistry(), options));
  // Each sample struct is declared once in SampleRegistry(): found by type.
  demo->sprites_ = &demo->world_->Pages<Sprite>();
  demo->sparks_ = &demo->world_->Pages<Spark>();
  demo->emitters_ = &demo->world_->Pages<SparkEmitter>();
  demo->render_data_ = &demo->world_->Named<RenderData>();
  demo->smoke_ = &demo->world_->Pages<Smoke>();
  demo->puffs_ = &demo->world_->Pages<Puff>();
  return demo;
}

absl::Status DemoWorld::SetFloatProperty(Entity entity, absl::string_view component,
                                         absl::string_view property, float value) {
  return world_->properties().Set(entity, component, property, PropertyValue(value));
}

absl::StatusOr<float> DemoWorld::GetFloatProperty(Entity entity, absl::string_view component,
                                                  absl::string_view property) const {
  absl::StatusOr<PropertyValue> value = world_->properties().Get(entity, component, property);
  if (!value.ok()) return value.status();
  if (const float* f = std::get_if<float>(&*value)) return *f;
  return absl::InvalidArgumentError(absl::StrCat("property '", property, "' of component '", component,
                                                 "' is a ", PropertyTypeName(TypeOf(*value)),
                                                 ", not a float"));
}

}  // namespace strata
