// The health game's own components, declared the way any game built on Strata declares
// its components (component/declare.h), from outside Strata's packages:
//
//   health   Health   {hp f32 >= 0, max f32 >= 1, attacker entity}   pages
//   burning  Burning  {} (a tag: presence only)                       pages
//
//   ComponentRegistry registry;
//   STRATA_RETURN_IF_ERROR(health_game::RegisterGameComponents(registry));
//   absl::StatusOr<std::unique_ptr<World>> world = World::Create(registry);
//   absl::StatusOr<PageComponentManager<Health>*> health =
//       (*world)->Pages<health_game::Health>(health_game::kHealthTypeName);
//
// Level JSON: {"type": "health", "hp": 40, "attacker": "orc"} and {"type": "burning"}.
// BurnSystem is the game's one system: a page query over Health and Burning.
#ifndef STRATA_EXAMPLES_HEALTH_GAME_HEALTH_H_
#define STRATA_EXAMPLES_HEALTH_GAME_HEALTH_H_

#include <cstddef>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "component/registry.h"
#include "engine/world.h"
#include "entity/entity.h"

namespace health_game {

struct Health {
  float hp = 100;
  float max = 100;
  // attacker: who hurt this entity last, an entity of the same world (or none).
  strata::Entity attacker;
};

// Burning: a tag; an entity burns while it has one.
struct Burning {};

inline constexpr absl::string_view kHealthTypeName = "health";
inline constexpr absl::string_view kBurningTypeName = "burning";

// RegisterGameComponents: declares health and burning in `registry`. AlreadyExists if
// the registry holds either name already.
absl::Status RegisterGameComponents(strata::ComponentRegistry& registry);

// BurnSystem: every entity with health that burns loses `damage` hp, floored at 0.
// Returns how many entities burned. FailedPrecondition if `world` was not created with
// RegisterGameComponents' types. O(pages + matches).
absl::StatusOr<size_t> BurnSystem(strata::World& world, float damage);

}  // namespace health_game

#endif  // STRATA_EXAMPLES_HEALTH_GAME_HEALTH_H_
