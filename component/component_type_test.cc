// The spawn helpers of component_type.h called with arguments that do not match.
#include "component/component_type.h"

#include <vector>

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

}  // namespace
}  // namespace strata
