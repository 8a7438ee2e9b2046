#include "component/tools.h"

#include <cstdio>
#include <string>

#include "component/export.h"
#include "nlohmann/json.hpp"
#include "resource/entity_compiler.h"
#include "resource/format.h"
#include "resource/tool_commands.h"

namespace strata {

int RunCompileTool(const ComponentRegistry& registry, int argc, char** argv) {
  EntityCompiler compiler;
  if (absl::Status s = registry.RegisterCompilers(compiler); !s.ok()) {
    std::fprintf(stderr, "compile: %s\n", s.ToString().c_str());
    return 1;
  }
  return RunCompileCommand(compiler, argc, argv);
}

int RunInspectTool(const ComponentRegistry& registry, int argc, char** argv) {
  InspectFunctions functions;
  functions.describe = [&registry](const EntityResourceView& view) {
    return DescribeResource(view, registry);
  };
  functions.export_json = [&registry](const EntityResourceView& view) -> absl::StatusOr<std::string> {
    absl::StatusOr<nlohmann::json> level = ExportLevel(view, registry);
    if (!level.ok()) return level.status();
    return level->dump(1);
  };
  return RunInspectCommand(functions, argc, argv);
}

}  // namespace strata
