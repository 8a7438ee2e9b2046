#include "resource/tool_commands.h"

#include <cstdio>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "resource/tool_io.h"

namespace strata {
namespace {

void PrintError(const char* tool, const absl::Status& status) {
  std::fprintf(stderr, "%s: %s\n", tool, status.ToString().c_str());
}

}  // namespace

int RunCompileCommand(const EntityCompiler& compiler, int argc, char** argv) {
  EntityCompiler::Options options;
  std::vector<std::string> paths;
  bool usage_error = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--skip-unknown") {
      options.unknown_components = EntityCompiler::UnknownComponents::kSkip;
    } else if (arg == "--endian=little") {
      options.endianness = Endianness::kLittle;
    } else if (arg == "--endian=big") {
      options.endianness = Endianness::kBig;
    } else if (arg == "--no-names") {
      options.keep_names = false;
    } else if (absl::StartsWith(arg, "--threads=")) {
      if (!absl::SimpleAtoi(absl::string_view(arg).substr(10), &options.threads) || options.threads < 0 ||
          options.threads > EntityCompiler::kMaxThreads) {
        usage_error = true;
      }
    } else if (absl::StartsWith(arg, "-")) {
      usage_error = true;
    } else {
      paths.push_back(arg);
    }
  }
  if (usage_error || paths.size() != 2) {
    std::fprintf(stderr,
                 "usage: %s [--skip-unknown] [--endian=little|big] [--no-names] [--threads=N] LEVEL.json "
                 "OUT.entities\n"
                 "  --skip-unknown  leave out components of unknown types (with a warning)\n"
                 "  --endian=E      byte order of the output (default: this machine's)\n"
                 "  --no-names      leave out entity names and instance-name texts\n"
                 "  --threads=N     compile on N threads, 0: one per hardware thread (default 1);\n"
                 "                  the output is the same bytes for any N (N <= %d)\n",
                 argv[0], EntityCompiler::kMaxThreads);
    return 2;
  }
  const std::string in = ResolveToolPath(paths[0]);
  const std::string out = ResolveToolPath(paths[1]);
  // Refused before the slow work: an output that is the input (also through a link).
  if (absl::Status s = CheckToolOutputPath(out, {in}); !s.ok()) {
    PrintError("compile", s);
    return 1;
  }
  absl::StatusOr<std::string> text = ReadToolFileText(in);
  if (!text.ok()) {
    PrintError("compile", text.status());
    return 1;
  }
  absl::StatusOr<EntityCompiler::Result> result = compiler.Compile(*text, options);
  if (!result.ok()) {
    std::fprintf(stderr, "compile: %s: %s\n", in.c_str(), result.status().ToString().c_str());
    return 1;
  }
  for (const std::string& warning : result->warnings) {
    std::fprintf(stderr, "compile: warning: %s: %s\n", in.c_str(), warning.c_str());
  }
  if (absl::Status s = WriteToolFileAtomically(out, result->blob, {in}); !s.ok()) {
    PrintError("compile", s);
    return 1;
  }
  std::printf("%s: %u entities, %zu bytes (%s-endian), %zu warnings\n", out.c_str(), result->num_entities,
              result->blob.size(), EndiannessName(options.endianness), result->warnings.size());
  return 0;
}

int RunInspectCommand(const InspectFunctions& functions, int argc, char** argv) {
  bool as_json = false;
  bool usage_error = false;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json" && functions.export_json) {
      as_json = true;
    } else if (absl::StartsWith(arg, "-")) {
      usage_error = true;
    } else {
      paths.push_back(arg);
    }
  }
  if (usage_error || paths.size() != 1) {
    std::fprintf(stderr, "usage: %s %sBLOB.entities\n", argv[0], functions.export_json ? "[--json] " : "");
    return 2;
  }
  const std::string path = ResolveToolPath(paths[0]);
  absl::StatusOr<std::vector<std::byte>> blob = ReadToolFile(path);
  if (!blob.ok()) {
    PrintError("inspect", blob.status());
    return 1;
  }
  absl::StatusOr<EntityResourceView> view = EntityResourceView::Create(*blob);
  if (!view.ok()) {
    std::fprintf(stderr, "inspect: %s: invalid: %s\n", path.c_str(), view.status().ToString().c_str());
    return 1;
  }
  absl::StatusOr<std::string> text = as_json ? functions.export_json(*view) : functions.describe(*view);
  if (!text.ok()) {
    std::fprintf(stderr, "inspect: %s: %s\n", path.c_str(), text.status().ToString().c_str());
    return 1;
  }
  if (as_json) {
    std::printf("%s\n", text->c_str());
  } else {
    std::printf("%s: valid entity resource, %zu bytes, format version %u, %s-endian\n%s", path.c_str(),
                blob->size(), entity_resource_layout::kFormatVersion, EndiannessName(kNativeEndianness),
                text->c_str());
  }
  return 0;
}

}  // namespace strata
