// ParseStrictJson: nlohmann::json::parse for text written by people and tools, with
// the checks a level file needs that plain JSON parsing does not make:
//
//   nlohmann::json root;
//   absl::Status s = ParseStrictJson(text, &root);
//   // "input is not UTF-8 at byte 17 (line 2, column 5): byte 0xff cannot start a character"
//   // "entities[3].components[0]: duplicate key \"type\""
//   // "JSON syntax error at line 4, column 12: syntax error while parsing object ..."
//
// - The whole input must be UTF-8 (inside strings and out: no overlong forms, no
//   surrogates, nothing past U+10FFFF); the message gives the 0-based byte offset of
//   the first bad byte and its line and column.
// - A key may appear once per object, at any depth; the message names the key and the
//   object's path from the root (`entities[3].children[1].components[0]`), with the
//   middle of very deep paths elided.
// - Syntax errors give the line and column (1-based) of the offending character.
//
// Linear in the input and iterative: nesting depth costs heap, never call stack.
// CheckStrictJson makes the same checks with the same messages and builds nothing: the
// entity compiler's error path, where a DOM of a large level would cost gigabytes.
#ifndef STRATA_RESOURCE_STRICT_JSON_H_
#define STRATA_RESOURCE_STRICT_JSON_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json_fwd.hpp"

namespace strata {

// ParseStrictJson: `text` into `*out`; InvalidArgument as described above (then `*out`
// is unspecified).
absl::Status ParseStrictJson(absl::string_view text, nlohmann::json* out);

// CheckStrictJson: ParseStrictJson's verdict and message without building a value.
// Memory: one frame per open object or array (with its keys), not per value.
absl::Status CheckStrictJson(absl::string_view text);

// CheckUtf8: OK if `text` is well-formed UTF-8, else the "not UTF-8 at byte N" error.
absl::Status CheckUtf8(absl::string_view text);

}  // namespace strata

#endif  // STRATA_RESOURCE_STRICT_JSON_H_
