// ComponentRegistry: the component types a game declares, handed to the World, the
// compile and inspect tools and the save/export code, so one list drives them all.
//
//   ComponentRegistry registry;                       // knows "transform" already
//   STRATA_RETURN_IF_ERROR(registry.Add(ComponentDeclaration<Health>("health")
//                                           .Field("hp", &Health::hp).Build()));
//   EntityCompiler compiler;
//   STRATA_RETURN_IF_ERROR(registry.RegisterCompilers(compiler));
//   absl::StatusOr<std::unique_ptr<World>> world = World::Create(registry);
//
// Every registry holds the transform type (component/transform_type.h), which every
// World composes. Types keep their addresses for the registry's lifetime; the registry
// must outlive the worlds and compilers it was given to. Thread-safety: const methods
// may run concurrently; Add may not.
#ifndef STRATA_COMPONENT_REGISTRY_H_
#define STRATA_COMPONENT_REGISTRY_H_

#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/id_string.h"
#include "component/component_type.h"
#include "resource/entity_compiler.h"

namespace strata {

class ComponentRegistry {
 public:
  // ComponentRegistry(): a registry with the transform type.
  ComponentRegistry();
  ComponentRegistry(const ComponentRegistry&) = delete;
  ComponentRegistry& operator=(const ComponentRegistry&) = delete;

  // Add: registers `type` (a ComponentDeclaration's Build() result may be passed as it
  // is: its error is returned). AlreadyExists for a taken name, or a name whose
  // IdString32 equals another type's.
  absl::Status Add(absl::StatusOr<ComponentType> type);

  // Find: the type of that name or id, or nullptr. O(1).
  const ComponentType* Find(absl::string_view name) const;
  const ComponentType* Find(IdString32 id) const;

  // types: every type, in spawn order (ties by name).
  const std::vector<const ComponentType*>& types() const { return ordered_; }

  // RegisterCompilers: every type's compile function, in `compiler`.
  absl::Status RegisterCompilers(EntityCompiler& compiler) const;

 private:
  std::vector<std::unique_ptr<ComponentType>> types_;
  std::vector<const ComponentType*> ordered_;
  absl::flat_hash_map<uint32_t, const ComponentType*> by_id_;
};

}  // namespace strata

#endif  // STRATA_COMPONENT_REGISTRY_H_
