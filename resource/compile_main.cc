// compile: the command-line entity compiler. Reads a level JSON file and writes the
// entity resource blob.
//
//   bazel run //resource:compile -- [--skip-unknown] [--endian=little|big]
//       level.json level.entities      (one command line)
//
// Knows no component type: resource/ knows none. It checks a level's structure and, with
// --skip-unknown, writes a blob of its entities, hierarchy and names. A game's own
// compile tool (component/tools.h; Strata's demo has //engine:compile) knows its
// components. Exit status 0 on
// success, 1 on a compile or I/O error (the message names the entity path, component
// and JSON line/column), 2 on a usage error. Warnings (skipped unknown components) go
// to stderr. File handling is resource/tool_io.h's: relative paths are relative to the
// directory `bazel run` was started from; the output is written atomically (a failed
// write leaves the old file and no temporary file) and never replaces the input (the
// same file, also through a symlink or hard link, is refused before anything is
// written).
#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "resource/entity_compiler.h"
#include "resource/tool_io.h"

namespace {

int Usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--skip-unknown] [--endian=little|big] LEVEL.json OUT.entities\n"
               "  --skip-unknown  leave out components of unregistered types (with a warning)\n"
               "                  instead of failing\n"
               "  --endian=E      byte order of the output (default: this machine's)\n",
               argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  strata::EntityCompiler::Options options;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--skip-unknown") {
      options.unknown_components = strata::EntityCompiler::UnknownComponents::kSkip;
    } else if (arg == "--endian=little") {
      options.endianness = strata::Endianness::kLittle;
    } else if (arg == "--endian=big") {
      options.endianness = strata::Endianness::kBig;
    } else if (arg == "--help" || arg == "-h" || absl::StartsWith(arg, "--")) {
      return Usage(argv[0]);
    } else {
      paths.push_back(arg);
    }
  }
  if (paths.size() != 2) return Usage(argv[0]);
  const std::string input = strata::ResolveToolPath(paths[0]);
  const std::string output = strata::ResolveToolPath(paths[1]);
  // Refused here too, so a large level is not compiled only to be refused.
  if (absl::Status refused = strata::CheckToolOutputPath(output, {input}); !refused.ok()) {
    std::fprintf(stderr, "compile: %s\n", refused.ToString().c_str());
    return 1;
  }

  const strata::EntityCompiler compiler;
  absl::StatusOr<std::string> text = strata::ReadToolFileText(input);
  if (!text.ok()) {
    std::fprintf(stderr, "compile: %s\n", text.status().ToString().c_str());
    return 1;
  }
  absl::StatusOr<strata::EntityCompiler::Result> result = compiler.Compile(*text, options);
  if (!result.ok()) {
    std::fprintf(stderr, "compile: %s: %s\n", paths[0].c_str(), result.status().ToString().c_str());
    return 1;
  }
  for (const std::string& warning : result->warnings) {
    std::fprintf(stderr, "compile: warning: %s: %s\n", paths[0].c_str(), warning.c_str());
  }
  absl::Status written = strata::WriteToolFileAtomically(output, result->blob, {input});
  if (!written.ok()) {
    std::fprintf(stderr, "compile: %s\n", written.ToString().c_str());
    return 1;
  }
  std::printf("%s: %u entities, %zu bytes (%s-endian), %zu warnings\n", paths[1].c_str(),
              result->num_entities, result->blob.size(), strata::EndiannessName(options.endianness),
              result->warnings.size());
  return 0;
}
