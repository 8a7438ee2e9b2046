// The compiler's entity references, per-entity limits, names metadata and the shape of
// its messages for hostile text (bounded, escaped, linear in nesting depth).
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "resource/entity_compiler.h"
#include "resource/format.h"
#include "resource/metadata.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

// "target": an entity reference; "hp": a float.
absl::Status CompileLink(const nlohmann::json& config, ComponentDataWriter& out) {
  STRATA_RETURN_IF_ERROR(CheckComponentKeys(config, {"target"}));
  auto it = config.find("target");
  if (it == config.end() || it->is_null()) {
    out.WriteNoEntityRef();
  } else if (it->is_string()) {
    out.WriteEntityRef("target", it->get_ref<const std::string&>());
  } else {
    return absl::InvalidArgumentError("\"target\": expected a string or null");
  }
  return absl::OkStatus();
}

void Register(EntityCompiler& compiler) {
  EntityCompiler::ComponentCompileInfo link;
  link.type_name = "link";
  link.compile = CompileLink;
  link.instance_size = 4;
  link.max_per_entity = 1;
  link.layout = "target:entity:4";
  ASSERT_THAT(compiler.RegisterComponentCompiler(std::move(link)), IsOk());
}

// The section of `type` in `view` (its first instance's data as uint32 values).
std::vector<uint32_t> U32s(const EntityResourceView& view, absl::string_view type) {
  for (const ComponentTypeView& t : view.component_types()) {
    if (t.type != IdString32(type)) continue;
    std::vector<uint32_t> out(t.data.size() / 4);
    std::memcpy(out.data(), t.data.data(), t.data.size());
    return out;
  }
  return {};
}

TEST(EntityCompilerRefs, ResolvesNamesPathsForwardAndMutualReferences) {
  EntityCompiler compiler;
  Register(compiler);
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result result, compiler.Compile(R"({"entities": [
      {"name": "a", "components": [{"type": "link", "target": "b"}]},
      {"name": "b", "components": [{"type": "link", "target": "a"}],
       "children": [{"name": "wheel", "components": [{"type": "link", "target": "c/wheel"}]}]},
      {"name": "c", "children": [{"name": "wheel", "components": [{"type": "link", "target": null}]}]},
      {"components": [{"type": "link", "target": "b/wheel"}]}]})", {}));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(result.blob));
  // a 0, b 1, b/wheel 2, c 3, c/wheel 4, unnamed 5.
  EXPECT_EQ(U32s(view, "link"), (std::vector<uint32_t>{1, 0, 4, kNoEntityRef, 2}));
  for (const ComponentTypeView& t : view.component_types()) {
    if (t.type == IdString32("link")) {
      EXPECT_EQ(t.layout_fingerprint, IdString32::Hash("target:entity:4"));
    }
  }
  STRATA_ASSERT_OK_AND_ASSIGN(ResourceMetadata meta, ReadResourceMetadata(view));
  EXPECT_EQ(meta.EntityName(2), "wheel");
  EXPECT_EQ(meta.EntityName(5), "");
  EXPECT_EQ(meta.layouts.at(IdString32("link").value()), "target:entity:4");
}

TEST(EntityCompilerRefs, BadReferencesNameTheEntityComponentAndField) {
  EntityCompiler compiler;
  Register(compiler);
  EXPECT_THAT(compiler.Compile(R"({"entities": [{"name": "a", "components": [
                  {"type": "link", "target": "nobody"}]}]})", {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("entities[0] (\"a\").components[0] \"link\": \"target\": no entity "
                                 "of this level is named \"nobody\"")));
  // Two entities named "wheel": the name is ambiguous, the path is not.
  const char* kTwoWheels = R"({"entities": [
      {"name": "x", "children": [{"name": "wheel"}]}, {"name": "y", "children": [{"name": "wheel"}]},
      {"components": [{"type": "link", "target": "%s"}]}]})";
  EXPECT_THAT(compiler.Compile(absl::StrReplaceAll(kTwoWheels, {{"%s", "wheel"}}), {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("several entities are named")));
  EXPECT_THAT(compiler.Compile(absl::StrReplaceAll(kTwoWheels, {{"%s", "y/wheel"}}), {}), IsOk());
  EXPECT_THAT(compiler.Compile(absl::StrReplaceAll(kTwoWheels, {{"%s", "y/door"}}), {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no entity \"door\" there")));
}

TEST(EntityCompilerRefs, OtherEndiannessSwapsResolvedReferences) {
  EntityCompiler compiler;
  Register(compiler);
  EntityCompiler::Options other;
  other.endianness = kNativeEndianness == Endianness::kLittle ? Endianness::kBig : Endianness::kLittle;
  STRATA_ASSERT_OK_AND_ASSIGN(
      EntityCompiler::Result result,
      compiler.Compile(R"({"entities": [{"name": "a"}, {"components": [{"type": "link", "target": "a"}]}]})",
                       other));
  // The instance data is the last 16 bytes' first word: entity 0, byte-swapped is still 0;
  // compile a reference to entity 1 to see the swap.
  STRATA_ASSERT_OK_AND_ASSIGN(
      result, compiler.Compile(R"({"entities": [{"components": [{"type": "link", "target": "b"}]},
                                                {"name": "b"}]})", other));
  uint32_t swapped_one;
  std::memcpy(&swapped_one, result.blob.data() + result.blob.size() - 16, 4);
  EXPECT_EQ(swapped_one, absl::gbswap_32(1u));
}

TEST(EntityCompilerRefs, MaxPerEntityIsEnforcedAtCompileTime) {
  EntityCompiler compiler;
  Register(compiler);
  EXPECT_THAT(compiler.Compile(R"({"entities": [{"name": "e"}, {"name": "twice", "components": [
                  {"type": "link", "name": "l1"}, {"type": "link", "name": "l2"}]}]})", {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("entities[1] (\"twice\").components[1] \"link\": an entity has at "
                                 "most 1 component of this type")));
  // One per entity in many entities is fine.
  EXPECT_THAT(compiler.Compile(R"({"entities": [{"components": [{"type": "link"}]},
                                                {"components": [{"type": "link"}]}]})", {}),
              IsOk());
}

TEST(EntityCompilerRefs, InstanceNameTextIsKeptAndHashNamesAreTakenLiterally) {
  EntityCompiler compiler;
  Register(compiler);
  STRATA_ASSERT_OK_AND_ASSIGN(
      EntityCompiler::Result result,
      compiler.Compile(R"({"entities": [{"components": [{"type": "link", "name": "Chain"}]},
                                        {"components": [{"type": "link", "name": "#0000abcd"}]}]})", {}));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(result.blob));
  STRATA_ASSERT_OK_AND_ASSIGN(ResourceMetadata meta, ReadResourceMetadata(view));
  ASSERT_NE(meta.NameText(IdString32::Hash("Chain")), nullptr);
  EXPECT_EQ(meta.NameText(0xabcd), nullptr);
  for (const ComponentTypeView& t : view.component_types()) {
    if (t.type != IdString32("link")) continue;
    EXPECT_EQ(t.names[0], IdString32::Hash("Chain"));
    EXPECT_EQ(t.names[1], 0xabcdu);
  }
  EntityCompiler::Options no_names;
  no_names.keep_names = false;
  STRATA_ASSERT_OK_AND_ASSIGN(
      result, compiler.Compile(R"({"entities": [{"name": "a", "components": [{"type": "link", "name": "Chain"}]}]})",
                               no_names));
  STRATA_ASSERT_OK_AND_ASSIGN(view, EntityResourceView::Create(result.blob));
  EXPECT_EQ(view.num_component_types(), 2u);  // link and its layout, no names
}

TEST(EntityCompilerRefs, ReservedTypeNamesAreRejected) {
  EntityCompiler compiler;
  EXPECT_THAT(compiler.RegisterComponentCompiler("strata.names", CompileLink, 0),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("reserved")));
}

TEST(EntityCompilerRefs, EchoedUserTextIsEscapedAndBounded) {
  EntityCompiler compiler;
  Register(compiler);
  const std::string nul_name = R"({"entities": [{"name": "bad\u0000name", "components": [{"type": "link", "target": "x"}]}]})";
  absl::StatusOr<EntityCompiler::Result> result = compiler.Compile(nul_name, {});
  ASSERT_THAT(result, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("(\"bad\\x00name\")"));
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("no entity of this level is named"));
  EXPECT_EQ(std::string(result.status().message()).find('\0'), std::string::npos);

  const std::string huge(1 << 20, 'q');
  result = compiler.Compile(absl::StrCat(R"({"entities": [{"components": [{"type": ")", huge, R"("}]}]})"), {});
  ASSERT_THAT(result, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("(1048576 bytes)")));
  EXPECT_LT(result.status().message().size(), 400u);
}

// A chain of nested children compiles in time linear in its depth: doubling the depth
// must not quadruple the time (allowing a 3x margin for noise).
TEST(EntityCompilerRefs, DeepNestingIsLinear) {
  EntityCompiler compiler;
  Register(compiler);
  auto chain = [](int depth) {
    std::string json = R"({"entities": [)";
    for (int i = 0; i < depth; ++i) json += R"({"name": "n", "children": [)";
    json += "{}";
    for (int i = 0; i < depth; ++i) json += "]}";
    return json + "]}";
  };
  auto seconds = [&](int depth) {
    const std::string json = chain(depth);
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<EntityCompiler::Result> result = compiler.Compile(json, {});
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_THAT(result, IsOk());
    if (result.ok()) {
      EXPECT_EQ(result->num_entities, static_cast<uint32_t>(depth + 1));
    }
    return s;
  };
  const double small = std::max(seconds(20000), 1e-3);
  const double large = seconds(80000);
  // Quadratic growth would be 16x; linear is 4x.
  EXPECT_LT(large / small, 10.0) << small << " s vs " << large << " s";
}

}  // namespace
}  // namespace strata
