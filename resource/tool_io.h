// Tool I/O: the file handling every Strata command-line tool shares (compile, inspect,
// the engine demo, a game's own tools), so each tool resolves, reads and writes files
// the same way and says why when it cannot.
//
//   const std::string in = ResolveToolPath(argv[1]);   // relative to `bazel run`'s cwd
//   const std::string out = ResolveToolPath(argv[2]);
//   STRATA_RETURN_IF_ERROR(CheckToolOutputPath(out, {in}));  // optional: fail early
//   STRATA_ASSIGN_OR_RETURN(std::string json, ReadToolFileText(in));
//   ... compile json into `blob` ...
//   STRATA_RETURN_IF_ERROR(WriteToolFileAtomically(out, blob, {in}));
//   (tool_io_test.cc's HeaderExample runs this shape.)
//
// - ResolveToolPath: `bazel run` starts a tool inside its runfiles tree and puts the
//   user's directory in BUILD_WORKING_DIRECTORY; a relative path is resolved there.
// - ReadToolFile / ReadToolFileText read a whole file (a regular file, a pipe, a
//   process substitution). A directory is refused as one, not as a "read error".
// - WriteToolFileAtomically writes a temporary file beside the output and renames it
//   over the output, so the output is either the old file or the whole new one. It
//   refuses to replace any of the tool's inputs (the same file, also through a symlink
//   or a hard link) before anything is written, and removes its temporary file on every
//   failure path.
//
// Errors are absl::Status values whose message names the path and gives the operating
// system's reason (strerror: "No such file or directory", "File too large", "No space
// left on device"). Paths in messages are escaped (base/user_text.h). Codes:
//   NotFound            the file (or a directory on its path) does not exist
//   PermissionDenied    EACCES / EPERM / EROFS
//   FailedPrecondition  a directory where a file is expected; an output that is not a
//                       regular file or is an input; a path component that is not a
//                       directory; too many symlinks; a name too long
//   ResourceExhausted   ENOSPC, EFBIG (file size limit), EDQUOT, EMFILE, ENOMEM
//   DataLoss            EIO: the device failed during the read or write
//   Unknown             any other errno (the message has its strerror)
//
// Thread-safety: the functions may run concurrently (each call uses its own file
// descriptors and a temporary name unique to the process, call and thread); two calls
// writing the same output race as rename(2) does: the last rename wins, whole.
#ifndef STRATA_RESOURCE_TOOL_IO_H_
#define STRATA_RESOURCE_TOOL_IO_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace strata {

// ResolveToolPath: `path` as the user meant it. When the environment variable
// BUILD_WORKING_DIRECTORY is set and non-empty (`bazel run`), a relative `path` is
// joined to it; an absolute or empty `path`, or any path when the variable is unset,
// is returned unchanged. Call it on the paths a user typed, not on paths a tool finds
// itself (a default data file in its runfiles). Reads the environment on every call.
std::string ResolveToolPath(absl::string_view path);

// ReadToolFile: the whole file at `path`, used as given (resolve it first). O(size).
// NOTE: std::vector<std::byte> storage comes from operator new, which is 16-byte
// aligned on every platform Strata targets (__STDCPP_DEFAULT_NEW_ALIGNMENT__, checked
// at compile time in tool_io.cc), as EntityResourceView::Create requires; the bytes
// can be viewed in place.
absl::StatusOr<std::vector<std::byte>> ReadToolFile(const std::string& path);

// ReadToolFileText: the same, as text (JSON, for example). No encoding check.
absl::StatusOr<std::string> ReadToolFileText(const std::string& path);

// WriteToolFileAtomically: replaces the file at `path` (used as given) with `bytes`.
//  1. Refuses, with FailedPrecondition and nothing written, when `path` names an
//     existing directory or other non-regular file (a device such as /dev/null, a
//     pipe: the rename would replace it, not write into it), or the same file (device
//     and inode, after following symlinks) as any existing path in
//     `inputs_not_to_overwrite`. Inputs that do not exist (any more) are ignored.
//     InvalidArgument for an empty `path`.
//  2. Writes `bytes` to a new temporary file `<path>.tmp.<unique>` in the same
//     directory (mode 0666 less the umask), flushes it to the device (fsync), and
//     renames it to `path`. A symlink at `path` is replaced by the file; its target is
//     left alone.
//  3. On any failure the temporary file is removed and the existing file at `path`, if
//     any, is untouched; the message names `path` and gives the OS reason.
// Not protected against the process being killed mid-write: then the temporary file
// stays (its name says what it is). O(size).
absl::Status WriteToolFileAtomically(const std::string& path, absl::Span<const std::byte> bytes,
                                     absl::Span<const std::string> inputs_not_to_overwrite);

// CheckToolOutputPath: step 1 of WriteToolFileAtomically alone, so a tool can refuse a
// bad output path before its slow work (WriteToolFileAtomically checks again: the
// file system may change in between). OkStatus for a path that does not exist yet.
absl::Status CheckToolOutputPath(const std::string& path,
                                 absl::Span<const std::string> inputs_not_to_overwrite);

}  // namespace strata

#endif  // STRATA_RESOURCE_TOOL_IO_H_
