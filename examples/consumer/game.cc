#include "game.h"

#include <cstring>
#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "iteration/filter.h"
#include "nlohmann/json.hpp"
#include "resource/entity_compiler.h"
#include "resource/entity_spawner.h"
#include "resource/format.h"
#include "transform/transform_resource.h"

namespace game {
namespace {

constexpr char kVelocityType[] = "velocity";
// Velocities spawn after transforms, which spawn at strata::kTransformSpawnOrder.
constexpr int kVelocitySpawnOrder = strata::kTransformSpawnOrder + 10;
constexpr uint32_t kVelocitySize = 3 * sizeof(float);

absl::Status CompileVelocity(const nlohmann::json& config, strata::ComponentDataWriter& out) {
  if (absl::Status s = strata::CheckComponentKeys(config, {"value"}); !s.ok()) return s;
  float value[3] = {0.0f, 0.0f, 0.0f};
  if (absl::Status s = strata::ReadFloats(config, "value", absl::MakeSpan(value)); !s.ok()) {
    return s;
  }
  for (float v : value) out.WriteF32(v);
  return absl::OkStatus();
}

}  // namespace

Game::Game() : pages_(entities_) { transforms_.ConnectTo(entities_); }

strata::TransformComponent* Game::TransformsOf(void* game) {
  return &static_cast<Game*>(game)->transforms_;
}

absl::StatusOr<std::unique_ptr<Game>> Game::Load(absl::string_view level_json) {
  std::unique_ptr<Game> game(new Game());
  absl::StatusOr<strata::Component<Velocity>> velocity =
      game->pages_.RegisterComponent<Velocity>(kVelocityType);
  if (!velocity.ok()) return velocity.status();
  game->velocity_ = *velocity;

  strata::EntityCompiler compiler;
  if (absl::Status s = strata::RegisterTransformCompiler(compiler); !s.ok()) return s;
  if (absl::Status s = compiler.RegisterComponentCompiler(kVelocityType, CompileVelocity,
                                                          kVelocitySpawnOrder, kVelocitySize);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<strata::EntityCompiler::Result> compiled =
      compiler.Compile(level_json, strata::EntityCompiler::Options());
  if (!compiled.ok()) return compiled.status();

  strata::EntitySpawner spawner;
  if (absl::Status s = strata::RegisterTransformSpawner(spawner, &Game::TransformsOf); !s.ok()) {
    return s;
  }
  if (absl::Status s = spawner.RegisterComponentSpawner(
          kVelocityType,
          [](const strata::ComponentSpawnBatch& batch) -> absl::Status {
            if (batch.instance_stride != kVelocitySize) {
              return absl::DataLossError(
                  absl::StrCat("velocity stride ", batch.instance_stride));
            }
            Game& game = *static_cast<Game*>(batch.context);
            for (uint32_t i = 0; i < batch.num_instances; ++i) {
              Velocity v;
              std::memcpy(&v.x, batch.data.data() + i * kVelocitySize, kVelocitySize);
              if (absl::Status s = game.pages_.Add(batch.entity(i), game.velocity_, v);
                  !s.ok()) {
                return s;
              }
            }
            return absl::OkStatus();
          });
      !s.ok()) {
    return s;
  }

  absl::StatusOr<strata::EntityResourceView> view =
      strata::EntityResourceView::Create(compiled->blob);
  if (!view.ok()) return view.status();
  absl::StatusOr<std::vector<strata::Entity>> spawned = spawner.Spawn(
      *view, game->entities_, game.get(), strata::EntitySpawner::Options{
                                              .unknown_types = strata::SpawnUnknownTypes::kReject});
  if (!spawned.ok()) return spawned.status();
  game->spawned_ = *std::move(spawned);
  return game;
}

size_t Game::Step(float seconds) {
  strata::Filter moving;
  moving.Include(velocity_);
  size_t moved = 0;
  strata::ForEachMatch(
      pages_, moving,
      [&](strata::Entity e, Velocity& v) {
        strata::TransformComponent::Instance t = transforms_.Lookup(e);
        if (!transforms_.IsValid(t)) return;
        strata::Matrix4x4 local = transforms_.Local(t);
        local.m[12] += v.x * seconds;
        local.m[13] += v.y * seconds;
        local.m[14] += v.z * seconds;
        transforms_.SetLocal(t, local);
        ++moved;
      },
      velocity_);
  return moved;
}

absl::StatusOr<strata::Vector3> Game::WorldPosition(strata::Entity e) const {
  strata::TransformComponent::Instance t = transforms_.Lookup(e);
  if (!entities_.Alive(e) || !transforms_.IsValid(t)) {
    return absl::NotFoundError(absl::StrCat(e.DebugString(), " has no transform"));
  }
  return transforms_.World(t).translation();
}

absl::Status Game::Destroy(strata::Entity e) { return entities_.Destroy(e); }

}  // namespace game
