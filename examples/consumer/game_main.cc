// Loads a small level, runs one simulated second at 60 frames per second and prints
// where everything ended up.
#include <cstdio>
#include <memory>

#include "absl/status/statusor.h"
#include "game.h"

namespace {

constexpr char kLevel[] = R"({"entities": [
  {"name": "ship",
   "components": [{"type": "transform"}, {"type": "velocity", "value": [3, 0, 0]}],
   "children": [{"name": "turret",
                 "components": [{"type": "transform", "position": [0, 1, 0]}]}]},
  {"name": "rock",
   "components": [{"type": "transform", "position": [10, 0, 0]},
                  {"type": "velocity", "value": [0, 0, -2]}]}
]})";

}  // namespace

int main() {
  absl::StatusOr<std::unique_ptr<game::Game>> game = game::Game::Load(kLevel);
  if (!game.ok()) {
    std::fprintf(stderr, "%s\n", game.status().ToString().c_str());
    return 1;
  }
  for (int frame = 0; frame < 60; ++frame) (*game)->Step(1.0f / 60);
  const char* const names[] = {"ship", "turret", "rock"};
  for (size_t k = 0; k < (*game)->num_spawned(); ++k) {
    absl::StatusOr<strata::Vector3> p = (*game)->WorldPosition((*game)->entity(k));
    if (!p.ok()) return 1;
    std::printf("%-6s (%.2f, %.2f, %.2f)\n", names[k], p->x, p->y, p->z);
  }
  return 0;
}
