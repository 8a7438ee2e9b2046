#include "iteration/declared_access.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "iteration/entity_pages.h"

namespace strata {

void DeclaredAccess::Violation(ComponentId c, bool write, const char* what) const {
  const std::string name = c < pages_->num_component_types()
                               ? std::string(pages_->component_name(c))
                               : absl::StrCat("#", c);
  const std::string message = absl::StrCat(
      what, ": system \"", system_, "\" ", write ? "writes" : "reads", " component \"", name,
      "\" but did not declare it", write ? " written" : "",
      " (declare it on the System: ", write ? "Writes" : "Reads", "; a callback taking T& writes)");
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
  std::abort();
}

void DeclaredAccess::ResourceViolation(absl::string_view name, bool write, const char* what) const {
  const std::string message = absl::StrCat(
      what, ": system \"", system_, "\" ", write ? "writes" : "reads", " world resource \"", name,
      "\" but did not declare it", write ? " written" : "",
      " (declare it on the System: ", write ? "Writes" : "Reads", "(WorldResource<T>(world)))");
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace strata
