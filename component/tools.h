// The compile and inspect tools as a library: a game links them with its own
// ComponentRegistry to get its own `mygame_compile` / `mygame_inspect`, and Strata's
// demo builds //engine:compile and //engine:inspect the same way.
//
//   // mygame/compile_main.cc
//   int main(int argc, char** argv) {
//     static strata::ComponentRegistry registry;
//     if (!mygame::RegisterComponents(registry).ok()) return 1;
//     return strata::RunCompileTool(registry, argc, argv);
//   }
//
// compile [--skip-unknown] [--endian=little|big] [--no-names] [--threads=N] LEVEL.json OUT.entities
//   Exit 0 on success, 1 on a compile or I/O error (the message names the entity path,
//   component, field and JSON line/column), 2 on a usage error.
// inspect [--json] BLOB.entities
//   Validates the blob, then lists every entity and component with its fields by name;
//   --json writes the level JSON instead (export), which compiles back to the same bytes.
//   Exit 0 for a valid blob, 1 for an invalid or unreadable one, 2 on a usage error.
// The command lines and file handling are resource/tool_commands.h's.
#ifndef STRATA_COMPONENT_TOOLS_H_
#define STRATA_COMPONENT_TOOLS_H_

#include "component/registry.h"

namespace strata {

int RunCompileTool(const ComponentRegistry& registry, int argc, char** argv);
int RunInspectTool(const ComponentRegistry& registry, int argc, char** argv);

}  // namespace strata

#endif  // STRATA_COMPONENT_TOOLS_H_
