// A small game on Strata, built out of tree the way an engine consumes it: a level in
// JSON is compiled into an entity resource and spawned in one batch; transforms form
// the scene hierarchy, and a component the game declares itself (Velocity, kept in
// Strata's EntityPages) moves entities each frame, their children following.
//
//   absl::StatusOr<std::unique_ptr<game::Game>> game = game::Game::Load(level_json);
//   (*game)->Step(1.0f / 60);                 // moves everything that has a velocity
//   (*game)->WorldPosition((*game)->entity(1));
//
// Level JSON: Strata's level format (resource/entity_compiler.h) with the component
// types "transform" (transform/transform_resource.h) and this game's
//   {"type": "velocity", "value": [x, y, z]}   (units per second, default [0, 0, 0]).
#ifndef STRATA_CONSUMER_EXAMPLE_GAME_H_
#define STRATA_CONSUMER_EXAMPLE_GAME_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "iteration/entity_pages.h"
#include "transform/matrix.h"
#include "transform/transform_component.h"

namespace game {

// Velocity: units per second along each axis.
struct Velocity {
  float x = 0.0f;
  float y = 0.0f;
  float z = 0.0f;
};

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
  size_t num_alive() const { return entities_.size(); }

  // WorldPosition: the translation of `e`'s world matrix. NotFound if `e` is dead or
  // has no transform.
  absl::StatusOr<strata::Vector3> WorldPosition(strata::Entity e) const;

  // Destroy: destroys `e`; its transform and velocity go with it, and its transform's
  // children become roots. NotFound if `e` is dead.
  absl::Status Destroy(strata::Entity e);

 private:
  Game();

  static strata::TransformComponent* TransformsOf(void* game);

  // Declared first so it is destroyed last: the stores below listen to it.
  strata::EntityManager entities_;
  strata::TransformComponent transforms_;
  strata::EntityPages pages_;
  strata::Component<Velocity> velocity_;
  std::vector<strata::Entity> spawned_;
};

}  // namespace game

#endif  // STRATA_CONSUMER_EXAMPLE_GAME_H_
