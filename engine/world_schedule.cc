#include "engine/world_schedule.h"

#include <memory>

namespace strata {

std::unique_ptr<Schedule> MakeSchedule(World& world, ScheduleOptions options) {
  auto schedule = std::make_unique<Schedule>(world.entities(), world.pages(), options);
  schedule->set_playback([&world](ParallelCommands& commands) { return world.Playback(commands); });
  schedule->set_flush([&world] { return world.Flush(); });
  return schedule;
}

}  // namespace strata
