// health_compile: the entity compiler with the health game's components
// (component/tools.h):
//   bazel run //examples/health_game:health_compile -- LEVEL.json OUT.entities
#include "component/tools.h"
#include "examples/health_game/health.h"

int main(int argc, char** argv) {
  // Static: the tool's compiler refers to the registry's types until exit.
  static strata::ComponentRegistry registry;
  if (!health_game::RegisterGameComponents(registry).ok()) return 1;
  return strata::RunCompileTool(registry, argc, argv);
}
