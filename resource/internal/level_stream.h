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
// Memory: the input is never copied whole. Each slice (about 256 KiB of entities, or one
// larger entity) is copied once into a padded buffer and indexed by simdjson, so the
// parser's buffers stay the size of a slice. Nesting costs heap, never call stack, and
// time is linear in the text whatever the nesting.
#ifndef STRATA_RESOURCE_INTERNAL_LEVEL_STREAM_H_
#define STRATA_RESOURCE_INTERNAL_LEVEL_STREAM_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

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
};

// kMaxComponentDepth: nesting inside one component converted here; deeper goes to the
// DOM path, which is iterative.
inline constexpr int kMaxComponentDepth = 64;

// StreamLevel: walks `text` (already checked to be UTF-8) into `sink`; true if the whole
// level went through, false at the first thing it does not accept (see above).
bool StreamLevel(absl::string_view text, LevelSink& sink);

}  // namespace strata::resource_internal

#endif  // STRATA_RESOURCE_INTERNAL_LEVEL_STREAM_H_
