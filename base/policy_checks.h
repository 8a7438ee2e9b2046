// Policy checks: stops the compile with one message naming C++20 when Strata is built
// with an older language standard, the way absl/base/policy_checks.h enforces Abseil's
// minimum. Strata's lowest headers (entity/entity.h, entity/store_handle.h,
// base/id_string.h, base/matrix.h, iteration/row_mask_pages.h and base/'s own)
// include it first, so every public header reaches it before any code that needs
// C++20. A workspace that builds Strata sets the standard in its .bazelrc:
//
//   build --cxxopt=-std=c++20
//   build --host_cxxopt=-std=c++20
#ifndef STRATA_BASE_POLICY_CHECKS_H_
#define STRATA_BASE_POLICY_CHECKS_H_

#if !defined(__cplusplus) || __cplusplus < 202002L
#error "Strata requires C++20: compile with -std=c++20 (Bazel: build --cxxopt=-std=c++20 --host_cxxopt=-std=c++20 in your .bazelrc)"
#endif

#endif  // STRATA_BASE_POLICY_CHECKS_H_
