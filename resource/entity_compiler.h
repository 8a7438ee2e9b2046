// EntityCompiler: compiles a level (or prefab) described in JSON into one entity
// resource blob (resource/format.h), grouping the component instances by type in
// spawn order so the spawner does similar things together.
//
// Each component package registers a compile function for its type name; the function
// turns one component's JSON object into that instance's binary data, written in the
// target byte order through a ComponentDataWriter.
//
//   EntityCompiler compiler;
//   compiler.RegisterComponentCompiler(
//       "health",
//       [](const nlohmann::json& config, ComponentDataWriter& out) -> absl::Status {
//         STRATA_RETURN_IF_ERROR(CheckComponentKeys(config, {"hp"}));
//         float hp = 100;
//         STRATA_RETURN_IF_ERROR(ReadFloat(config, "hp", &hp));
//         out.WriteF32(hp);
//         return absl::OkStatus();
//       },
//       /*spawn_order=*/10, /*instance_size=*/4);
//   absl::StatusOr<EntityCompiler::Result> result = compiler.Compile(
//       R"({"entities": [{"name": "player", "components": [{"type": "health", "hp": 80}]}]})",
//       {});
//   // result->blob passes EntityResourceView::Create; result->warnings lists skipped
//   // unknown components when Options::unknown_components is kSkip.
//
// Level JSON:
//   {"prefabs": {"orc": PREFAB, ...},          (optional)
//    "entities": [ENTITY, ...]}
//   ENTITY    = {"name": "car",                  (optional, used in error messages)
//                "prefab": "orc",                (optional: an instance of that prefab)
//                "components": [COMPONENT, ...], (optional)
//                "children": [ENTITY, ...]}      (optional: entities with this parent)
//   PREFAB    = {"prefab": "creature",           (optional: based on that prefab)
//                "components": [COMPONENT, ...], (optional)
//                "children": [ENTITY, ...]}      (optional; they may not name a prefab)
//   COMPONENT = {"type": "transform",            (required: the registered type name)
//                "name": "Transform",            (optional, defaults to the type; unique
//                                                 within the entity; "#" and 8 hex
//                                                 digits is that IdString32 itself)
//                ...fields read by the type's compile function}
// Prefabs: an instance gets the prefab's components, each with the fields the instance's
// component of the same name writes replaced (a component the prefab lacks is added),
// and the prefab's children (after its own). A prefab based on another is merged the
// same way, its children after the base's; a cycle or a missing prefab is an error
// naming it. Entity references inside a prefab name the prefab's own entities (its
// name for its root, its children's names, paths of names from it "tank/turret") and point to
// the instance's copies; a reference an instance writes names entities of the level.
// The output is flat (each instance holds plain copies: spawning pays nothing for
// prefabs) plus a strata.prefabs section (resource/prefab.h) recording each prefab,
// which entities came from which prefab, and which fields each instance overrode.
// "prefabs" before "entities" and "prefab" before an entity's "components" keep the
// fast streaming path; other orders compile to the same bytes, slower.
// Entities are numbered depth-first, parents before children. An entity-reference
// field names another entity of the level by its "name" (which must then be unique) or
// by its path of names from a root, "level/car/wheel", or by its number, "#12" (what
// export writes for an unnamed entity); references may point forward and entities may
// refer to each other.
//
// Errors (absl::InvalidArgumentError) name the entity path, e.g.
// `entities[3].children[1] ("wheel")`, the component (`components[0] "transform"`) and,
// for JSON syntax errors, the line and column.
#ifndef STRATA_RESOURCE_ENTITY_COMPILER_H_
#define STRATA_RESOURCE_ENTITY_COMPILER_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/internal/endian.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "base/id_string.h"
#include "nlohmann/json_fwd.hpp"
#include "resource/format.h"
#include "resource/metadata.h"

namespace strata {

// EntityRefFixup: an entity reference a compile function wrote, resolved by the
// compiler once every entity of the level is known (references may point forward).
struct EntityRefFixup {
  size_t offset = 0;       // byte offset of the uint32 in the type's data
  std::string field;       // the JSON key, for error messages
  std::string reference;   // an entity name, or a path of names "root/child/grandchild"
  // resolved: the target's number when the compiler already knows it (references that
  // came from a prefab); kNoEntityRef: resolve `reference`.
  uint32_t resolved = kNoEntityRef;
};

// ComponentDataWriter: appends one component instance's binary data in the blob's
// byte order. Handed to compile functions; not owned by them.
class ComponentDataWriter {
 public:
  ComponentDataWriter(Endianness endianness, std::vector<std::byte>* out,
                      std::vector<EntityRefFixup>* fixups = nullptr,
                      std::vector<std::string>* name_texts = nullptr)
      : out_(out), fixups_(fixups), name_texts_(name_texts), start_(out->size()),
        swap_(endianness != kNativeEndianness), endianness_(endianness) {}

  Endianness endianness() const { return endianness_; }
  // size: bytes written for this instance so far.
  size_t size() const { return out_->size() - start_; }

  void WriteU32(uint32_t v) {
    if (swap_) v = absl::gbswap_32(v);
    Append(&v, sizeof(v));
  }
  void WriteI32(int32_t v) { WriteU32(static_cast<uint32_t>(v)); }
  void WriteU8(uint8_t v) { Append(&v, sizeof(v)); }
  void WriteU16(uint16_t v) {
    if (swap_) v = absl::gbswap_16(v);
    Append(&v, sizeof(v));
  }
  void WriteU64(uint64_t v) {
    if (swap_) v = absl::gbswap_64(v);
    Append(&v, sizeof(v));
  }
  void WriteF32(float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    WriteU32(bits);
  }
  // WriteBytes: raw bytes, not swapped.
  void WriteBytes(absl::Span<const std::byte> bytes) { Append(bytes.data(), bytes.size()); }

  // WriteEntityRef: a uint32 that the compiler replaces with the number of the entity
  // `reference` names (its "name", or the path of names from a root joined by '/')
  // once the whole level is read. `field` names the JSON key in error messages.
  // FailedPrecondition (returned by Compile) if this writer cannot record references.
  void WriteEntityRef(absl::string_view field, absl::string_view reference) {
    if (fixups_ == nullptr) {
      references_unsupported_ = true;
    } else {
      fixups_->push_back(EntityRefFixup{out_->size(), std::string(field), std::string(reference)});
    }
    WriteU32(kNoEntityRef);
  }
  // WriteName: the IdString32 of `text` ("#" and 8 hex digits: that value itself), and
  // keeps the text for the resource's name table so tools can print it.
  void WriteName(absl::string_view text);

  // WriteNoEntityRef: a reference to no entity (JSON null).
  void WriteNoEntityRef() { WriteU32(kNoEntityRef); }
  bool references_unsupported() const { return references_unsupported_; }

 private:
  void Append(const void* p, size_t n) {
    const auto* bytes = static_cast<const std::byte*>(p);
    out_->insert(out_->end(), bytes, bytes + n);
  }

  std::vector<std::byte>* out_;
  std::vector<EntityRefFixup>* fixups_;
  std::vector<std::string>* name_texts_;
  size_t start_;
  bool swap_;
  bool references_unsupported_ = false;
  Endianness endianness_;
};

// CompileFunction: writes one component instance's data for `config` (the component's
// JSON object, "type" and "name" included) to `out`. Returns InvalidArgument with a
// short reason (e.g. `"position": expected an array of 3 numbers`); the compiler adds
// the entity path and component to the message. This header only declares
// nlohmann::json (json_fwd.hpp): a file that reads `config` includes nlohmann/json.hpp.
using CompileFunction =
    std::function<absl::Status(const nlohmann::json& config, ComponentDataWriter& out)>;

// Helpers for compile functions. Each leaves the output untouched when `key` is absent
// (so the caller's default stands) and returns InvalidArgument naming the key when the
// value has the wrong JSON type or length. Never throw.
absl::Status ReadFloat(const nlohmann::json& config, absl::string_view key, float* out);
absl::Status ReadFloats(const nlohmann::json& config, absl::string_view key,
                        absl::Span<float> out);
absl::Status ReadUint32(const nlohmann::json& config, absl::string_view key, uint32_t* out);
absl::Status ReadString(const nlohmann::json& config, absl::string_view key, std::string* out);
// CheckComponentKeys: InvalidArgument naming the first key of `config` that is not
// "type", "name" or in `allowed` (catches typos such as "postion").
absl::Status CheckComponentKeys(const nlohmann::json& config,
                                std::initializer_list<absl::string_view> allowed);

// ParseNameId: the IdString32 value a name stands for: "#" and 8 lower-case hex digits
// is that value itself (what tools write for a name whose text they do not have),
// anything else its hash. `literal`, if not null, says which.
uint32_t ParseNameId(absl::string_view name, bool* literal = nullptr);

class EntityCompiler {
 public:
  // What Compile does with a component whose type has no registered compile function.
  enum class UnknownComponents : uint8_t {
    kReject,  // error naming the entity and the type
    kSkip,    // leave it out, add a line to Result::warnings
  };

  struct Options {
    UnknownComponents unknown_components = UnknownComponents::kReject;
    // endianness: byte order of the blob (and of the data compile functions write).
    Endianness endianness = kNativeEndianness;
    // keep_names: write the metadata sections (resource/metadata.h) with the entity
    // names and the instance names' text, so tools print, export and save names.
    bool keep_names = true;
    // threads: how many threads compile the entity array, the caller's among them; 0:
    // one per hardware thread. With more than one, compile functions run on several
    // threads at once (each call on its own component and writer), so they must not
    // share unsynchronised state. The output is byte-identical for any count, and so is
    // any error message. A level no larger than one slice compiles on the caller's thread.
    // InvalidArgument if negative or above kMaxThreads.
    int threads = 1;
    // slice_bytes: how much of the entity array is walked as one unit, serially or on
    // one thread (0: 256 KiB). A tuning and test knob: the output never depends on it.
    size_t slice_bytes = 0;
  };
  static constexpr int kMaxThreads = 256;

  // ComponentCompileInfo: everything the compiler knows of one component type.
  struct ComponentCompileInfo {
    std::string type_name;
    CompileFunction compile;
    // spawn_order: types are stored and spawned in ascending order (ties by name), so
    // a component that reads another (a mesh reading its transform) spawns later.
    int spawn_order = 0;
    // instance_size > 0: every instance is exactly that many bytes (the blob's
    // stride; Compile fails if the function writes another amount). 0: variable.
    uint32_t instance_size = 0;
    // max_per_entity: how many instances of this type one entity may have (0: any).
    // The compiler rejects more, so a blob it writes never fails to spawn for it.
    uint32_t max_per_entity = 0;
    // layout: the declared instance layout as text (fields, types, sizes); when not
    // empty it goes into the strata.layouts section and its XXH32 into the section's
    // layout_fingerprint, so a spawner can refuse bytes laid out differently.
    std::string layout;
  };

  struct Result {
    std::vector<std::byte> blob;
    // warnings: one line per skipped component, with its entity path.
    std::vector<std::string> warnings;
    uint32_t num_entities = 0;
  };

  EntityCompiler() = default;
  EntityCompiler(const EntityCompiler&) = delete;
  EntityCompiler& operator=(const EntityCompiler&) = delete;

  // RegisterComponentCompiler: `compile` handles components whose "type" is
  // `type_name`. Types are stored and spawned in ascending `spawn_order` (ties by
  // name), so a component that reads another (a mesh reading its transform) gets a
  // larger spawn_order. `instance_size` > 0 declares that every instance is exactly
  // that many bytes (the blob records it as the stride, and Compile fails if the
  // function writes another amount); 0 means variable-size instances.
  // AlreadyExists if `type_name`, or another name with the same IdString32, is
  // registered; InvalidArgument if it is empty.
  absl::Status RegisterComponentCompiler(absl::string_view type_name, CompileFunction compile,
                                         int spawn_order, uint32_t instance_size = 0);
  // RegisterComponentCompiler(info): the same with every option. InvalidArgument also if
  // the name begins with "strata." (reserved for metadata sections).
  absl::Status RegisterComponentCompiler(ComponentCompileInfo info);
  // IsRegistered: whether `type_name` has a compile function.
  bool IsRegistered(absl::string_view type_name) const { return by_name_.contains(type_name); }

  // Compile: parses `json_text` (see the level format above) and returns the blob.
  // O(JSON size + total instance data). Errors are InvalidArgument with the entity path,
  // component and, for syntax errors, line and column; ResourceExhausted if the blob
  // would reach 4 GiB. Thread-safe against other Compile calls (const).
  // Memory: the level is streamed (simdjson, a slice of the entity array at a time) and
  // each component is handed to its compile function as a small nlohmann value, so the
  // peak is the output, the entity table and a few MB, not a DOM of the level. A level
  // with an error is parsed again, whole, to word the first error exactly.
  // Threads (Options::threads > 1): slices are compiled concurrently, each into its own
  // arrays, and appended in slice order, so the blob, warnings and messages are those
  // of the serial compile; memory grows by a few MB per thread.
  absl::StatusOr<Result> Compile(absl::string_view json_text, const Options& options) const;

 private:
  // LevelBuilder: numbers entities, compiles components and writes the blob; fed by
  // the streaming front-end (resource/internal/level_stream.h) or the DOM walk.
  class LevelBuilder;
  // The level's prefabs, resolved and compiled (entity_compiler.cc).
  struct CompiledPrefab;
  class PrefabLibrary;
  // BuildPrefabs: resolves `definitions` (the level's "prefabs") and compiles each
  // prefab on its own.
  absl::StatusOr<std::unique_ptr<PrefabLibrary>> BuildPrefabs(const nlohmann::json& definitions,
                                                              const Options& options) const;
  // WalkDom: the DOM walk of an "entities" array into `builder`.
  absl::Status WalkDom(const nlohmann::json& entities, LevelBuilder& builder) const;
  // CompileDom: the whole-document path: nlohmann's DOM, then the same walk. Used for
  // the rare shapes the streaming front-end leaves to it and for its exact messages.
  absl::StatusOr<Result> CompileDom(absl::string_view json_text, const Options& options) const;

  struct Registration {
    ComponentCompileInfo info;
    IdString32 id;
    uint32_t fingerprint = 0;
    std::vector<std::string> field_names;  // from info.layout, in order
  };

  std::vector<Registration> registrations_;
  absl::flat_hash_map<std::string, size_t> by_name_;
};

}  // namespace strata

#endif  // STRATA_RESOURCE_ENTITY_COMPILER_H_
