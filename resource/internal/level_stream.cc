#include "resource/internal/level_stream.h"

#include <algorithm>
#include <array>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/strings/str_cat.h"
#include "base/user_text.h"
#include "nlohmann/json.hpp"
#include "resource/format.h"
#include "simdjson.h"

namespace strata::resource_internal {

namespace {

namespace od = simdjson::ondemand;
using json = nlohmann::json;

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
// kObjectMember: the element is an object member's value, closed by '}' rather than
// ']'. Inlined into both callers: the entity array's scan is a hot loop.
template <bool kObjectMember = false>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline size_t ScanElement(absl::string_view text, size_t i,
                                                       size_t* max_depth) {
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
      if (depth == 0) return (c == ']') != kObjectMember ? i : absl::string_view::npos;
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
  Walker() : scratch_(kMaxComponentDepth + 1) {}

  // Slice: the entity-array elements in `elements` (their text with the commas between
  // them), the first being element `first_position` of "entities", into `sink`.
  // `max_depth` is the elements' deepest nesting (simdjson needs room for it).
  Step Slice(absl::string_view elements, uint32_t first_position, size_t max_depth,
             LevelSink& sink) {
    sink_ = &sink;
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
    bool has_prefab = false;
  };

  // Walk: depth-first over the open arrays and objects, parents before children.
  Step Walk() {
    while (!stack_.empty()) {
      Frame& frame = stack_.back();
      if (frame.is_object) {
        if (frame.started) ++frame.field;  // the previous field's value is consumed
        frame.started = true;
        if (frame.field == frame.field_end) {
          const uint32_t ended = frame.entity;
          stack_.pop_back();
          if (!sink_->EndEntity(ended).ok()) return Step::kStop;
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
      absl::StatusOr<uint32_t> index = sink_->AddEntity(parent, position);
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
      sink_->SetName(index, View(name));
      return Step::kOk;
    }
    if (key == "prefab") {
      // After "components", the instance's components were compiled as plain ones: the
      // DOM path, which reads every key first, compiles it.
      if (std::exchange(stack_[f].has_prefab, true) || stack_[f].has_components) return Step::kStop;
      std::string_view prefab;
      if (field.value().get_string().get(prefab)) return Step::kStop;
      if (!sink_->SetPrefab(index, View(prefab)).ok()) return Step::kStop;
      return Step::kOk;
    }
    if (key == "components") {
      if (std::exchange(stack_[f].has_components, true)) return Step::kStop;
      od::array array;
      if (field.value().get_array().get(array)) return Step::kStop;
      sink_->BeginComponents(index);
      uint32_t c = 0;
      for (auto element : array) {
        od::value component;
        if (std::move(element).get(component)) return Step::kStop;
        // One reusable value per position in "components": entities of one kind list
        // the same types in the same order, so each slot keeps seeing one shape.
        json& config = configs_[std::min<size_t>(c, configs_.size() - 1)];
        if (Convert(component, 0, &config) != Step::kOk) return Step::kStop;
        if (!sink_->AddComponent(index, c, config).ok()) return Step::kStop;
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

  LevelSink* sink_ = nullptr;
  od::parser parser_;
  std::string buffer_;
  std::vector<Frame> stack_;
  std::array<json, 8> configs_;  // components, converted in place (see Field)
  std::vector<std::vector<const json*>> scratch_;  // per depth: members converted

  // Sized once: a reference to one level must survive the deeper levels' use.
  std::vector<const json*>& Scratch(int depth) { return scratch_[depth]; }
};

// One slice of the entity array: its elements' text, the first one's position in
// "entities" and the deepest nesting among them.
struct Slice {
  absl::string_view elements;
  uint32_t first_position = 0;
  size_t max_depth = 0;
};

constexpr absl::string_view kPrefabsKey = "\"prefabs\"";

// PrefabsValue: where the value of a "prefabs" member at `i` begins, or npos.
size_t PrefabsValue(absl::string_view text, size_t i) {
  if (text.substr(i, kPrefabsKey.size()) != kPrefabsKey) return absl::string_view::npos;
  i = SkipSpace(text, i + kPrefabsKey.size());
  if (i >= text.size() || text[i] != ':') return absl::string_view::npos;
  return SkipSpace(text, i + 1);
}

// PrefabsEnd: for a "prefabs" member at `i`, the offset of the ',' or '}' after its
// value; npos if there is none.
size_t PrefabsEnd(absl::string_view text, size_t i) {
  i = PrefabsValue(text, i);
  if (i == absl::string_view::npos) return i;
  size_t depth = 0;
  return ScanElement</*kObjectMember=*/true>(text, i, &depth);
}

// SliceScanner: cuts the entity array into slices, in order. Sequential by nature (a
// slice starts where the previous one ended), and cheap next to walking a slice.
class SliceScanner {
 public:
  enum class Next { kSlice, kEnd, kStop };

  SliceScanner(absl::string_view text, size_t slice_bytes) : text_(text), slice_bytes_(slice_bytes) {
    // The root: exactly `{"entities": [`, spaces aside. Anything else (another key, an
    // escaped key, a root that is not an object) is rare and left to the DOM path.
    constexpr absl::string_view kKey = "\"entities\"";
    size_t i = SkipSpace(text, 0);
    if (i >= text.size() || text[i] != '{') return;
    i = SkipSpace(text, i + 1);
    // A leading "prefabs" member (read by the caller, LeadingPrefabs) is passed over.
    if (size_t after = PrefabsEnd(text, i); after != absl::string_view::npos) {
      if (text[after] != ',') return;
      i = SkipSpace(text, after + 1);
    }
    if (text.substr(i, kKey.size()) != kKey) return;
    i = SkipSpace(text, i + kKey.size());
    if (i >= text.size() || text[i] != ':') return;
    i = SkipSpace(text, i + 1);
    if (i >= text.size() || text[i] != '[') return;
    i = SkipSpace(text, i + 1);
    if (i < text.size() && text[i] == ']') {  // no entities
      state_ = ClosesRoot(i + 1) ? State::kDone : State::kStopped;
      return;
    }
    i_ = i;
    state_ = State::kScanning;
  }

  // NextSlice: the next slice; kEnd once every slice was handed out and the root closed
  // as it should; kStop at a shape left to the slow path (then again on every call).
  Next NextSlice(Slice* slice) {
    if (state_ == State::kDone) return Next::kEnd;
    if (state_ == State::kStopped) return Next::kStop;
    const size_t slice_begin = i_;
    size_t depth = 0;
    uint32_t in_slice = 0;
    while (true) {
      const size_t end = ScanElement(text_, i_, &depth);
      if (end == absl::string_view::npos) {
        state_ = State::kStopped;
        return Next::kStop;
      }
      ++in_slice;
      i_ = end + 1;
      const bool last = text_[end] == ']';
      if (last || end - slice_begin >= slice_bytes_) {
        if (last && !ClosesRoot(i_)) {
          state_ = State::kStopped;
          return Next::kStop;
        }
        *slice = Slice{text_.substr(slice_begin, end - slice_begin), position_, depth};
        position_ += in_slice;
        if (last) state_ = State::kDone;
        return Next::kSlice;
      }
    }
  }

 private:
  enum class State { kScanning, kDone, kStopped };

  // ClosesRoot: only `}` and spaces from `i` to the end.
  bool ClosesRoot(size_t i) const {
    i = SkipSpace(text_, i);
    return i < text_.size() && text_[i] == '}' && SkipSpace(text_, i + 1) == text_.size();
  }

  absl::string_view text_;
  size_t slice_bytes_;
  size_t i_ = 0;           // where the next slice begins
  uint32_t position_ = 0;  // of the next slice's first element
  State state_ = State::kStopped;
};

}  // namespace

absl::string_view LeadingPrefabs(absl::string_view text) {
  size_t i = SkipSpace(text, 0);
  if (i >= text.size() || text[i] != '{') return {};
  i = SkipSpace(text, i + 1);
  const size_t begin = PrefabsValue(text, i);
  if (begin == absl::string_view::npos) return {};
  const size_t end = PrefabsEnd(text, i);
  if (end == absl::string_view::npos) return {};
  return text.substr(begin, end - begin);
}

bool StreamLevel(absl::string_view text, LevelSink& sink, size_t slice_bytes) {
  SliceScanner scanner(text, slice_bytes);
  Walker walker;
  Slice slice;
  while (true) {
    switch (scanner.NextSlice(&slice)) {
      case SliceScanner::Next::kEnd:
        return true;
      case SliceScanner::Next::kStop:
        return false;
      case SliceScanner::Next::kSlice:
        if (walker.Slice(slice.elements, slice.first_position, slice.max_depth, sink) != Step::kOk) {
          return false;
        }
    }
  }
}

bool StreamLevelParallel(absl::string_view text, size_t slice_bytes, int threads,
                         const std::function<std::unique_ptr<LevelSink>()>& make_sink,
                         const std::function<bool(std::unique_ptr<LevelSink>)>& merge) {
  SliceScanner scanner(text, slice_bytes);
  // Slices walked ahead of the merge: enough that no thread waits for a slow neighbour,
  // few enough that their sinks stay small next to the output.
  const size_t window = 2 * static_cast<size_t>(threads);
  std::mutex mu;
  std::condition_variable room;  // a slice was merged, or the walk ended
  // Guarded by mu (the scanner too: slices are cut one after the other).
  size_t claimed = 0;  // slices handed out
  size_t merged = 0;   // slices merged, in order
  bool scanned = false;
  bool failed = false;
  bool merging = false;  // one thread merges at a time, the others go on walking
  std::map<size_t, std::unique_ptr<LevelSink>> walked;  // walked, not yet merged

  auto work = [&] {
    Walker walker;  // per thread: simdjson's parser and the reusable values
    std::unique_lock<std::mutex> lock(mu);
    while (true) {
      room.wait(lock, [&] { return failed || scanned || claimed < merged + window; });
      if (failed || scanned) return;
      Slice slice;
      const SliceScanner::Next next = scanner.NextSlice(&slice);
      if (next != SliceScanner::Next::kSlice) {
        (next == SliceScanner::Next::kEnd ? scanned : failed) = true;
        room.notify_all();
        return;
      }
      const size_t k = claimed++;
      lock.unlock();
      std::unique_ptr<LevelSink> sink = make_sink();
      const bool ok =
          walker.Slice(slice.elements, slice.first_position, slice.max_depth, *sink) == Step::kOk;
      lock.lock();
      if (!ok) {
        failed = true;
        room.notify_all();
        return;
      }
      walked.emplace(k, std::move(sink));
      if (merging) continue;  // the merging thread will take this one too
      merging = true;
      while (!failed && !walked.empty() && walked.begin()->first == merged) {
        std::unique_ptr<LevelSink> next_sink = std::move(walked.begin()->second);
        walked.erase(walked.begin());
        lock.unlock();
        const bool merged_ok = merge(std::move(next_sink));
        lock.lock();
        if (!merged_ok) failed = true;
        ++merged;
        room.notify_all();
      }
      merging = false;
    }
  };

  std::vector<std::thread> helpers;
  helpers.reserve(static_cast<size_t>(threads > 1 ? threads - 1 : 0));
  for (int t = 1; t < threads; ++t) helpers.emplace_back(work);
  work();
  for (std::thread& helper : helpers) helper.join();
  // Every thread has returned: every walked slice was merged unless something failed.
  return scanned && !failed && merged == claimed;
}

}  // namespace strata::resource_internal
