#include "examples/health_game/health.h"

#include <algorithm>
#include <string>

#include "absl/status/statusor.h"
#include "component/declare.h"
#include "iteration/filter.h"

namespace health_game {

using strata::ComponentDeclaration;

absl::Status RegisterGameComponents(strata::ComponentRegistry& registry) {
  absl::Status health = registry.Add(ComponentDeclaration<Health>(std::string(kHealthTypeName))
                                         .Field("hp", &Health::hp).Min(0)
                                         .Field("max", &Health::max).Min(1)
                                         .Field("attacker", &Health::attacker)
                                         .Build());
  if (!health.ok()) return health;
  return registry.Add(ComponentDeclaration<Burning>(std::string(kBurningTypeName)).Build());
}

absl::StatusOr<size_t> BurnSystem(strata::World& world, float damage) {
  absl::StatusOr<strata::PageComponentManager<Health>*> health =
      world.Pages<Health>(kHealthTypeName);
  absl::StatusOr<strata::PageComponentManager<Burning>*> burning =
      world.Pages<Burning>(kBurningTypeName);
  if (!health.ok() || !burning.ok()) {
    return absl::FailedPreconditionError(
        "BurnSystem: the world has no health or burning pages (RegisterGameComponents)");
  }
  strata::Filter burning_health;
  burning_health.Include((*health)->component()).Include((*burning)->component());
  size_t burned = 0;
  strata::ForEachMatch(
      world.pages(), burning_health,
      [damage, &burned](Health& h) {
        h.hp = std::max(0.0f, h.hp - damage);
        ++burned;
      },
      (*health)->component());
  return burned;
}

}  // namespace health_game
