// UserText: text that came from outside (a level file, a command line), made safe to
// put in an error message: control characters and non-ASCII bytes are escaped (\n,
// \x00, \xff), so a NUL cannot cut the message short and a terminal sees no escape
// sequences, and the text is cut after a bounded prefix with its total length, so a
// 16 MB key does not become a 16 MB message.
//
//   absl::StrCat("unknown component type \"", UserText(type), "\"")
//   // unknown component type "enemy\x00x" / "aaaa...aaaa" (16777216 bytes)
#ifndef STRATA_BASE_USER_TEXT_H_
#define STRATA_BASE_USER_TEXT_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"

namespace strata {

// kUserTextPrefix: at most this many bytes of the text are echoed.
inline constexpr size_t kUserTextPrefix = 64;

// UserText: `text` escaped and bounded as described above.
std::string UserText(absl::string_view text, size_t max_bytes = kUserTextPrefix);

}  // namespace strata

#endif  // STRATA_BASE_USER_TEXT_H_
