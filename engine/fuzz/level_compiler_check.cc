#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "component/export.h"
#include "engine/fuzz/level_compiler_fuzzer.h"
#include "engine/sample_components.h"
#include "engine/world.h"
#include "nlohmann/json.hpp"
#include "resource/entity_compiler.h"
#include "resource/format.h"

namespace strata {
namespace {

const EntityCompiler& Compiler() {
  static const EntityCompiler* compiler = [] {
    auto* c = new EntityCompiler;
    if (absl::Status s = SampleRegistry().RegisterCompilers(*c); !s.ok()) {
      std::fprintf(stderr, "registering the sample compilers: %s\n", s.ToString().c_str());
      std::abort();
    }
    return c;
  }();
  return *compiler;
}

[[noreturn]] void Finding(const char* what, const absl::Status& status) {
  std::fprintf(stderr, "level compiler fuzzer: %s: %s\n", what, status.ToString().c_str());
  std::abort();
}

void CheckBlob(const EntityCompiler::Result& compiled, const EntityCompiler::Options& options) {
  absl::StatusOr<EntityResourceView> view = EntityResourceView::Create(compiled.blob);
  if (!view.ok()) Finding("the compiled blob does not validate", view.status());
  if (view->num_entities() != compiled.num_entities) {
    Finding("entity count", absl::InternalError("the view and the compiler disagree"));
  }

  absl::StatusOr<std::unique_ptr<World>> world = World::Create(SampleRegistry());
  if (!world.ok()) Finding("World::Create", world.status());
  absl::StatusOr<std::vector<Entity>> spawned = (*world)->Spawn(*view);
  if (!spawned.ok()) Finding("spawning the compiled blob", spawned.status());
  if (spawned->size() != view->num_entities()) {
    Finding("spawn", absl::InternalError("spawned a different number of entities"));
  }

  absl::StatusOr<std::string> listing = DescribeResource(*view, SampleRegistry());
  if (!listing.ok()) Finding("DescribeResource", listing.status());

  absl::StatusOr<nlohmann::json> level = ExportLevel(*view, SampleRegistry());
  if (!level.ok()) Finding("ExportLevel", level.status());
  const std::string exported = level->dump(2);
  absl::StatusOr<EntityCompiler::Result> again = Compiler().Compile(exported, options);
  if (!again.ok()) {
    std::fprintf(stderr, "exported level:\n%s\n", exported.c_str());
    Finding("recompiling the export", again.status());
  }
  if (again->blob != compiled.blob) {
    std::fprintf(stderr, "exported level:\n%s\n", exported.c_str());
    Finding("round trip", absl::InternalError("the export compiles to different bytes"));
  }
}

}  // namespace

bool CheckLevelJson(absl::string_view text) {
  bool accepted = false;
  for (auto unknown : {EntityCompiler::UnknownComponents::kReject, EntityCompiler::UnknownComponents::kSkip}) {
    EntityCompiler::Options options;
    options.unknown_components = unknown;
    absl::StatusOr<EntityCompiler::Result> compiled = Compiler().Compile(text, options);
    if (!compiled.ok()) {
      if (compiled.status().code() != absl::StatusCode::kInvalidArgument &&
          compiled.status().code() != absl::StatusCode::kResourceExhausted) {
        Finding("a rejection that is not InvalidArgument", compiled.status());
      }
      continue;
    }
    accepted = true;
    CheckBlob(*compiled, options);
  }
  return accepted;
}

}  // namespace strata
