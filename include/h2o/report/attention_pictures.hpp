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

#include <cstddef>
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

// Lesson 10's two pictures, written into `folder` as attention_heatmap.svg and rank_score.svg:
// head 0 of layer `layer` over its first R steps, `first_rows` (R, R), and every layer's
// accumulated attention (L, T), titled with the model's and the text's names: both or neither
// (base/output_file.hpp's write_output_files). Throws std::runtime_error naming a file that
// cannot be written.
void save_attention_pictures(const std::string& folder, const Matrix& first_rows,
                             std::size_t layer, const std::vector<std::vector<double>>& accumulated,
                             const std::string& model, const std::string& text_name,
                             const std::string& command);

}  // namespace h2o
