// GoogleTest matchers and assertions for absl::Status and absl::StatusOr<T>.
//
//   EXPECT_THAT(manager.Destroy(stale), StatusIs(absl::StatusCode::kNotFound));
//   EXPECT_THAT(view, StatusIs(absl::StatusCode::kDataLoss, HasSubstr("truncated")));
//   STRATA_ASSERT_OK_AND_ASSIGN(auto blob, compiler.Compile(json, {}));
//   EXPECT_THAT(status_or_value, IsOk());
#ifndef STRATA_TESTING_STATUS_MATCHERS_H_
#define STRATA_TESTING_STATUS_MATCHERS_H_

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace strata::testing {
namespace status_matchers_internal {

inline const absl::Status& GetStatus(const absl::Status& status) { return status; }

template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

}  // namespace status_matchers_internal

// IsOk(): matches an OK absl::Status or an absl::StatusOr<T> that holds a value.
MATCHER(IsOk, negation ? "is not OK" : "is OK") {
  const absl::Status& status = status_matchers_internal::GetStatus(arg);
  if (!status.ok()) *result_listener << "status is " << status;
  return status.ok();
}

// StatusIs(code): matches a Status / StatusOr whose code is `code`.
MATCHER_P(StatusIs, code,
          std::string(negation ? "does not have" : "has") + " status code " +
              absl::StatusCodeToString(code)) {
  const absl::Status& status = status_matchers_internal::GetStatus(arg);
  *result_listener << "status is " << status;
  return status.code() == code;
}

// StatusIs(code, message_matcher): also matches the message, with a string or a
// matcher such as HasSubstr("entities[3]").
MATCHER_P2(StatusIs, code, message_matcher,
           std::string(negation ? "does not have" : "has") + " status code " +
               absl::StatusCodeToString(code) + " and a matching message") {
  const absl::Status& status = status_matchers_internal::GetStatus(arg);
  *result_listener << "status is " << status;
  return status.code() == code &&
         ::testing::Matches(message_matcher)(std::string(status.message()));
}

}  // namespace strata::testing

// STRATA_ASSERT_OK(expr) / STRATA_EXPECT_OK(expr): the status (or StatusOr) is OK.
#define STRATA_ASSERT_OK(expr) ASSERT_THAT(expr, ::strata::testing::IsOk())
#define STRATA_EXPECT_OK(expr) EXPECT_THAT(expr, ::strata::testing::IsOk())

// STRATA_ASSERT_OK_AND_ASSIGN(lhs, expr): asserts `expr` (a StatusOr) holds a value and
// moves it into `lhs`, which may be a declaration.
#define STRATA_ASSERT_OK_AND_ASSIGN(lhs, expr)                                \
  STRATA_ASSERT_OK_AND_ASSIGN_IMPL_(                                          \
      STRATA_TESTING_CONCAT_(strata_test_statusor_, __LINE__), lhs, expr)

#define STRATA_ASSERT_OK_AND_ASSIGN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                      \
  ASSERT_THAT(statusor.status(), ::strata::testing::IsOk());   \
  lhs = std::move(statusor).value()

#define STRATA_TESTING_CONCAT_INNER_(a, b) a##b
#define STRATA_TESTING_CONCAT_(a, b) STRATA_TESTING_CONCAT_INNER_(a, b)

#endif  // STRATA_TESTING_STATUS_MATCHERS_H_
