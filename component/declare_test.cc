#include "component/declare.h"
#include "component/instance_indexer.h"
#include "component/page_component.h"

#include <cstddef>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "component/registry.h"
#include "entity/entity_manager.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "index/entity_index.h"
#include "iteration/entity_pages.h"
#include "nlohmann/json.hpp"
#include "resource/entity_compiler.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::testing::HasSubstr;

struct Mixed {
  float speed = 2.5f;
  int32_t level = -3;
  uint32_t count = 7;
  bool active = true;
  Vector3 offset{1, 2, 3};
  Vector4 tint{0.5f, 0.5f, 0.5f, 1};
  Quaternion turn;
  IdString32 tag;
  Entity target;
};

absl::StatusOr<ComponentType> MixedType() {
  return ComponentDeclaration<Mixed>("mixed")
      .Field("speed", &Mixed::speed).Range(0, 10)
      .Field("level", &Mixed::level)
      .Field("count", &Mixed::count).Max(100)
      .Field("active", &Mixed::active)
      .Field("offset", &Mixed::offset)
      .Color("tint", &Mixed::tint)
      .Field("turn", &Mixed::turn)
      .Field("tag", &Mixed::tag)
      .Field("target", &Mixed::target)
      .Build();
}

// Compiles one component of `json` (a component object) and returns its bytes.
absl::StatusOr<std::vector<std::byte>> CompileOne(const ComponentType& type, const char* json) {
  std::vector<std::byte> bytes;
  std::vector<EntityRefFixup> fixups;
  ComponentDataWriter writer(kNativeEndianness, &bytes, &fixups);
  absl::Status status = type.Compile(nlohmann::json::parse(json), writer);
  if (!status.ok()) return status;
  return bytes;
}

template <typename T>
T At(const std::vector<std::byte>& bytes, size_t offset) {
  T v;
  std::memcpy(&v, bytes.data() + offset, sizeof(T));
  return v;
}

TEST(ComponentDeclaration, LayoutFollowsTheFieldsInOrder) {
  STRATA_ASSERT_OK_AND_ASSIGN(ComponentType type, MixedType());
  EXPECT_EQ(type.layout(),
            "speed:f32:4;level:i32:4;count:u32:4;active:bool:4;offset:vec3:12;tint:color:16;"
            "turn:quat:16;tag:name:4;target:entity:4");
  EXPECT_EQ(type.instance_size(), 68u);
  EXPECT_EQ(type.fingerprint(), IdString32::Hash(type.layout()));
  EXPECT_EQ(type.max_per_entity(), 1u);
  EXPECT_EQ(type.fields()[4].blob_offset, 16u);
  EXPECT_EQ(type.cpp_size(), sizeof(Mixed));
}

TEST(ComponentDeclaration, AbsentFieldsTakeTheStructDefaults) {
  STRATA_ASSERT_OK_AND_ASSIGN(ComponentType type, MixedType());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> bytes, CompileOne(type, R"({"type": "mixed"})"));
  ASSERT_EQ(bytes.size(), 68u);
  EXPECT_EQ(At<float>(bytes, 0), 2.5f);
  EXPECT_EQ(At<int32_t>(bytes, 4), -3);
  EXPECT_EQ(At<uint32_t>(bytes, 8), 7u);
  EXPECT_EQ(At<uint32_t>(bytes, 12), 1u);
  EXPECT_EQ(At<float>(bytes, 20), 2.0f);
  EXPECT_EQ(At<float>(bytes, 44 + 12), 1.0f);  // identity quaternion w
  EXPECT_EQ(At<uint32_t>(bytes, 64), kNoEntityRef);
}

TEST(ComponentDeclaration, GivenFieldsAreCompiled) {
  STRATA_ASSERT_OK_AND_ASSIGN(ComponentType type, MixedType());
  STRATA_ASSERT_OK_AND_ASSIGN(
      std::vector<std::byte> bytes,
      CompileOne(type, R"({"type": "mixed", "speed": 10, "level": -2147483648, "count": 3.0,
                           "active": false, "offset": [4, 5, 6], "tag": "boss"})"));
  EXPECT_EQ(At<float>(bytes, 0), 10.0f);
  EXPECT_EQ(At<int32_t>(bytes, 4), INT32_MIN);
  EXPECT_EQ(At<uint32_t>(bytes, 8), 3u);
  EXPECT_EQ(At<uint32_t>(bytes, 12), 0u);
  EXPECT_EQ(At<float>(bytes, 24), 6.0f);
  EXPECT_EQ(At<uint32_t>(bytes, 60), IdString32::Hash("boss"));
}

TEST(ComponentDeclaration, BadValuesAreErrorsNamingTheField) {
  STRATA_ASSERT_OK_AND_ASSIGN(ComponentType type, MixedType());
  struct Case {
    const char* json;
    const char* message;
  };
  const Case cases[] = {
      {R"({"spede": 1})", "unknown key \"spede\" (mixed has: speed, level, count, active"},
      {R"({"speed": "fast"})", "\"speed\": \"fast\" is not a number (non-finite values are spelled"},
      {R"({"speed": true})", "\"speed\": expected a number, got boolean"},
      {R"({"speed": "nan:0x7f800000"})", "is not a number"},  // infinity's bits: no NaN
      {R"({"speed": "nan"})", "\"speed\": nan is outside [0, 10]"},
      {R"({"speed": {"value": 1}})", "\"speed\": an object value is {\"unchecked\": value}"},
      {R"({"speed": {"unchecked": 1, "x": 2}})", "an object value is {\"unchecked\": value}"},
      {R"({"speed": {"unchecked": "fast"}})", "\"fast\" is not a number"},
      {R"({"speed": 11})", "\"speed\": 11 is outside [0, 10]"},
      {R"({"speed": 1e39})", "\"speed\": number out of float range"},
      {R"({"level": 3.5})", "\"level\": 3.5 is not an integer"},
      {R"({"level": 2147483648})", "\"level\": 2147483648 does not fit i32"},
      {R"({"count": -1})", "\"count\": -1 does not fit u32"},
      {R"({"count": 1e10})", "\"count\": 1e+10 does not fit u32"},
      {R"({"count": 101})", "\"count\": 101 is outside"},
      {R"({"active": 1})", "\"active\": expected true or false, got number"},
      {R"({"offset": [1, 2]})", "\"offset\": expected an array of 3 numbers, got 2 elements"},
      {R"({"offset": [1, 2, "x"]})", "\"offset\": [2]: \"x\" is not a number"},
      {R"({"offset": [1, 2, null]})", "\"offset\": [2]: expected a number, got null"},
      {R"({"tint": 1})", "\"tint\": expected an array of 4 numbers, got number"},
      {R"({"turn": [0, 0, 0, 0]})", "\"turn\": a quaternion must not be all zero"},
      {R"({"tag": 5})", "\"tag\": expected a string, got number"},
      {R"({"target": 5})", "\"target\": expected an entity name or path, or null"},
      {R"({"name": "other"})", "a mixed is always named \"mixed\""},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(CompileOne(type, c.json), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.json;
  }
}

TEST(ComponentDeclaration, ExportWritesEveryFieldBack) {
  STRATA_ASSERT_OK_AND_ASSIGN(ComponentType type, MixedType());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> bytes,
                              CompileOne(type, R"({"speed": 0.1, "count": 100, "tag": "boss"})"));
  FieldTextLookup lookup;
  const std::string boss = "boss";
  lookup.name_text = [&](uint32_t id) { return id == IdString32::Hash("boss") ? &boss : nullptr; };
  STRATA_ASSERT_OK_AND_ASSIGN(nlohmann::json json, type.Export(bytes, lookup));
  EXPECT_EQ(json["speed"].get<float>(), 0.1f);
  EXPECT_EQ(json["count"].get<uint32_t>(), 100u);
  EXPECT_EQ(json["tag"], "boss");
  EXPECT_TRUE(json["target"].is_null());
  EXPECT_EQ(json["active"], true);
  // Compiling the export gives the same bytes.
  absl::StatusOr<std::vector<std::byte>> compiled = CompileOne(type, json.dump().c_str());
  ASSERT_THAT(compiled, IsOk()) << json.dump();
  std::vector<std::byte> again = *compiled;
  EXPECT_EQ(again, bytes);
  // Without the text, a name is written as its id, which compiles to the same id.
  lookup.name_text = nullptr;
  STRATA_ASSERT_OK_AND_ASSIGN(json, type.Export(bytes, lookup));
  EXPECT_EQ(json["tag"], absl::StrFormat("#%08x", IdString32::Hash("boss")));
  STRATA_ASSERT_OK_AND_ASSIGN(again, CompileOne(type, json.dump().c_str()));
  EXPECT_EQ(again, bytes);
}

// Bits of a float, and the float of bits, without arithmetic (a signalling NaN stays one).
uint32_t BitsOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

TEST(ComponentDeclaration, EveryValueAGameCanHoldExportsToTextThatCompilesToTheSameBytes) {
  STRATA_ASSERT_OK_AND_ASSIGN(ComponentType type, MixedType());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> base, CompileOne(type, R"({"tag": "#00000001"})"));
  // Float bit patterns: -0.0, infinities, the default quiet NaNs, NaNs with payloads
  // (quiet and signalling, either sign), the smallest denormal, the largest float, and
  // values outside speed's declared [0, 10].
  const uint32_t float_bits[] = {0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u,
                                 0x7fc00001u, 0x7fa00001u, 0xffbfffffu, 0x00000001u, 0x7f7fffffu,
                                 BitsOf(16.0f), BitsOf(-0.5f), BitsOf(10.0f)};
  // Blob offsets (LayoutFollowsTheFieldsInOrder).
  const size_t speed = 0, count = 8, offset_y = 20, tint_w = 40, turn = 44;
  for (uint32_t bits : float_bits) {
    for (size_t at : {speed, offset_y, tint_w}) {
      std::vector<std::byte> bytes = base;
      std::memcpy(bytes.data() + at, &bits, 4);
      STRATA_ASSERT_OK_AND_ASSIGN(nlohmann::json json, type.Export(bytes, {}));
      const std::string text = json.dump();
      absl::StatusOr<std::vector<std::byte>> again = CompileOne(type, text.c_str());
      ASSERT_THAT(again, IsOk()) << text;
      EXPECT_EQ(*again, bytes) << absl::StrFormat("bits %08x at %d: ", bits, at) << text;
    }
  }
  // Spellings: the common ones are words, others carry their bits.
  std::vector<std::byte> bytes = base;
  const uint32_t payload = 0x7fa00001u;
  std::memcpy(bytes.data() + speed, &payload, 4);
  STRATA_ASSERT_OK_AND_ASSIGN(nlohmann::json json, type.Export(bytes, {}));
  EXPECT_EQ(json["speed"], nlohmann::json::parse(R"({"unchecked": "nan:0x7fa00001"})")) << json.dump();
  EXPECT_EQ(NonFiniteF32Spelling(0xff800000u), "-inf");
  EXPECT_EQ(NonFiniteF32Spelling(0xffc00000u), "-nan");
  const float minus_zero = -0.0f;
  std::memcpy(bytes.data() + offset_y, &minus_zero, 4);
  STRATA_ASSERT_OK_AND_ASSIGN(json, type.Export(bytes, {}));
  EXPECT_EQ(json["offset"].dump(), "[1.0,-0.0,3.0]");
  // An integer past its range and an all-zero quaternion are written unchecked too.
  bytes = base;
  const uint32_t many = 4000000000u;
  std::memcpy(bytes.data() + count, &many, 4);
  std::memset(bytes.data() + turn, 0, 16);
  STRATA_ASSERT_OK_AND_ASSIGN(json, type.Export(bytes, {}));
  EXPECT_EQ(json["count"], nlohmann::json::parse(R"({"unchecked": 4000000000})"));
  EXPECT_EQ(json["turn"], nlohmann::json::parse(R"({"unchecked": [0.0, 0.0, 0.0, 0.0]})"));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> again, CompileOne(type, json.dump().c_str()));
  EXPECT_EQ(again, bytes);
  // Inside the checks, values stay plain numbers.
  STRATA_ASSERT_OK_AND_ASSIGN(json, type.Export(base, {}));
  EXPECT_TRUE(json["speed"].is_number());
  EXPECT_TRUE(json["count"].is_number());
}

struct Pair {
  float a = 0;
  float b = 0;
};

TEST(ComponentDeclaration, BuildRejectsBadDeclarations) {
  EXPECT_THAT(ComponentDeclaration<Pair>("p").Field("a", &Pair::a).Field("a", &Pair::b).Build(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("field \"a\": declared twice")));
  EXPECT_THAT(ComponentDeclaration<Pair>("p").Field("name", &Pair::a).Build(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("component's own keys")));
  EXPECT_THAT(ComponentDeclaration<Pair>("p").Min(0).Field("a", &Pair::a).Build(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("an option before any field")));
  EXPECT_THAT(ComponentDeclaration<Pair>("").Field("a", &Pair::a).Build(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("name is empty")));
  EXPECT_THAT(ComponentDeclaration<Pair>("strata.x").Field("a", &Pair::a).Build(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("reserved")));
  // A raw field whose type does not fit the struct at its offset.
  EXPECT_THAT(ComponentDeclaration<Pair>("p").RawField("v", FieldType::kVec3, 0).Build(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("vec3 needs 12 bytes at offset 0, but the struct has 8")));
  EXPECT_THAT(ComponentDeclaration<Pair>("p").Field("a", &Pair::a).RawField("c", FieldType::kU32, 2).Build(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("overlaps field \"a\"")));
  EXPECT_THAT(ComponentDeclaration<Pair>("p").Field("a", &Pair::a).Range(2, 1).Build(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("min is greater than max")));
  EXPECT_THAT(ComponentDeclaration<Pair>("p").RawField("a", FieldType::kF32, 0).RawField("b", FieldType::kU32, 4).Build(),
              IsOk());
}

TEST(ComponentRegistry, HoldsTheTransformAndRejectsDuplicates) {
  ComponentRegistry registry;
  ASSERT_NE(registry.Find("transform"), nullptr);
  EXPECT_EQ(registry.Find("transform")->instance_size(), 64u);
  EXPECT_EQ(registry.Find("nothing"), nullptr);
  ASSERT_THAT(registry.Add(ComponentDeclaration<Pair>("pair").Field("a", &Pair::a).Transient(&Pair::b).SpawnOrder(-5).Build()), IsOk());
  EXPECT_THAT(registry.Add(ComponentDeclaration<Pair>("pair").Field("b", &Pair::b).Transient(&Pair::a).Build()),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("\"pair\" is already registered")));
  EXPECT_THAT(registry.Add(ComponentDeclaration<Pair>("p").Min(1).Build()),
              StatusIs(absl::StatusCode::kInvalidArgument));
  ASSERT_EQ(registry.types().size(), 2u);
  EXPECT_EQ(registry.types()[0]->name(), "pair");  // spawn order -5 before the transform's 0
  EXPECT_EQ(registry.Find(IdString32("pair"))->name(), "pair");
  EntityCompiler compiler;
  ASSERT_THAT(registry.RegisterCompilers(compiler), IsOk());
  EXPECT_TRUE(compiler.IsRegistered("pair"));
  EXPECT_TRUE(compiler.IsRegistered("transform"));
}

struct PairV2 {
  float a = 0;
  float added = 42;
  float b = 0;
};

ComponentSpawnBatch BatchOf(const ComponentType& blob_type, const std::vector<std::byte>& data, uint32_t n) {
  ComponentSpawnBatch batch;
  batch.num_instances = n;
  batch.instance_stride = blob_type.instance_size();
  batch.data = data;
  batch.layout = blob_type.layout();
  batch.layout_fingerprint = blob_type.fingerprint();
  return batch;
}

TEST(PlanSpawn, SameLayoutIsIdentityAndAnAddedFieldTakesItsDefault) {
  STRATA_ASSERT_OK_AND_ASSIGN(ComponentType v1,
                              ComponentDeclaration<Pair>("pair").Field("a", &Pair::a).Field("b", &Pair::b).Build());
  std::vector<std::byte> data(8);
  const float values[2] = {1.5f, -2.5f};
  std::memcpy(data.data(), values, 8);
  STRATA_ASSERT_OK_AND_ASSIGN(SpawnPlan same, PlanSpawn(v1, BatchOf(v1, data, 1)));
  EXPECT_TRUE(same.identity);

  STRATA_ASSERT_OK_AND_ASSIGN(ComponentType v2, ComponentDeclaration<PairV2>("pair")
                                                    .Field("a", &PairV2::a)
                                                    .Field("added", &PairV2::added)
                                                    .Field("b", &PairV2::b)
                                                    .Build());
  const ComponentSpawnBatch old_blob = BatchOf(v1, data, 1);
  STRATA_ASSERT_OK_AND_ASSIGN(SpawnPlan migrate, PlanSpawn(v2, old_blob));
  EXPECT_FALSE(migrate.identity);
  std::vector<std::byte> objects;
  ASSERT_THAT(DecodeInstances(v2, migrate, old_blob, &objects), IsOk());
  PairV2 out;
  std::memcpy(&out, objects.data(), sizeof(out));
  EXPECT_EQ(out.a, 1.5f);
  EXPECT_EQ(out.added, 42.0f);
  EXPECT_EQ(out.b, -2.5f);
}

TEST(PlanSpawn, OtherLayoutsNameTheTypeAndFirstDifferingField) {
  STRATA_ASSERT_OK_AND_ASSIGN(ComponentType floats,
                              ComponentDeclaration<Pair>("pair").Field("a", &Pair::a).Field("b", &Pair::b).Build());
  STRATA_ASSERT_OK_AND_ASSIGN(ComponentType ints, ComponentDeclaration<Pair>("pair")
                                                      .Field("a", &Pair::a)
                                                      .RawField("b", FieldType::kU32, 4)
                                                      .Build());
  std::vector<std::byte> data(8);
  EXPECT_THAT(PlanSpawn(ints, BatchOf(floats, data, 1)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("component type \"pair\": the blob's layout differs from the declaration: "
                                 "field \"b\" is f32 (4 bytes) in the blob, u32 (4 bytes)")));
  STRATA_ASSERT_OK_AND_ASSIGN(ComponentType only_a,
                              ComponentDeclaration<Pair>("pair").Field("a", &Pair::a).Transient(&Pair::b).Build());
  EXPECT_THAT(PlanSpawn(only_a, BatchOf(floats, data, 1)),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("field \"b\" (f32) is not declared")));
  ComponentSpawnBatch no_layout = BatchOf(floats, data, 1);
  no_layout.layout = "";
  no_layout.layout_fingerprint = 0;
  EXPECT_THAT(PlanSpawn(only_a, no_layout),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("declares no layout")));
  ComponentSpawnBatch forged = BatchOf(floats, data, 1);
  forged.layout_fingerprint ^= 1;
  EXPECT_THAT(PlanSpawn(only_a, forged), StatusIs(absl::StatusCode::kDataLoss));
}

TEST(ComponentDeclaration, MakeStoreWithoutTheWorldsServicesIsFailedPrecondition) {
  STRATA_ASSERT_OK_AND_ASSIGN(ComponentType paged,
                              ComponentDeclaration<Pair>("pair").Field("a", &Pair::a).Field("b", &Pair::b).Build());
  STRATA_ASSERT_OK_AND_ASSIGN(ComponentType named, ComponentDeclaration<Pair>("named", ComponentStorage::kNamed)
                                                       .Field("a", &Pair::a)
                                                       .Field("b", &Pair::b)
                                                       .Build());
  EntityManager entities;
  EntityPages pages(entities);
  EntityIndex index;
  InstanceIndexer indexer(pages, index);
  WorldServices none;
  EXPECT_THAT(paged.MakeStore(none),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("component type \"pair\": the world has no page store")));
  EXPECT_THAT(named.MakeStore(none),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("component type \"named\": the world has no entity manager")));
  // Each service missing alone.
  WorldServices no_index;
  no_index.entities = &entities;
  no_index.pages = &pages;
  no_index.indexer = &indexer;
  EXPECT_THAT(paged.MakeStore(no_index),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("no entity index")));
  EXPECT_THAT(named.MakeStore(no_index),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("no entity index")));
  WorldServices no_pages;
  no_pages.entities = &entities;
  no_pages.index = &index;
  no_pages.indexer = &indexer;
  EXPECT_THAT(paged.MakeStore(no_pages),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("no page store")));
  WorldServices no_indexer;
  no_indexer.entities = &entities;
  no_indexer.pages = &pages;
  no_indexer.index = &index;
  EXPECT_THAT(paged.MakeStore(no_indexer),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("no instance indexer")));
  EXPECT_THAT(named.MakeStore(no_indexer),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("no instance indexer")));
  WorldServices no_entities;
  no_entities.pages = &pages;
  no_entities.index = &index;
  no_entities.indexer = &indexer;
  EXPECT_THAT(named.MakeStore(no_entities),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("no entity manager")));
  // What each storage needs is enough.
  EXPECT_THAT(paged.MakeStore(no_entities), IsOk());
  EXPECT_THAT(named.MakeStore(no_pages), IsOk());
}

// Over-aligned: the blob's instance data is only 16-byte aligned.
struct alignas(32) Wide8 {
  float v[8] = {};
};

TEST(ComponentDeclaration, NamedSpawnOfAnOverAlignedTypeCopiesTheBlobData) {
  ComponentDeclaration<Wide8> declaration("wide", ComponentStorage::kNamed);
  for (int i = 0; i < 8; ++i) {
    declaration.RawField(absl::StrCat("v", i), FieldType::kF32, 4 * static_cast<size_t>(i));
  }
  STRATA_ASSERT_OK_AND_ASSIGN(ComponentType type, declaration.Build());
  ASSERT_TRUE(type.identity_layout());
  EntityManager entities;
  EntityPages pages(entities);
  EntityIndex index;
  InstanceIndexer indexer(pages, index);
  WorldServices services;
  services.entities = &entities;
  services.index = &index;
  services.indexer = &indexer;
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<ComponentStore> store, type.MakeStore(services));
  const std::vector<Entity> owners = {entities.Create(), entities.Create()};
  const std::vector<uint32_t> entity_index = {0, 1};
  const std::vector<uint32_t> names = {IdString32("A").value(), IdString32("B").value()};
  // Instance data at an address that is 16 mod 32, as a blob's may be.
  alignas(32) std::byte buffer[16 + 2 * sizeof(Wide8)];
  for (size_t i = 0; i < 16; ++i) {
    const float value = static_cast<float>(i + 1);
    std::memcpy(buffer + 16 + 4 * i, &value, 4);
  }
  ComponentSpawnBatch batch = BatchOf(type, {}, 2);
  batch.type = type.id();
  batch.entities = owners;
  batch.entity_index = entity_index;
  batch.names = names;
  batch.data = absl::MakeConstSpan(buffer + 16, 2 * sizeof(Wide8));
  ASSERT_THAT(store->Spawn(batch), IsOk());
  auto* manager = static_cast<NamedComponentManager<Wide8>*>(store->typed());
  const Wide8& b = manager->Get(manager->Lookup(owners[1], IdString32("B")));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(&b) % alignof(Wide8), 0u);
  EXPECT_EQ(b.v[0], 9.0f);
  EXPECT_EQ(b.v[7], 16.0f);
  EXPECT_EQ(manager->Get(manager->Lookup(owners[0], IdString32("A"))).v[7], 8.0f);
  // The spawn reached the index through the manager's listener, one entry per name.
  EXPECT_EQ(index.FindComponentManager(owners[0], IdString32("A")), manager);
  EXPECT_EQ(index.FindComponentManager(owners[1], IdString32("B")), manager);
}

// Larger than a thread's stack (8 MiB on Linux): the declaration must not put a T there.
struct Huge {
  float first = 1;
  float middle[4 << 20];
  float last = 2;
};

TEST(ComponentDeclaration, AStructLargerThanTheStackDeclares) {
  STRATA_ASSERT_OK_AND_ASSIGN(ComponentType huge, ComponentDeclaration<Huge>("huge")
                                                      .Field("first", &Huge::first)
                                                      .Transient(&Huge::middle)
                                                      .Field("last", &Huge::last)
                                                      .Build());
  ASSERT_EQ(huge.fields().size(), 2u);
  EXPECT_EQ(huge.fields()[1].offset, offsetof(Huge, last));
  float last = 0;
  std::memcpy(&last, huge.defaults().data() + offsetof(Huge, last), sizeof(last));
  EXPECT_EQ(last, 2.0f);
}

struct Ranged {
  float hp = 100;
  int32_t level = 1;
};

TEST(ComponentDeclaration, BoundsAndDefaultsMustBeNumbersInRange) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THAT(ComponentDeclaration<Ranged>("r").Field("hp", &Ranged::hp).Min(nan).Build(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("field \"hp\": a bound is NaN")));
  EXPECT_THAT(ComponentDeclaration<Ranged>("r").Field("hp", &Ranged::hp).Range(0, nan).Build(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("a bound is NaN")));
  // A default the compiler would refuse to write: outside the range, or NaN.
  EXPECT_THAT(ComponentDeclaration<Ranged>("r").Field("hp", &Ranged::hp).Max(50).Transient(&Ranged::level).Build(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("field \"hp\": the default 100 is outside its range [-inf, 50]")));
  EXPECT_THAT(ComponentDeclaration<Ranged>("r").Field("level", &Ranged::level).Min(2).Transient(&Ranged::hp).Build(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("the default 1 is outside")));
  struct NanHp {
    float hp = std::numeric_limits<float>::quiet_NaN();
  };
  EXPECT_THAT(ComponentDeclaration<NanHp>("n").Field("hp", &NanHp::hp).Min(0).Build(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("outside its range")));
  // Unranged, a NaN default is a value like any other; the edges of a range are in it.
  EXPECT_THAT(ComponentDeclaration<NanHp>("n").Field("hp", &NanHp::hp).Build(), IsOk());
  EXPECT_THAT(ComponentDeclaration<Ranged>("r").Field("hp", &Ranged::hp).Range(100, 100).Transient(&Ranged::level).Build(),
              IsOk());
}

TEST(ComponentDeclaration, ARawFieldOffsetPastFourGiBIsRefusedNotTruncated) {
  EXPECT_THAT(ComponentDeclaration<Ranged>("r")
                  .RawField("far", FieldType::kF32, (size_t{1} << 32) + 4)
                  .Build(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("field \"far\": offset 4294967300 is past 4 GiB")));
  // Truncated, it would have been offset 4, inside the struct: it must not build.
  EXPECT_THAT(ComponentDeclaration<Ranged>("r").RawField("near", FieldType::kF32, 4).TransientBytes(0, 4).Build(), IsOk());
}

struct Armored {
  double hp = 100;
  float armor = 2;
  bool alive = true;
};

TEST(ComponentDeclaration, EveryByteOfTheStructIsAFieldOrTransient) {
  // The same sizeof with or without `alive`: only the bytes show it is left out.
  EXPECT_THAT(ComponentDeclaration<Armored>("armored")
                  .RawField("hp_low", FieldType::kF32, 0)
                  .RawField("hp_high", FieldType::kF32, 4)
                  .Field("armor", &Armored::armor)
                  .Build(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("component type \"armored\": bytes [12, 13) of the struct belong "
                                 "to no field")));
  // Declared transient, the member is accounted for; the tail padding needs nothing.
  EXPECT_THAT(ComponentDeclaration<Armored>("armored")
                  .RawField("hp_low", FieldType::kF32, 0)
                  .RawField("hp_high", FieldType::kF32, 4)
                  .Field("armor", &Armored::armor)
                  .Transient(&Armored::alive)
                  .Build(),
              IsOk());
  EXPECT_THAT(ComponentDeclaration<Armored>("armored")
                  .RawField("hp_low", FieldType::kF32, 0)
                  .RawField("hp_high", FieldType::kF32, 4)
                  .Field("armor", &Armored::armor)
                  .Field("alive", &Armored::alive)
                  .Build(),
              IsOk());
  // A member in the middle, and the first of several.
  EXPECT_THAT(ComponentDeclaration<Pair>("p").Field("a", &Pair::a).Build(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bytes [4, 8)")));
  EXPECT_THAT(ComponentDeclaration<Pair>("p").Field("b", &Pair::b).Build(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bytes [0, 4)")));
  EXPECT_THAT(ComponentDeclaration<Pair>("p").Build(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bytes [0, 8)")));
  // Padding inside a nested member and between members needs no declaration.
  struct Inner {
    bool flag = false;
    int32_t n = 0;
  };
  struct Outer {
    bool on = true;
    Vector3 at;
    Inner inner;
  };
  EXPECT_THAT(ComponentDeclaration<Outer>("o")
                  .Field("on", &Outer::on)
                  .Field("at", &Outer::at)
                  .TransientBytes(offsetof(Outer, inner) + offsetof(Inner, flag), 1)
                  .Build(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(absl::StrCat("bytes [", offsetof(Outer, inner) + offsetof(Inner, n), ", ",
                                              offsetof(Outer, inner) + offsetof(Inner, n) + 4, ")"))));
  EXPECT_THAT(ComponentDeclaration<Outer>("o")
                  .Field("on", &Outer::on)
                  .Field("at", &Outer::at)
                  .Transient(&Outer::inner)
                  .Build(),
              IsOk());
  // Transient bytes must lie inside the struct.
  EXPECT_THAT(ComponentDeclaration<Pair>("p").Field("a", &Pair::a).TransientBytes(4, 8).Build(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("transient bytes [4, 12) lie outside")));
}

TEST(ComponentDeclaration, ATransientMemberSpawnsWithItsDefaultAndIsNotSaved) {
  struct Cached {
    float hp = 10;
    int32_t frames_since_hit = -1;  // run-time state only
  };
  STRATA_ASSERT_OK_AND_ASSIGN(ComponentType type, ComponentDeclaration<Cached>("cached")
                                                      .Field("hp", &Cached::hp)
                                                      .Transient(&Cached::frames_since_hit)
                                                      .Build());
  EXPECT_EQ(type.layout(), "hp:f32:4");
  EXPECT_EQ(type.instance_size(), 4u);
  EXPECT_FALSE(type.identity_layout());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> bytes, CompileOne(type, R"({"hp": 3})"));
  ASSERT_EQ(bytes.size(), 4u);
  EXPECT_EQ(At<float>(bytes, 0), 3.0f);
  EXPECT_THAT(CompileOne(type, R"({"frames_since_hit": 3})"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown key")));
}

}  // namespace
}  // namespace strata
