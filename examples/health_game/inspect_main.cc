// health_inspect: lists or exports (--json) a blob with the health game's components
// (component/tools.h):
//   bazel run //examples/health_game:health_inspect -- [--json] OUT.entities
#include "component/tools.h"
#include "examples/health_game/health.h"

int main(int argc, char** argv) {
  static strata::ComponentRegistry registry;
  if (!health_game::RegisterGameComponents(registry).ok()) return 1;
  return strata::RunInspectTool(registry, argc, argv);
}
