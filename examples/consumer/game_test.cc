#include "game.h"

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "base/matrix.h"
#include "entity/entity.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace game {
namespace {

using ::testing::HasSubstr;

// Level entities, depth-first: 0 ship, 1 turret (the ship's child), 2 rock, 3 beacon.
constexpr char kLevel[] = R"({"entities": [
  {"name": "ship",
   "components": [{"type": "transform"}, {"type": "velocity", "value": [1, 0, 0]}],
   "children": [{"name": "turret",
                 "components": [{"type": "transform", "position": [0, 1, 0]}]}]},
  {"name": "rock",
   "components": [{"type": "transform", "position": [10, 0, 0]},
                  {"type": "velocity", "value": [0, 0, -2]}]},
  {"name": "beacon", "components": [{"type": "transform", "position": [0, 0, 5]}]}
]})";

std::unique_ptr<Game> LoadOrDie(const std::string& level) {
  absl::StatusOr<std::unique_ptr<Game>> game = Game::Load(level);
  EXPECT_TRUE(game.ok()) << game.status();
  return game.ok() ? *std::move(game) : nullptr;
}

strata::Vector3 PositionOf(const Game& game, size_t k) {
  absl::StatusOr<strata::Vector3> p = game.WorldPosition(game.entity(k));
  EXPECT_TRUE(p.ok()) << p.status();
  return p.ok() ? *p : strata::Vector3{-1e9f, -1e9f, -1e9f};
}

TEST(Game, LoadSpawnsEveryEntityAtItsPosition) {
  std::unique_ptr<Game> game = LoadOrDie(kLevel);
  ASSERT_NE(game, nullptr);
  EXPECT_EQ(game->num_spawned(), 4u);
  EXPECT_EQ(game->num_alive(), 4u);
  EXPECT_EQ(PositionOf(*game, 0), (strata::Vector3{0, 0, 0}));
  EXPECT_EQ(PositionOf(*game, 1), (strata::Vector3{0, 1, 0}));
  EXPECT_EQ(PositionOf(*game, 2), (strata::Vector3{10, 0, 0}));
  EXPECT_EQ(PositionOf(*game, 3), (strata::Vector3{0, 0, 5}));
}

TEST(Game, StepMovesWhatHasAVelocityAndChildrenFollow) {
  std::unique_ptr<Game> game = LoadOrDie(kLevel);
  ASSERT_NE(game, nullptr);
  EXPECT_EQ(game->Step(0.5f), 2u);
  EXPECT_EQ(PositionOf(*game, 0), (strata::Vector3{0.5f, 0, 0}));
  EXPECT_EQ(PositionOf(*game, 1), (strata::Vector3{0.5f, 1, 0}));  // follows the ship
  EXPECT_EQ(PositionOf(*game, 2), (strata::Vector3{10, 0, -1}));
  EXPECT_EQ(PositionOf(*game, 3), (strata::Vector3{0, 0, 5}));     // no velocity
  EXPECT_EQ(game->Step(0.5f), 2u);
  EXPECT_EQ(PositionOf(*game, 1), (strata::Vector3{1, 1, 0}));
  EXPECT_EQ(PositionOf(*game, 2), (strata::Vector3{10, 0, -2}));
}

TEST(Game, DestroyedEntitiesStopMovingAndTheirChildrenStay) {
  std::unique_ptr<Game> game = LoadOrDie(kLevel);
  ASSERT_NE(game, nullptr);
  game->Step(1.0f);
  ASSERT_TRUE(game->Destroy(game->entity(0)).ok());
  EXPECT_EQ(game->num_alive(), 3u);
  EXPECT_EQ(game->WorldPosition(game->entity(0)).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(game->Destroy(game->entity(0)).code(), absl::StatusCode::kNotFound);
  // The turret is a root now: its world is its local, which is where it was relative to
  // the ship, and it no longer moves.
  EXPECT_EQ(PositionOf(*game, 1), (strata::Vector3{0, 1, 0}));
  EXPECT_EQ(game->Step(1.0f), 1u);
  EXPECT_EQ(PositionOf(*game, 1), (strata::Vector3{0, 1, 0}));
  EXPECT_EQ(PositionOf(*game, 2), (strata::Vector3{10, 0, -4}));
}

TEST(Game, EmptyLevel) {
  std::unique_ptr<Game> game = LoadOrDie(R"({"entities": []})");
  ASSERT_NE(game, nullptr);
  EXPECT_EQ(game->num_spawned(), 0u);
  EXPECT_EQ(game->Step(1.0f), 0u);
}

TEST(Game, ManyEntities) {
  constexpr int kCount = 1000;
  std::string level = R"({"entities": [)";
  for (int i = 0; i < kCount; ++i) {
    absl::StrAppend(&level, i == 0 ? "" : ",", R"({"components": [{"type": "transform", )",
                    R"("position": [)", i, R"(, 0, 0]}, {"type": "velocity", "value": [0, )",
                    i % 7, R"(, 0]}]})");
  }
  absl::StrAppend(&level, "]}");
  std::unique_ptr<Game> game = LoadOrDie(level);
  ASSERT_NE(game, nullptr);
  ASSERT_EQ(game->num_spawned(), static_cast<size_t>(kCount));
  EXPECT_EQ(game->Step(2.0f), static_cast<size_t>(kCount));
  for (int i = 0; i < kCount; ++i) {
    ASSERT_EQ(PositionOf(*game, i), (strata::Vector3{static_cast<float>(i),
                                                     static_cast<float>(2 * (i % 7)), 0}))
        << "entity " << i;
  }
}

TEST(Game, RejectsAnUnknownComponentType) {
  absl::StatusOr<std::unique_ptr<Game>> game =
      Game::Load(R"({"entities": [{"name": "gate", "components": [{"type": "teleporter"}]}]})");
  ASSERT_FALSE(game.ok());
  EXPECT_EQ(game.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(game.status().message(), HasSubstr("teleporter"));
}

TEST(Game, RejectsABadVelocity) {
  absl::StatusOr<std::unique_ptr<Game>> game = Game::Load(
      R"({"entities": [{"name": "rock", "components": [{"type": "velocity", "value": [1, 2]}]}]})");
  ASSERT_FALSE(game.ok());
  EXPECT_EQ(game.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(game.status().message(), HasSubstr("value"));
  EXPECT_THAT(game.status().message(), HasSubstr("rock"));

  game = Game::Load(R"({"entities": [{"components": [{"type": "velocity", "speed": 1}]}]})");
  ASSERT_FALSE(game.ok());
  EXPECT_THAT(game.status().message(), HasSubstr("speed"));
}

}  // namespace
}  // namespace game
