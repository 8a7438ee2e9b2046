// FixedString<N>: text of at most N bytes held in place (N bytes, no heap), for the
// plain, trivially copyable structs components are: a display name, a dialogue key.
// The bytes after the text are zero, so equal texts are equal bytes and a struct of
// them compares and copies with memcmp and memcpy.
//
//   struct Nameplate {
//     FixedString<24> title = "Wanderer";   // a literal longer than 24 does not compile
//   };
//   Nameplate plate;
//   if (!plate.title.Assign(user_input)) { ... }   // too long, or holds a NUL: unchanged
//   absl::string_view shown = plate.title.view();
//
// A declared component field of this type is a string field (component/field.h):
// checked against N when compiled from level JSON and when set by name.
#ifndef STRATA_BASE_FIXED_STRING_H_
#define STRATA_BASE_FIXED_STRING_H_

#include <cstddef>
#include <cstring>

#include "absl/strings/string_view.h"
#include "base/policy_checks.h"

namespace strata {

template <size_t N>
class FixedString {
  static_assert(N >= 1, "a FixedString holds at least one byte");

 public:
  // kCapacity: the most bytes of text it holds.
  static constexpr size_t kCapacity = N;

  // FixedString(): the empty text.
  constexpr FixedString() = default;
  // FixedString(literal): a string literal, checked against N when compiled.
  template <size_t M>
  constexpr FixedString(const char (&literal)[M]) {  // NOLINT: implicit, as std::string's
    static_assert(M - 1 <= N, "the literal is longer than the FixedString's capacity");
    for (size_t i = 0; i + 1 < M; ++i) bytes_[i] = literal[i];
  }

  // Assign: the text becomes `text` if it fits: at most N bytes and no NUL byte (which
  // would end it). Returns false, and changes nothing, if it does not. O(N).
  bool Assign(absl::string_view text) {
    if (text.size() > N || text.find('\0') != absl::string_view::npos) return false;
    std::memset(bytes_, 0, N);
    std::memcpy(bytes_, text.data(), text.size());
    return true;
  }

  // view: the text (the bytes before the first NUL, or all N). size: its bytes.
  absl::string_view view() const { return absl::string_view(bytes_, size()); }
  size_t size() const {
    const void* nul = std::memchr(bytes_, 0, N);
    return nul == nullptr ? N : static_cast<size_t>(static_cast<const char*>(nul) - bytes_);
  }
  bool empty() const { return bytes_[0] == '\0'; }
  static constexpr size_t capacity() { return N; }

  friend bool operator==(const FixedString& a, const FixedString& b) { return a.view() == b.view(); }
  friend bool operator!=(const FixedString& a, const FixedString& b) { return !(a == b); }

 private:
  char bytes_[N] = {};
};

}  // namespace strata

#endif  // STRATA_BASE_FIXED_STRING_H_
