// StreamLevel: the entity compiler's fast front-end. Walks a level's JSON with
// simdjson's On-Demand parser, a slice of the top-level entity array at a time, and
// hands entities (numbered depth-first, parents first) and their components to a
// LevelSink in text order. It stops at the first thing it does not accept: a syntax
// error, a repeated key, a semantic error, or a rare shape it leaves to the DOM path;
// the caller then asks the strict parser and the DOM path for the verdict and message,
// so every message is the one the DOM walk gives.
//
//   if (!StreamLevel(text, sink)) return SlowPathVerdict(text);
//
// StreamLevelParallel walks the slices on several threads, each into its own sink, and
// hands the sinks back in slice order, so the caller can concatenate them into what the
// serial walk would have built.
//
// Memory: the input is never copied whole. Each slice (about 256 KiB of entities, or one
// larger entity) is copied once into a padded buffer and indexed by simdjson, so the
// parser's buffers stay the size of a slice. Nesting costs heap, never call stack, and
// time is linear in the text whatever the nesting.
#ifndef STRATA_RESOURCE_INTERNAL_LEVEL_STREAM_H_
#define STRATA_RESOURCE_INTERNAL_LEVEL_STREAM_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json_fwd.hpp"

namespace strata::resource_internal {

// LevelSink: receives the level's entities in pre-order and their components in text
// order (a "children" array before "components" sends the children's components
// first: the sink puts instances back in entity order).
class LevelSink {
 public:
  virtual ~LevelSink() = default;
  // AddEntity: numbers the next entity (pre-order) and returns its number.
  virtual absl::StatusOr<uint32_t> AddEntity(uint32_t parent, uint32_t position) = 0;
  // SetName: the entity's "name" (copied).
  virtual void SetName(uint32_t entity, absl::string_view name) = 0;
  // BeginComponents: the entity's "components" array starts.
  virtual void BeginComponents(uint32_t entity) = 0;
  // AddComponent: element `index` of the entity's "components", whatever its JSON type.
  virtual absl::Status AddComponent(uint32_t entity, uint32_t index,
                                    const nlohmann::json& component) = 0;
  // SetPrefab: the entity's "prefab", always before its first AddComponent (the walk
  // leaves a "prefab" after "components" to the DOM path).
  virtual absl::Status SetPrefab(uint32_t entity, absl::string_view prefab) = 0;
  // EndEntity: the entity's object ended (after its children's EndEntity).
  virtual absl::Status EndEntity(uint32_t entity) = 0;
};

// LeadingPrefabs: when the level's root object begins with a "prefabs" member, its value's
// text (not checked to be valid JSON); else empty.
absl::string_view LeadingPrefabs(absl::string_view text);

// kMaxComponentDepth: nesting inside one component converted here; deeper goes to the
// DOM path, which is iterative.
inline constexpr int kMaxComponentDepth = 64;

// kDefaultSliceBytes: how much of the entity array one slice holds (a slice ends at the
// first element boundary at or past it; one larger element is a slice of its own). Big
// enough that the per-slice cost vanishes, small enough that simdjson's buffers (about
// 6.7 bytes per byte of slice, mostly untouched) do not matter next to the level.
inline constexpr size_t kDefaultSliceBytes = size_t{256} << 10;

// StreamLevel: walks `text` (already checked to be UTF-8) into `sink`; true if the whole
// level went through, false at the first thing it does not accept (see above).
// `slice_bytes` > 0; the sink sees the same calls whatever it is.
bool StreamLevel(absl::string_view text, LevelSink& sink,
                 size_t slice_bytes = kDefaultSliceBytes);

// StreamLevelParallel: the same walk on `threads` threads (the caller's among them).
// Each slice goes into a fresh sink from `make_sink` (called from any of the threads,
// concurrently), numbering its entities from 0: a
// top-level element has parent kNoParent and its position in "entities", any other
// entity's parent is a number within the slice. `merge` receives the sinks in slice
// order, one call at a time (from any of the threads), and returns false to stop.
// At most about 2 x `threads` slices are walked but not yet merged, so memory stays a
// few slices' worth beyond what `merge` keeps. True if the whole level went through
// and every merge succeeded. The sinks must be independent of each other: they run
// concurrently.
bool StreamLevelParallel(absl::string_view text, size_t slice_bytes, int threads,
                         const std::function<std::unique_ptr<LevelSink>()>& make_sink,
                         const std::function<bool(std::unique_ptr<LevelSink>)>& merge);

}  // namespace strata::resource_internal

#endif  // STRATA_RESOURCE_INTERNAL_LEVEL_STREAM_H_
