// attention_pictures.hpp: the two pictures of attention read with the full cache (lesson 10).
//
//   attention_heatmap_svg  one head's attention weights, query step x key position: heavy hitters
//                          are vertical lines, tokens that every later query looks at;
//   rank_score_svg         each layer's accumulated attention against its rank, on log-log axes:
//                          a straight line is a power law (measure/attention_stats.hpp).
// Both are svg.hpp pictures, with its title, subtitle, axes and command.
//
// Dimension legend: R = query steps shown, K = key positions shown, L = layers, T = tokens.
#pragma once

#include <string>
#include <vector>

#include "h2o/base/tensor.hpp"

namespace h2o {

// weights (R, K): row r = the attention of query step r (zero beyond the step). `source` says
// whose, e.g. "model, layer 0, head 0, the first 192 tokens of story.txt".
std::string attention_heatmap_svg(const Matrix& weights, const std::string& source,
                                  const std::string& command);

// accumulated (L, T): every token's accumulated attention, one series per layer. `source` says
// on what, e.g. "model reading 912 tokens".
std::string rank_score_svg(const std::vector<std::vector<double>>& accumulated,
                           const std::string& source, const std::string& command);

}  // namespace h2o
