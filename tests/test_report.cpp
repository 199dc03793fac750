// test_report.cpp: the table printer (table.hpp) and the pictures (svg.hpp): layout rules, and
// every kind of picture well-formed, with its title, axes, legend and command.
#include "h2o_catch.hpp"
#include <cmath>
#include <limits>
#include <string>
#include "h2o/base/xtensor.hpp"

#include "h2o/report/svg.hpp"
#include "h2o/report/table.hpp"
#include "xml_check.hpp"

TEST_CASE("tables size their columns and align numbers right", "[report]") {
  h2o::Table table({"token", "score", "kept"});
  table.row("The", "1.78", "yes");
  table.row("because", "0.51", "no");
  table.row("it", "-0.22", "");
  CHECK(table.text() ==
        "  token    score  kept\n"
        "  The       1.78  yes\n"
        "  because   0.51  no\n"
        "  it       -0.22\n");
  h2o::Table counts({"n", "share"}, 0);
  counts.row(7, "12.5%");
  counts.row(1234, "+0.1%");
  CHECK(counts.text() == "   n  share\n   7  12.5%\n1234  +0.1%\n");
  CHECK_THROWS_AS(counts.add({"1"}), std::invalid_argument);
  CHECK(h2o::Table({"only title"}).text() == "  only title\n");
  h2o::Table quoted({"policy", "note"});
  quoted.row("h2o", "heavy, recent");
  quoted.row("say \"hi\"", "");
  CHECK(quoted.csv() == "policy,note\nh2o,\"heavy, recent\"\n\"say \"\"hi\"\"\",\n");
}

TEST_CASE("a line chart is well formed with its title axes legend and command", "[report]") {
  h2o::LineChart chart;
  chart.text = {"Perplexity against budget", {"stories, 1000 tokens"}, "build/bin/11 --svg x"};
  chart.x_label = "budget (% of the text)";
  chart.y_label = "perplexity";
  chart.series = {{"h2o", {5, 10, 20}, {4.0, 3.5, 3.1}, false, true},
                  {"window & co", {5, 10, 20}, {5.0, std::nan(""), 3.2}, true, false}};
  const std::string svg = h2o::line_chart_svg(chart);
  CHECK(h2o_test::xml_problem(svg).empty());
  for (const char* part :
       {"<title>Perplexity against budget</title>", "budget (% of the text)", ">perplexity<",
        ">h2o<", "window &amp; co", "<polyline", "<desc>Made by: build/bin/11 --svg x</desc>"}) {
    INFO(part);
    CHECK(svg.find(part) != std::string::npos);
  }
  chart.log_x = chart.log_y = true;
  const std::string log_svg = h2o::line_chart_svg(chart);
  CHECK(h2o_test::xml_problem(log_svg).empty());
  CHECK(log_svg.find("(log scale)") != std::string::npos);
  CHECK(log_svg == h2o::line_chart_svg(chart));  // deterministic
  chart.series[0].y.pop_back();
  CHECK_THROWS_AS(h2o::line_chart_svg(chart), std::invalid_argument);
}

TEST_CASE("a heatmap is well formed with a colour scale", "[report]") {
  h2o::Heatmap map;
  map.text = {"Attention of one head", {"layer 0, head 0"}, "cmd"};
  map.x_label = "key position";
  map.y_label = "query step";
  map.value_label = "attention weight";
  map.values = xt::zeros<float>({4, 4});
  for (std::size_t r = 0; r < 4; ++r) {
    for (std::size_t k = 0; k <= r; ++k) map.values(r, k) = 1.0f / static_cast<float>(r + 1);
  }
  map.values(3, 3) = std::numeric_limits<float>::quiet_NaN();
  const std::string svg = h2o::heatmap_svg(map);
  CHECK(h2o_test::xml_problem(svg).empty());
  for (const char* part :
       {"key position", "query step", "attention weight (sqrt scale)", "<rect"}) {
    INFO(part);
    CHECK(svg.find(part) != std::string::npos);
  }
  map.values = xt::zeros<float>({0, 3});
  CHECK_THROWS_AS(h2o::heatmap_svg(map), std::invalid_argument);
}

TEST_CASE("an occupancy grid is well formed with one panel per policy", "[report]") {
  h2o::OccupancyGrid grid;
  grid.text = {"Which positions each policy keeps", {"budget 2 tokens", "layer 0"}, "cmd --svg"};
  grid.steps = 4;
  grid.panels = {{"full", "all", {{0}, {0, 1}, {0, 1, 2}, {0, 1, 2, 3}}},
                 {"window", "last 2", {{0}, {0, 1}, {1, 2}, {2, 3}}}};
  const std::string svg = h2o::occupancy_svg(grid);
  CHECK(h2o_test::xml_problem(svg).empty());
  for (const char* part : {">full<", ">window<", "decoding step", "original position",
                           "still in the cache after that step"}) {
    INFO(part);
    CHECK(svg.find(part) != std::string::npos);
  }
  grid.steps = 0;
  CHECK_THROWS_AS(h2o::occupancy_svg(grid), std::invalid_argument);
}

TEST_CASE("the xml check itself finds broken pictures", "[report]") {
  CHECK(h2o_test::xml_problem("<svg><g></g></svg>").empty());
  CHECK_FALSE(h2o_test::xml_problem("<svg><g></svg>").empty());
  CHECK_FALSE(h2o_test::xml_problem("<svg><!-- a -- b --></svg>").empty());
  CHECK_FALSE(h2o_test::xml_problem("<svg a=\"1></svg>").empty());
  CHECK_FALSE(h2o_test::xml_problem("<svg/><svg/>").empty());
  CHECK_FALSE(h2o_test::xml_problem("<svg>fish & chips</svg>").empty());
}
