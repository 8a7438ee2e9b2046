// A component type with its own store, declared from outside Strata's packages through
// the same door as the transform (ComponentType::FromCustom, component/transform_type.cc):
// "grid_position", at most one 2D position {x, y} per entity, kept in a uniform grid of
// kGridCellSize-unit cells so a game asks what is near a point without visiting every
// entity.
//
//   ComponentRegistry registry;
//   STRATA_RETURN_IF_ERROR(registry.Add(spatial_grid::SpatialGridComponentType()));
//   EntityCompiler compiler;
//   STRATA_RETURN_IF_ERROR(registry.RegisterCompilers(compiler));
//   // level: {"entities": [{"name": "orc", "components":
//   //          [{"type": "grid_position", "x": 1.5, "y": -2}]}]}
//   STRATA_ASSIGN_OR_RETURN(std::unique_ptr<World> world, World::Create(registry));
//   STRATA_ASSIGN_OR_RETURN(std::vector<Entity> spawned, world->Spawn(view));
//   spatial_grid::SpatialGrid* grid = spatial_grid::GridOf(*world);
//   std::vector<Entity> near = grid->EntitiesNear(0, 0, 3);   // within 3 units
//   world->properties().Set(orc, "grid_position", "x", PropertyValue(9.0f));  // moves it
//
// Level JSON: {"type": "grid_position", "x": 1.5, "y": -2}; both default to 0. Another
// key, a value that is not a number, or one outside float's range (so not finite once
// stored) is InvalidArgument naming the key. Blob instance: 8 bytes, x then y as f32
// (layout "x:f32:4;y:f32:4"). Properties "x" and "y" (float, read/write); a write that
// crosses a cell border moves the entity to its new cell.
//
// The store reaches the world only through WorldServices::entities and ::indexer: it
// listens to the entity manager's destroy notifications (a destroyed entity leaves the
// grid) and tells the world's indexer of every position it creates or destroys
// (ComponentManager's instance listener), which is all the property system and
// World::Save need.
#ifndef STRATA_EXAMPLES_SPATIAL_GRID_SPATIAL_GRID_H_
#define STRATA_EXAMPLES_SPATIAL_GRID_SPATIAL_GRID_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "component/component_type.h"
#include "engine/world.h"
#include "entity/entity.h"
#include "entity/entity_manager.h"
#include "index/component_manager.h"

namespace spatial_grid {

inline constexpr absl::string_view kGridPositionTypeName = "grid_position";
// kGridCellSize: the side of a grid cell, in world units. A query for radius r visits
// about (2r / kGridCellSize + 1)^2 cells, so it suits queries of a few units.
inline constexpr float kGridCellSize = 4.0f;
// kGridPositionLayout: the blob instance's layout (its XXH32 is the fingerprint a
// spawn checks, so a blob written with other fields is refused, not misread).
inline constexpr absl::string_view kGridPositionLayout = "x:f32:4;y:f32:4";
inline constexpr uint32_t kGridPositionInstanceSize = 8;

struct GridPosition {
  float x = 0;
  float y = 0;
  friend bool operator==(const GridPosition& a, const GridPosition& b) {
    return a.x == b.x && a.y == b.y;
  }
};

// GridCell: integer cell coordinates; cell (cx, cy) covers x in [cx, cx + 1) *
// kGridCellSize and y likewise, so (-0.5, 0) lies in cell (-1, 0).
struct GridCell {
  int32_t x = 0;
  int32_t y = 0;
  friend bool operator==(const GridCell& a, const GridCell& b) { return a.x == b.x && a.y == b.y; }
  template <typename H>
  friend H AbslHashValue(H h, const GridCell& c) {
    return H::combine(std::move(h), c.x, c.y);
  }
};

class SpatialGridStore;

// SpatialGrid: the live grid positions of one world, and the ComponentManager the
// entity index and the property system see (what the store's typed() returns).
// Instance{i} is the i-th position of a dense array: Create and Destroy may move
// positions, so they invalidate every Instance (Lookup again after them).
// Thread-safety: none.
class SpatialGrid final : public strata::ComponentManager {
 public:
  // SpatialGrid(entities): subscribes to `entities`' destruction, so destroying an
  // entity removes its position (its index entries are the index owner's to drop: the
  // World's listener does). Create and Destroy tell the instance listener, if any.
  // `entities` may go first (the grid then sees every entity as dead).
  explicit SpatialGrid(strata::EntityManager& entities);
  SpatialGrid(const SpatialGrid&) = delete;
  SpatialGrid& operator=(const SpatialGrid&) = delete;

  absl::string_view type_name() const override { return kGridPositionTypeName; }

  // Create: a position at the origin for live `entity`, told to the listener as `id`.
  // InvalidArgument for an invalid entity, NotFound for a dead one, AlreadyExists if it
  // has a position here (one per entity, whatever its name), the listener's refusal
  // (a World's: another component named `id`); then nothing changes.
  absl::StatusOr<strata::Instance> Create(strata::Entity entity, strata::InstanceId id) override {
    return CreateAt(entity, id, GridPosition());
  }
  // CreateAt: Create at `position`; InvalidArgument also for a non-finite coordinate.
  absl::StatusOr<strata::Instance> CreateAt(strata::Entity entity, strata::InstanceId id,
                                            GridPosition position);
  // Lookup: `entity`'s position if it is named `id`, else an invalid Instance. O(1).
  strata::Instance Lookup(strata::Entity entity, strata::InstanceId id) const override;
  // Destroy: removes the position and its index entry; false if there is none.
  bool Destroy(strata::Entity entity, strata::InstanceId id) override;

  // Find: `entity`'s position whatever its name, or an invalid Instance. O(1).
  strata::Instance Find(strata::Entity entity) const;
  // PositionOf: `entity`'s position, or nullopt.
  std::optional<GridPosition> PositionOf(strata::Entity entity) const;

  // position / entity / id: a valid instance's. An invalid or out-of-range Instance is
  // a programmer error (STRATA_CHECK, every build).
  GridPosition position(strata::Instance instance) const { return item(instance).position; }
  strata::Entity entity(strata::Instance instance) const { return item(instance).entity; }
  strata::InstanceId id(strata::Instance instance) const { return item(instance).id; }

  // SetPosition: moves the instance, to another cell if it crosses a border.
  // InvalidArgument, nothing changed, for a non-finite coordinate. Keeps every
  // Instance valid. O(1) expected.
  absl::Status SetPosition(strata::Instance instance, GridPosition position);

  // CellOf: the cell holding (x, y). Coordinates beyond +-2^31 cells (about 8.6e9
  // units) share the edge cells: clamped, never undefined. `x` and `y` must be finite.
  static GridCell CellOf(float x, float y);

  // EntitiesInCell: the entities whose position lies in cell (cx, cy), in no
  // particular order. Valid until the next change to the grid. O(1) expected.
  absl::Span<const strata::Entity> EntitiesInCell(int32_t cx, int32_t cy) const;
  // EntitiesNear: the entities within `radius` of (x, y) (distance <= radius), ordered
  // by handle (Entity's operator<) so the answer does not depend on hash order. Empty
  // for a negative or NaN radius or a non-finite point; an infinite radius finds
  // every entity. O(min(cells in the square around the circle, occupied cells) +
  // candidates).
  std::vector<strata::Entity> EntitiesNear(float x, float y, float radius) const;

  // CountOf: 1 if `entity` has a position here, else 0. size: positions. num_cells:
  // cells holding at least one entity (empty cells are dropped).
  size_t CountOf(strata::Entity entity) const { return by_entity_.contains(entity) ? 1 : 0; }
  size_t size() const { return items_.size(); }
  size_t num_cells() const { return cells_.size(); }
  // MemoryUsage: bytes of the arrays and maps (capacities). O(cells).
  size_t MemoryUsage() const;

 private:
  // The store spawns through Insert and tells the listener of a whole batch at once
  // (NotifyCreatedByName), which per-instance Create cannot.
  friend class SpatialGridStore;

  struct Item {
    strata::Entity entity;
    strata::InstanceId id;
    GridPosition position;
    GridCell cell;
    // slot_in_cell: where `entity` is in cells_[cell], so leaving a cell is a swap
    // with its last entity, not a search.
    uint32_t slot_in_cell = 0;
  };

  // CheckNew: the errors of CreateAt that do not involve the index.
  absl::Status CheckNew(strata::Entity entity, GridPosition position) const;
  // Insert: CheckNew, then adds the position without touching the index.
  absl::Status Insert(strata::Entity entity, strata::InstanceId id, GridPosition position);
  // Add: adds a checked position. Remove: removes instance `slot`'s (not the index entry).
  void Add(strata::Entity entity, strata::InstanceId id, GridPosition position);
  void Remove(uint32_t slot);
  // The destroy listener: drops the positions of `dead` (stale handles by now).
  void RemoveDead(absl::Span<const strata::Entity> dead);
  void AddToCell(Item& item);
  void RemoveFromCell(const Item& item);
  const Item& item(strata::Instance instance) const;

  // items_: the positions, dense (Instance{i} is items_[i]); by_entity_: the entity
  // -> its slot in items_ (the full handle is the key, so a stale handle, or a new
  // entity reusing a destroyed one's index, finds nothing).
  std::vector<Item> items_;
  absl::flat_hash_map<strata::Entity, uint32_t> by_entity_;
  // cells_: the occupied cells -> their entities.
  absl::flat_hash_map<GridCell, std::vector<strata::Entity>> cells_;
  // listener_: last, so it unsubscribes before the data its listener edits goes.
  strata::EntityManager::Subscription listener_;
};

// SpatialGridComponentType: the "grid_position" ComponentType, for
// ComponentRegistry::Add. It spawns after the transform and reads nothing of it.
absl::StatusOr<strata::ComponentType> SpatialGridComponentType();

// GridOf: the SpatialGrid of `world`, or nullptr if its registry had no grid_position
// type when it was created (or one by that name stored otherwise: checked by
// type_tag() before the cast).
SpatialGrid* GridOf(const strata::World& world);

}  // namespace spatial_grid

#endif  // STRATA_EXAMPLES_SPATIAL_GRID_SPATIAL_GRID_H_
