// The page-stored sample components of the demo: Sprite (something drawn), Spark (a
// short-lived particle) and SparkEmitter (where sparks come from), with their compile
// functions (level JSON -> resource bytes) and their properties.
//
//   EntityCompiler compiler;
//   compiler.RegisterComponentCompiler("sprite", CompileSprite, kSpriteSpawnOrder,
//                                      sizeof(Sprite));
//   auto sprites = *PageComponentManager<Sprite>::Register(pages, kSpriteTypeName);
//   properties.Describe(sprites.get(), DescribeSpriteProperties(*sprites));
//   properties.Set(e, "sprite", "size", 2.0f);
//
// Resource form: each instance is the struct's floats in declaration order, in the
// blob's byte order, so a native blob's instance data is an array of the struct.
// Level JSON (every field optional; unknown keys are errors; a "name", if given, must be
// the type name, since the page store holds one instance per entity):
//   {"type": "sprite", "position": [x, y, z], "size": 1, "color": [r, g, b, a]}
//   {"type": "spark", "velocity": [x, y, z], "lifetime": 1}
//   {"type": "spark_emitter", "speed": 3, "spread": 0.5, "lifetime": 1,
//    "color": [r, g, b, a]}
// A sprite's position is used when its entity has no transform (sparks); otherwise the
// demo copies the transform's world translation into it every frame.
#ifndef STRATA_ENGINE_SAMPLE_COMPONENTS_H_
#define STRATA_ENGINE_SAMPLE_COMPONENTS_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "engine/page_component.h"
#include "index/property_system.h"
#include "nlohmann/json.hpp"
#include "resource/entity_compiler.h"

namespace strata {

// NOTE: all-float structs with no padding: the resource instance data is the struct.
struct Sprite {
  float position[3] = {0.0f, 0.0f, 0.0f};
  float size = 1.0f;
  float color[4] = {1.0f, 1.0f, 1.0f, 1.0f};
};
static_assert(sizeof(Sprite) == 32);

struct Spark {
  float velocity[3] = {0.0f, 0.0f, 0.0f};
  // lifetime: seconds left; the spark dies when it reaches 0.
  float lifetime = 1.0f;
  // max_lifetime: lifetime at birth, for the fade (alpha = lifetime / max_lifetime).
  float max_lifetime = 1.0f;
};
static_assert(sizeof(Spark) == 20);

struct SparkEmitter {
  float speed = 3.0f;       // initial speed of its sparks, units per second
  float spread = 0.5f;      // horizontal speed as a fraction of `speed`
  float lifetime = 1.0f;    // seconds a spark lives
  float color[4] = {1.0f, 0.6f, 0.1f, 1.0f};
};
static_assert(sizeof(SparkEmitter) == 28);

inline constexpr absl::string_view kSpriteTypeName = "sprite";
inline constexpr absl::string_view kSparkTypeName = "spark";
inline constexpr absl::string_view kSparkEmitterTypeName = "spark_emitter";

// Spawn orders: transforms first (kTransformSpawnOrder, transform/transform_resource.h,
// is 0), then the components that read them.
inline constexpr int kRenderDataSpawnOrder = 10;
inline constexpr int kSpriteSpawnOrder = 20;
inline constexpr int kSparkSpawnOrder = 30;
inline constexpr int kSparkEmitterSpawnOrder = 40;

using SpriteManager = PageComponentManager<Sprite>;
using SparkManager = PageComponentManager<Spark>;
using SparkEmitterManager = PageComponentManager<SparkEmitter>;

// Compile functions (resource/entity_compiler.h's CompileFunction). InvalidArgument
// naming the key for wrong types, negative sizes or lifetimes, non-finite numbers.
absl::Status CompileSprite(const nlohmann::json& config, ComponentDataWriter& out);
absl::Status CompileSpark(const nlohmann::json& config, ComponentDataWriter& out);
absl::Status CompileSparkEmitter(const nlohmann::json& config, ComponentDataWriter& out);

// Property descriptors; they capture the manager, which must outlive the system.
// sprite: position (vector3), size (float >= 0), color (vector4).
std::vector<PropertyDescriptor> DescribeSpriteProperties(SpriteManager& sprites);
// spark: velocity (vector3), lifetime (float >= 0), max_lifetime (float, read-only).
std::vector<PropertyDescriptor> DescribeSparkProperties(SparkManager& sparks);
// spark_emitter: speed, spread, lifetime (floats >= 0), color (vector4).
std::vector<PropertyDescriptor> DescribeSparkEmitterProperties(SparkEmitterManager& emitters);

}  // namespace strata

#endif  // STRATA_ENGINE_SAMPLE_COMPONENTS_H_
