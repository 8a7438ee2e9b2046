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
// BurnSystem is a page query over Health and Burning; ExtinguishSystem records its
// structural changes in a command buffer; ObserveExtinguished is an observer.
#ifndef STRATA_EXAMPLES_HEALTH_GAME_HEALTH_H_
#define STRATA_EXAMPLES_HEALTH_GAME_HEALTH_H_

#include <cstddef>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "component/registry.h"
#include "engine/world.h"
#include "entity/entity.h"
#include "iteration/component_events.h"

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

// ExtinguishSystem: every burning entity whose hp reached 0 stops burning. The walk
// cannot remove Burning itself (a structural change inside a walk aborts): it records
// the removals in a CommandBuffer, which World::Playback applies after it. Returns how
// many stopped. FailedPrecondition as BurnSystem; the World's flush errors.
absl::StatusOr<size_t> ExtinguishSystem(strata::World& world);

// ObserveExtinguished: adds to *count each entity that loses Burning, by any path (a
// command, a destroy), told at the World's flush points. The count must outlive the
// returned subscription, which must not outlive the World. FailedPrecondition as
// BurnSystem.
absl::StatusOr<strata::ComponentEvents::Subscription> ObserveExtinguished(strata::World& world,
                                                                          size_t* count);

}  // namespace health_game

#endif  // STRATA_EXAMPLES_HEALTH_GAME_HEALTH_H_
