// Status propagation macros. Abseil 20220623 ships no ASSIGN_OR_RETURN, so Strata
// defines the two it needs once, here.
//
//   absl::StatusOr<Level> LoadLevel(absl::string_view path) {
//     STRATA_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
//     STRATA_RETURN_IF_ERROR(Validate(text));
//     return Parse(text);
//   }
#ifndef STRATA_BASE_STATUS_MACROS_H_
#define STRATA_BASE_STATUS_MACROS_H_

#include <utility>

#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/policy_checks.h"

// STRATA_RETURN_IF_ERROR(expr): evaluates `expr` (an absl::Status) once and returns it
// from the enclosing function when it is not OK.
#define STRATA_RETURN_IF_ERROR(expr)                         \
  do {                                                       \
    ::absl::Status strata_status_ = (expr);                  \
    if (ABSL_PREDICT_FALSE(!strata_status_.ok())) {          \
      return strata_status_;                                 \
    }                                                        \
  } while (false)

// STRATA_ASSIGN_OR_RETURN(lhs, expr): evaluates `expr` (an absl::StatusOr<T>) once; on
// error returns its status, otherwise moves the value into `lhs`, which may be a
// declaration (`auto x`) or an existing lvalue.
#define STRATA_ASSIGN_OR_RETURN(lhs, expr)                                          \
  STRATA_ASSIGN_OR_RETURN_IMPL_(STRATA_STATUS_CONCAT_(strata_statusor_, __LINE__), \
                                lhs, expr)

#define STRATA_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                  \
  if (ABSL_PREDICT_FALSE(!statusor.ok())) {                \
    return std::move(statusor).status();                   \
  }                                                        \
  lhs = std::move(statusor).value()

#define STRATA_STATUS_CONCAT_INNER_(a, b) a##b
#define STRATA_STATUS_CONCAT_(a, b) STRATA_STATUS_CONCAT_INNER_(a, b)

#endif  // STRATA_BASE_STATUS_MACROS_H_
