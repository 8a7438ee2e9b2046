#include "examples/health_game/health.h"

#include <algorithm>
#include <string>

#include "absl/status/statusor.h"
#include "component/declare.h"

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
  if (world.TryPages<Health>() == nullptr || world.TryPages<Burning>() == nullptr) {
    return absl::FailedPreconditionError(
        "BurnSystem: the world has no health or burning pages (RegisterGameComponents)");
  }
  size_t burned = 0;
  world.Each(strata::With<Burning>(), [damage, &burned](Health& h) {
    h.hp = std::max(0.0f, h.hp - damage);
    ++burned;
  });
  return burned;
}

}  // namespace health_game
