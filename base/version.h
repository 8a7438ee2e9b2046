// STRATA_VERSION / kVersion: the number of the newest CHANGELOG.md entry that breaks
// or silently changes a consumer's code. Bumped by one with every such entry, so an
// engine can state which changes it was written against:
//
//   #include "base/version.h"
//   static_assert(STRATA_VERSION >= 21, "needs set-by-name without range checks");
//
// A macro as well as a constant, so `#if STRATA_VERSION >= N` works too.
#ifndef STRATA_BASE_VERSION_H_
#define STRATA_BASE_VERSION_H_

#define STRATA_VERSION 30

namespace strata {

inline constexpr int kVersion = STRATA_VERSION;

}  // namespace strata

#endif  // STRATA_BASE_VERSION_H_
