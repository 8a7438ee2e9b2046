// The field types beyond f32, i32, u32 and the vectors end to end: the numeric ones
// (f64, i64, u64, i8, u8, i16, u16), enums, fixed-capacity strings, fixed-size arrays
// and nested declared structs. Compile with errors naming the field,
// the blob layout in both byte orders, spawn, properties, save, load, inspect, export
// and recompile to the same bytes, at the types' edges (integers past 2^53, -0.0, NaNs
// with payloads, enum values without a name, strings at their capacity and bytes that
// are not text), and the migration rules.
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "component/declare.h"
#include "component/export.h"
#include "component/registry.h"
#include "engine/world.h"
#include "iteration/command_buffer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "resource/entity_compiler.h"
#include "testing/status_matchers.h"

namespace strata {
namespace {

using ::strata::testing::IsOk;
using ::strata::testing::StatusIs;
using ::testing::HasSubstr;

struct Numbers {
  double d = 0.5;
  int64_t i64 = -1;
  uint64_t u64 = 1;
  int8_t i8 = -2;
  uint8_t u8 = 2;
  int16_t i16 = -3;
  uint16_t u16 = 3;
};

const ComponentRegistry& NumbersRegistry() {
  static const ComponentRegistry* registry = [] {
    auto* r = new ComponentRegistry();
    EXPECT_THAT(r->Add(ComponentDeclaration<Numbers>("numbers")
                           .Field("d", &Numbers::d)
                           .Field("i64", &Numbers::i64)
                           .Field("u64", &Numbers::u64)
                           .Field("i8", &Numbers::i8)
                           .Field("u8", &Numbers::u8).Max(200)
                           .Field("i16", &Numbers::i16)
                           .Field("u16", &Numbers::u16)
                           .Build()),
                IsOk());
    return r;
  }();
  return *registry;
}

absl::StatusOr<std::vector<std::byte>> Compile(const std::string& json,
                                               Endianness endianness = kNativeEndianness) {
  EntityCompiler compiler;
  STRATA_RETURN_IF_ERROR(NumbersRegistry().RegisterCompilers(compiler));
  EntityCompiler::Options options;
  options.endianness = endianness;
  STRATA_ASSIGN_OR_RETURN(EntityCompiler::Result result, compiler.Compile(json, options));
  return result.blob;
}

// Every edge of every type, one entity each.
constexpr char kLevel[] = R"({"entities": [
  {"name": "low", "components": [{"type": "numbers", "d": "nan:0x7ff0000000000001",
      "i64": -9223372036854775808, "u64": 0, "i8": -128, "u8": 0, "i16": -32768, "u16": 0}]},
  {"name": "high", "components": [{"type": "numbers", "d": "-inf",
      "i64": 9223372036854775807, "u64": 18446744073709551615, "i8": 127,
      "u8": {"unchecked": 255}, "i16": 32767, "u16": 65535}]},
  {"name": "past53", "components": [{"type": "numbers", "d": -0.0,
      "i64": 9007199254740993, "u64": 9007199254740993, "i8": 0, "u8": 200, "i16": 1.0, "u16": 7}]},
  {"name": "exact", "components": [{"type": "numbers", "d": 0.1, "i64": -9007199254740993}]},
  {"name": "defaults", "components": [{"type": "numbers"}]}]})";

TEST(FieldTypes, LayoutFingerprintAndBlobSizes) {
  const ComponentType* type = NumbersRegistry().Find("numbers");
  ASSERT_NE(type, nullptr);
  EXPECT_EQ(type->layout(), "d:f64:8;i64:i64:8;u64:u64:8;i8:i8:1;u8:u8:1;i16:i16:2;u16:u16:2");
  EXPECT_EQ(type->instance_size(), 30u);
  EXPECT_EQ(type->fingerprint(), IdString32::Hash(type->layout()));
}

TEST(FieldTypes, BadValuesAreErrorsNamingTheField) {
  struct Case {
    const char* fields;
    const char* message;
  };
  const Case cases[] = {
      {R"("i8": 128)", "\"i8\": 128 does not fit i8"},
      {R"("i8": -129)", "\"i8\": -129 does not fit i8"},
      {R"("u8": -1)", "\"u8\": -1 does not fit u8"},
      {R"("u8": 201)", "\"u8\": 201 is outside [-inf, 200]"},
      {R"("i16": 32768)", "\"i16\": 32768 does not fit i16"},
      {R"("u16": 65536)", "\"u16\": 65536 does not fit u16"},
      {R"("i16": 1.5)", "\"i16\": 1.5 is not an integer"},
      {R"("i64": 9223372036854775808)", "\"i64\": 9223372036854775808 does not fit i64"},
      {R"("i64": 9.3e18)", "\"i64\": 9.3e+18 does not fit i64"},
      {R"("u64": -1)", "\"u64\": -1 does not fit u64"},
      {R"("u64": 1.8446744073709552e19)", "does not fit u64"},
      {R"("u64": "1")", "\"u64\": expected an integer, got string"},
      {R"("d": "x")", "\"d\": \"x\" is not a number"},
      {R"("d": "nan:0x7fc00001")", "\"d\": \"nan:0x7fc00001\" is not a number"},  // f32 bits
      {R"("d": [1])", "\"d\": expected a number, got array"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<std::byte>> blob = Compile(
        absl::StrCat(R"({"entities": [{"components": [{"type": "numbers", )", c.fields, "}]}]}"));
    EXPECT_THAT(blob, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message))) << c.fields;
  }
}

TEST(FieldTypes, TheOtherByteOrderSwapsEachFieldByItsWidth) {
  const ComponentType* type = NumbersRegistry().Find("numbers");
  const nlohmann::json config = nlohmann::json::parse(
      R"({"type": "numbers", "d": "nan:0x7ff0000000000001", "i64": -9007199254740993,
          "u64": 18446744073709551614, "i8": -100, "u8": 200, "i16": -12345, "u16": 54321})");
  std::vector<std::byte> native, other;
  std::vector<EntityRefFixup> fixups;
  ComponentDataWriter native_writer(kNativeEndianness, &native, &fixups);
  const Endianness other_order =
      kNativeEndianness == Endianness::kLittle ? Endianness::kBig : Endianness::kLittle;
  ComponentDataWriter other_writer(other_order, &other, &fixups);
  ASSERT_THAT(type->Compile(config, native_writer), IsOk());
  ASSERT_THAT(type->Compile(config, other_writer), IsOk());
  ASSERT_EQ(native.size(), 30u);
  ASSERT_EQ(other.size(), 30u);
  for (const FieldInfo& f : type->fields()) {
    const uint32_t size = FieldBlobSize(f.type);
    for (uint32_t b = 0; b < size; ++b) {
      EXPECT_EQ(other[f.blob_offset + b], native[f.blob_offset + size - 1 - b]) << f.name << " byte " << b;
    }
  }
  uint64_t u64;
  std::memcpy(&u64, native.data() + 16, 8);
  EXPECT_EQ(u64, 18446744073709551614u);
  // A whole level compiles in the other order too (the loader then refuses it, naming
  // the order: blobs are read in this machine's).
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> blob, Compile(kLevel, other_order));
  EXPECT_THAT(EntityResourceView::Create(blob).status(), StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST(FieldTypes, CompileSpawnSetSaveLoadExportCompileIsByteIdentical) {
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> compiled, Compile(kLevel));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(compiled));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(NumbersRegistry()));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, world->Spawn(view));
  ASSERT_EQ(e.size(), 5u);
  auto numbers = [&](World& w, Entity entity) {
    return w.pages().TryGet(entity, w.Pages<Numbers>().component());
  };
  const Numbers* low = numbers(*world, e[0]);
  uint64_t d_bits;
  std::memcpy(&d_bits, &low->d, 8);
  EXPECT_EQ(d_bits, 0x7ff0000000000001u);  // a signalling NaN, payload and all
  EXPECT_EQ(low->i64, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(low->i8, -128);
  EXPECT_EQ(low->i16, -32768);
  const Numbers* high = numbers(*world, e[1]);
  EXPECT_EQ(high->d, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(high->u64, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(high->u8, 255);
  EXPECT_EQ(high->u16, 65535);
  const Numbers* past = numbers(*world, e[2]);
  EXPECT_TRUE(std::signbit(past->d));
  EXPECT_EQ(past->i64, int64_t{9007199254740993});
  EXPECT_EQ(past->u64, uint64_t{9007199254740993});
  EXPECT_EQ(numbers(*world, e[3])->i64, int64_t{-9007199254740993});
  EXPECT_EQ(numbers(*world, e[4])->u16, 3);

  // Properties: f64, i64 and u64 as themselves, the narrow integers as int32 / uint32.
  PropertySystem& properties = world->properties();
  ASSERT_THAT(properties.Set(e[4], "numbers", "u64", PropertyValue(uint64_t{18446744073709551613u})), IsOk());
  ASSERT_THAT(properties.Set(e[4], "numbers", "i64", PropertyValue(int64_t{-9007199254740995})), IsOk());
  ASSERT_THAT(properties.Set(e[4], "numbers", "d", PropertyValue(-0.0)), IsOk());
  ASSERT_THAT(properties.Set(e[4], "numbers", "i8", PropertyValue(int32_t{-7})), IsOk());
  ASSERT_THAT(properties.Set(e[4], "numbers", "u16", PropertyValue(uint32_t{60000})), IsOk());
  EXPECT_THAT(properties.Set(e[4], "numbers", "i8", PropertyValue(int32_t{300})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"i8\": 300 does not fit i8")));
  EXPECT_THAT(properties.Set(e[4], "numbers", "u16", PropertyValue(uint32_t{65536})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("does not fit u16")));
  EXPECT_THAT(properties.Set(e[4], "numbers", "u64", PropertyValue(int64_t{1})),
              StatusIs(absl::StatusCode::kInvalidArgument));
  STRATA_ASSERT_OK_AND_ASSIGN(PropertyValue i8, properties.Get(e[4], "numbers", "i8"));
  EXPECT_EQ(std::get<int32_t>(i8), -7);
  STRATA_ASSERT_OK_AND_ASSIGN(PropertyValue u64, properties.Get(e[4], "numbers", "u64"));
  EXPECT_EQ(std::get<uint64_t>(u64), 18446744073709551613u);
  // A system writes a NaN with a payload and a negative sign.
  Numbers* written = world->pages().TryGet(e[3], world->Pages<Numbers>().component());
  const uint64_t nan_bits = 0xfff8000000000123u;
  std::memcpy(&written->d, &nan_bits, 8);

  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> saved, world->SaveAll());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView saved_view, EntityResourceView::Create(saved));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> loaded, World::Create(NumbersRegistry()));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> again, loaded->Spawn(saved_view));
  ASSERT_EQ(again.size(), e.size());
  EXPECT_EQ(numbers(*loaded, again[4])->u64, 18446744073709551613u);
  EXPECT_EQ(numbers(*loaded, again[4])->i64, int64_t{-9007199254740995});
  EXPECT_EQ(numbers(*loaded, again[4])->i8, -7);
  std::memcpy(&d_bits, &numbers(*loaded, again[3])->d, 8);
  EXPECT_EQ(d_bits, nan_bits);
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> resaved, loaded->SaveAll());
  EXPECT_EQ(resaved, saved);

  STRATA_ASSERT_OK_AND_ASSIGN(nlohmann::json level, ExportLevel(saved_view, NumbersRegistry()));
  const std::string text = level.dump();
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> recompiled, Compile(text));
  EXPECT_EQ(recompiled, saved) << text;
  const nlohmann::json& c3 = level["entities"][3]["components"][0];
  EXPECT_EQ(c3["d"], "nan:0xfff8000000000123") << c3.dump();
  const nlohmann::json& c1 = level["entities"][1]["components"][0];
  EXPECT_EQ(c1["u8"], nlohmann::json::parse(R"({"unchecked": 255})")) << c1.dump();
  EXPECT_EQ(c1["u64"].get<uint64_t>(), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(level["entities"][2]["components"][0]["d"].dump(), "-0.0");
  // And the first compile's export recompiles to the compiled bytes.
  STRATA_ASSERT_OK_AND_ASSIGN(nlohmann::json first, ExportLevel(view, NumbersRegistry()));
  EXPECT_EQ(*Compile(first.dump()), compiled) << first.dump();
}

TEST(FieldTypes, AnAddedNumericFieldMigratesAndARetypedOneIsRefused) {
  struct Old {
    double d = 0.5;
  };
  ComponentRegistry old_registry;
  ASSERT_THAT(old_registry.Add(ComponentDeclaration<Old>("numbers").Field("d", &Old::d).Build()), IsOk());
  EntityCompiler compiler;
  ASSERT_THAT(old_registry.RegisterCompilers(compiler), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityCompiler::Result old_blob,
                              compiler.Compile(R"({"entities": [{"components": [{"type": "numbers", "d": 2}]}]})", {}));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(old_blob.blob));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(NumbersRegistry()));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, world->Spawn(view));
  const Numbers* n = world->pages().TryGet(e[0], world->Pages<Numbers>().component());
  EXPECT_EQ(n->d, 2.0);
  EXPECT_EQ(n->u16, 3);  // added since: its default

  struct Retyped {
    float d = 0.5f;
  };
  ComponentRegistry retyped;
  ASSERT_THAT(retyped.Add(ComponentDeclaration<Retyped>("numbers").Field("d", &Retyped::d).Build()), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> other, World::Create(retyped));
  EXPECT_THAT(other->Spawn(view).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("field \"d\" is f64 (8 bytes) in the blob, f32 (4 bytes)")));
}

// Enums: three integer widths and signs, a value past 2^63 and negative values.
enum class Faction : uint8_t { kNeutral, kRed, kBlue };
enum class Mood : int64_t { kGrim = -2, kCalm = 0, kGlad = 5 };
enum Flag : uint64_t { kLow = 1, kHigh = (uint64_t{1} << 63) + 1 };

struct Unit {
  Faction faction = Faction::kNeutral;
  int8_t rank = 0;
  uint16_t pad = 0;
  float hp = 10;
  Mood mood = Mood::kCalm;
  Flag flag = kLow;
};

ComponentDeclaration<Unit> UnitDeclaration() {
  return std::move(ComponentDeclaration<Unit>("unit")
                       .Enum("faction", &Unit::faction,
                             {{"neutral", Faction::kNeutral}, {"red", Faction::kRed}, {"blue", Faction::kBlue}})
                       .Field("rank", &Unit::rank)
                       .Field("pad", &Unit::pad)
                       .Field("hp", &Unit::hp)
                       .Enum("mood", &Unit::mood, {{"grim", Mood::kGrim}, {"calm", Mood::kCalm}, {"glad", Mood::kGlad}})
                       .Enum("flag", &Unit::flag, {{"low", kLow}, {"high", kHigh}}));
}

const ComponentRegistry& UnitRegistry() {
  static const ComponentRegistry* registry = [] {
    auto* r = new ComponentRegistry();
    EXPECT_THAT(r->Add(UnitDeclaration().Build()), IsOk());
    return r;
  }();
  return *registry;
}

absl::StatusOr<std::vector<std::byte>> CompileWith(const ComponentRegistry& registry, const std::string& json,
                                                   Endianness endianness = kNativeEndianness) {
  EntityCompiler compiler;
  STRATA_RETURN_IF_ERROR(registry.RegisterCompilers(compiler));
  EntityCompiler::Options options;
  options.endianness = endianness;
  STRATA_ASSIGN_OR_RETURN(EntityCompiler::Result result, compiler.Compile(json, options));
  return result.blob;
}

absl::StatusOr<std::vector<std::byte>> CompileUnits(const std::string& components) {
  return CompileWith(UnitRegistry(), absl::StrCat(R"({"entities": [)", components, "]}"));
}

TEST(EnumFields, LayoutNamesEveryValueAndTheIntegerType) {
  const ComponentType* type = UnitRegistry().Find("unit");
  ASSERT_NE(type, nullptr);
  EXPECT_EQ(type->layout(),
            "faction:enum.u8{neutral=0,red=1,blue=2}:1;rank:i8:1;pad:u16:2;hp:f32:4;"
            "mood:enum.i64{grim=-2,calm=0,glad=5}:8;flag:enum.u64{low=1,high=9223372036854775809}:8");
  EXPECT_EQ(type->instance_size(), 24u);
  EXPECT_TRUE(type->identity_layout());  // packed like the struct: spawned by memcpy
}

TEST(EnumFields, BadValuesAreErrorsNamingTheFieldAndTheValues) {
  struct Case {
    const char* fields;
    const char* message;
  };
  const Case cases[] = {
      {R"("faction": "green")", "\"faction\": \"green\" is none of its values (neutral, red, blue)"},
      {R"("faction": "Red")", "\"faction\": \"Red\" is none of its values"},
      {R"("faction": 1)", "\"faction\": expected one of neutral, red, blue (a string), got number"},
      {R"("faction": null)", "expected one of neutral, red, blue (a string), got null"},
      {R"("faction": {"unchecked": 256})", "\"faction\": 256 does not fit u8"},
      {R"("faction": {"unchecked": -1})", "\"faction\": -1 does not fit u8"},
      {R"("faction": {"unchecked": "green"})", "\"green\" is none of its values"},
      {R"("mood": {"unchecked": 1.5})", "\"mood\": 1.5 is not an integer"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(CompileUnits(absl::StrCat(R"({"components": [{"type": "unit", )", c.fields, "}]}")),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.fields;
  }
  // {"unchecked": n}: a value without a name, in the integer type's bounds.
  EXPECT_THAT(CompileUnits(R"({"components": [{"type": "unit", "faction": {"unchecked": 255},
                               "mood": {"unchecked": -9223372036854775808},
                               "flag": {"unchecked": 18446744073709551615}}]})"),
              IsOk());
}

TEST(EnumFields, BuildRefusesBadValueListsAndAnUnnamedDefault) {
  auto build = [](std::initializer_list<std::pair<std::string, Faction>> values) {
    return ComponentDeclaration<Unit>("unit")
        .Enum("faction", &Unit::faction, values)
        .TransientBytes(1, sizeof(Unit) - 1)
        .Build()
        .status();
  };
  EXPECT_THAT(build({}), StatusIs(absl::StatusCode::kInvalidArgument,
                                  HasSubstr("field \"faction\": an enum needs named values")));
  EXPECT_THAT(build({{"neutral", Faction::kNeutral}, {"neutral", Faction::kRed}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"neutral\" is given twice")));
  EXPECT_THAT(build({{"neutral", Faction::kNeutral}, {"none", Faction::kNeutral}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("\"neutral\" and \"none\" have the same value 0")));
  for (const char* bad : {"", "1st", "a b", "x:y", "a;b", "a=b", "a,b", "-x", "\xc3\xa9"}) {
    EXPECT_THAT(build({{"neutral", Faction::kNeutral}, {bad, Faction::kRed}}),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("is not a letter or '_'")))
        << bad;
  }
  EXPECT_THAT(build({{"red", Faction::kRed}, {"blue", Faction::kBlue}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("field \"faction\": the default 0 is none of its named values")));
  EXPECT_THAT(build({{"neutral", Faction::kNeutral}, {"_x-2", Faction::kRed}}), IsOk());
  // A raw enum without values, or held in a type that is not an integer.
  EXPECT_THAT(ComponentDeclaration<Unit>("unit").RawField("faction", FieldType::kEnum, 0)
                  .TransientBytes(1, sizeof(Unit) - 1).Build().status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("an enum needs named values")));
  EXPECT_THAT(ComponentDeclaration<Unit>("unit")
                  .RawEnum("hp", FieldType::kF32, offsetof(Unit, hp), {{"zero", 0}})
                  .TransientBytes(0, offsetof(Unit, hp))
                  .TransientBytes(offsetof(Unit, mood), sizeof(Unit) - offsetof(Unit, mood))
                  .Build()
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("an enum is held in an integer type, not f32")));
}

TEST(EnumFields, TheOtherByteOrderSwapsEachEnumByItsIntegerWidth) {
  const ComponentType* type = UnitRegistry().Find("unit");
  const nlohmann::json config =
      nlohmann::json::parse(R"({"type": "unit", "faction": "blue", "mood": "grim", "flag": "high"})");
  std::vector<std::byte> native, other;
  ComponentDataWriter native_writer(kNativeEndianness, &native);
  const Endianness other_order =
      kNativeEndianness == Endianness::kLittle ? Endianness::kBig : Endianness::kLittle;
  ComponentDataWriter other_writer(other_order, &other);
  ASSERT_THAT(type->Compile(config, native_writer), IsOk());
  ASSERT_THAT(type->Compile(config, other_writer), IsOk());
  ASSERT_EQ(native.size(), 24u);
  ASSERT_EQ(other.size(), 24u);
  for (const FieldInfo& f : type->fields()) {
    const uint32_t size = FieldBlobSize(f);
    for (uint32_t b = 0; b < size; ++b) {
      EXPECT_EQ(other[f.blob_offset + b], native[f.blob_offset + size - 1 - b]) << f.name << " byte " << b;
    }
  }
  int64_t mood;
  std::memcpy(&mood, native.data() + 8, 8);
  EXPECT_EQ(mood, -2);
  uint64_t flag;
  std::memcpy(&flag, native.data() + 16, 8);
  EXPECT_EQ(flag, (uint64_t{1} << 63) + 1);
}

TEST(EnumFields, CompileSpawnSetSaveLoadExportCompileIsByteIdentical) {
  const std::string level = R"({"entities": [
    {"name": "a", "components": [{"type": "unit", "faction": "red", "mood": "grim", "flag": "high"}]},
    {"name": "b", "components": [{"type": "unit", "faction": {"unchecked": 200}, "mood": {"unchecked": 7}}]},
    {"name": "c", "components": [{"type": "unit"}]}]})";
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> compiled, CompileWith(UnitRegistry(), level));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(compiled));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(UnitRegistry()));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, world->Spawn(view));
  ASSERT_EQ(e.size(), 3u);
  auto unit = [](World& w, Entity entity) { return w.pages().TryGet(entity, w.Pages<Unit>().component()); };
  EXPECT_EQ(unit(*world, e[0])->faction, Faction::kRed);
  EXPECT_EQ(unit(*world, e[0])->mood, Mood::kGrim);
  EXPECT_EQ(unit(*world, e[0])->flag, kHigh);
  EXPECT_EQ(static_cast<int>(unit(*world, e[1])->faction), 200);
  EXPECT_EQ(unit(*world, e[2])->faction, Faction::kNeutral);

  // Properties by name: the value's name, or the integer of a value without one.
  PropertySystem& properties = world->properties();
  auto get = [&](Entity entity, const char* field) -> std::string {
    absl::StatusOr<PropertyValue> v = properties.Get(entity, "unit", field);
    if (!v.ok()) return v.status().ToString();
    return std::get<std::string>(*v);
  };
  EXPECT_EQ(get(e[0], "faction"), "red");
  EXPECT_EQ(get(e[0], "flag"), "high");
  EXPECT_EQ(get(e[1], "faction"), "200");
  EXPECT_EQ(get(e[1], "mood"), "7");
  ASSERT_THAT(properties.Set(e[2], "unit", "faction", PropertyValue(std::string("blue"))), IsOk());
  ASSERT_THAT(properties.Set(e[2], "unit", "mood", PropertyValue(std::string("-9223372036854775808"))), IsOk());
  EXPECT_EQ(unit(*world, e[2])->faction, Faction::kBlue);
  EXPECT_EQ(static_cast<int64_t>(unit(*world, e[2])->mood), std::numeric_limits<int64_t>::min());
  for (const char* bad : {"green", "256", "-1", "1.0", "", " red"}) {
    EXPECT_THAT(properties.Set(e[2], "unit", "faction", PropertyValue(std::string(bad))),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("\"faction\": \"")))
        << bad;
  }
  EXPECT_THAT(properties.Set(e[2], "unit", "faction", PropertyValue(std::string("green"))),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("\"green\" is none of its values (neutral, red, blue) nor an integer of u8")));
  EXPECT_THAT(properties.Set(e[2], "unit", "faction", PropertyValue(int32_t{1})),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(unit(*world, e[2])->faction, Faction::kBlue);  // refused sets change nothing
  // A system writes a value without a name.
  unit(*world, e[0])->faction = static_cast<Faction>(9);

  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> saved, world->SaveAll());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView saved_view, EntityResourceView::Create(saved));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> loaded, World::Create(UnitRegistry()));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> again, loaded->Spawn(saved_view));
  ASSERT_EQ(again.size(), 3u);
  EXPECT_EQ(static_cast<int>(unit(*loaded, again[0])->faction), 9);
  EXPECT_EQ(unit(*loaded, again[2])->faction, Faction::kBlue);
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> resaved, loaded->SaveAll());
  EXPECT_EQ(resaved, saved);

  // Inspect and export use the names; a value without one is {"unchecked": n}.
  STRATA_ASSERT_OK_AND_ASSIGN(std::string listing, DescribeResource(saved_view, UnitRegistry()));
  EXPECT_THAT(listing, HasSubstr("faction=\"blue\""));
  EXPECT_THAT(listing, HasSubstr("mood=\"grim\""));
  STRATA_ASSERT_OK_AND_ASSIGN(nlohmann::json exported, ExportLevel(saved_view, UnitRegistry()));
  const nlohmann::json& a = exported["entities"][0]["components"][0];
  EXPECT_EQ(a["faction"], nlohmann::json::parse(R"({"unchecked": 9})")) << a.dump();
  EXPECT_EQ(a["flag"], "high");
  const nlohmann::json& c = exported["entities"][2]["components"][0];
  EXPECT_EQ(c["faction"], "blue");
  EXPECT_EQ(c["mood"], nlohmann::json::parse(R"({"unchecked": -9223372036854775808})")) << c.dump();
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> recompiled, CompileWith(UnitRegistry(), exported.dump()));
  EXPECT_EQ(recompiled, saved) << exported.dump();
  STRATA_ASSERT_OK_AND_ASSIGN(nlohmann::json first, ExportLevel(view, UnitRegistry()));
  EXPECT_EQ(*CompileWith(UnitRegistry(), first.dump()), compiled) << first.dump();
}

// An older declaration of "unit" whose faction has other values.
struct OldUnit {
  Faction faction = Faction::kNeutral;
};

absl::StatusOr<std::vector<std::byte>> CompileOld(
    std::initializer_list<std::pair<std::string, Faction>> values, const std::string& faction) {
  ComponentRegistry registry;
  STRATA_RETURN_IF_ERROR(
      registry.Add(ComponentDeclaration<OldUnit>("unit").Enum("faction", &OldUnit::faction, values).Build()));
  return CompileWith(registry, absl::StrCat(R"({"entities": [{"components": [{"type": "unit", "faction": ")",
                                            faction, R"("}]}, {"components": [{"type": "unit"}]}]})"));
}

TEST(EnumFields, AnEnumThatGainsOrRenumbersValuesLoadsOldBlobsByName) {
  // Written when red was 2 and blue did not exist; read where red is 1.
  STRATA_ASSERT_OK_AND_ASSIGN(
      std::vector<std::byte> old_blob,
      CompileOld({{"neutral", Faction::kNeutral}, {"red", Faction::kBlue}}, "red"));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(old_blob));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(UnitRegistry()));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, world->Spawn(view));
  const Unit* u = world->pages().TryGet(e[0], world->Pages<Unit>().component());
  EXPECT_EQ(u->faction, Faction::kRed);
  EXPECT_EQ(u->hp, 10);  // added since: its default
  EXPECT_EQ(world->pages().TryGet(e[1], world->Pages<Unit>().component())->faction, Faction::kNeutral);
}

TEST(EnumFields, AnEnumThatLostAUsedValueIsRefusedNamingIt) {
  // Written with a value "purple" that the declaration no longer has.
  STRATA_ASSERT_OK_AND_ASSIGN(
      std::vector<std::byte> used,
      CompileOld({{"neutral", Faction::kNeutral}, {"purple", static_cast<Faction>(7)}}, "purple"));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(used));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(UnitRegistry()));
  EXPECT_THAT(world->Spawn(view).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("field \"faction\": instance 0 holds \"purple\", a value the declaration "
                                 "no longer has")));
  EXPECT_EQ(world->entities().size(), 0u);  // the spawn was undone
  // The same lost value, unused: the blob loads.
  STRATA_ASSERT_OK_AND_ASSIGN(
      std::vector<std::byte> unused,
      CompileOld({{"neutral", Faction::kNeutral}, {"purple", static_cast<Faction>(7)}}, "neutral"));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView unused_view, EntityResourceView::Create(unused));
  EXPECT_THAT(world->Spawn(unused_view).status(), IsOk());
}

TEST(EnumFields, AnEnumInAnotherIntegerTypeIsRefused) {
  enum class WideFaction : uint16_t { kNeutral, kRed };
  struct Wide {
    WideFaction faction = WideFaction::kNeutral;
  };
  ComponentRegistry registry;
  ASSERT_THAT(registry.Add(ComponentDeclaration<Wide>("unit")
                               .Enum("faction", &Wide::faction,
                                     {{"neutral", WideFaction::kNeutral}, {"red", WideFaction::kRed}})
                               .Build()),
              IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> blob,
                              CompileWith(registry, R"({"entities": [{"components": [{"type": "unit"}]}]})"));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(UnitRegistry()));
  EXPECT_THAT(world->Spawn(view).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("field \"faction\" is enum.u16{neutral=0,red=1} (2 bytes) in the blob, "
                                 "enum.u8{neutral=0,red=1,blue=2} (1 bytes) in the declaration")));
}

// Strings: at capacity, one byte, longer than a layout line.
struct Nameplate {
  FixedString<8> title = "wanderer";
  FixedString<1> mark;
  FixedString<300> bio;
};

const ComponentRegistry& NameplateRegistry() {
  static const ComponentRegistry* registry = [] {
    auto* r = new ComponentRegistry();
    EXPECT_THAT(r->Add(ComponentDeclaration<Nameplate>("nameplate")
                           .Field("title", &Nameplate::title)
                           .Field("mark", &Nameplate::mark)
                           .Field("bio", &Nameplate::bio)
                           .Build()),
                IsOk());
    return r;
  }();
  return *registry;
}

absl::StatusOr<std::vector<std::byte>> CompilePlates(const std::string& fields) {
  return CompileWith(NameplateRegistry(),
                     absl::StrCat(R"({"entities": [{"components": [{"type": "nameplate", )", fields, "}]}]}"));
}

TEST(StringFields, LayoutIsTheCapacity) {
  const ComponentType* type = NameplateRegistry().Find("nameplate");
  ASSERT_NE(type, nullptr);
  EXPECT_EQ(type->layout(), "title:str:8;mark:str:1;bio:str:300");
  EXPECT_EQ(type->instance_size(), 309u);
  EXPECT_TRUE(type->identity_layout());
}

TEST(StringFields, LengthsAreCheckedInBytesNamingTheField) {
  struct Case {
    const char* fields;
    const char* message;
  };
  const Case cases[] = {
      {R"("title": "wanderers")", "\"title\": \"wanderers\" is 9 bytes, more than its 8"},
      {R"("title": "\u65e5\u672c\u8a9e")", "is 9 bytes, more than its 8"},  // three characters
      {R"("mark": "ab")", "\"mark\": \"ab\" is 2 bytes, more than its 1"},
      {R"("title": "a\u0000b")", "\"title\": a NUL byte at 1 (a str holds text without NULs)"},
      {R"("title": 7)", "\"title\": expected a string, got number"},
      {R"("title": [104])", "\"title\": expected a string, got array"},
      {R"("mark": {"unchecked": [1, 2]})", "\"mark\": expected 1 byte values, got 2"},
      {R"("mark": {"unchecked": [256]})", "\"mark\": [0]: expected a byte value 0 to 255, got 256"},
      {R"("mark": {"unchecked": [-1]})", "[0]: expected a byte value 0 to 255, got -1"},
      {R"("mark": {"unchecked": ["a"]})", "[0]: expected a byte value 0 to 255, got \"a\""},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(CompilePlates(c.fields), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.fields;
  }
  EXPECT_THAT(CompilePlates(R"("title": "h\u00e9ros!!", "mark": "x", "bio": "")"), IsOk());  // 8 bytes
  EXPECT_THAT(CompilePlates(R"("title": {"unchecked": "12345678"}, "mark": {"unchecked": [255]})"), IsOk());
  EXPECT_THAT(CompilePlates(absl::StrCat(R"("bio": ")", std::string(300, 'b'), "\"")), IsOk());
  EXPECT_THAT(CompilePlates(absl::StrCat(R"("bio": ")", std::string(301, 'b'), "\"")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("301 bytes, more than its 300")));
}

TEST(StringFields, BuildRefusesACapacityPastTheLimit) {
  struct Huge {
    FixedString<kMaxFieldBytes + 1> text;
  };
  EXPECT_THAT(ComponentDeclaration<Huge>("huge").Field("text", &Huge::text).Build().status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("field \"text\": a str holds 1 to 1024 bytes, not 1025")));
  struct Limit {
    FixedString<kMaxFieldBytes> text;
  };
  EXPECT_THAT(ComponentDeclaration<Limit>("limit").Field("text", &Limit::text).Build().status(), IsOk());
  EXPECT_THAT(ComponentDeclaration<Nameplate>("raw")
                  .RawString("title", 0, 0)
                  .TransientBytes(0, sizeof(Nameplate))
                  .Build()
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("a str holds 1 to 1024 bytes, not 0")));
  EXPECT_THAT(ComponentDeclaration<Nameplate>("raw")
                  .RawString("title", 0, 8)
                  .TransientBytes(8, sizeof(Nameplate) - 8)
                  .Build()
                  .status(),
              IsOk());
}

TEST(StringFields, BothByteOrdersHoldTheSameBytes) {
  const ComponentType* type = NameplateRegistry().Find("nameplate");
  const nlohmann::json config = nlohmann::json::parse(R"({"type": "nameplate", "title": "abc", "mark": "z"})");
  std::vector<std::byte> native, other;
  ComponentDataWriter native_writer(kNativeEndianness, &native);
  ComponentDataWriter other_writer(
      kNativeEndianness == Endianness::kLittle ? Endianness::kBig : Endianness::kLittle, &other);
  ASSERT_THAT(type->Compile(config, native_writer), IsOk());
  ASSERT_THAT(type->Compile(config, other_writer), IsOk());
  ASSERT_EQ(native.size(), 309u);
  EXPECT_EQ(native, other);
  EXPECT_EQ(std::memcmp(native.data(), "abc\0\0\0\0\0z", 9), 0);
}

TEST(StringFields, CompileSpawnSetSaveLoadExportCompileIsByteIdentical) {
  const std::string level = absl::StrCat(R"({"entities": [
    {"name": "a", "components": [{"type": "nameplate", "title": "h\u00e9ros", "mark": "!", "bio": ")",
                                         std::string(300, 'x'), R"("}]},
    {"name": "b", "components": [{"type": "nameplate", "title": "", "mark": {"unchecked": [200]}}]},
    {"name": "c", "components": [{"type": "nameplate"}]}]})");
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> compiled, CompileWith(NameplateRegistry(), level));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(compiled));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(NameplateRegistry()));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, world->Spawn(view));
  ASSERT_EQ(e.size(), 3u);
  auto plate = [](World& w, Entity entity) {
    return w.pages().TryGet(entity, w.Pages<Nameplate>().component());
  };
  EXPECT_EQ(plate(*world, e[0])->title.view(), "h\xc3\xa9ros");
  EXPECT_EQ(plate(*world, e[0])->bio.size(), 300u);
  EXPECT_TRUE(plate(*world, e[1])->title.empty());
  EXPECT_EQ(plate(*world, e[2])->title.view(), "wanderer");

  PropertySystem& properties = world->properties();
  STRATA_ASSERT_OK_AND_ASSIGN(PropertyValue title, properties.Get(e[2], "nameplate", "title"));
  EXPECT_EQ(std::get<std::string>(title), "wanderer");
  ASSERT_THAT(properties.Set(e[2], "nameplate", "title", PropertyValue(std::string("rogue"))), IsOk());
  EXPECT_EQ(plate(*world, e[2])->title.view(), "rogue");
  EXPECT_EQ(plate(*world, e[2])->title, FixedString<8>("rogue"));  // the rest is zero
  EXPECT_THAT(properties.Set(e[2], "nameplate", "title", PropertyValue(std::string("rogue-ish"))),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("\"title\": \"rogue-ish\" is 9 bytes, more than its 8")));
  EXPECT_THAT(properties.Set(e[2], "nameplate", "title", PropertyValue(std::string("a\0b", 3))),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"title\": a NUL byte at 1")));
  EXPECT_THAT(properties.Set(e[2], "nameplate", "title", PropertyValue(1.0f)),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(plate(*world, e[2])->title.view(), "rogue");
  // A set by name takes any bytes that fit, UTF-8 or not; a system writes raw bytes
  // (not UTF-8, and garbage after a NUL).
  ASSERT_THAT(properties.Set(e[2], "nameplate", "mark", PropertyValue(std::string("\xff"))), IsOk());
  std::memcpy(static_cast<void*>(&plate(*world, e[1])->title), "ab\0zz\xfe\0q", 8);

  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> saved, world->SaveAll());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView saved_view, EntityResourceView::Create(saved));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> loaded, World::Create(NameplateRegistry()));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> again, loaded->Spawn(saved_view));
  ASSERT_EQ(again.size(), 3u);
  EXPECT_EQ(plate(*loaded, again[2])->title.view(), "rogue");
  EXPECT_EQ(std::memcmp(&plate(*loaded, again[1])->title, "ab\0zz\xfe\0q", 8), 0);
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> resaved, loaded->SaveAll());
  EXPECT_EQ(resaved, saved);

  STRATA_ASSERT_OK_AND_ASSIGN(std::string listing, DescribeResource(saved_view, NameplateRegistry()));
  EXPECT_THAT(listing, HasSubstr("title=\"rogue\""));
  STRATA_ASSERT_OK_AND_ASSIGN(nlohmann::json exported, ExportLevel(saved_view, NameplateRegistry()));
  const nlohmann::json& b = exported["entities"][1]["components"][0];
  EXPECT_EQ(b["title"], nlohmann::json::parse(R"({"unchecked": [97, 98, 0, 122, 122, 254, 0, 113]})")) << b.dump();
  EXPECT_EQ(b["mark"], nlohmann::json::parse(R"({"unchecked": [200]})")) << b.dump();
  const nlohmann::json& c = exported["entities"][2]["components"][0];
  EXPECT_EQ(c["title"], "rogue");
  EXPECT_EQ(c["mark"], nlohmann::json::parse(R"({"unchecked": [255]})")) << c.dump();
  EXPECT_EQ(exported["entities"][0]["components"][0]["title"], "h\u00e9ros");
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> recompiled, CompileWith(NameplateRegistry(), exported.dump()));
  EXPECT_EQ(recompiled, saved) << exported.dump();
  STRATA_ASSERT_OK_AND_ASSIGN(nlohmann::json first, ExportLevel(view, NameplateRegistry()));
  EXPECT_EQ(*CompileWith(NameplateRegistry(), first.dump()), compiled) << first.dump();
}

TEST(StringFields, AStrThatGrewLoadsOldBlobsAndOneThatShrankIsRefused) {
  struct Short {
    FixedString<4> title = "abcd";
  };
  ComponentRegistry short_registry;
  ASSERT_THAT(short_registry.Add(ComponentDeclaration<Short>("nameplate").Field("title", &Short::title).Build()),
              IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(
      std::vector<std::byte> old_blob,
      CompileWith(short_registry, R"({"entities": [{"components": [{"type": "nameplate"}]},
                                                   {"components": [{"type": "nameplate", "title": "xy"}]}]})"));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(old_blob));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(NameplateRegistry()));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, world->Spawn(view));
  const Nameplate* full = world->pages().TryGet(e[0], world->Pages<Nameplate>().component());
  EXPECT_EQ(full->title, FixedString<8>("abcd"));
  EXPECT_EQ(world->pages().TryGet(e[1], world->Pages<Nameplate>().component())->title, FixedString<8>("xy"));
  EXPECT_TRUE(full->bio.empty());  // added since: its default

  // Back: a blob of 8-byte titles where titles hold 4.
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> long_blob, CompilePlates(R"("title": "ab")"));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView long_view, EntityResourceView::Create(long_blob));
  ComponentRegistry title_only;
  ASSERT_THAT(title_only.Add(ComponentDeclaration<Short>("nameplate").Field("title", &Short::title).Build()), IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> small, World::Create(title_only));
  EXPECT_THAT(small->Spawn(long_view).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("field \"title\" is str (8 bytes) in the blob, str (4 bytes) in the declaration")));
}

// Arrays of every kind and nested declared structs.
struct Stats {
  float hp = 10;
  float armor = 0;
  float cache = 0;  // run-time state of the nested struct
};
struct Slot {
  uint8_t item = 0;
  uint8_t count = 0;
  Faction faction = Faction::kNeutral;
};
struct Inventory {
  Stats stats;
  Slot slots[3];
  std::array<FixedString<4>, 2> tags = {"a", "bb"};
  float grid[2][2] = {{1, 2}, {3, 4}};
  Entity owners[2];
  Stats extra[2];
};

ComponentDeclaration<Stats> StatsDeclaration() {
  return std::move(ComponentDeclaration<Stats>("stats")
                       .Field("hp", &Stats::hp).Min(0)
                       .Field("armor", &Stats::armor)
                       .Transient(&Stats::cache));
}

ComponentDeclaration<Slot> SlotDeclaration(bool with_faction = true) {
  ComponentDeclaration<Slot> slot("slot");
  slot.Field("item", &Slot::item).Field("count", &Slot::count).Max(99);
  if (with_faction) {
    slot.Enum("faction", &Slot::faction,
              {{"neutral", Faction::kNeutral}, {"red", Faction::kRed}, {"blue", Faction::kBlue}});
  } else {
    slot.Transient(&Slot::faction);
  }
  return slot;
}

const ComponentRegistry& InventoryRegistry() {
  static const ComponentRegistry* registry = [] {
    auto* r = new ComponentRegistry();
    EXPECT_THAT(r->Add(ComponentDeclaration<Inventory>("inventory")
                           .Field("stats", &Inventory::stats, StatsDeclaration())
                           .Field("slots", &Inventory::slots, SlotDeclaration())
                           .Field("tags", &Inventory::tags)
                           .Field("grid", &Inventory::grid).Min(0)
                           .Field("owners", &Inventory::owners)
                           .Field("extra", &Inventory::extra, StatsDeclaration())
                           .Build()),
                IsOk());
    return r;
  }();
  return *registry;
}

absl::StatusOr<std::vector<std::byte>> CompileInventories(const std::string& fields) {
  return CompileWith(InventoryRegistry(),
                     absl::StrCat(R"({"entities": [{"components": [{"type": "inventory", )", fields, "}]}]}"));
}

TEST(ArrayAndNestedFields, FieldsAreFlatPathsAndTheJsonNests) {
  const ComponentType* type = InventoryRegistry().Find("inventory");
  ASSERT_NE(type, nullptr);
  std::vector<std::string> names;
  for (const FieldInfo& f : type->fields()) names.push_back(f.name);
  EXPECT_THAT(names, ::testing::ElementsAre(
                         "stats.hp", "stats.armor", "slots[0].item", "slots[0].count", "slots[0].faction",
                         "slots[1].item", "slots[1].count", "slots[1].faction", "slots[2].item", "slots[2].count",
                         "slots[2].faction", "tags[0]", "tags[1]", "grid[0][0]", "grid[0][1]", "grid[1][0]",
                         "grid[1][1]", "owners[0]", "owners[1]", "extra[0].hp", "extra[0].armor", "extra[1].hp",
                         "extra[1].armor"));
  EXPECT_EQ(type->fields()[3].max, 99);        // options apply to each element
  EXPECT_EQ(type->fields()[13].min, 0);
  EXPECT_EQ(type->fields()[19].min, 0);        // a nested declaration's own options
  EXPECT_EQ(type->fields()[19].offset, offsetof(Inventory, extra));
  EXPECT_EQ(type->fields()[21].offset, offsetof(Inventory, extra) + sizeof(Stats));
  EXPECT_THAT(type->layout(), ::testing::StartsWith("stats.hp:f32:4;stats.armor:f32:4;slots[0].item:u8:1;"));
  EXPECT_EQ(type->instance_size(), 8u + 9u + 8u + 16u + 8u + 16u);
  // The defaults, as export writes them: objects and arrays.
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> blob, CompileInventories(R"("slots": [{"item": 5}])"));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(blob));
  STRATA_ASSERT_OK_AND_ASSIGN(nlohmann::json level, ExportLevel(view, InventoryRegistry()));
  nlohmann::json component = level["entities"][0]["components"][0];
  EXPECT_EQ(component, nlohmann::json::parse(R"({"type": "inventory",
      "stats": {"hp": 10.0, "armor": 0.0},
      "slots": [{"item": 5, "count": 0, "faction": "neutral"}, {"item": 0, "count": 0, "faction": "neutral"},
                {"item": 0, "count": 0, "faction": "neutral"}],
      "tags": ["a", "bb"], "grid": [[1.0, 2.0], [3.0, 4.0]], "owners": [null, null],
      "extra": [{"hp": 10.0, "armor": 0.0}, {"hp": 10.0, "armor": 0.0}]})"))
      << component.dump();
}

TEST(ArrayAndNestedFields, ErrorsNameThePath) {
  struct Case {
    const char* fields;
    const char* message;
  };
  const Case cases[] = {
      {R"("slots": [{}, {"count": 100}])", "\"slots[1].count\": 100 is outside [-inf, 99]"},
      {R"("slots": [{}, {}, {}, {}])", "\"slots\": 4 elements, more than its 3"},
      {R"("slots": {"item": 1})", "\"slots\": expected an array of at most 3 elements, got object"},
      {R"("slots": [7])", "\"slots[0]\": expected an object, got number"},
      {R"("slots": [{"faction": "green"}])", "\"slots[0].faction\": \"green\" is none of its values"},
      {R"("stats": {"hpp": 1})", "\"stats\": unknown key \"hpp\" (stats has: hp, armor)"},
      {R"("stats": {"cache": 1})", "\"stats\": unknown key \"cache\""},
      {R"("stats": 3)", "\"stats\": expected an object, got number"},
      {R"("stats": null)", "\"stats\": expected an object, got null"},
      {R"("stats": {"hp": -1})", "\"stats.hp\": -1 is outside [0, inf]"},
      {R"("grid": [[0, 0], 5])", "\"grid[1]\": expected an array of at most 2 elements, got number"},
      {R"("grid": [[0, -1]])", "\"grid[0][1]\": -1 is outside [0, inf]"},
      {R"("tags": ["abcde"])", "\"tags[0]\": \"abcde\" is 5 bytes, more than its 4"},
      {R"("extra": [{}, {"x": 1}])", "\"extra[1]\": unknown key \"x\" (extra[1] has: hp, armor)"},
      {R"("owners": ["nobody"])", "nobody"},
      {R"("stats.hp": 1)", "unknown key \"stats.hp\" (inventory has: stats, slots, tags, grid, owners, extra)"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(CompileInventories(c.fields), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.fields;
  }
}

TEST(ArrayAndNestedFields, BuildChecksMemberNamesAndSizes) {
  struct Two {
    float a[2];
  };
  for (const char* bad : {"a.b", "a[0]", "a]"}) {
    EXPECT_THAT(ComponentDeclaration<Two>("two").Field(bad, &Two::a).Build().status(),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("may not contain '.', '[' or ']'")))
        << bad;
  }
  EXPECT_THAT(ComponentDeclaration<Two>("two").Field("", &Two::a).Build().status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("empty field name")));
  EXPECT_THAT(ComponentDeclaration<Two>("two").Field("name", &Two::a).Build().status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("the component's own keys")));
  EXPECT_THAT(ComponentDeclaration<Two>("two").RawField("x.y", FieldType::kF32, 0).TransientBytes(4, 4).Build().status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("may not contain")));
  struct Wide {
    float samples[component_internal::kMaxDeclaredFields + 1];
  };
  EXPECT_THAT(ComponentDeclaration<Wide>("wide").Field("samples", &Wide::samples).Build().status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("past 4096 (each array element is one)")));
  struct Full {
    float samples[component_internal::kMaxDeclaredFields];
  };
  EXPECT_THAT(ComponentDeclaration<Full>("full").Field("samples", &Full::samples).Build().status(), IsOk());
  // A nested declaration's errors and observers.
  struct Outer {
    Stats stats;
  };
  EXPECT_THAT(ComponentDeclaration<Outer>("outer")
                  .Field("stats", &Outer::stats, ComponentDeclaration<Stats>("stats").Min(1))
                  .Build()
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("an option before any field")));
  EXPECT_THAT(ComponentDeclaration<Outer>("outer")
                  .Field("stats", &Outer::stats,
                         std::move(StatsDeclaration().OnAdd([](absl::Span<const Entity>, CommandBuffer&) {})))
                  .Build()
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("observers would never run")));
  // A nested declaration that leaves a member undeclared: the outer Build names it.
  EXPECT_THAT(ComponentDeclaration<Outer>("outer")
                  .Field("stats", &Outer::stats, ComponentDeclaration<Stats>("stats").Field("hp", &Stats::hp))
                  .Build()
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bytes [4, 12) of the struct belong to no field")));
}

TEST(ArrayAndNestedFields, CompileSpawnSetSaveLoadExportCompileIsByteIdentical) {
  const std::string level = R"({"entities": [
    {"name": "a", "components": [{"type": "inventory", "stats": {"hp": 3, "armor": 1.5},
        "slots": [{"item": 7, "count": 2, "faction": "red"}, {}, {"count": 99}], "tags": ["xyz", ""],
        "grid": [[0, 0.5], [{"unchecked": -1}, "inf"]], "owners": ["b", null],
        "extra": [{}, {"hp": {"unchecked": -2}}]}]},
    {"name": "b", "components": [{"type": "inventory", "owners": [null, "a"]}]}]})";
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> compiled, CompileWith(InventoryRegistry(), level));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(compiled));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(InventoryRegistry()));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, world->Spawn(view));
  ASSERT_EQ(e.size(), 2u);
  auto inventory = [](World& w, Entity entity) {
    return w.pages().TryGet(entity, w.Pages<Inventory>().component());
  };
  Inventory* a = inventory(*world, e[0]);
  EXPECT_EQ(a->stats.hp, 3);
  EXPECT_EQ(a->slots[0].faction, Faction::kRed);
  EXPECT_EQ(a->slots[2].count, 99);
  EXPECT_EQ(a->tags[0].view(), "xyz");
  EXPECT_EQ(a->grid[1][0], -1);
  EXPECT_EQ(a->owners[0], e[1]);
  EXPECT_FALSE(a->owners[1].is_valid());
  EXPECT_EQ(a->extra[1].hp, -2);
  EXPECT_EQ(inventory(*world, e[1])->owners[1], e[0]);

  // Properties by path.
  PropertySystem& properties = world->properties();
  ASSERT_THAT(properties.Set(e[1], "inventory", "slots[1].count", PropertyValue(uint32_t{42})), IsOk());
  ASSERT_THAT(properties.Set(e[1], "inventory", "slots[2].faction", PropertyValue(std::string("blue"))), IsOk());
  ASSERT_THAT(properties.Set(e[1], "inventory", "stats.armor", PropertyValue(2.5f)), IsOk());
  ASSERT_THAT(properties.Set(e[1], "inventory", "tags[1]", PropertyValue(std::string("qq"))), IsOk());
  ASSERT_THAT(properties.Set(e[1], "inventory", "grid[0][1]", PropertyValue(9.0f)), IsOk());
  ASSERT_THAT(properties.Set(e[1], "inventory", "owners[0]", PropertyValue(e[1])), IsOk());
  EXPECT_THAT(properties.Set(e[1], "inventory", "slots[1].count", PropertyValue(uint32_t{256})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"slots[1].count\": 256 does not fit u8")));
  EXPECT_THAT(properties.Set(e[1], "inventory", "slots[3].count", PropertyValue(uint32_t{1})),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(properties.Set(e[1], "inventory", "stats.cache", PropertyValue(1.0f)),
              StatusIs(absl::StatusCode::kNotFound));
  STRATA_ASSERT_OK_AND_ASSIGN(PropertyValue count, properties.Get(e[1], "inventory", "slots[1].count"));
  EXPECT_EQ(std::get<uint32_t>(count), 42u);
  const Inventory* b = inventory(*world, e[1]);
  EXPECT_EQ(b->slots[2].faction, Faction::kBlue);
  EXPECT_EQ(b->stats.armor, 2.5f);
  EXPECT_EQ(b->tags[1].view(), "qq");
  EXPECT_EQ(b->grid[0][1], 9.0f);
  // A system's writes: a NaN in an array, a transient in a nested struct (not saved).
  a->grid[0][0] = std::numeric_limits<float>::quiet_NaN();
  a->stats.cache = 7;

  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> saved, world->SaveAll());
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView saved_view, EntityResourceView::Create(saved));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> loaded, World::Create(InventoryRegistry()));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> again, loaded->Spawn(saved_view));
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(inventory(*loaded, again[1])->slots[1].count, 42);
  EXPECT_EQ(inventory(*loaded, again[1])->owners[0], again[1]);
  EXPECT_EQ(inventory(*loaded, again[0])->stats.cache, 0);  // transient: its default
  EXPECT_TRUE(std::isnan(inventory(*loaded, again[0])->grid[0][0]));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> resaved, loaded->SaveAll());
  EXPECT_EQ(resaved, saved);

  STRATA_ASSERT_OK_AND_ASSIGN(std::string listing, DescribeResource(saved_view, InventoryRegistry()));
  EXPECT_THAT(listing, HasSubstr(R"(slots=[{"count":2,"faction":"red","item":7})"));
  STRATA_ASSERT_OK_AND_ASSIGN(nlohmann::json exported, ExportLevel(saved_view, InventoryRegistry()));
  const nlohmann::json& ea = exported["entities"][0]["components"][0];
  EXPECT_EQ(ea["grid"], nlohmann::json::parse(R"([[{"unchecked": "nan"}, 0.5], [{"unchecked": -1.0}, "inf"]])"))
      << ea.dump();
  EXPECT_EQ(ea["owners"], nlohmann::json::parse(R"(["b", null])")) << ea.dump();
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> recompiled, CompileWith(InventoryRegistry(), exported.dump()));
  EXPECT_EQ(recompiled, saved) << exported.dump();
  STRATA_ASSERT_OK_AND_ASSIGN(nlohmann::json first, ExportLevel(view, InventoryRegistry()));
  EXPECT_EQ(*CompileWith(InventoryRegistry(), first.dump()), compiled) << first.dump();

  // The other byte order swaps each element by its own width.
  const Endianness other_order =
      kNativeEndianness == Endianness::kLittle ? Endianness::kBig : Endianness::kLittle;
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> other, CompileWith(InventoryRegistry(), level, other_order));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> native, CompileWith(InventoryRegistry(), level));
  ASSERT_EQ(other.size(), native.size());
  const ComponentType* type = InventoryRegistry().Find("inventory");
  const nlohmann::json config = nlohmann::json::parse(level)["entities"][0]["components"][0];
  std::vector<std::byte> native_instance, other_instance;
  std::vector<EntityRefFixup> fixups;
  ComponentDataWriter native_writer(kNativeEndianness, &native_instance, &fixups);
  ComponentDataWriter other_writer(other_order, &other_instance, &fixups);
  ASSERT_THAT(type->Compile(config, native_writer), IsOk());
  ASSERT_THAT(type->Compile(config, other_writer), IsOk());
  for (const FieldInfo& f : type->fields()) {
    const uint32_t size = FieldBlobSize(f);
    const bool bytes = f.type == FieldType::kString;  // text is not swapped
    for (uint32_t i = 0; i < size; ++i) {
      EXPECT_EQ(other_instance[f.blob_offset + i], native_instance[f.blob_offset + (bytes ? i : size - 1 - i)])
          << f.name << " byte " << i;
    }
  }
}

TEST(ArrayAndNestedFields, AGrownArrayOrNestedStructMigratesAndAShrunkOneIsRefused) {
  struct OldInventory {
    Slot slots[2];
  };
  ComponentRegistry old_registry;
  ASSERT_THAT(old_registry.Add(ComponentDeclaration<OldInventory>("inventory")
                                   .Field("slots", &OldInventory::slots, SlotDeclaration(/*with_faction=*/false))
                                   .Build()),
              IsOk());
  STRATA_ASSERT_OK_AND_ASSIGN(
      std::vector<std::byte> old_blob,
      CompileWith(old_registry, R"({"entities": [{"components": [{"type": "inventory",
                                   "slots": [{"item": 1, "count": 2}, {"item": 3}]}]}]})"));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(old_blob));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(InventoryRegistry()));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, world->Spawn(view));
  const Inventory* inventory = world->pages().TryGet(e[0], world->Pages<Inventory>().component());
  EXPECT_EQ(inventory->slots[0].count, 2);
  EXPECT_EQ(inventory->slots[1].item, 3);
  EXPECT_EQ(inventory->slots[2].item, 0);  // the new element and field: defaults
  EXPECT_EQ(inventory->slots[0].faction, Faction::kNeutral);
  EXPECT_EQ(inventory->stats.hp, 10);

  // Back: three slots where two are declared.
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> blob, CompileInventories(R"("slots": [{}, {}, {"item": 4}])"));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView new_view, EntityResourceView::Create(blob));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> old_world, World::Create(old_registry));
  EXPECT_THAT(old_world->Spawn(new_view).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("field \"stats.hp\" (f32) is not declared; spawning would lose it")));
}

TEST(ArrayAndNestedFields, APrefabInstanceOverridesANestedMemberWhole) {
  const std::string level = R"({"prefabs": {"chest": {"components": [{"type": "inventory",
        "stats": {"hp": 50, "armor": 5}, "slots": [{"item": 9}]}]}},
    "entities": [{"name": "c", "prefab": "chest", "components": [{"type": "inventory", "stats": {"hp": 7}}]}]})";
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> compiled, CompileWith(InventoryRegistry(), level));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(compiled));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(InventoryRegistry()));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, world->Spawn(view));
  const Inventory* c = world->pages().TryGet(e[0], world->Pages<Inventory>().component());
  EXPECT_EQ(c->stats.hp, 7);
  EXPECT_EQ(c->stats.armor, 0);        // "stats" is replaced whole: the struct's default
  EXPECT_EQ(c->slots[0].item, 9);      // not overridden: the prefab's
  STRATA_ASSERT_OK_AND_ASSIGN(nlohmann::json exported, ExportLevel(view, InventoryRegistry()));
  const nlohmann::json& component = exported["entities"][0]["components"][0];
  EXPECT_TRUE(component.contains("stats")) << component.dump();
  EXPECT_FALSE(component.contains("slots")) << component.dump();
  EXPECT_EQ(*CompileWith(InventoryRegistry(), exported.dump()), compiled) << exported.dump();
}

TEST(ArrayAndNestedFields, APrefabsReferencesAreItsOwnUnlessTheInstanceWritesTheArray) {
  // In the prefab, "chest" is the prefab's root (each instance itself); written by an
  // instance, it is the level's entity of that name.
  const std::string level = R"({"prefabs": {"chest": {"components": [{"type": "inventory",
        "owners": ["chest", null]}]}},
    "entities": [{"name": "chest", "components": [{"type": "inventory"}]},
                 {"name": "kept", "prefab": "chest"},
                 {"name": "written", "prefab": "chest", "components": [{"type": "inventory", "owners": ["chest"]}]}]})";
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<std::byte> compiled, CompileWith(InventoryRegistry(), level));
  STRATA_ASSERT_OK_AND_ASSIGN(EntityResourceView view, EntityResourceView::Create(compiled));
  STRATA_ASSERT_OK_AND_ASSIGN(std::unique_ptr<World> world, World::Create(InventoryRegistry()));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Entity> e, world->Spawn(view));
  ASSERT_EQ(e.size(), 3u);
  auto owner = [&](Entity entity) {
    return world->pages().TryGet(entity, world->Pages<Inventory>().component())->owners[0];
  };
  EXPECT_EQ(owner(e[1]), e[1]);
  EXPECT_EQ(owner(e[2]), e[0]);
  STRATA_ASSERT_OK_AND_ASSIGN(nlohmann::json exported, ExportLevel(view, InventoryRegistry()));
  EXPECT_EQ(*CompileWith(InventoryRegistry(), exported.dump()), compiled) << exported.dump();
}

}  // namespace
}  // namespace strata
