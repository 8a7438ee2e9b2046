// File helpers for the resource command-line tools: whole-file reads into a buffer
// aligned for EntityResourceView, and whole-file writes.
#ifndef STRATA_RESOURCE_INTERNAL_FILE_UTIL_H_
#define STRATA_RESOURCE_INTERNAL_FILE_UTIL_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace strata::resource_internal {

// ReadFileBytes: the whole file. NOTE: std::vector<std::byte> storage comes from
// operator new, which is 16-byte aligned on every platform Strata targets
// (__STDCPP_DEFAULT_NEW_ALIGNMENT__), as EntityResourceView::Create requires.
// NotFound / PermissionDenied / DataLoss (read error) naming the path.
absl::StatusOr<std::vector<std::byte>> ReadFileBytes(const std::string& path);

// ReadFileText: the whole file as text.
absl::StatusOr<std::string> ReadFileText(const std::string& path);

// WriteFileBytes: writes `bytes` to `path`, replacing it. Writes a temporary file
// first and renames it, so a failed write never leaves a half-written resource.
absl::Status WriteFileBytes(const std::string& path, absl::Span<const std::byte> bytes);

}  // namespace strata::resource_internal

#endif  // STRATA_RESOURCE_INTERNAL_FILE_UTIL_H_
