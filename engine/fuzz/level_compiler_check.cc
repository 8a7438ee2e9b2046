#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/fixed_string.h"
#include "base/matrix.h"
#include "base/status_macros.h"
#include "component/declare.h"
#include "component/export.h"
#include "engine/fuzz/level_compiler_fuzzer.h"
#include "engine/sample_components.h"
#include "engine/world.h"
#include "nlohmann/json.hpp"
#include "resource/entity_compiler.h"
#include "resource/format.h"

namespace strata {
namespace {

// Zoo: one field of each field type the sample components do not use.
enum class Faction : uint8_t { kNeutral, kRed, kBlue };
enum class Mood : int64_t { kGrim = -2, kCalm = 0, kGlad = 5 };
struct Slot {
  uint8_t item = 0;
  Faction faction = Faction::kNeutral;
  float weight = 1;
};
struct Zoo {
  double f64 = 0.5;
  int64_t i64 = -1;
  uint64_t u64 = 1;
  int8_t i8 = -2;
  uint8_t u8 = 2;
  int16_t i16 = -3;
  uint16_t u16 = 3;
  Faction faction = Faction::kNeutral;
  Mood mood = Mood::kCalm;
  FixedString<8> title = "zoo";
  IdString32 tag;
  Entity target;
  bool flag = false;
  Quaternion turn;
  Slot slots[2];
  float grid[2][2] = {{1, 0}, {0, 1}};
  std::array<FixedString<4>, 2> tags;
};

absl::Status RegisterFuzzComponents(ComponentRegistry& registry) {
  STRATA_RETURN_IF_ERROR(RegisterSampleComponents(registry));
  return registry.Add(ComponentDeclaration<Zoo>("zoo")
                          .Field("f64", &Zoo::f64).Range(-1e300, 1e300)
                          .Field("i64", &Zoo::i64)
                          .Field("u64", &Zoo::u64)
                          .Field("i8", &Zoo::i8).Min(-100)
                          .Field("u8", &Zoo::u8)
                          .Field("i16", &Zoo::i16)
                          .Field("u16", &Zoo::u16).Max(60000)
                          .Enum("faction", &Zoo::faction,
                                {{"neutral", Faction::kNeutral}, {"red", Faction::kRed}, {"blue", Faction::kBlue}})
                          .Enum("mood", &Zoo::mood, {{"grim", Mood::kGrim}, {"calm", Mood::kCalm}, {"glad", Mood::kGlad}})
                          .Field("title", &Zoo::title)
                          .Field("tag", &Zoo::tag)
                          .Field("target", &Zoo::target)
                          .Field("flag", &Zoo::flag)
                          .Field("turn", &Zoo::turn)
                          .Field("slots", &Zoo::slots,
                                 ComponentDeclaration<Slot>("slot")
                                     .Field("item", &Slot::item).Max(99)
                                     .Enum("faction", &Slot::faction,
                                           {{"neutral", Faction::kNeutral}, {"red", Faction::kRed}})
                                     .Field("weight", &Slot::weight).Min(0))
                          .Field("grid", &Zoo::grid)
                          .Field("tags", &Zoo::tags)
                          .Build());
}

// The registry the fuzzer compiles with: the samples and the zoo.
const ComponentRegistry& FuzzRegistry() {
  static const ComponentRegistry* registry = [] {
    auto* r = new ComponentRegistry();
    if (absl::Status s = RegisterFuzzComponents(*r); !s.ok()) {
      std::fprintf(stderr, "registering the fuzzer's components: %s\n", s.ToString().c_str());
      std::abort();
    }
    return r;
  }();
  return *registry;
}

const EntityCompiler& Compiler() {
  static const EntityCompiler* compiler = [] {
    auto* c = new EntityCompiler;
    if (absl::Status s = FuzzRegistry().RegisterCompilers(*c); !s.ok()) {
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

  absl::StatusOr<std::unique_ptr<World>> world = World::Create(FuzzRegistry());
  if (!world.ok()) Finding("World::Create", world.status());
  absl::StatusOr<std::vector<Entity>> spawned = (*world)->Spawn(*view);
  if (!spawned.ok()) Finding("spawning the compiled blob", spawned.status());
  if (spawned->size() != view->num_entities()) {
    Finding("spawn", absl::InternalError("spawned a different number of entities"));
  }

  // Its save (entities from prefabs as deltas) spawns into a fresh world that saves the
  // same bytes, and whose full save is the first world's: the delta lost nothing.
  absl::StatusOr<std::vector<std::byte>> saved = (*world)->SaveAll();
  if (!saved.ok()) Finding("SaveAll", saved.status());
  absl::StatusOr<EntityResourceView> saved_view = EntityResourceView::Create(*saved);
  if (!saved_view.ok()) Finding("the save does not validate", saved_view.status());
  absl::StatusOr<std::unique_ptr<World>> loaded = World::Create(FuzzRegistry());
  if (!loaded.ok()) Finding("World::Create", loaded.status());
  if (absl::Status s = (*loaded)->Spawn(*saved_view).status(); !s.ok()) Finding("spawning the save", s);
  absl::StatusOr<std::vector<std::byte>> saved_again = (*loaded)->SaveAll();
  if (!saved_again.ok()) Finding("SaveAll of the loaded world", saved_again.status());
  if (*saved_again != *saved) Finding("save round trip", absl::InternalError("the loaded world saves other bytes"));
  SaveOptions full;
  full.prefab_deltas = false;
  absl::StatusOr<std::vector<std::byte>> full_first = (*world)->SaveAll(full);
  absl::StatusOr<std::vector<std::byte>> full_loaded = (*loaded)->SaveAll(full);
  if (!full_first.ok() || !full_loaded.ok()) Finding("SaveAll in full", absl::InternalError("failed"));
  if (*full_first != *full_loaded) {
    Finding("delta save", absl::InternalError("the world loaded from the delta save differs from the saved one"));
  }

  absl::StatusOr<std::string> listing = DescribeResource(*view, FuzzRegistry());
  if (!listing.ok()) Finding("DescribeResource", listing.status());

  absl::StatusOr<nlohmann::json> level = ExportLevel(*view, FuzzRegistry());
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
