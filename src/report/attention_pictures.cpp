#include "h2o/report/attention_pictures.hpp"

#include <algorithm>

#include "h2o/base/output_file.hpp"
#include "h2o/report/svg.hpp"

namespace h2o {

std::string attention_heatmap_svg(const Matrix& weights, const std::string& source,
                                  const std::string& command) {
  Heatmap map;
  map.text = {"Attention of one head: query step x key position",
              {source, "vertical lines are heavy hitters: tokens that every later query looks at"},
              command};
  map.x_label = "key position (token index)";
  map.y_label = "query step (token index)";
  map.value_label = "attention weight";
  map.values = weights;
  return heatmap_svg(map);
}

std::string rank_score_svg(const std::vector<std::vector<double>>& accumulated,
                           const std::string& source, const std::string& command) {
  LineChart chart;
  chart.text = {"Accumulated attention against rank, every layer",
                {source + "; a straight line is a power law"},
                command};
  chart.x_label = "rank of the token (1 = most attention)";
  chart.y_label = "accumulated attention (sum of weights)";
  chart.log_x = chart.log_y = true;
  for (std::size_t l = 0; l < accumulated.size(); ++l) {
    std::vector<double> sorted = accumulated[l];  // (T,) largest first
    std::sort(sorted.rbegin(), sorted.rend());
    std::vector<double> ranks(sorted.size());  // (T,) 1, 2, ...
    for (std::size_t r = 0; r < ranks.size(); ++r) ranks[r] = static_cast<double>(r + 1);
    chart.series.push_back({"layer " + std::to_string(l), ranks, sorted, false, false});
  }
  return line_chart_svg(chart);
}

void save_attention_pictures(const std::string& folder, const Matrix& first_rows, std::size_t layer,
                             const std::vector<std::vector<double>>& accumulated,
                             const std::string& model, const std::string& text_name,
                             const std::string& command) {
  const std::size_t shown = first_rows.shape()[0];
  const std::size_t n_tokens = accumulated.empty() ? 0 : accumulated.front().size();
  write_output_files(  // both pictures, or neither
      {{folder + "/attention_heatmap.svg", "the picture",
        attention_heatmap_svg(first_rows,
                              model + ", layer " + std::to_string(layer) + ", head 0, the first " +
                                  std::to_string(shown) + " tokens of " + text_name,
                              command)},
       {folder + "/rank_score.svg", "the picture",
        rank_score_svg(accumulated, model + " reading " + std::to_string(n_tokens) + " tokens",
                       command)}});
}

}  // namespace h2o
