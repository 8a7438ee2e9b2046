#include "testing/status_matchers.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(StatusMatchers, IsOkOnStatusAndStatusOr) {
  EXPECT_THAT(absl::OkStatus(), IsOk());
  EXPECT_THAT(absl::InternalError("x"), Not(IsOk()));
  EXPECT_THAT(absl::StatusOr<int>(3), IsOk());
  EXPECT_THAT(absl::StatusOr<int>(absl::NotFoundError("gone")), Not(IsOk()));
}

TEST(StatusMatchers, StatusIsComparesCode) {
  absl::Status status = absl::DataLossError("truncated at byte 12");
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(status, Not(StatusIs(absl::StatusCode::kInvalidArgument)));
  EXPECT_THAT(absl::StatusOr<std::string>(status),
              StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(absl::OkStatus(), StatusIs(absl::StatusCode::kOk));
}

TEST(StatusMatchers, StatusIsComparesMessage) {
  absl::Status status = absl::DataLossError("truncated at byte 12");
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kDataLoss, "truncated at byte 12"));
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kDataLoss, HasSubstr("byte 12")));
  EXPECT_THAT(status, Not(StatusIs(absl::StatusCode::kDataLoss, HasSubstr("byte 13"))));
  EXPECT_THAT(status, Not(StatusIs(absl::StatusCode::kNotFound, HasSubstr("byte 12"))));
}

TEST(StatusMatchers, ExplainsFailure) {
  ::testing::StringMatchResultListener listener;
  EXPECT_FALSE(::testing::ExplainMatchResult(IsOk(), absl::AbortedError("stop"),
                                             &listener));
  EXPECT_THAT(listener.str(), HasSubstr("stop"));
}

TEST(StatusMatchers, AssertOkAndAssignMovesValue) {
  STRATA_ASSERT_OK_AND_ASSIGN(std::string value,
                              absl::StatusOr<std::string>("payload"));
  EXPECT_EQ(value, "payload");
  STRATA_EXPECT_OK(absl::OkStatus());
}

}  // namespace
}  // namespace strata::testing
