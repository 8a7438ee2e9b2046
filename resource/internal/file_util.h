// The former file helpers of the resource tools, now forwarding to resource/tool_io.h
// (which adds the OS reason to every error, names directories, and writes atomically
// without leaving a temporary file). New code calls tool_io.h; this header goes once
// component/ and engine/ do.
#ifndef STRATA_RESOURCE_INTERNAL_FILE_UTIL_H_
#define STRATA_RESOURCE_INTERNAL_FILE_UTIL_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "resource/tool_io.h"

namespace strata::resource_internal {

inline absl::StatusOr<std::vector<std::byte>> ReadFileBytes(const std::string& path) {
  return ReadToolFile(path);
}

inline absl::StatusOr<std::string> ReadFileText(const std::string& path) {
  return ReadToolFileText(path);
}

// WriteFileBytes: WriteToolFileAtomically with no inputs to protect.
inline absl::Status WriteFileBytes(const std::string& path, absl::Span<const std::byte> bytes) {
  return WriteToolFileAtomically(path, bytes, {});
}

}  // namespace strata::resource_internal

#endif  // STRATA_RESOURCE_INTERNAL_FILE_UTIL_H_
