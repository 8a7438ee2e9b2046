// The numeric field types (f64, i64, u64, i8, u8, i16, u16) end to end: compile with
// errors naming the field, the blob layout in both byte orders, spawn, properties,
// save, load, export and recompile to the same bytes, at the types' edges (integers
// past 2^53, -0.0, NaNs with payloads).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "component/declare.h"
#include "component/export.h"
#include "component/registry.h"
#include "engine/world.h"
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

}  // namespace
}  // namespace strata
