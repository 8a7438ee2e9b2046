#include "resource/internal/file_util.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"

namespace strata::resource_internal {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

absl::Status OpenError(const std::string& path, int err) {
  const std::string message = absl::StrCat(path, ": ", std::strerror(err));
  if (err == ENOENT) return absl::NotFoundError(message);
  if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(message);
  return absl::UnavailableError(message);
}

template <typename Buffer>
absl::StatusOr<Buffer> ReadAll(const std::string& path) {
  File f(std::fopen(path.c_str(), "rb"));
  if (f == nullptr) return OpenError(path, errno);
  Buffer buffer;
  char chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof(chunk), f.get())) > 0) {
    const auto* p = reinterpret_cast<const typename Buffer::value_type*>(chunk);
    buffer.insert(buffer.end(), p, p + n);
  }
  if (std::ferror(f.get())) return absl::DataLossError(absl::StrCat(path, ": read error"));
  return buffer;
}

}  // namespace

absl::StatusOr<std::vector<std::byte>> ReadFileBytes(const std::string& path) {
  return ReadAll<std::vector<std::byte>>(path);
}

absl::StatusOr<std::string> ReadFileText(const std::string& path) {
  return ReadAll<std::string>(path);
}

absl::Status WriteFileBytes(const std::string& path, absl::Span<const std::byte> bytes) {
  const std::string tmp = absl::StrCat(path, ".tmp");
  {
    File f(std::fopen(tmp.c_str(), "wb"));
    if (f == nullptr) return OpenError(tmp, errno);
    if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f.get()) != bytes.size()) {
      return absl::DataLossError(absl::StrCat(tmp, ": write error"));
    }
    if (std::fflush(f.get()) != 0) return absl::DataLossError(absl::StrCat(tmp, ": write error"));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    return absl::UnavailableError(absl::StrCat("rename ", tmp, " -> ", path, ": ", std::strerror(err)));
  }
  return absl::OkStatus();
}

}  // namespace strata::resource_internal
