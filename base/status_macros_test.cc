#include "base/status_macros.h"

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;

absl::Status FailIf(bool fail) {
  return fail ? absl::InvalidArgumentError("asked to fail") : absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<int>> MakeValue(bool fail, int value) {
  if (fail) return absl::NotFoundError("no value");
  return std::make_unique<int>(value);
}

absl::Status Chain(bool fail_first, bool fail_second, int* evaluations) {
  ++*evaluations;
  STRATA_RETURN_IF_ERROR(FailIf(fail_first));
  ++*evaluations;
  STRATA_RETURN_IF_ERROR(FailIf(fail_second));
  ++*evaluations;
  return absl::OkStatus();
}

absl::StatusOr<int> Sum(bool fail_a, bool fail_b) {
  // Move-only values pass through, and two uses on different lines do not clash.
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<int> a, MakeValue(fail_a, 2));
  STRATA_ASSIGN_OR_RETURN(auto b, MakeValue(fail_b, 40));
  return *a + *b;
}

TEST(StatusMacros, ReturnIfErrorStopsAtFirstError) {
  int evaluations = 0;
  EXPECT_THAT(Chain(false, false, &evaluations), IsOk());
  EXPECT_EQ(evaluations, 3);

  evaluations = 0;
  EXPECT_THAT(Chain(true, false, &evaluations),
              StatusIs(absl::StatusCode::kInvalidArgument, "asked to fail"));
  EXPECT_EQ(evaluations, 1);

  evaluations = 0;
  EXPECT_THAT(Chain(false, true, &evaluations),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(evaluations, 2);
}

TEST(StatusMacros, AssignOrReturnPropagatesOrAssigns) {
  absl::StatusOr<int> ok = Sum(false, false);
  ASSERT_THAT(ok, IsOk());
  EXPECT_EQ(*ok, 42);
  EXPECT_THAT(Sum(true, false), StatusIs(absl::StatusCode::kNotFound, "no value"));
  EXPECT_THAT(Sum(false, true), StatusIs(absl::StatusCode::kNotFound));
}

TEST(StatusMacros, AssignOrReturnAssignsExistingVariable) {
  auto assign = [](bool fail, std::string* out) -> absl::Status {
    absl::StatusOr<std::string> value =
        fail ? absl::StatusOr<std::string>(absl::DataLossError("corrupt"))
             : absl::StatusOr<std::string>("payload");
    STRATA_ASSIGN_OR_RETURN(*out, std::move(value));
    return absl::OkStatus();
  };
  std::string out = "unchanged";
  EXPECT_THAT(assign(true, &out), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_EQ(out, "unchanged");
  EXPECT_THAT(assign(false, &out), IsOk());
  EXPECT_EQ(out, "payload");
}

}  // namespace
}  // namespace strata
