#include "resource/entity_compiler.h"

#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/id_string.h"
#include "base/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "resource/format.h"
#include "resource/testing/test_levels.h"
#include "testing/random.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::Random;
using ::strata::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// position (testing::CompilePosition): 3 floats (12 bytes), registered at spawn order 10.
using ::strata::testing::CompilePosition;

// labelled: density float, then a variable-length label; spawn order 20.
absl::Status CompileLabelled(const nlohmann::json& config, ComponentDataWriter& out) {
  STRATA_RETURN_IF_ERROR(CheckComponentKeys(config, {"density", "label"}));
  float density = 1;
  std::string label;
  STRATA_RETURN_IF_ERROR(ReadFloat(config, "density", &density));
  STRATA_RETURN_IF_ERROR(ReadString(config, "label", &label));
  out.WriteF32(density);
  out.WriteU32(static_cast<uint32_t>(label.size()));
  out.WriteBytes(absl::MakeConstSpan(reinterpret_cast<const std::byte*>(label.data()), label.size()));
  return absl::OkStatus();
}

// Registered in the opposite of spawn order, to show the blob follows spawn_order.
void RegisterTestCompilers(EntityCompiler& compiler) {
  ASSERT_THAT(compiler.RegisterComponentCompiler("labelled", CompileLabelled, 20), IsOk());
  ASSERT_THAT(compiler.RegisterComponentCompiler("position", CompilePosition, 10, 12), IsOk());
}

float F32At(absl::Span<const std::byte> data, size_t offset) {
  float f;
  std::memcpy(&f, data.data() + offset, sizeof(f));
  return f;
}

// Types: the component sections of `view`, without the metadata sections.
std::vector<ComponentTypeView> Types(const EntityResourceView& view) {
  std::vector<ComponentTypeView> types;
  for (const ComponentTypeView& type : view.component_types()) {
    if (!IsMetadataSection(type.type)) types.push_back(type);
  }
  return types;
}

constexpr char kCarLevel[] = R"({"entities": [
  {"name": "car",
   "components": [{"type": "labelled", "name": "Fog", "density": 0.2},
                  {"type": "position", "position": [1, 2, 3]}],
   "children": [
     {"name": "wheel_l", "components": [{"type": "position", "position": [-1, 0, 0]}]},
     {"name": "wheel_r", "components": [{"type": "position", "position": [1, 0, 0]}],
      "children": [{"name": "hubcap"}]}]},
  {"name": "sun", "components": [{"type": "labelled", "label": "sun"}]}
]})";

TEST(EntityCompiler, CompilesHierarchyDepthFirstGroupedBySpawnOrder) {
  EntityCompiler compiler;
  RegisterTestCompilers(compiler);
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result result, compiler.Compile(kCarLevel, {}));
  EXPECT_TRUE(result.warnings.empty());
  EXPECT_EQ(result.num_entities, 5u);
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(result.blob));
  // car 0, wheel_l 1, wheel_r 2, hubcap 3, sun 4.
  EXPECT_THAT(view.parent_index(), ElementsAre(kNoParent, 0u, 0u, 2u, kNoParent));
  std::vector<ComponentTypeView> types = Types(view);
  ASSERT_EQ(types.size(), 2u);
  EXPECT_EQ(types[0].type, IdString32("position"));
  EXPECT_EQ(types[0].instance_stride, 12u);
  EXPECT_THAT(types[0].entity_index, ElementsAre(0u, 1u, 2u));
  // A component's name defaults to its type.
  EXPECT_EQ(types[0].name(0), IdString32("position"));
  EXPECT_EQ(F32At(types[0].data, 0), 1.0f);
  EXPECT_EQ(F32At(types[0].data, 8), 3.0f);
  EXPECT_EQ(F32At(types[0].data, 12), -1.0f);
  EXPECT_EQ(types[1].type, IdString32("labelled"));
  EXPECT_EQ(types[1].instance_stride, 0u);
  EXPECT_THAT(types[1].entity_index, ElementsAre(0u, 4u));
  EXPECT_EQ(types[1].name(0), IdString32("Fog"));
  EXPECT_EQ(types[1].name(1), IdString32("labelled"));
  EXPECT_EQ(F32At(types[1].data, 0), 0.2f);
  ASSERT_EQ(types[1].data.size(), 8u + 8u + 3u);
  EXPECT_EQ(static_cast<char>(types[1].data[16]), 's');
}

TEST(EntityCompiler, EmptyLevelAndEntitiesWithoutComponents) {
  EntityCompiler compiler;
  RegisterTestCompilers(compiler);
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result empty, compiler.Compile(R"({"entities": []})", {}));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(empty.blob));
  EXPECT_EQ(view.num_entities(), 0u);
  EXPECT_EQ(view.num_component_types(), 0u);
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result bare,
                              compiler.Compile(R"({"entities": [{}, {"children": [{}]}]})", {}));
  STRATA_ASSERT_OK_AND_ASSIGN(view, EntityResourceView::Create(bare.blob));
  EXPECT_THAT(view.parent_index(), ElementsAre(kNoParent, kNoParent, 1u));
  EXPECT_EQ(view.num_component_types(), 0u);
}

TEST(EntityCompiler, SyntaxErrorsReportLineAndColumn) {
  EntityCompiler compiler;
  RegisterTestCompilers(compiler);
  EXPECT_THAT(compiler.Compile("{\n  \"entities\": [\n    {\"name\": tru}\n  ]\n}", {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("line 3, column 17")));
  EXPECT_THAT(compiler.Compile(R"({"entities": [],})", {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("line 1, column 17")));
  EXPECT_THAT(compiler.Compile("{\"entities\": [\n", {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("line 2, column 1")));
  EXPECT_THAT(compiler.Compile("", {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("line 1, column 1")));
}

TEST(EntityCompiler, WrongJsonTypesNameTheEntityPath) {
  EntityCompiler compiler;
  RegisterTestCompilers(compiler);
  struct Case {
    const char* json;
    const char* message;
  };
  const Case cases[] = {
      {R"([])", "expected an object"},
      {R"({"entities": {}})", "\"entities\": expected an array, got object"},
      {R"({})", "\"entities\": expected an array, got nothing"},
      {R"({"entities": [], "extra": 1})", "unknown key \"extra\""},
      {R"({"entities": [3]})", "entities[0]: expected an entity object, got number"},
      {R"({"entities": [{"name": 7}]})", "\"name\": expected a string, got number"},
      {R"({"entities": [{"childern": []}]})", "entities[0]: unknown key \"childern\""},
      {R"({"entities": [{}, {"name": "b", "components": {}}]})",
       "entities[1] (\"b\"): \"components\": expected an array, got object"},
      {R"({"entities": [{"children": [{}, {"children": 1}]}]})",
       "entities[0].children[1]: \"children\": expected an array, got number"},
      {R"({"entities": [{"components": [1]}]})",
       "entities[0].components[0]: expected a component object, got number"},
      {R"({"entities": [{"components": [{"name": "x"}]}]})",
       "entities[0].components[0]: \"type\": expected a string, got nothing"},
      {R"({"entities": [{"components": [{"type": "position", "name": 1}]}]})",
       "\"name\": expected a string, got number"},
      {R"({"entities": [{}, {"children": [{"name": "w", "components": [{"type": "position", "position": [1, 2]}]}]}]})",
       "entities[1].children[0] (\"w\").components[0] \"position\" (position): \"position\": "
       "expected an array of 3 numbers, got 2 elements"},
      {R"({"entities": [{"components": [{"type": "position", "position": "up"}]}]})",
       "\"position\": expected an array of 3 numbers, got string"},
      {R"({"entities": [{"components": [{"type": "position", "position": [1, "2", 3]}]}]})",
       "\"position\"[1]: expected a number, got string"},
      {R"({"entities": [{"components": [{"type": "position", "position": [1, 2, 1e300]}]}]})",
       "out of float range"},
      {R"({"entities": [{"components": [{"type": "position", "postion": [1, 2, 3]}]}]})",
       "unknown key \"postion\""},
      {R"({"entities": [{"components": [{"type": "labelled", "density": true}]}]})",
       "\"density\": expected a number, got boolean"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.json);
    EXPECT_THAT(compiler.Compile(c.json, {}),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)));
  }
}

TEST(EntityCompiler, DuplicateKeysAreErrorsNamingKeyAndPath) {
  EntityCompiler compiler;
  RegisterTestCompilers(compiler);
  const std::pair<const char*, const char*> cases[] = {
      {R"({"entities": [], "entities": []})", "level: duplicate key \"entities\""},
      {R"({"entities": [{"components": [{"type": "position", "type": "position"}]}]})",
       "entities[0].components[0]: duplicate key \"type\""},
      {R"({"entities": [{}, {"name": "a", "name": "b"}]})", "entities[1]: duplicate key \"name\""},
      {R"({"entities": [{"children": [{"components": [], "components": []}]}]})",
       "entities[0].children[0]: duplicate key \"components\""},
      {R"({"entities": [{"components": [{"type": "position", "position": [1, 2, 3], "position": [4, 5, 6]}]}]})",
       "entities[0].components[0]: duplicate key \"position\""},
      {R"({"entities": [{"children": [], "children": [{}]}]})",
       "entities[0]: duplicate key \"children\""},
  };
  for (const auto& [json, message] : cases) {
    SCOPED_TRACE(json);
    EXPECT_THAT(compiler.Compile(json, {}), StatusIs(absl::StatusCode::kInvalidArgument, message));
  }
  // The same key in sibling objects is not a duplicate.
  EXPECT_THAT(compiler.Compile(R"({"entities": [{"name": "a"}, {"name": "b", "children": [{"name": "c"}]}]})", {}),
              IsOk());
}

TEST(EntityCompiler, InputThatIsNotUtf8IsRejectedWithTheByteOffset) {
  EntityCompiler compiler;
  RegisterTestCompilers(compiler);
  // In a string and outside one.
  EXPECT_THAT(compiler.Compile("{\"entities\": [{\"name\": \"caf\xe9\"}]}", {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("not UTF-8 at byte 27 (line 1, column 28)")));
  EXPECT_THAT(compiler.Compile("{\"entities\": []}\n\xc0\x80", {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("not UTF-8 at byte 17 (line 2, column 1)")));
  EXPECT_THAT(compiler.Compile("{\"entities\": [{\"name\": \"caf\xc3\xa9\"}]}", {}), IsOk());
}

TEST(EntityCompiler, UnknownComponentsRejectedOrSkipped) {
  EntityCompiler compiler;
  RegisterTestCompilers(compiler);
  constexpr char kLevel[] = R"({"entities": [{"name": "a", "components": [
      {"type": "position"}, {"type": "sound", "volume": 3}]},
      {"children": [{"components": [{"type": "sound"}, {"type": "ai"}]}]}]})";
  EXPECT_THAT(compiler.Compile(kLevel, {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("entities[0] (\"a\").components[1]: unknown component type \"sound\"")));
  EntityCompiler::Options skip;
  skip.unknown_components = EntityCompiler::UnknownComponents::kSkip;
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result result, compiler.Compile(kLevel, skip));
  EXPECT_THAT(result.warnings,
              ElementsAre(HasSubstr("entities[0] (\"a\").components[1]: skipped component of unknown type \"sound\""),
                          HasSubstr("entities[1].children[0].components[0]"),
                          HasSubstr("entities[1].children[0].components[1]: skipped component of unknown type \"ai\"")));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(result.blob));
  EXPECT_EQ(view.num_entities(), 3u);
  ASSERT_EQ(Types(view).size(), 1u);
  EXPECT_EQ(Types(view)[0].type, IdString32("position"));
}

TEST(EntityCompiler, ComponentNamesUniqueWithinAnEntity) {
  EntityCompiler compiler;
  RegisterTestCompilers(compiler);
  // Same name twice in one entity: error, also when one name is the type's default.
  EXPECT_THAT(compiler.Compile(R"({"entities": [{"components": [
                  {"type": "labelled", "name": "Fog"}, {"type": "position", "name": "Fog"}]}]})", {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("components[1] \"position\": component name \"Fog\" is used twice")));
  EXPECT_THAT(compiler.Compile(R"({"entities": [{"components": [
                  {"type": "position"}, {"type": "position"}]}]})", {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"position\" is used twice")));
  // Two instances of one type under different names, and the same name in different
  // entities, are fine.
  STRATA_ASSERT_OK_AND_ASSIGN(
      EntityCompiler::Result result,
      compiler.Compile(R"({"entities": [{"components": [{"type": "labelled", "name": "Fog"},
                                                         {"type": "labelled", "name": "Sky"}]},
                                        {"components": [{"type": "labelled", "name": "Fog"}]}]})", {}));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(result.blob));
  const ComponentTypeView type = Types(view)[0];
  EXPECT_THAT(type.entity_index, ElementsAre(0u, 0u, 1u));
  EXPECT_EQ(type.name(1), IdString32("Sky"));
}

TEST(EntityCompiler, RegistrationErrors) {
  EntityCompiler compiler;
  RegisterTestCompilers(compiler);
  EXPECT_THAT(compiler.RegisterComponentCompiler("position", CompilePosition, 0),
              StatusIs(absl::StatusCode::kAlreadyExists));
  EXPECT_THAT(compiler.RegisterComponentCompiler("", CompilePosition, 0),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(compiler.RegisterComponentCompiler("x", nullptr, 0),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(EntityCompiler, InstanceSizeMismatchIsAnInternalError) {
  EntityCompiler compiler;
  ASSERT_THAT(compiler.RegisterComponentCompiler(
                  "short", [](const nlohmann::json&, ComponentDataWriter& out) {
                    out.WriteU32(1);
                    return absl::OkStatus();
                  },
                  0, /*instance_size=*/8),
              IsOk());
  EXPECT_THAT(compiler.Compile(R"({"entities": [{"components": [{"type": "short"}]}]})", {}),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("wrote 4 bytes")));
}

TEST(EntityCompiler, WritesTheOtherEndianness) {
  EntityCompiler compiler;
  RegisterTestCompilers(compiler);
  EntityCompiler::Options other;
  other.endianness = kNativeEndianness == Endianness::kLittle ? Endianness::kBig : Endianness::kLittle;
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result native, compiler.Compile(kCarLevel, {}));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result swapped, compiler.Compile(kCarLevel, other));
  EXPECT_THAT(EntityResourceView::Create(swapped.blob),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("-endian")));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(native.blob));
  ASSERT_EQ(native.blob.size(), swapped.blob.size());
  // The compile functions' floats are swapped too: the position section's data.
  const ComponentTypeView position = Types(view)[0];
  const size_t data = static_cast<size_t>(position.data.data() - native.blob.data());
  for (size_t b = 0; b < 4; ++b) {
    EXPECT_EQ(native.blob[data + b], swapped.blob[data + 3 - b]);
  }
}

TEST(EntityCompiler, DeepNestingDoesNotRecurse) {
  EntityCompiler compiler;
  RegisterTestCompilers(compiler);
  constexpr int kDepth = 5000;
  std::string json = R"({"entities": [)";
  for (int i = 0; i < kDepth; ++i) json += R"({"components": [{"type": "position"}], "children": [)";
  json += "{}";
  for (int i = 0; i < kDepth; ++i) json += "]}";
  json += "]}";
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result result, compiler.Compile(json, {}));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(result.blob));
  ASSERT_EQ(view.num_entities(), kDepth + 1u);
  for (uint32_t i = 1; i <= kDepth; ++i) ASSERT_EQ(view.parent_index()[i], i - 1);
}

// Random levels against a naive recursive model of the numbering and grouping.
struct ModelEntity {
  std::vector<std::pair<bool, std::string>> components;  // (is_position, name)
  std::vector<ModelEntity> children;
};

void ToJson(const ModelEntity& e, std::string* out) {
  absl::StrAppend(out, "{\"components\": [");
  for (size_t c = 0; c < e.components.size(); ++c) {
    absl::StrAppend(out, c ? "," : "", "{\"type\": \"", e.components[c].first ? "position" : "labelled",
                    "\", \"name\": \"", e.components[c].second, "\"}");
  }
  absl::StrAppend(out, "], \"children\": [");
  for (size_t c = 0; c < e.children.size(); ++c) {
    absl::StrAppend(out, c ? "," : "");
    ToJson(e.children[c], out);
  }
  absl::StrAppend(out, "]}");
}

void Flatten(const ModelEntity& e, uint32_t parent, std::vector<uint32_t>* parents,
             std::vector<uint32_t>* position_owners, std::vector<uint32_t>* render_owners,
             std::vector<uint32_t>* position_names) {
  const uint32_t index = static_cast<uint32_t>(parents->size());
  parents->push_back(parent);
  for (const auto& [is_position, name] : e.components) {
    (is_position ? position_owners : render_owners)->push_back(index);
    if (is_position) position_names->push_back(IdString32(name).value());
  }
  for (const ModelEntity& child : e.children) {
    Flatten(child, index, parents, position_owners, render_owners, position_names);
  }
}

ModelEntity RandomEntity(Random& rng, int depth) {
  ModelEntity e;
  const int num_components = static_cast<int>(rng.UniformInt(0, 3));
  for (int c = 0; c < num_components; ++c) {
    e.components.emplace_back(rng.Bernoulli(0.5), absl::StrCat("c", c));
  }
  if (depth < 4) {
    const int num_children = static_cast<int>(rng.UniformInt(0, 3));
    for (int c = 0; c < num_children; ++c) e.children.push_back(RandomEntity(rng, depth + 1));
  }
  return e;
}

TEST(EntityCompiler, RandomLevelsMatchNaiveModel) {
  Random rng(testing::TestSeed());
  SCOPED_TRACE(rng.DescribeSeed());
  EntityCompiler compiler;
  RegisterTestCompilers(compiler);
  for (int iteration = 0; iteration < 50; ++iteration) {
    std::vector<ModelEntity> roots(rng.UniformInt(0, 5));
    for (ModelEntity& root : roots) root = RandomEntity(rng, 0);
    std::string json = "{\"entities\": [";
    std::vector<uint32_t> parents, position_owners, render_owners, position_names;
    for (size_t r = 0; r < roots.size(); ++r) {
      absl::StrAppend(&json, r ? "," : "");
      ToJson(roots[r], &json);
      Flatten(roots[r], kNoParent, &parents, &position_owners, &render_owners, &position_names);
    }
    json += "]}";
    STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result result, compiler.Compile(json, {}));
    STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(result.blob));
    ASSERT_TRUE(std::equal(parents.begin(), parents.end(), view.parent_index().begin(),
                           view.parent_index().end()));
    std::vector<uint32_t> got_position, got_render, got_position_names;
    for (const ComponentTypeView& type : Types(view)) {
      if (type.type == IdString32("position")) {
        got_position.assign(type.entity_index.begin(), type.entity_index.end());
        got_position_names.assign(type.names.begin(), type.names.end());
      } else {
        ASSERT_EQ(type.type, IdString32("labelled"));
        got_render.assign(type.entity_index.begin(), type.entity_index.end());
      }
    }
    EXPECT_EQ(got_position, position_owners);
    EXPECT_EQ(got_position_names, position_names);
    EXPECT_EQ(got_render, render_owners);
  }
}

}  // namespace
}  // namespace strata
