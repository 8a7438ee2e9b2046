#include "game.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "component/declare.h"
#include "resource/entity_compiler.h"
#include "resource/format.h"

namespace game {

const strata::ComponentRegistry& Registry() {
  // Built once and never destroyed: Worlds and compilers refer to it.
  static const strata::ComponentRegistry* const registry = [] {
    auto* r = new strata::ComponentRegistry;  // holds the transform already
    const absl::Status added = r->Add(
        strata::ComponentDeclaration<Velocity>("velocity").Field("value", &Velocity::value).Build());
    if (!added.ok()) {  // a programming error in the declaration above
      std::fprintf(stderr, "game: %s\n", added.ToString().c_str());
      std::abort();
    }
    return r;
  }();
  return *registry;
}

absl::StatusOr<std::unique_ptr<Game>> Game::Load(absl::string_view level_json) {
  strata::EntityCompiler compiler;
  if (absl::Status s = Registry().RegisterCompilers(compiler); !s.ok()) return s;
  absl::StatusOr<strata::EntityCompiler::Result> compiled =
      compiler.Compile(level_json, strata::EntityCompiler::Options());
  if (!compiled.ok()) return compiled.status();
  absl::StatusOr<strata::EntityResourceView> view =
      strata::EntityResourceView::Create(compiled->blob);
  if (!view.ok()) return view.status();

  absl::StatusOr<std::unique_ptr<strata::World>> world = strata::World::Create(Registry());
  if (!world.ok()) return world.status();
  std::unique_ptr<Game> game(new Game(*std::move(world)));
  absl::StatusOr<std::vector<strata::Entity>> spawned = game->world_->Spawn(*view);
  if (!spawned.ok()) return spawned.status();
  game->spawned_ = *std::move(spawned);
  return game;
}

size_t Game::Step(float seconds) {
  strata::TransformComponent& transforms = world_->transforms();
  size_t moved = 0;
  world_->Each([&](strata::Entity e, const Velocity& v) {
    const strata::TransformHandle t = transforms.Lookup(e);
    if (!transforms.IsValid(t)) return;
    strata::Matrix4x4 local = transforms.Local(t);
    local.m[12] += v.value.x * seconds;
    local.m[13] += v.value.y * seconds;
    local.m[14] += v.value.z * seconds;
    transforms.SetLocal(t, local);
    ++moved;
  });
  return moved;
}

absl::StatusOr<strata::Vector3> Game::WorldPosition(strata::Entity e) const {
  const strata::TransformComponent& transforms = world_->transforms();
  const strata::TransformHandle t = transforms.Lookup(e);
  if (!world_->entities().Alive(e) || !transforms.IsValid(t)) {
    return absl::NotFoundError(absl::StrCat(e.DebugString(), " has no transform"));
  }
  return transforms.World(t).translation();
}

absl::Status Game::Destroy(strata::Entity e) { return world_->DestroyKeepingChildren(e); }

}  // namespace game
