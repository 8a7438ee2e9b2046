#include "base/user_text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace strata {

std::string UserText(absl::string_view text, size_t max_bytes) {
  const absl::string_view shown = text.substr(0, max_bytes);
  std::string out;
  out.reserve(shown.size() + 16);
  for (const char c : shown) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte >= 0x7f) {
      // NOTE: bytes >= 0x80 are escaped too: the prefix may end inside a UTF-8
      // sequence, and an escaped byte is never a broken character.
      absl::StrAppendFormat(&out, "\\x%02x", byte);
    } else {
      out += c;
    }
  }
  if (shown.size() < text.size()) absl::StrAppend(&out, "... (", text.size(), " bytes)");
  return out;
}

}  // namespace strata
