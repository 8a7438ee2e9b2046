// A small game on Strata, built out of tree the way an engine consumes it: its own
// component, Velocity, is declared once with ComponentDeclaration, the same door as
// every component of Strata's; a level in JSON is compiled with the compile
// functions the declarations give and spawned into a World in one batch; transforms
// form the scene hierarchy, and a page query over Velocity moves entities each frame,
// their children following.
//
//   absl::StatusOr<std::unique_ptr<game::Game>> game = game::Game::Load(level_json);
//   (*game)->Step(1.0f / 60);                 // moves everything that has a velocity
//   (*game)->WorldPosition((*game)->entity(1));
//
// Level JSON: Strata's level format (resource/entity_compiler.h) with the component
// types "transform" (component/transform_type.h) and this game's
//   {"type": "velocity", "value": [x, y, z]}   (units per second, default [0, 0, 0]).
#ifndef STRATA_CONSUMER_EXAMPLE_GAME_H_
#define STRATA_CONSUMER_EXAMPLE_GAME_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/matrix.h"
#include "component/registry.h"
#include "engine/world.h"
#include "entity/entity.h"

namespace game {

// Velocity: units per second along each axis.
struct Velocity {
  strata::Vector3 value{0, 0, 0};
};

// Registry: Strata's types (the transform) and this game's (Velocity), declared once;
// the compiler and every World are built from it.
const strata::ComponentRegistry& Registry();

class Game {
 public:
  // Load: compiles and spawns `level_json`. InvalidArgument (naming the entity) for a
  // level Strata's compiler rejects, or for an unknown component type.
  static absl::StatusOr<std::unique_ptr<Game>> Load(absl::string_view level_json);

  Game(const Game&) = delete;
  Game& operator=(const Game&) = delete;

  // Step: moves every live entity that has both a velocity and a transform by
  // velocity * seconds; children follow through the transform hierarchy. Returns how
  // many entities it moved.
  size_t Step(float seconds);

  // entity: the entity spawned for the level's k-th entity, counted depth-first with
  // parents before children. k < num_spawned().
  strata::Entity entity(size_t k) const { return spawned_[k]; }
  size_t num_spawned() const { return spawned_.size(); }
  // num_alive: entities spawned and not destroyed.
  size_t num_alive() const { return world_->entities().size(); }

  // WorldPosition: the translation of `e`'s world matrix. NotFound if `e` is dead or
  // has no transform.
  absl::StatusOr<strata::Vector3> WorldPosition(strata::Entity e) const;

  // Destroy: destroys `e`; its transform and velocity go with it, and its transform's
  // children become roots. NotFound if `e` is dead.
  absl::Status Destroy(strata::Entity e);

 private:
  explicit Game(std::unique_ptr<strata::World> world) : world_(std::move(world)) {}

  std::unique_ptr<strata::World> world_;
  std::vector<strata::Entity> spawned_;
};

}  // namespace game

#endif  // STRATA_CONSUMER_EXAMPLE_GAME_H_
