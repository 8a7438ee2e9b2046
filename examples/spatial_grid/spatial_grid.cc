#include "examples/spatial_grid/spatial_grid.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/check.h"
#include "base/status_macros.h"
#include "component/declare.h"
#include "component/instance_indexer.h"
#include "index/property_system.h"
#include "nlohmann/json.hpp"
#include "resource/entity_compiler.h"
#include "resource/entity_spawner.h"
#include "resource/format.h"

namespace spatial_grid {

using ::strata::ComponentDataWriter;
using ::strata::ComponentSpawnBatch;
using ::strata::ComponentStore;
using ::strata::ComponentType;
using ::strata::ComponentTypeContents;
using ::strata::Entity;
using ::strata::Instance;
using ::strata::InstanceId;
using ::strata::PropertyDescriptor;
using ::strata::WorldServices;
using json = ::nlohmann::json;

namespace {

// CellCoordinate: the cell of coordinate `v` along one axis. floor, not truncation, so
// every cell is kGridCellSize wide, the two on either side of 0 included. Clamped to
// int32 because converting an out-of-range double is undefined. Computed in double so
// a query's bounds (a point +- radius) round no differently from the positions.
int32_t CellCoordinate(double v) {
  const double cell = std::floor(v / kGridCellSize);
  return static_cast<int32_t>(std::clamp(cell, static_cast<double>(std::numeric_limits<int32_t>::min()),
                                         static_cast<double>(std::numeric_limits<int32_t>::max())));
}

absl::Status CheckFinite(GridPosition position) {
  if (std::isfinite(position.x) && std::isfinite(position.y)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(kGridPositionTypeName, ": (", position.x, ", ",
                                                 position.y, ") is not a finite position"));
}

// The compile function. Level JSON has no NaN or infinity, and ReadFloat refuses a
// number outside float's range, so what it writes is always finite.
absl::Status CompileGridPosition(const json& config, ComponentDataWriter& out) {
  STRATA_RETURN_IF_ERROR(strata::CheckComponentKeys(config, {"x", "y"}));
  GridPosition position;
  STRATA_RETURN_IF_ERROR(strata::ReadFloat(config, "x", &position.x));
  STRATA_RETURN_IF_ERROR(strata::ReadFloat(config, "y", &position.y));
  out.WriteF32(position.x);
  out.WriteF32(position.y);
  return absl::OkStatus();
}

// ReadInstance: the position in 8 native-order blob bytes (the World hands spawn and
// export native blobs only).
GridPosition ReadInstance(const std::byte* bytes) {
  GridPosition position;
  std::memcpy(&position.x, bytes, sizeof(float));
  std::memcpy(&position.y, bytes + sizeof(float), sizeof(float));
  return position;
}

// The export function: both fields, always, so an exported level says where everything
// is even when that is the default.
absl::StatusOr<json> ExportGridPosition(absl::Span<const std::byte> instance,
                                        const strata::FieldTextLookup&) {
  if (instance.size() != kGridPositionInstanceSize) {
    return absl::DataLossError(
        absl::StrCat(kGridPositionTypeName, ": instance of ", instance.size(), " bytes, expected 8"));
  }
  const GridPosition position = ReadInstance(instance.data());
  // JSON would write a NaN as null, which does not compile back.
  if (!CheckFinite(position).ok()) {
    return absl::DataLossError(absl::StrCat(kGridPositionTypeName, ": a non-finite position"));
  }
  return json{{"x", position.x}, {"y", position.y}};
}

void AppendF32(float v, std::vector<std::byte>* out) {
  const auto* bytes = reinterpret_cast<const std::byte*>(&v);
  out->insert(out->end(), bytes, bytes + sizeof(v));
}

}  // namespace

// ---------------------------------------------------------------------------------------
// SpatialGrid

SpatialGrid::SpatialGrid(strata::EntityManager& entities) {
  listener_ = entities.AddDestroyListener([this](absl::Span<const Entity> dead) { RemoveDead(dead); });
}

absl::StatusOr<Instance> SpatialGrid::CreateAt(Entity entity, InstanceId id, GridPosition position) {
  STRATA_RETURN_IF_ERROR(CheckNew(entity, position));
  Add(entity, id, position);
  // The listener (a World's indexer) may still refuse: the entity has another
  // component named `id`. Then the position goes again and nothing has changed.
  absl::Status told = NotifyCreated(id, absl::MakeConstSpan(&entity, 1));
  if (!told.ok()) {
    Remove(static_cast<uint32_t>(items_.size() - 1));
    return told;
  }
  return Instance{static_cast<uint32_t>(items_.size() - 1)};
}

Instance SpatialGrid::Lookup(Entity entity, InstanceId id) const {
  auto it = by_entity_.find(entity);
  if (it == by_entity_.end() || items_[it->second].id != id) return Instance{};
  return Instance{it->second};
}

bool SpatialGrid::Destroy(Entity entity, InstanceId id) {
  const Instance instance = Lookup(entity, id);
  if (!instance.is_valid()) return false;
  Remove(instance.index);
  // The index entry goes with the position, so the property system never reaches a
  // manager that no longer has the instance.
  NotifyDestroyed(id, absl::MakeConstSpan(&entity, 1));
  return true;
}

Instance SpatialGrid::Find(Entity entity) const {
  auto it = by_entity_.find(entity);
  return it == by_entity_.end() ? Instance{} : Instance{it->second};
}

std::optional<GridPosition> SpatialGrid::PositionOf(Entity entity) const {
  const Instance instance = Find(entity);
  if (!instance.is_valid()) return std::nullopt;
  return items_[instance.index].position;
}

absl::Status SpatialGrid::SetPosition(Instance instance, GridPosition position) {
  STRATA_CHECK(instance.index < items_.size(), "SpatialGrid: instance out of range");
  STRATA_RETURN_IF_ERROR(CheckFinite(position));
  Item& moved = items_[instance.index];
  const GridCell cell = CellOf(position.x, position.y);
  if (!(cell == moved.cell)) {
    RemoveFromCell(moved);
    moved.cell = cell;
    AddToCell(moved);
  }
  moved.position = position;
  return absl::OkStatus();
}

GridCell SpatialGrid::CellOf(float x, float y) {
  return GridCell{CellCoordinate(x), CellCoordinate(y)};
}

absl::Span<const Entity> SpatialGrid::EntitiesInCell(int32_t cx, int32_t cy) const {
  auto it = cells_.find(GridCell{cx, cy});
  if (it == cells_.end()) return {};
  return it->second;
}

std::vector<Entity> SpatialGrid::EntitiesNear(float x, float y, float radius) const {
  std::vector<Entity> found;
  // `!(radius >= 0)` is also true for NaN.
  if (!std::isfinite(x) || !std::isfinite(y) || !(radius >= 0) || items_.empty()) return found;
  // In double: the squares of float coordinates neither overflow nor lose the bits
  // that decide a point on the circle itself.
  const double r = radius;
  const double r2 = r * r;
  auto take_within = [&](const std::vector<Entity>& members) {
    for (Entity e : members) {
      const GridPosition p = items_[by_entity_.find(e)->second].position;
      const double dx = static_cast<double>(p.x) - x;
      const double dy = static_cast<double>(p.y) - y;
      if (dx * dx + dy * dy <= r2) found.push_back(e);
    }
  };
  // Every point within the circle lies in the square of cells [lo, hi] around it.
  const GridCell lo{CellCoordinate(x - r), CellCoordinate(y - r)};
  const GridCell hi{CellCoordinate(x + r), CellCoordinate(y + r)};
  // A wide query over a sparse grid visits the occupied cells instead of the square's
  // mostly empty ones (a radius of 1e6 would otherwise probe 2.5e11 cells).
  const double square_cells = (static_cast<double>(hi.x) - lo.x + 1) * (static_cast<double>(hi.y) - lo.y + 1);
  if (square_cells <= static_cast<double>(cells_.size())) {
    // int64 counters: hi may be INT32_MAX.
    for (int64_t cx = lo.x; cx <= hi.x; ++cx) {
      for (int64_t cy = lo.y; cy <= hi.y; ++cy) {
        auto it = cells_.find(GridCell{static_cast<int32_t>(cx), static_cast<int32_t>(cy)});
        if (it != cells_.end()) take_within(it->second);
      }
    }
  } else {
    for (const auto& [cell, members] : cells_) {
      if (cell.x >= lo.x && cell.x <= hi.x && cell.y >= lo.y && cell.y <= hi.y) take_within(members);
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

size_t SpatialGrid::MemoryUsage() const {
  size_t bytes = items_.capacity() * sizeof(Item) +
                 by_entity_.capacity() * (sizeof(std::pair<Entity, uint32_t>) + 1) +
                 cells_.capacity() * (sizeof(std::pair<GridCell, std::vector<Entity>>) + 1);
  for (const auto& [cell, members] : cells_) bytes += members.capacity() * sizeof(Entity);
  return bytes;
}

absl::Status SpatialGrid::CheckNew(Entity entity, GridPosition position) const {
  if (!entity.is_valid()) {
    return absl::InvalidArgumentError(absl::StrCat(kGridPositionTypeName, ": invalid entity"));
  }
  // Through the subscription: once the manager is gone, no entity is alive.
  if (!listener_->Alive(entity)) {
    return absl::NotFoundError(absl::StrCat(kGridPositionTypeName, ": ", entity.DebugString(), " is not alive"));
  }
  STRATA_RETURN_IF_ERROR(CheckFinite(position));
  if (by_entity_.contains(entity)) {
    return absl::AlreadyExistsError(absl::StrCat(kGridPositionTypeName, ": ", entity.DebugString(),
                                                 " already has a position (one per entity)"));
  }
  return absl::OkStatus();
}

absl::Status SpatialGrid::Insert(Entity entity, InstanceId id, GridPosition position) {
  STRATA_RETURN_IF_ERROR(CheckNew(entity, position));
  Add(entity, id, position);
  return absl::OkStatus();
}

void SpatialGrid::Add(Entity entity, InstanceId id, GridPosition position) {
  const auto slot = static_cast<uint32_t>(items_.size());
  items_.push_back(Item{entity, id, position, CellOf(position.x, position.y), 0});
  by_entity_.emplace(entity, slot);
  AddToCell(items_.back());
}

void SpatialGrid::Remove(uint32_t slot) {
  RemoveFromCell(items_[slot]);
  by_entity_.erase(items_[slot].entity);
  // Swap with the last, so the array stays dense.
  const auto last = static_cast<uint32_t>(items_.size() - 1);
  if (slot != last) {
    items_[slot] = items_[last];
    by_entity_[items_[slot].entity] = slot;
  }
  items_.pop_back();
}

void SpatialGrid::RemoveDead(absl::Span<const Entity> dead) {
  for (Entity e : dead) {
    const Instance instance = Find(e);
    if (instance.is_valid()) Remove(instance.index);
  }
}

void SpatialGrid::AddToCell(Item& item) {
  std::vector<Entity>& members = cells_[item.cell];
  item.slot_in_cell = static_cast<uint32_t>(members.size());
  members.push_back(item.entity);
}

void SpatialGrid::RemoveFromCell(const Item& item) {
  auto cell = cells_.find(item.cell);
  STRATA_CHECK(cell != cells_.end(), "SpatialGrid: an item's cell is missing");
  std::vector<Entity>& members = cell->second;
  const Entity last = members.back();
  members[item.slot_in_cell] = last;
  members.pop_back();
  if (last != item.entity) items_[by_entity_.find(last)->second].slot_in_cell = item.slot_in_cell;
  // Empty cells go, so cells_ holds only occupied cells however far entities roam.
  if (members.empty()) cells_.erase(cell);
}

const SpatialGrid::Item& SpatialGrid::item(Instance instance) const {
  STRATA_CHECK(instance.index < items_.size(), "SpatialGrid: instance out of range");
  return items_[instance.index];
}

// ---------------------------------------------------------------------------------------
// SpatialGridStore: the grid as one world's ComponentStore. Outside the anonymous
// namespace: SpatialGrid befriends it by this name.

class SpatialGridStore final : public ComponentStore {
 public:
  SpatialGridStore(const ComponentType& type, const WorldServices& services)
      : type_(&type), grid_(*services.entities) {
    // Create, Destroy and Spawn tell the world's indexer: properties see every position.
    services.indexer->Attach(grid_);
  }

  strata::ComponentManager& manager() override { return grid_; }
  void* typed() override { return &grid_; }
  const void* type_tag() const override { return strata::TypeTag<SpatialGrid>(); }

  absl::Status Spawn(const ComponentSpawnBatch& batch) override {
    if (batch.layout_fingerprint != type_->fingerprint()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "component type \"", kGridPositionTypeName,
          "\": the blob's layout differs from the declaration (\"", batch.layout, "\", declared \"",
          kGridPositionLayout, "\")"));
    }
    // The layout text says nothing of the stride; the blob's author controls both.
    if (batch.instance_stride != kGridPositionInstanceSize) {
      return absl::DataLossError(absl::StrCat(kGridPositionTypeName, ": instances of ",
                                              batch.instance_stride, " bytes, expected 8"));
    }
    // Every instance is read and checked before any is added: a bad blob adds nothing.
    std::vector<GridPosition> positions(batch.num_instances);
    for (uint32_t i = 0; i < batch.num_instances; ++i) {
      positions[i] = ReadInstance(batch.data.data() + size_t{i} * kGridPositionInstanceSize);
      if (!CheckFinite(positions[i]).ok()) {
        return absl::DataLossError(
            absl::StrCat(kGridPositionTypeName, ": instance ", i, " has a non-finite position"));
      }
    }
    // A second instance of one entity (a blob not from the compiler, which enforces
    // max_per_entity) fails here; the spawner then destroys the spawn's entities and
    // the grid's destroy listener drops what was added.
    for (uint32_t i = 0; i < batch.num_instances; ++i) {
      STRATA_RETURN_IF_ERROR(grid_.Insert(batch.entity(i), batch.name(i), positions[i]));
    }
    // One call per distinct name for the whole batch, not one per instance. A refusal
    // fails the spawn; the spawner then destroys its entities, and the positions go.
    std::vector<Entity> owners(batch.num_instances);
    for (uint32_t i = 0; i < batch.num_instances; ++i) owners[i] = batch.entity(i);
    return grid_.NotifyCreatedByName(owners, batch.names);
  }

  absl::Status Save(const strata::SaveContext& context, ComponentTypeContents* out) override {
    for (uint32_t k = 0; k < context.entities.size(); ++k) {
      const Instance i = grid_.Find(context.entities[k]);
      if (!i.is_valid()) continue;
      const GridPosition position = grid_.position(i);
      AppendF32(position.x, &out->data);
      AppendF32(position.y, &out->data);
      out->entity_index.push_back(k);
      // The grid keeps each instance's name itself: no index lookup needed.
      out->names.push_back(grid_.id(i).value());
    }
    return absl::OkStatus();
  }

  void CollectEntities(std::vector<Entity>* out) const override {
    for (const SpatialGrid::Item& item : grid_.items_) out->push_back(item.entity);
  }
  size_t CountOf(Entity entity) const override { return grid_.CountOf(entity); }
  size_t size() const override { return grid_.size(); }
  size_t MemoryUsage() const override { return grid_.MemoryUsage(); }

  absl::Status DescribeProperties(strata::PropertySystem& properties) override {
    SpatialGrid* grid = &grid_;
    std::vector<PropertyDescriptor> descriptors;
    descriptors.push_back(PropertyDescriptor::Make<float>(
        "x", [grid](Instance i) { return grid->position(i).x; },
        [grid](Instance i, float x) { return grid->SetPosition(i, GridPosition{x, grid->position(i).y}); }));
    descriptors.push_back(PropertyDescriptor::Make<float>(
        "y", [grid](Instance i) { return grid->position(i).y; },
        [grid](Instance i, float y) { return grid->SetPosition(i, GridPosition{grid->position(i).x, y}); }));
    return properties.Describe(grid, std::move(descriptors));
  }

 private:
  const ComponentType* type_;
  SpatialGrid grid_;
};

absl::StatusOr<ComponentType> SpatialGridComponentType() {
  ComponentType::Custom custom;
  custom.name = std::string(kGridPositionTypeName);
  // With the declared types, after the transform; nothing here reads another type.
  custom.spawn_order = strata::kDefaultSpawnOrder;
  custom.instance_size = kGridPositionInstanceSize;
  custom.max_per_entity = 1;
  custom.layout = std::string(kGridPositionLayout);
  custom.compile = CompileGridPosition;
  custom.export_instance = ExportGridPosition;
  custom.make_store = [](const ComponentType& type,
                         const WorldServices& services) -> absl::StatusOr<std::unique_ptr<ComponentStore>> {
    if (services.entities == nullptr || services.indexer == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat(kGridPositionTypeName, ": the world has no entity manager or indexer"));
    }
    return std::unique_ptr<ComponentStore>(new SpatialGridStore(type, services));
  };
  return ComponentType::FromCustom(std::move(custom));
}

SpatialGrid* GridOf(const strata::World& world) {
  absl::StatusOr<SpatialGrid*> grid = world.Store<SpatialGrid>(kGridPositionTypeName);
  return grid.ok() ? *grid : nullptr;
}

}  // namespace spatial_grid
