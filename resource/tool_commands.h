// The `compile` and `inspect` command lines, shared by every tool that offers them:
// resource/'s own (which know no component type), the ones a game builds from its
// ComponentRegistry (component/tools.h) and Strata's demo tools (//engine:compile).
//
//   int main(int argc, char** argv) {
//     strata::EntityCompiler compiler;   // with the game's compile functions registered
//     return strata::RunCompileCommand(compiler, argc, argv);
//   }
//
// compile [--skip-unknown] [--endian=little|big] [--no-names] [--threads=N] LEVEL.json OUT.entities
//   --threads=N compiles on N threads (0: one per hardware thread; default 1), the same
//   bytes for any N (EntityCompiler::Options::threads).
//   Exit 0 on success, 1 on a compile or I/O error (the message names the entity path,
//   component, field and JSON line/column), 2 on a usage error. Warnings go to stderr.
// inspect [--json] BLOB.entities
//   Validates the blob (EntityResourceView::Create, so nothing outside the file is ever
//   read), then prints the caller's listing, or with --json its level JSON export.
//   Exit 0 for a valid blob, 1 for an invalid or unreadable one, 2 on a usage error.
// Files go through tool_io.h: relative paths are taken from where `bazel run` was
// started, the output is written atomically and never replaces the input.
#ifndef STRATA_RESOURCE_TOOL_COMMANDS_H_
#define STRATA_RESOURCE_TOOL_COMMANDS_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "resource/entity_compiler.h"
#include "resource/format.h"

namespace strata {

// RunCompileCommand: the compile command line with `compiler`'s component types.
int RunCompileCommand(const EntityCompiler& compiler, int argc, char** argv);

// InspectFunctions: what an inspect tool prints for a valid blob. `describe` writes the
// listing below the header line; `export_json`, if set, the text --json prints (without
// it, --json is a usage error).
struct InspectFunctions {
  std::function<absl::StatusOr<std::string>(const EntityResourceView&)> describe;
  std::function<absl::StatusOr<std::string>(const EntityResourceView&)> export_json;
};

// RunInspectCommand: the inspect command line.
int RunInspectCommand(const InspectFunctions& functions, int argc, char** argv);

}  // namespace strata

#endif  // STRATA_RESOURCE_TOOL_COMMANDS_H_
