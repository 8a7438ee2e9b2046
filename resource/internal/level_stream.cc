#include "resource/internal/level_stream.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/user_text.h"
#include "resource/format.h"
#include "simdjson.h"

namespace strata::resource_internal {

namespace {

namespace od = simdjson::ondemand;
using json = nlohmann::json;

// A slice of the entity array handed to simdjson at once: big enough that the per-call
// cost vanishes, small enough that its buffers (about 6.7 bytes per byte of slice,
// mostly untouched) do not matter next to the level.
constexpr size_t kSliceBytes = size_t{256} << 10;

// Each step of the walk: go on, or stop and leave the verdict to the slow path.
enum class Step { kOk, kStop };

// Debian's Abseil has its own string_view; simdjson hands out std::string_view.
absl::string_view View(std::string_view s) { return absl::string_view(s.data(), s.size()); }

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

size_t SkipSpace(absl::string_view text, size_t i) {
  while (i < text.size() && IsSpace(text[i])) ++i;
  return i;
}

// ScanElement: from `i`, the end of one element of the entity array: the offset of the
// ',' or ']' that closes it at depth 0, or npos if the text ends first or brackets do
// not balance. Strings are skipped whole, so brackets inside them do not count. Raises
// `*max_depth` to the element's nesting depth. Only splits the text: simdjson
// validates every byte of the element afterwards.
size_t ScanElement(absl::string_view text, size_t i, size_t* max_depth) {
  // Bytes that matter outside strings; everything else is skipped in a tight loop.
  static constexpr auto kSpecial = [] {
    std::array<bool, 256> special{};
    for (unsigned char c : std::string_view("\"{}[],")) special[c] = true;
    return special;
  }();
  const char* p = text.data();
  const size_t n = text.size();
  size_t depth = 0;
  while (i < n) {
    while (i < n && !kSpecial[static_cast<unsigned char>(p[i])]) ++i;
    if (i >= n) break;
    const char c = p[i];
    if (c == '"') {
      // The closing quote: the first one after an even run of backslashes.
      while (true) {
        const void* quote = std::memchr(p + i + 1, '"', n - i - 1);
        if (quote == nullptr) return absl::string_view::npos;
        i = static_cast<size_t>(static_cast<const char*>(quote) - p);
        size_t backslashes = 0;
        while (p[i - 1 - backslashes] == '\\') ++backslashes;
        if (backslashes % 2 == 0) break;
      }
    } else if (c == '{' || c == '[') {
      if (++depth > *max_depth) *max_depth = depth;
    } else if (c == '}' || c == ']') {
      if (depth == 0) return c == ']' ? i : absl::string_view::npos;
      --depth;
    } else if (depth == 0) {  // ','
      return i;
    }
    ++i;
  }
  return absl::string_view::npos;
}

class Walker {
 public:
  explicit Walker(LevelSink& sink) : sink_(sink), scratch_(kMaxComponentDepth + 1) {}

  // Slice: the entity-array elements in `elements` (their text with the commas between
  // them), the first being element `first_position` of "entities". `max_depth` is the
  // elements' deepest nesting (simdjson needs room for it).
  Step Slice(absl::string_view elements, uint32_t first_position, size_t max_depth) {
    buffer_.clear();
    buffer_.reserve(elements.size() + 2 + simdjson::SIMDJSON_PADDING);
    buffer_.push_back('[');
    buffer_.append(elements.data(), elements.size());
    buffer_.push_back(']');
    const size_t length = buffer_.size();
    buffer_.append(simdjson::SIMDJSON_PADDING, ' ');
    const size_t depth = max_depth + 2;  // the slice's own array, and room at the bottom
    if (parser_.capacity() < length || parser_.max_depth() < depth) {
      if (parser_.allocate(std::max(parser_.capacity(), length), std::max(parser_.max_depth(), depth))) {
        return Step::kStop;  // out of memory: the strict parser decides
      }
    }
    od::document doc;
    if (parser_.iterate(buffer_.data(), length, buffer_.size()).get(doc)) return Step::kStop;
    od::array top;
    od::array_iterator begin, end;
    if (doc.get_array().get(top) || top.begin().get(begin) || top.end().get(end)) return Step::kStop;
    stack_.clear();
    stack_.push_back(Frame{});
    stack_.back().array = begin;
    stack_.back().array_end = end;
    stack_.back().entity = kNoParent;
    stack_.back().position = first_position;
    // Nothing can follow the closing ']': the slicer ended each element at a ',' or
    // ']' of depth 0.
    return Walk();
  }

 private:
  // One open array of entities ("entities" or a "children"), or one open entity object
  // whose fields are being read.
  struct Frame {
    bool is_object = false;
    bool started = false;  // the iterator was dereferenced: the next step advances it
    od::array_iterator array;
    od::array_iterator array_end;
    od::object_iterator field;
    od::object_iterator field_end;
    uint32_t entity = kNoParent;  // arrays: the parent; objects: the entity
    uint32_t position = 0;        // arrays: of the element `array` points at
    // objects: keys met so far, for repeats
    bool has_name = false;
    bool has_components = false;
    bool has_children = false;
  };

  // Walk: depth-first over the open arrays and objects, parents before children.
  Step Walk() {
    while (!stack_.empty()) {
      Frame& frame = stack_.back();
      if (frame.is_object) {
        if (frame.started) ++frame.field;  // the previous field's value is consumed
        frame.started = true;
        if (frame.field == frame.field_end) {
          stack_.pop_back();
          continue;
        }
        if (Field(stack_.size() - 1) != Step::kOk) return Step::kStop;
        continue;
      }
      if (frame.started) {
        ++frame.array;  // skips nothing: each entity is read to its end
        ++frame.position;
      }
      frame.started = true;
      if (frame.array == frame.array_end) {
        stack_.pop_back();
        continue;
      }
      od::value value;
      if ((*frame.array).get(value)) return Step::kStop;
      const uint32_t parent = frame.entity;
      const uint32_t position = frame.position;
      od::object object;
      // Not an object: a semantic error the DOM path words.
      if (value.get_object().get(object)) return Step::kStop;
      absl::StatusOr<uint32_t> index = sink_.AddEntity(parent, position);
      if (!index.ok()) return Step::kStop;
      Frame entity;
      entity.is_object = true;
      entity.entity = *index;
      if (object.begin().get(entity.field) || object.end().get(entity.field_end)) return Step::kStop;
      stack_.push_back(entity);
    }
    return Step::kOk;
  }

  // Field: the current field of the entity object at stack_[f]. A "children" array
  // pushes a frame, walked before the entity's later fields.
  Step Field(size_t f) {
    od::field field;
    std::string_view key;
    if ((*stack_[f].field).get(field) || field.unescaped_key().get(key)) return Step::kStop;
    const uint32_t index = stack_[f].entity;
    if (key == "name") {
      if (std::exchange(stack_[f].has_name, true)) return Step::kStop;
      std::string_view name;
      if (field.value().get_string().get(name)) return Step::kStop;
      sink_.SetName(index, View(name));
      return Step::kOk;
    }
    if (key == "components") {
      if (std::exchange(stack_[f].has_components, true)) return Step::kStop;
      od::array array;
      if (field.value().get_array().get(array)) return Step::kStop;
      sink_.BeginComponents(index);
      uint32_t c = 0;
      for (auto element : array) {
        od::value component;
        if (std::move(element).get(component)) return Step::kStop;
        // One reusable value per position in "components": entities of one kind list
        // the same types in the same order, so each slot keeps seeing one shape.
        json& config = configs_[std::min<size_t>(c, configs_.size() - 1)];
        if (Convert(component, 0, &config) != Step::kOk) return Step::kStop;
        if (!sink_.AddComponent(index, c, config).ok()) return Step::kStop;
        ++c;
      }
      return Step::kOk;
    }
    if (key == "children") {
      if (std::exchange(stack_[f].has_children, true)) return Step::kStop;
      od::array array;
      Frame children;
      if (field.value().get_array().get(array) || array.begin().get(children.array) ||
          array.end().get(children.array_end)) {
        return Step::kStop;
      }
      children.entity = index;
      stack_.push_back(children);  // invalidates references into stack_
      return Step::kOk;
    }
    return Step::kStop;  // an unknown key
  }

  // Convert: a component's value into the nlohmann value compile functions read, with
  // nlohmann's number kinds (non-negative integers unsigned, negative ones signed,
  // anything with a fraction or exponent a double). Converts into `*out` in place:
  // members, elements and strings an earlier component left there are reused, so a
  // run of similar components allocates nothing.
  Step Convert(od::value value, int depth, json* out) {
    od::json_type type;
    if (value.type().get(type)) return Step::kStop;
    switch (type) {
      case od::json_type::object: {
        if (depth >= kMaxComponentDepth) return Step::kStop;
        od::object object;
        if (value.get_object().get(object)) return Step::kStop;
        if (!out->is_object()) *out = json::object();
        json::object_t& members = out->get_ref<json::object_t&>();
        std::vector<const json*>& touched = Scratch(depth);
        touched.clear();
        for (auto field_result : object) {
          od::field field;
          std::string_view key;
          if (std::move(field_result).get(field) || field.unescaped_key().get(key)) return Step::kStop;
          auto it = members.find(key);
          if (it == members.end()) it = members.emplace(std::string(key), json()).first;
          if (Step step = Convert(field.value(), depth + 1, &it->second); step != Step::kOk) return step;
          touched.push_back(&it->second);
        }
        // A key twice converts into one member twice.
        std::sort(touched.begin(), touched.end());
        if (std::adjacent_find(touched.begin(), touched.end()) != touched.end()) return Step::kStop;
        if (touched.size() != members.size()) {  // drop what an earlier component had
          for (auto it = members.begin(); it != members.end();) {
            it = std::binary_search(touched.begin(), touched.end(), &it->second) ? std::next(it)
                                                                                 : members.erase(it);
          }
        }
        return Step::kOk;
      }
      case od::json_type::array: {
        if (depth >= kMaxComponentDepth) return Step::kStop;
        od::array array;
        if (value.get_array().get(array)) return Step::kStop;
        if (!out->is_array()) *out = json::array();
        json::array_t& elements = out->get_ref<json::array_t&>();
        size_t count = 0;
        for (auto element_result : array) {
          od::value element;
          if (std::move(element_result).get(element)) return Step::kStop;
          if (count == elements.size()) elements.emplace_back();
          if (Step step = Convert(element, depth + 1, &elements[count]); step != Step::kOk) {
            return step;
          }
          ++count;
        }
        elements.resize(count);
        return Step::kOk;
      }
      case od::json_type::number: {
        od::number_type kind;
        // Integers past 64 bits and doubles past the range: the DOM path decides.
        if (value.get_number_type().get(kind)) return Step::kStop;
        if (kind == od::number_type::floating_point_number) {
          double d;
          if (value.get_double().get(d)) return Step::kStop;
          *out = d;
        } else if (kind == od::number_type::unsigned_integer) {
          uint64_t u;
          if (value.get_uint64().get(u)) return Step::kStop;
          *out = u;
        } else {
          const bool negative = value.raw_json_token().substr(0, 1) == "-";
          int64_t i;
          if (value.get_int64().get(i)) return Step::kStop;
          if (negative) {
            *out = i;
          } else {
            *out = static_cast<uint64_t>(i);
          }
        }
        return Step::kOk;
      }
      case od::json_type::string: {
        std::string_view s;
        if (value.get_string().get(s)) return Step::kStop;
        if (out->is_string()) {
          out->get_ref<std::string&>().assign(s.data(), s.size());
        } else {
          *out = std::string(s);
        }
        return Step::kOk;
      }
      case od::json_type::boolean: {
        bool b;
        if (value.get_bool().get(b)) return Step::kStop;
        *out = b;
        return Step::kOk;
      }
      case od::json_type::null: {
        bool is_null;
        if (value.is_null().get(is_null) || !is_null) return Step::kStop;
        *out = nullptr;
        return Step::kOk;
      }
    }
    return Step::kStop;
  }

  LevelSink& sink_;
  od::parser parser_;
  std::string buffer_;
  std::vector<Frame> stack_;
  std::array<json, 8> configs_;  // components, converted in place (see Field)
  std::vector<std::vector<const json*>> scratch_;  // per depth: members converted

  // Sized once: a reference to one level must survive the deeper levels' use.
  std::vector<const json*>& Scratch(int depth) { return scratch_[depth]; }
};

}  // namespace

bool StreamLevel(absl::string_view text, LevelSink& sink) {
  // The root: exactly `{"entities": [`, spaces aside. Anything else (another key, an
  // escaped key, a root that is not an object) is rare and left to the DOM path.
  constexpr absl::string_view kKey = "\"entities\"";
  size_t i = SkipSpace(text, 0);
  if (i >= text.size() || text[i] != '{') return false;
  i = SkipSpace(text, i + 1);
  if (text.substr(i, kKey.size()) != kKey) return false;
  i = SkipSpace(text, i + kKey.size());
  if (i >= text.size() || text[i] != ':') return false;
  i = SkipSpace(text, i + 1);
  if (i >= text.size() || text[i] != '[') return false;
  i = SkipSpace(text, i + 1);

  Walker walker(sink);
  if (i < text.size() && text[i] == ']') {
    ++i;  // no entities
  } else {
    uint32_t position = 0;      // of the slice's first element
    uint32_t in_slice = 0;      // elements in the slice so far
    size_t slice_begin = i;
    size_t slice_depth = 0;
    while (true) {
      const size_t end = ScanElement(text, i, &slice_depth);
      if (end == absl::string_view::npos) return false;
      ++in_slice;
      const bool last = text[end] == ']';
      if (last || end - slice_begin >= kSliceBytes) {
        const Step step =
            walker.Slice(text.substr(slice_begin, end - slice_begin), position, slice_depth);
        if (step != Step::kOk) return false;
        position += in_slice;
        in_slice = 0;
        slice_begin = end + 1;
        slice_depth = 0;
      }
      i = end + 1;
      if (last) break;
    }
  }
  i = SkipSpace(text, i);
  if (i >= text.size() || text[i] != '}') return false;
  if (SkipSpace(text, i + 1) != text.size()) return false;
  return true;
}

}  // namespace strata::resource_internal
