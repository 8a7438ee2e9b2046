// The demo's sample components, declared exactly as a game declares its own
// (component/declare.h), and DemoWorld, a World of them with typed access for the
// demo's systems.
//
//   sprite         Sprite        {position vec3, size f32 >= 0, color}    pages
//   spark          Spark         {velocity vec3, lifetime f32 >= 0,
//                                 max_lifetime f32 (read-only property)}  pages
//   spark_emitter  SparkEmitter  {speed, spread, lifetime f32 >= 0, color} pages
//   render_data    RenderData    {density f32 >= 0, color}                named: several
//                                                                          per entity
//                                                                          ("Fog", ...)
//   smoke          Smoke         {origin vec3, velocity vec3,
//                                 age f32 >= 0, lifetime f32 >= 0}         pages
//   puff           Puff          {position vec3, size f32 >= 0, alpha f32} pages
//   frame_clock    FrameClock    {dt f32 > 0, seconds f32, frame u32}      world resource
//   spark_rules    SparkRules    {gravity f32}                             world resource
//
//   absl::StatusOr<std::unique_ptr<DemoWorld>> demo = DemoWorld::Create();
//   EntityCompiler compiler;
//   SampleRegistry().RegisterCompilers(compiler);
//   ... (*demo)->Spawn(view); ForEachMatch((*demo)->pages(), f, fn, (*demo)->sparks().component());
//
// A sprite's position is used when its entity has no transform (sparks); otherwise the
// demo copies the transform's world translation into it every frame.
#ifndef STRATA_ENGINE_SAMPLE_COMPONENTS_H_
#define STRATA_ENGINE_SAMPLE_COMPONENTS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/matrix.h"
#include "component/named_component.h"
#include "component/page_component.h"
#include "component/registry.h"
#include "engine/world.h"

namespace strata {

struct Sprite {
  Vector3 position;
  float size = 1.0f;
  Vector4 color{1.0f, 1.0f, 1.0f, 1.0f};
};

struct Spark {
  Vector3 velocity;
  // lifetime: seconds left; the spark dies when it reaches 0.
  float lifetime = 1.0f;
  // max_lifetime: lifetime at birth, for the fade (alpha = lifetime / max_lifetime).
  float max_lifetime = 1.0f;
};

struct SparkEmitter {
  float speed = 3.0f;     // initial speed of its sparks, units per second
  float spread = 0.5f;    // horizontal speed as a fraction of `speed`
  float lifetime = 1.0f;  // seconds a spark lives
  Vector4 color{1.0f, 0.6f, 0.1f, 1.0f};
};

// RenderData: a post effect of the entity index article ("Fog", "Vignette").
struct RenderData {
  float density = 0.0f;
  Vector4 color{1.0f, 1.0f, 1.0f, 1.0f};
};

// Smoke: a smoke puff's motion, the demo's second particle system (--scale): a pool of
// puffs that rise from the chimneys (the spark emitters) and start again at their
// chimney when their lifetime is over, so it never creates or destroys entities.
struct Smoke {
  Vector3 origin;          // where it starts again: its chimney
  Vector3 velocity;        // units per second, before the wind
  float age = 0.0f;        // seconds since it last started
  float lifetime = 4.0f;   // seconds before it starts again
};

// Puff: how a smoke puff is drawn, into a draw list of its own (no sprite): the smoke's
// systems and the sparks' touch no component in common.
struct Puff {
  Vector3 position;
  float size = 0.2f;
  float alpha = 1.0f;
};

// kGravity: the default downward acceleration of sparks, units per second squared.
inline constexpr float kGravity = 9.81f;

// FrameClock: the frame being run, a world resource (one per World, no entity): the
// demo's clock system writes it first thing every frame; the systems that move,
// fade, emit and animate read their step and time from it.
struct FrameClock {
  float dt = 1.0f / 60.0f;  // seconds this frame advances
  float seconds = 0;        // simulated time at the frame's start: frame * dt
  uint32_t frame = 0;       // the frame's number, 0 first
};

// SparkRules: the sparks' rules, a world resource a level may set
// ({"type": "spark_rules", "gravity": 3}) and a tool may change by name.
struct SparkRules {
  float gravity = kGravity;  // downward acceleration, units per second squared
};

inline constexpr absl::string_view kSpriteTypeName = "sprite";
inline constexpr absl::string_view kSparkTypeName = "spark";
inline constexpr absl::string_view kSparkEmitterTypeName = "spark_emitter";
inline constexpr absl::string_view kRenderDataTypeName = "render_data";
inline constexpr absl::string_view kSmokeTypeName = "smoke";
inline constexpr absl::string_view kPuffTypeName = "puff";
inline constexpr absl::string_view kFrameClockTypeName = "frame_clock";
inline constexpr absl::string_view kSparkRulesTypeName = "spark_rules";

using SpriteManager = PageComponentManager<Sprite>;
using SparkManager = PageComponentManager<Spark>;
using SparkEmitterManager = PageComponentManager<SparkEmitter>;
using RenderDataManager = NamedComponentManager<RenderData>;
using SmokeManager = PageComponentManager<Smoke>;
using PuffManager = PageComponentManager<Puff>;

// RegisterSampleComponents: declares the sample types and resources in `registry`.
absl::Status RegisterSampleComponents(ComponentRegistry& registry);
// SampleRegistry: a process-wide registry of the transform and the sample types.
const ComponentRegistry& SampleRegistry();

// DemoWorld: a World over SampleRegistry() with the sample stores at hand.
class DemoWorld {
 public:
  static absl::StatusOr<std::unique_ptr<DemoWorld>> Create(const World::Options& options = World::Options());

  World& world() const { return *world_; }
  SpriteManager& sprites() const { return *sprites_; }
  SparkManager& sparks() const { return *sparks_; }
  SparkEmitterManager& emitters() const { return *emitters_; }
  RenderDataManager& render_data() const { return *render_data_; }
  SmokeManager& smoke() const { return *smoke_; }
  PuffManager& puffs() const { return *puffs_; }

  // The World's, for the systems' brevity.
  EntityManager& entities() const { return world_->entities(); }
  TransformComponent& transforms() const { return world_->transforms(); }
  EntityIndex& index() const { return world_->index(); }
  PropertySystem& properties() const { return world_->properties(); }
  EntityPages& pages() const { return world_->pages(); }
  size_t num_transforms() const { return world_->num_transforms(); }
  absl::StatusOr<std::vector<Entity>> Spawn(const EntityResourceView& view, SpawnStats* stats = nullptr) {
    return world_->Spawn(view, stats);
  }
  absl::Status Destroy(Entity entity) { return world_->Destroy(entity); }
  absl::Status DestroyBatch(absl::Span<const Entity> entities) { return world_->DestroyBatch(entities); }
  TransformComponentManager& transform_manager() const { return world_->transform_manager(); }
  size_t ComponentCount(Entity entity) const { return world_->ComponentCount(entity); }
  World::MemoryReport Memory() const { return world_->Memory(); }
  void UpdateTransforms() { world_->UpdateTransforms(); }

  // SetFloatProperty / GetFloatProperty: the property system for float properties
  // (GetFloatProperty: InvalidArgument if the property is not a float).
  absl::Status SetFloatProperty(Entity entity, absl::string_view component,
                                absl::string_view property, float value);
  absl::StatusOr<float> GetFloatProperty(Entity entity, absl::string_view component,
                                         absl::string_view property) const;

 private:
  DemoWorld() = default;
  std::unique_ptr<World> world_;
  SpriteManager* sprites_ = nullptr;
  SparkManager* sparks_ = nullptr;
  SparkEmitterManager* emitters_ = nullptr;
  RenderDataManager* render_data_ = nullptr;
  SmokeManager* smoke_ = nullptr;
  PuffManager* puffs_ = nullptr;
};

}  // namespace strata

#endif  // STRATA_ENGINE_SAMPLE_COMPONENTS_H_
