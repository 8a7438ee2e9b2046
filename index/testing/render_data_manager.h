// RenderDataManager: a small concrete ComponentManager for tests and benchmarks, the
// article's "render data" component (Fog, Vignette, ...), with one property of every
// PropertyType so the property system can be exercised end to end.
//
//   RenderDataManager render_data("render_data_1");
//   absl::StatusOr<Instance> fog = render_data.Create(e, IdString32("Fog"));
//   render_data.data(*fog).density = 0.25f;
//   PropertySystem properties(&index);
//   properties.Describe(&render_data, render_data.DescribeProperties());
//
// Instances are dense: Destroy swap-removes, so it (and Create) invalidates Instances.
#ifndef STRATA_INDEX_TESTING_RENDER_DATA_MANAGER_H_
#define STRATA_INDEX_TESTING_RENDER_DATA_MANAGER_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "entity/entity.h"
#include "index/component_manager.h"
#include "index/property_system.h"

namespace strata::testing {

class RenderDataManager final : public ComponentManager {
 public:
  struct Data {
    bool enabled = true;
    int32_t layer = 0;
    float density = 0;
    Vector3 offset;
    Vector4 colour;
    Matrix4x4 projection;
    std::string label;
  };

  explicit RenderDataManager(std::string name) : name_(std::move(name)) {}

  absl::string_view type_name() const override { return name_; }

  absl::StatusOr<Instance> Create(Entity entity, InstanceId id) override {
    if (!entity.is_valid()) {
      return absl::InvalidArgumentError(absl::StrCat(name_, ": invalid entity"));
    }
    const uint32_t index = static_cast<uint32_t>(data_.size());
    if (!instances_.try_emplace(Key{entity, id}, index).second) {
      return absl::AlreadyExistsError(absl::StrCat(
          name_, ": ", entity.DebugString(), " already has instance ", id.DebugString()));
    }
    data_.emplace_back();
    owners_.push_back(Key{entity, id});
    return Instance{index};
  }

  Instance Lookup(Entity entity, InstanceId id) const override {
    auto it = instances_.find(Key{entity, id});
    return it == instances_.end() ? Instance{} : Instance{it->second};
  }

  bool Destroy(Entity entity, InstanceId id) override {
    auto it = instances_.find(Key{entity, id});
    if (it == instances_.end()) return false;
    const uint32_t index = it->second;
    instances_.erase(it);
    const uint32_t last = static_cast<uint32_t>(data_.size() - 1);
    if (index != last) {
      data_[index] = std::move(data_[last]);
      owners_[index] = owners_[last];
      instances_[owners_[index]] = index;
    }
    data_.pop_back();
    owners_.pop_back();
    return true;
  }

  // data: the instance's data; `instance` must be valid.
  Data& data(Instance instance) { return data_[instance.index]; }
  const Data& data(Instance instance) const { return data_[instance.index]; }
  size_t size() const { return data_.size(); }

  // DescribeProperties: enabled, layer, density (>= 0, else InvalidArgument), offset,
  // colour, projection, label (all read/write) and instance_count (read-only int32).
  std::vector<PropertyDescriptor> DescribeProperties() {
    std::vector<PropertyDescriptor> p;
    p.push_back(PropertyDescriptor::Make<bool>(
        "enabled", [this](Instance i) { return data(i).enabled; },
        [this](Instance i, bool v) { data(i).enabled = v; }));
    p.push_back(PropertyDescriptor::Make<int32_t>(
        "layer", [this](Instance i) { return data(i).layer; },
        [this](Instance i, int32_t v) { data(i).layer = v; }));
    p.push_back(PropertyDescriptor::Make<float>(
        "density", [this](Instance i) { return data(i).density; },
        [this](Instance i, float v) -> absl::Status {
          if (!(v >= 0)) return absl::InvalidArgumentError("density must be >= 0");
          data(i).density = v;
          return absl::OkStatus();
        }));
    p.push_back(PropertyDescriptor::Make<Vector3>(
        "offset", [this](Instance i) { return data(i).offset; },
        [this](Instance i, const Vector3& v) { data(i).offset = v; }));
    p.push_back(PropertyDescriptor::Make<Vector4>(
        "colour", [this](Instance i) { return data(i).colour; },
        [this](Instance i, const Vector4& v) { data(i).colour = v; }));
    p.push_back(PropertyDescriptor::Make<Matrix4x4>(
        "projection", [this](Instance i) { return data(i).projection; },
        [this](Instance i, const Matrix4x4& v) { data(i).projection = v; }));
    p.push_back(PropertyDescriptor::Make<std::string>(
        "label", [this](Instance i) { return data(i).label; },
        [this](Instance i, const std::string& v) { data(i).label = v; }));
    p.push_back(PropertyDescriptor::Make<int32_t>(
        "instance_count", [this](Instance) { return static_cast<int32_t>(size()); }));
    return p;
  }

 private:
  using Key = std::pair<Entity, InstanceId>;
  std::string name_;
  std::vector<Data> data_;
  std::vector<Key> owners_;
  absl::flat_hash_map<Key, uint32_t> instances_;
};

}  // namespace strata::testing

#endif  // STRATA_INDEX_TESTING_RENDER_DATA_MANAGER_H_
