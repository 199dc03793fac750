// test_course_answer.cpp: the course's answer (report/course_answer.hpp): H2O's old heavy hitters
// counted by hand; the paragraph's verdicts, lists and head counts from constructed runs and
// profiles, within its width; its errors.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "h2o/report/course_answer.hpp"
#include "h2o_catch.hpp"

using namespace h2o;
using h2o_catch::Contains;

namespace {
// A run over 10 stories of 20 predictions, each -log p = `nll` (+ a small wobble, so that the
// bootstrap has spread), with `names` of `events` long-gap names right and `bytes` KV bytes.
SweepRun constructed_run(const std::string& label, double nll, std::size_t names,
                         std::size_t events, std::size_t bytes) {
  SweepRun run;
  run.label = run.policy = label;
  for (std::size_t story = 0; story < 10; ++story) {
    TeacherForcedRun reading;
    for (std::size_t t = 0; t < 20; ++t) {
      reading.token_nll.push_back(nll + 0.01 * static_cast<double>((story * 7 + t) % 5));
    }
    for (double x : reading.token_nll) run.nll += x;
    run.steps += reading.token_nll.size();
    run.readings.push_back(reading);
  }
  run.names_correct = names, run.name_events = events, run.stories_kv_bytes = bytes;
  return run;
}

HeadProfile head(std::size_t g, HeadKind kind, double window, double heavy_window, double sink,
                 double uniform) {
  HeadProfile p;
  p.kv_head = g, p.kind = kind, p.sink_share = sink, p.uniform_share = uniform;
  p.recovered = {window, window, heavy_window, 1.0};
  return p;
}
}  // namespace

TEST_CASE("old heavy hitters: outside the recent window, counted in the oldest tenth",
          "[course_answer]") {
  // A story of 20 tokens, window 3 (positions 17-19); the oldest tenth is positions 0 and 1.
  const std::vector<std::vector<Position>> kept = {{0, 1, 5, 17, 18, 19}, {2, 12, 19}};
  const OldHeavyHitters old = old_heavy_hitters(kept, 20, 3);
  CHECK(old.held == 5);    // 0, 1, 5 and 2, 12
  CHECK(old.oldest == 2);  // 0 and 1
  CHECK_THROWS_WITH(old_heavy_hitters({{20}}, 20, 3), Contains("position 20 is outside"));
  CHECK_THROWS_WITH(old_heavy_hitters({{-1}}, 20, 3), Contains("position -1 is outside"));
}

TEST_CASE("the course's answer: verdicts first, each contender in its list, the heads counted",
          "[course_answer]") {
  const SweepRun full = constructed_run("full", 0.5, 9, 10, 1000);
  const SweepRun window = constructed_run("window", 1.0, 2, 10, 100);
  const SweepRun h2o = constructed_run("h2o", 0.9, 5, 10, 100);       // lower: better
  const SweepRun pyramid = constructed_run("pyramid", 1.2, 4, 10, 100);  // higher: worse
  const SweepRun adakv = constructed_run("adakv", 1.0, 5, 10, 100);    // the same: noise
  const SweepRun fastgen = constructed_run("fastgen", 0.8, 6, 10, 250);
  const SweepRun window_at = constructed_run("window at fastgen's bytes", 0.8, 6, 10, 250);
  CourseAnswer answer;
  answer.stories = "10 stories", answer.percent = 10;
  answer.full = &full, answer.h2o = &h2o, answer.window = &window, answer.pyramid = &pyramid;
  answer.adakv = &adakv, answer.h2o_cut = &h2o, answer.window_cut = &window, answer.prompt = 50;
  answer.rules = {{0.9, &fastgen, &window_at}};
  // Two local heads (the window recovers 80% and 90%), one heavy (50%, +40 points), one sink.
  answer.profiles = {{head(0, HeadKind::Local, 0.8, 0.9, 0.01, 0.01),
                      head(1, HeadKind::Local, 0.9, 0.95, 0.01, 0.01)},
                     {head(0, HeadKind::Heavy, 0.5, 0.9, 0.02, 0.01),
                      head(1, HeadKind::Sink, 0.6, 0.7, 0.3, 0.01)}};
  answer.old = {40, 12};  // 30% in the oldest tenth
  const std::string text = course_answer_text(answer, 100, "  ");
  INFO(text);
  CHECK(text.rfind("  On this model, over 10 stories at a budget of 10%, H2O against a window", 0) ==
        0);
  const std::string flat = [&] {  // the sentences without their line breaks
    std::string s = text;
    std::replace(s.begin(), s.end(), '\n', ' ');
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (!(s[i] == ' ' && i + 1 < s.size() && s[i + 1] == ' ')) out += s[i];
    }
    return out;
  }();
  CHECK_THAT(flat, Contains("of 10 long-gap names H2O predicted 5, the window 2, the full cache 9"));
  CHECK_THAT(flat, Contains("cutting a prompt of 50 tokens once"));
  CHECK_THAT(flat, Contains("2 of 4 KV heads are local (their last 16 tokens hold 85.0% of"));
  CHECK_THAT(flat, Contains("1 is a sink (the largest first-token share 30.0x uniform"));
  CHECK_THAT(flat, Contains("12 of the 40 heavy hitters it held at the end of the first story "
                            "(30.0%) lie in its oldest tenth"));
  CHECK_THAT(flat, Contains("sums grow with age"));
  CHECK_THAT(flat, Contains("In the other 2 heads the window holds 55.0% and H2O's heavy hitters "
                            "add 25.0 points"));
  CHECK_THAT(flat, Contains("FastGen at T = 90%, holding 25.0% of the full cache's bytes"));
  CHECK_THAT(flat, Contains("So, beyond noise, better than the window: H2O; worse: PyramidKV; the "
                            "rest within noise."));
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    CHECK(line.size() <= 100);
    CHECK(line.rfind("  ", 0) == 0);
  }
  // No names, no sink, no age bias: said so, not counted as 0 of 0.
  SweepRun h2o_no_names = h2o, window_no_names = window;
  h2o_no_names.name_events = window_no_names.name_events = 0;
  answer.h2o = &h2o_no_names, answer.window = &window_no_names;
  answer.profiles[1][1].kind = HeadKind::Mixed;
  answer.old = {40, 4};
  const std::string plain = course_answer_text(answer, 100, "");
  CHECK_THAT(plain, Contains("no long-gap name to count here"));
  CHECK_THAT(plain, Contains("none is a sink"));
  CHECK_THAT(plain, Contains("no age bias here"));
  CHECK_THAT(plain, !Contains("0 of 0"));
  answer.pyramid = nullptr;
  CHECK_THROWS_WITH(course_answer_text(answer, 100, ""), Contains("a run is missing"));
}
