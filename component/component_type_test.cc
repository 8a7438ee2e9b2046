// The spawn helpers of component_type.h called with arguments that do not match.
#include "component/component_type.h"

#include <cstring>
#include <vector>

#include "component/declare.h"
#include "component/named_component.h"
#include "entity/entity_manager.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "index/entity_index.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::testing::HasSubstr;

struct Effect {
  float density = 0;
};

TEST(RegisterSpawnedByName, OwnersAndNamesOfDifferentSizesAreInvalidArgument) {
  EntityManager entities;
  EntityIndex index;
  NamedComponentManager<Effect> effects(entities, "effect");
  const std::vector<Entity> owners = {entities.Create(), entities.Create(), entities.Create()};
  const uint32_t fog = IdString32("Fog").value();
  const uint32_t bloom = IdString32("Bloom").value();
  const std::vector<uint32_t> one_name = {fog};
  const std::vector<uint32_t> two_names = {fog, bloom};
  const std::vector<uint32_t> none;
  EXPECT_THAT(RegisterSpawnedByName(index, &effects, owners, one_name),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("3 owners, 1 names")));
  EXPECT_THAT(RegisterSpawnedByName(index, &effects, owners, two_names),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("3 owners, 2 names")));
  EXPECT_THAT(RegisterSpawnedByName(index, &effects, owners, none),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("3 owners, 0 names")));
  EXPECT_THAT(RegisterSpawnedByName(index, &effects, {}, one_name),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("0 owners, 1 names")));
  // Nothing was registered by the calls that failed.
  EXPECT_EQ(index.FindComponentManager(owners[0], IdString32("Fog")), nullptr);
  // Matching sizes: one name, then several.
  EXPECT_THAT(RegisterSpawnedByName(index, &effects, {}, none), IsOk());
  EXPECT_THAT(
      RegisterSpawnedByName(index, &effects, absl::MakeConstSpan(owners).subspan(0, 1), one_name),
      IsOk());
  EXPECT_EQ(index.FindComponentManager(owners[0], IdString32("Fog")), &effects);
  EXPECT_THAT(
      RegisterSpawnedByName(index, &effects, absl::MakeConstSpan(owners).subspan(1, 2), two_names),
      IsOk());
  EXPECT_EQ(index.FindComponentManager(owners[2], IdString32("Bloom")), &effects);
}

struct Pair {
  float a = 0;
  float b = 0;
};
struct Wide {
  Vector3 v;
};

// A batch of `type` over `data`: instance i (of `stride` bytes) belongs to
// entities[owners[i]] under names[i].
ComponentSpawnBatch Batch(absl::Span<const Entity> entities, const std::vector<uint32_t>& owners,
                          const std::vector<uint32_t>& names, uint32_t stride,
                          const std::vector<std::byte>& data, const ComponentType& type) {
  ComponentSpawnBatch batch;
  batch.type = type.id();
  batch.entities = entities;
  batch.num_instances = static_cast<uint32_t>(owners.size());
  batch.entity_index = owners;
  batch.names = names;
  batch.instance_stride = stride;
  batch.data = data;
  batch.layout_fingerprint = type.fingerprint();
  batch.layout = type.layout();
  return batch;
}

TEST(DecodeInstances, APlanOrBatchThatDoesNotMatchIsAProgrammerError) {
  STRATA_ASSERT_OK_AND_ASSIGN(
      ComponentType pair,
      ComponentDeclaration<Pair>("pair").Field("a", &Pair::a).Field("b", &Pair::b).Build());
  STRATA_ASSERT_OK_AND_ASSIGN(ComponentType wide,
                              ComponentDeclaration<Wide>("wide").Field("v", &Wide::v).Build());
  STRATA_ASSERT_OK_AND_ASSIGN(
      ComponentType half,
      ComponentDeclaration<Effect>("half").Field("density", &Effect::density).Build());
  EntityManager entities;
  const std::vector<Entity> owners = {entities.Create()};
  const std::vector<uint32_t> at = {0, 0};
  const std::vector<uint32_t> names = {pair.id().value(), pair.id().value()};
  std::vector<std::byte> data(16);
  const float values[4] = {1, 2, 3, 4};
  std::memcpy(data.data(), values, 16);
  const ComponentSpawnBatch batch = Batch(owners, at, names, 8, data, pair);
  STRATA_ASSERT_OK_AND_ASSIGN(SpawnPlan plan, PlanSpawn(pair, batch));
  ASSERT_TRUE(plan.identity);
  std::vector<std::byte> out;
  ASSERT_THAT(DecodeInstances(pair, plan, batch, &out), IsOk());
  ASSERT_EQ(out.size(), 16u);
  EXPECT_EQ(std::memcmp(out.data(), values, 16), 0);

  // A plan of another type: another number of fields.
  EXPECT_DEATH(DecodeInstances(half, plan, batch, &out).IgnoreError(),
               "DecodeInstances: the plan was made for another type");
  // The same number of fields, but the plan's identity copy is of 4-byte instances
  // and the struct has 12: the batch's stride must be the struct's size.
  STRATA_ASSERT_OK_AND_ASSIGN(
      SpawnPlan half_plan, PlanSpawn(half, Batch(owners, {0}, {half.id().value()}, 4, data, half)));
  ASSERT_TRUE(half_plan.identity);
  EXPECT_DEATH(
      DecodeInstances(wide, half_plan, Batch(owners, {0}, {0}, 4, data, half), &out).IgnoreError(),
      "DecodeInstances: an identity plan needs");
  // Less data than num_instances * instance_stride.
  const std::vector<std::byte> short_data(12);
  EXPECT_DEATH(DecodeInstances(pair, plan, Batch(owners, at, names, 8, short_data, pair), &out)
                   .IgnoreError(),
               "DecodeInstances: the batch has less data");
  // A field of the plan past the batch's stride.
  SpawnPlan outside;
  outside.blob_offset = {0, 8};
  EXPECT_DEATH(DecodeInstances(pair, outside, batch, &out).IgnoreError(),
               "DecodeInstances: a field of the plan lies outside");
  // A field the plan leaves out (-1) takes its default; one at the last bytes is fine.
  SpawnPlan defaults;
  defaults.blob_offset = {-1, 4};
  ASSERT_THAT(DecodeInstances(pair, defaults, batch, &out), IsOk());
  const float expected[4] = {0, 2, 0, 4};
  EXPECT_EQ(std::memcmp(out.data(), expected, 16), 0);
}

}  // namespace
}  // namespace strata
