// test_report.cpp: the table printer (table.hpp) and the pictures (svg.hpp): layout rules, and
// every kind of picture well-formed, with its title, axes, legend and command.
#include <cmath>
#include <limits>
#include <string>

#include "h2o/base/format.hpp"
#include "h2o/base/xtensor.hpp"
#include "h2o/report/svg.hpp"
#include "h2o/report/table.hpp"
#include "h2o_catch.hpp"
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
  const auto spans_of = [](const std::vector<std::vector<h2o::Position>>& kept_per_step) {
    h2o::KeptSpanRecorder recorder;
    for (const auto& kept : kept_per_step) recorder.after_step(kept);
    return recorder.finish();
  };
  grid.panels = {{"full", "all", spans_of({{0}, {0, 1}, {0, 1, 2}, {0, 1, 2, 3}})},
                 {"window", "last 2", spans_of({{0}, {0, 1}, {1, 2}, {2, 3}})}};
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

TEST_CASE("kept spans are the unbroken stays of each position, in the order they close",
          "[report]") {
  h2o::KeptSpanRecorder recorder;
  // Steps 0-4: position 0 stays throughout, 1 leaves after step 1, 2 after step 3, 3 and 4 stay.
  for (const std::vector<h2o::Position>& kept :
       std::vector<std::vector<h2o::Position>>{{0}, {0, 1}, {0, 2}, {0, 2, 3}, {0, 3, 4}}) {
    recorder.after_step(kept);
  }
  const std::vector<h2o::KeptSpan> spans = recorder.finish();
  const std::vector<std::vector<std::size_t>> expected = {
      {1, 1, 2}, {2, 2, 4}, {0, 0, 5}, {3, 3, 5}, {4, 4, 5}};  // position, first, end
  REQUIRE(spans.size() == expected.size());
  for (std::size_t i = 0; i < spans.size(); ++i) {
    INFO(i);
    CHECK(static_cast<std::size_t>(spans[i].position) == expected[i][0]);
    CHECK(spans[i].first_step == expected[i][1]);
    CHECK(spans[i].end_step == expected[i][2]);
  }
}

TEST_CASE("every string a picture shows is escaped: control characters, invalid UTF-8, markup",
          "[report]") {
  const std::string bad = "a\x01<b>&\x1b[31m\xff\"\n";  // SOH, ESC, a stray byte, a newline
  const h2o::PictureText text{"title" + bad, {"subtitle" + bad}, "command" + bad};
  h2o::LineChart chart;
  chart.text = text;
  chart.x_label = "x" + bad;
  chart.y_label = "y" + bad;
  chart.series = {{"series" + bad, {1, 2}, {1, 2}, false, true}};
  h2o::Heatmap map;
  map.text = text;
  map.x_label = "x" + bad;
  map.y_label = "y" + bad;
  map.value_label = "value" + bad;
  map.values = xt::ones<float>({2, 2});
  h2o::OccupancyGrid grid;
  grid.text = text;
  grid.steps = 2;
  grid.panels = {{"panel" + bad, "panel subtitle" + bad, {{0, 0, 2}, {1, 1, 2}}}};
  for (const std::string& svg :
       {h2o::line_chart_svg(chart), h2o::heatmap_svg(map), h2o::occupancy_svg(grid)}) {
    CHECK(h2o_test::xml_problem(svg).empty());
    for (char ch : svg) {
      const auto byte = static_cast<unsigned char>(ch);
      CHECK((byte >= 0x20 || ch == '\n'));
      CHECK(byte < 0x80);  // the only non-ASCII bytes were the invalid one
    }
    CHECK(svg.find("a\\x01&lt;b&gt;&amp;\\x1b[31m\\xff&quot;\\n") != std::string::npos);
  }
}

TEST_CASE("printable escapes control characters and invalid UTF-8 and cuts long text", "[report]") {
  CHECK(h2o::printable("plain text, tab\there") == "plain text, tab\there");
  CHECK(h2o::printable("caf\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x98\x80") ==
        "caf\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x98\x80");  // valid UTF-8 is kept
  CHECK(h2o::printable(std::string("a\0b\x1b[2J\x7f\r\n", 10)) == "a\\x00b\\x1b[2J\\x7f\\r\\n");
  // Invalid: a lone continuation byte, a cut sequence, an overlong form, a surrogate, a C1 control.
  CHECK(h2o::printable("\x80|\xc3|\xc0\xaf|\xed\xa0\x80|\xc2\x9b") ==
        "\\x80|\\xc3|\\xc0\\xaf|\\xed\\xa0\\x80|\\xc2\\x9b");
  CHECK(h2o::printable(std::string(1000, 'x'), 10) == "xxxxxxxxxx... (990 more bytes)");
  CHECK(h2o::printable("\xc3\xa9\xc3\xa9", 3) ==
        "\xc3\xa9\xc3\xa9");  // never cut inside a character
}

TEST_CASE("the xml check itself finds broken pictures", "[report]") {
  CHECK(h2o_test::xml_problem("<svg><g></g></svg>").empty());
  CHECK_FALSE(h2o_test::xml_problem("<svg><g></svg>").empty());
  CHECK_FALSE(h2o_test::xml_problem("<svg><!-- a -- b --></svg>").empty());
  CHECK_FALSE(h2o_test::xml_problem("<svg a=\"1></svg>").empty());
  CHECK_FALSE(h2o_test::xml_problem("<svg/><svg/>").empty());
  CHECK_FALSE(h2o_test::xml_problem("<svg>fish & chips</svg>").empty());
}

TEST_CASE("markup escaping writes the five characters as references and keeps the rest",
          "[report]") {
  CHECK(h2o::escape_markup("a < b & c > \"d\" 'e' caf\xc3\xa9") ==
        "a &lt; b &amp; c &gt; &quot;d&quot; 'e' caf\xc3\xa9");
  CHECK(h2o::escape_markup("'e'", true) == "&#39;e&#39;");
  CHECK(h2o::escape_markup("") == "");
  // The pictures' rule: printable() first, so a control character shows as text, not markup.
  CHECK(h2o::xml_escape("tab\there\x01<") == "tab\there\\x01&lt;");
}
