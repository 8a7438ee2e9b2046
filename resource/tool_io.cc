#include "resource/tool_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "absl/strings/str_cat.h"
#include "base/huge_page_allocator.h"
#include "base/user_text.h"

namespace strata {
namespace {

static_assert(__STDCPP_DEFAULT_NEW_ALIGNMENT__ >= 16,
              "ReadToolFile promises 16-byte aligned bytes (EntityResourceView::Create)");

// Paths are echoed in full up to PATH_MAX, escaped (a newline in a file name must not
// forge a second message line).
constexpr size_t kPathEcho = 4096;

std::string Quoted(absl::string_view path) { return UserText(path, kPathEcho); }

// The canonical code for errno value `err` (taken by value before anything can change
// errno), with the path, `what` failed and the OS reason as the message.
absl::Status ErrnoStatus(int err, absl::string_view path, absl::string_view what = "") {
  std::string message = absl::StrCat(Quoted(path), what, ": ", std::strerror(err));
  switch (err) {
    case ENOENT:
      return absl::NotFoundError(std::move(message));
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::PermissionDeniedError(std::move(message));
    case EISDIR:
    case ENOTDIR:
    case ELOOP:
    case ENAMETOOLONG:
      return absl::FailedPreconditionError(std::move(message));
    case ENOSPC:
    case EFBIG:
    case EDQUOT:
    case EMFILE:
    case ENFILE:
    case ENOMEM:
      return absl::ResourceExhaustedError(std::move(message));
    case EIO:
      return absl::DataLossError(std::move(message));
    default:
      return absl::UnknownError(std::move(message));
  }
}

// Owns a file descriptor; Close() reports the error close(2) can return (a network file
// system may report a failed write only there).
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  // Close: 0 or the errno of close(2).
  int Close() {
    const int fd = fd_;
    fd_ = -1;
    return ::close(fd) == 0 ? 0 : errno;
  }

 private:
  int fd_;
};

int OpenRetrying(const char* path, int flags, mode_t mode = 0) {
  int fd;
  do {
    fd = ::open(path, flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

template <typename Buffer>
absl::StatusOr<Buffer> ReadAll(const std::string& path) {
  Fd fd(OpenRetrying(path.c_str(), O_RDONLY));
  if (fd.get() < 0) return ErrnoStatus(errno, path);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, path);
  if (S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(Quoted(path), ": is a directory, not a file"));
  }
  Buffer buffer;
  // A regular file's size is known: the buffer is sized once and filled by reads of up
  // to kMaxRead (a fresh 100 MB buffer grown 64 KiB at a time was zeroed and copied
  // in 1,500 steps), its pages advised huge before the first touch (one trap per 2 MiB
  // instead of per 4 KiB: a tool reading a big level faulted 23k pages here). Then
  // reads go on in chunks until the end of the file, which may have grown since fstat.
  // A pipe grows the buffer as it reads.
  constexpr size_t kChunk = size_t{1} << 16;
  constexpr size_t kMaxRead = size_t{1} << 30;
  size_t known = 0;
  if (S_ISREG(st.st_mode)) {
    known = static_cast<size_t>(st.st_size);
    buffer.reserve(known + kChunk);
    AdviseHugePages(buffer.data(), buffer.capacity());
  }
  for (;;) {
    const size_t old_size = buffer.size();
    const size_t want = old_size < known ? std::min(known - old_size, kMaxRead) : kChunk;
    buffer.resize(old_size + want);
    const ssize_t n = ::read(fd.get(), buffer.data() + old_size, want);
    if (n < 0) {
      const int err = errno;
      buffer.resize(old_size);
      if (err == EINTR) continue;
      return ErrnoStatus(err, path, ": read failed");
    }
    buffer.resize(old_size + static_cast<size_t>(n));
    if (n == 0) break;
  }
  return buffer;
}

// Removes the temporary file unless Release() was called (the rename moved it).
class RemoveOnFailure {
 public:
  explicit RemoveOnFailure(std::string path) : path_(std::move(path)) {}
  RemoveOnFailure(const RemoveOnFailure&) = delete;
  RemoveOnFailure& operator=(const RemoveOnFailure&) = delete;
  ~RemoveOnFailure() {
    if (!released_) ::unlink(path_.c_str());
  }
  void Release() { released_ = true; }

 private:
  std::string path_;
  bool released_ = false;
};

// A name no other call (this process, any thread) uses; O_EXCL catches other processes.
std::string TemporaryName(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  return absl::StrCat(path, ".tmp.", ::getpid(), ".", counter.fetch_add(1));
}

const char* FileKind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a pipe";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

}  // namespace

// Refuses `path` if it exists and is not a regular file (the rename would replace a
// directory entry such as /dev/null, not write into it) or is the same file as an input.
absl::Status CheckToolOutputPath(const std::string& path, absl::Span<const std::string> inputs) {
  if (path.empty()) return absl::InvalidArgumentError("empty output path");
  struct stat out;
  if (::stat(path.c_str(), &out) != 0) {
    // ENOENT: a new file, nothing to compare. Anything else (a path component that is
    // a file, EACCES on a parent) the write reports when it creates its file.
    return absl::OkStatus();
  }
  if (!S_ISREG(out.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(Quoted(path), ": is ", FileKind(out.st_mode), ", not a regular file"));
  }
  for (const std::string& input : inputs) {
    struct stat in;
    if (::stat(input.c_str(), &in) != 0) continue;
    if (in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
      return absl::FailedPreconditionError(absl::StrCat(
          "refusing to write ", Quoted(path), ": it is the input file ", Quoted(input),
          path == input ? "" : " (the same file under another name)",
          "; give the output another name"));
    }
  }
  return absl::OkStatus();
}

std::string ResolveToolPath(absl::string_view path) {
  const char* cwd = std::getenv("BUILD_WORKING_DIRECTORY");
  if (path.empty() || path.front() == '/' || cwd == nullptr || *cwd == '\0') {
    return std::string(path);
  }
  const absl::string_view dir(cwd);
  return absl::StrCat(dir, dir.back() == '/' ? "" : "/", path);
}

absl::StatusOr<std::vector<std::byte>> ReadToolFile(const std::string& path) {
  return ReadAll<std::vector<std::byte>>(path);
}

absl::StatusOr<std::string> ReadToolFileText(const std::string& path) {
  return ReadAll<std::string>(path);
}

absl::Status WriteToolFileAtomically(const std::string& path, absl::Span<const std::byte> bytes,
                                     absl::Span<const std::string> inputs_not_to_overwrite) {
  if (absl::Status refused = CheckToolOutputPath(path, inputs_not_to_overwrite); !refused.ok()) {
    return refused;
  }
  const std::string tmp = TemporaryName(path);
  // Every message names the output first: the temporary file is a detail.
  const std::string via = absl::StrCat(" (via ", Quoted(tmp), ")");
  Fd fd(OpenRetrying(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0666));
  if (fd.get() < 0) {
    const int err = errno;
    return ErrnoStatus(err, path, absl::StrCat(via, ": cannot create"));
  }
  RemoveOnFailure cleanup(tmp);

  const std::byte* p = bytes.data();
  size_t left = bytes.size();
  while (left > 0) {
    const ssize_t n = ::write(fd.get(), p, left);
    if (n < 0) {
      const int err = errno;
      if (err == EINTR) continue;
      return ErrnoStatus(err, path, absl::StrCat(via, ": write failed after ", bytes.size() - left,
                                                 " of ", bytes.size(), " bytes"));
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0) {
    const int err = errno;
    return ErrnoStatus(err, path, absl::StrCat(via, ": fsync failed"));
  }
  if (const int err = fd.Close(); err != 0) {
    return ErrnoStatus(err, path, absl::StrCat(via, ": close failed"));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    return ErrnoStatus(err, path, absl::StrCat(via, ": rename failed"));
  }
  cleanup.Release();
  return absl::OkStatus();
}

}  // namespace strata
