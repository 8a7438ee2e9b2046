// The component managers and component names of the entity-index article's worked
// example, shared by the index tests:
//
//   ArticleManagers m;
//   index.AddInstance(e, &m.render_data_1, kFog);
#ifndef STRATA_INDEX_TESTING_ARTICLE_EXAMPLE_H_
#define STRATA_INDEX_TESTING_ARTICLE_EXAMPLE_H_

#include "base/id_string.h"
#include "index/testing/render_data_manager.h"

namespace strata::testing {

inline const IdString32 kTransform("Transform");
inline const IdString32 kFog("Fog");
inline const IdString32 kVignette("Vignette");
inline const IdString32 kBloom("Bloom");

struct ArticleManagers {
  RenderDataManager transform{"transform"};
  RenderDataManager render_data_1{"render_data_1"};
  RenderDataManager render_data_2{"render_data_2"};
};

}  // namespace strata::testing

#endif  // STRATA_INDEX_TESTING_ARTICLE_EXAMPLE_H_
