#include "resource/strict_json.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/user_text.h"
#include "nlohmann/json.hpp"
#include "simdjson.h"

namespace strata {
namespace {

using json = nlohmann::json;

// LineColumn: the 1-based line and byte column of `offset` in `text`.
std::string LineColumn(absl::string_view text, size_t offset) {
  size_t line = 1;
  size_t line_start = 0;
  const size_t scanned = std::min(offset, text.size());
  for (size_t i = 0; i < scanned; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return absl::StrCat("line ", line, ", column ", offset - line_start + 1);
}

absl::Status NotUtf8(absl::string_view text, size_t offset, absl::string_view reason) {
  return absl::InvalidArgumentError(absl::StrCat("input is not UTF-8 at byte ", offset, " (",
                                                 LineColumn(text, offset), "): ", reason));
}

// Builds the DOM with nlohmann's own SAX DOM builder (or only checks, with no root) and,
// on the way, keeps one frame per open object or array: the object's keys so far (for
// duplicates) or the array's element count, which together give the path of any value
// for a message.
class StrictDomBuilder {
 public:
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  // `root` null: check only, build nothing.
  explicit StrictDomBuilder(json* root) {
    if (root != nullptr) dom_.emplace(*root, /*allow_exceptions=*/false);
  }

  bool null() { return BeginValue() && (!dom_ || dom_->null()); }
  bool boolean(bool v) { return BeginValue() && (!dom_ || dom_->boolean(v)); }
  bool number_integer(number_integer_t v) { return BeginValue() && (!dom_ || dom_->number_integer(v)); }
  bool number_unsigned(number_unsigned_t v) {
    return BeginValue() && (!dom_ || dom_->number_unsigned(v));
  }
  bool number_float(number_float_t v, const string_t& s) {
    return BeginValue() && (!dom_ || dom_->number_float(v, s));
  }
  bool string(string_t& v) { return BeginValue() && (!dom_ || dom_->string(v)); }
  bool binary(binary_t& v) { return BeginValue() && (!dom_ || dom_->binary(v)); }
  bool start_object(std::size_t n) {
    return BeginValue() && Push(true) && (!dom_ || dom_->start_object(n));
  }
  bool start_array(std::size_t n) {
    return BeginValue() && Push(false) && (!dom_ || dom_->start_array(n));
  }
  bool end_object() {
    --depth_;
    return !dom_ || dom_->end_object();
  }
  bool end_array() {
    --depth_;
    return !dom_ || dom_->end_array();
  }
  bool key(string_t& k) {
    Frame& frame = frames_[depth_ - 1];
    if (!frame.keys.insert(k).second) {
      const std::string where = Path(depth_ - 1);
      error_ = absl::InvalidArgumentError(absl::StrCat(
          where.empty() ? "level" : where, ": duplicate key \"", UserText(k), "\""));
      return false;
    }
    frame.key = k;
    return !dom_ || dom_->key(k);
  }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& ex) {
    position_ = position;
    const std::string message = ex.what();
    // Drop nlohmann's "[json.exception...] parse error at line 1, column 2: " prefix:
    // our own line and column follow.
    const size_t colon = message.find(": ");
    reason_ = colon == std::string::npos ? message : message.substr(colon + 2);
    syntax_error_ = true;
    return false;
  }

  bool syntax_error() const { return syntax_error_; }
  size_t position() const { return position_; }
  const std::string& reason() const { return reason_; }
  const absl::Status& error() const { return error_; }

 private:
  struct Frame {
    bool object = false;
    size_t count = 0;  // arrays: elements begun
    std::string key;   // objects: the current key
    absl::flat_hash_set<std::string> keys;
  };

  // Counts an array element as it begins, so the path of anything inside it is right.
  bool BeginValue() {
    if (depth_ > 0 && !frames_[depth_ - 1].object) ++frames_[depth_ - 1].count;
    return true;
  }

  // Frames are reused (not popped) so a long run of sibling objects does not allocate.
  bool Push(bool object) {
    if (depth_ == frames_.size()) frames_.emplace_back();
    Frame& frame = frames_[depth_++];
    frame.object = object;
    frame.count = 0;
    frame.key.clear();
    frame.keys.clear();
    return true;
  }

  // Path of the value held by frames [0, end): `entities[3].components[0]`. A deep
  // path keeps its first and last segments, so the message stays short.
  std::string Path(size_t end) const {
    constexpr size_t kHead = 6;
    constexpr size_t kTail = 10;
    std::string path;
    for (size_t i = 0; i < end; ++i) {
      if (end > kHead + kTail && i == kHead) {
        absl::StrAppend(&path, "...(", end - kHead - kTail, " levels)");
        i = end - kTail - 1;
        continue;
      }
      const Frame& frame = frames_[i];
      if (!frame.object) {
        absl::StrAppend(&path, "[", frame.count - 1, "]");
      } else if (!frame.key.empty() &&
                 frame.key.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                             "0123456789_") == std::string::npos) {
        absl::StrAppend(&path, path.empty() ? "" : ".", frame.key);
      } else {
        absl::StrAppend(&path, "[\"", UserText(frame.key), "\"]");
      }
    }
    return path;
  }

  std::optional<nlohmann::detail::json_sax_dom_parser<json>> dom_;
  std::vector<Frame> frames_;
  size_t depth_ = 0;
  bool syntax_error_ = false;
  size_t position_ = 0;
  std::string reason_;
  absl::Status error_;
};

}  // namespace

absl::Status CheckUtf8(absl::string_view text) {
  // Well-formed text (the usual case) in one vectorised pass; the loop below only
  // finds where ill-formed text goes wrong, for the message.
  if (simdjson::validate_utf8(text.data(), text.size())) return absl::OkStatus();
  const auto* p = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    // Eight ASCII bytes at a time: level files are mostly ASCII.
    if (n - i >= 8) {
      uint64_t word;
      std::memcpy(&word, p + i, 8);
      if ((word & 0x8080808080808080ull) == 0) {
        i += 8;
        continue;
      }
    }
    const uint8_t b = p[i];
    if (b < 0x80) {
      ++i;
      continue;
    }
    // Well-formed sequences (Unicode, table 3-7): the lead byte fixes the length and
    // the range of the second byte, which excludes overlong forms, surrogates and
    // code points past U+10FFFF.
    size_t length;
    uint8_t low = 0x80;
    uint8_t high = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) {
      length = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      length = 3;
      if (b == 0xE0) low = 0xA0;
      if (b == 0xED) high = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      length = 4;
      if (b == 0xF0) low = 0x90;
      if (b == 0xF4) high = 0x8F;
    } else {
      return NotUtf8(text, i, absl::StrFormat("byte 0x%02x cannot start a character", b));
    }
    if (n - i < length) return NotUtf8(text, i, "the input ends inside a character");
    if (p[i + 1] < low || p[i + 1] > high) {
      return NotUtf8(text, i, absl::StrFormat("byte 0x%02x after 0x%02x (an overlong form, a "
                                              "surrogate or past U+10FFFF, or not a continuation)",
                                              p[i + 1], b));
    }
    for (size_t k = 2; k < length; ++k) {
      if (p[i + k] < 0x80 || p[i + k] > 0xBF) {
        return NotUtf8(text, i, absl::StrFormat("byte 0x%02x is not a continuation byte", p[i + k]));
      }
    }
    i += length;
  }
  return absl::OkStatus();
}

namespace {

// Parse: ParseStrictJson into `out`, or CheckStrictJson when `out` is null.
absl::Status Parse(absl::string_view text, json* out) {
  if (absl::Status utf8 = CheckUtf8(text); !utf8.ok()) return utf8;
  StrictDomBuilder builder(out);
  const bool ok = json::sax_parse(text.begin(), text.end(), &builder);
  if (ok) return absl::OkStatus();
  if (!builder.error().ok()) return builder.error();
  if (builder.syntax_error()) {
    // `position` counts the characters read, the offending one included; at the end of
    // the input it is size + 1, pointing just past the last character.
    const size_t offending = builder.position() == 0 ? 0 : builder.position() - 1;
    return absl::InvalidArgumentError(absl::StrCat("JSON syntax error at ", LineColumn(text, offending),
                                                   ": ", builder.reason()));
  }
  return absl::InvalidArgumentError("JSON syntax error");
}

}  // namespace

absl::Status ParseStrictJson(absl::string_view text, nlohmann::json* out) {
  *out = json();
  return Parse(text, out);
}

absl::Status CheckStrictJson(absl::string_view text) { return Parse(text, nullptr); }

}  // namespace strata
