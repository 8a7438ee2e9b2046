#include "examples/health_game/health.h"

#include <algorithm>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "component/declare.h"
#include "iteration/command_buffer.h"
#include "iteration/component_events.h"

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

absl::StatusOr<size_t> ExtinguishSystem(strata::World& world) {
  if (world.TryPages<Health>() == nullptr || world.TryPages<Burning>() == nullptr) {
    return absl::FailedPreconditionError(
        "ExtinguishSystem: the world has no health or burning pages (RegisterGameComponents)");
  }
  const strata::Component<Burning> burning = world.Pages<Burning>().component();
  strata::CommandBuffer commands(world.pages());
  world.Each(strata::With<Burning>(), [&](strata::Entity e, const Health& h) {
    if (h.hp <= 0) commands.Remove(e, burning);
  });
  absl::StatusOr<strata::CommandBuffer::Result> played = world.Playback(commands);
  if (!played.ok()) return played.status();
  return played->applied;
}

absl::StatusOr<strata::ComponentEvents::Subscription> ObserveExtinguished(strata::World& world,
                                                                          size_t* count) {
  if (world.TryPages<Burning>() == nullptr) {
    return absl::FailedPreconditionError("ObserveExtinguished: the world has no burning pages");
  }
  return world.OnRemove<Burning>(
      [count](absl::Span<const strata::Entity> stopped, absl::Span<const Burning>,
              strata::CommandBuffer&) { *count += stopped.size(); });
}

}  // namespace health_game
