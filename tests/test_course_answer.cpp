// test_course_answer.cpp: the course's answer (report/course_answer.hpp): H2O's old heavy hitters
// counted by hand; the paragraph's verdicts, lists and head counts from runs and profiles built
// by hand: H2O winning, losing, no different, without names, names against perplexity; its
// width; its errors.
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

// A head profiled at kKindSizes: the last 16 tokens hold `window`, with its 16 heavy hitters
// `heavy_window`, the first token `sink` (uniform: `uniform`).
HeadProfile head(std::size_t g, HeadKind kind, double window, double heavy_window, double sink,
                 double uniform) {
  HeadProfile p;
  p.kv_head = g, p.kind = kind, p.sink_share = sink, p.uniform_share = uniform;
  p.local_share = window, p.heavy_share = heavy_window - window;
  p.recovered = {window, window + sink, heavy_window, 1.0};
  return p;
}

// The paragraph with its line breaks and indents taken out, to look for a sentence in it.
std::string flat(const std::string& text) {
  std::string s = text;
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (!(s[i] == ' ' && ((i + 1 < s.size() && s[i + 1] == ' ') || out.empty()))) out += s[i];
  }
  return out;
}

// The runs and heads every case below starts from: the window 1.0 nats a prediction and 2 of 10
// names, FastGen at 50% worse than the window at its bytes and at 90% the same; two local heads
// of four, one heavy, one sink.
struct Fixture {
  SweepRun full = constructed_run("full", 0.5, 9, 10, 1000);
  SweepRun window = constructed_run("window", 1.0, 2, 10, 100);
  SweepRun fastgen_50 = constructed_run("fastgen", 1.2, 4, 10, 60);  // higher: worse
  SweepRun window_at_50 = constructed_run("window at fastgen's bytes", 1.0, 3, 10, 60);
  SweepRun fastgen = constructed_run("fastgen", 0.8, 6, 10, 250);  // the same: noise
  SweepRun window_at = constructed_run("window at fastgen's bytes", 0.8, 6, 10, 250);
  SweepRun h2o;
  CourseAnswer answer;
  // H2O at `nll` a prediction with `names` of the 10 names right.
  Fixture(double nll, std::size_t names) : h2o(constructed_run("h2o", nll, names, 10, 100)) {
    answer.stories = "10 stories", answer.percent = 10;
    answer.full = &full, answer.h2o = &h2o, answer.window = &window;
    answer.rules = {{0.5, &fastgen_50, &window_at_50}, {0.9, &fastgen, &window_at}};
    answer.profiles = {{head(0, HeadKind::Local, 0.8, 0.9, 0.01, 0.01),
                        head(1, HeadKind::Local, 0.9, 0.95, 0.01, 0.01)},
                       {head(0, HeadKind::Heavy, 0.5, 0.95, 0.02, 0.01),
                        head(1, HeadKind::Sink, 0.6, 0.8, 0.3, 0.01)}};
    answer.old = {40, 12};  // 30% in the oldest tenth
  }
  std::string text() const { return flat(course_answer_text(answer, 100, "  ")); }
};
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

TEST_CASE("the course's answer where H2O wins: verdicts first, the lists, the heads counted",
          "[course_answer]") {
  Fixture f(0.9, 5);  // lower perplexity beyond noise, more names
  const std::string raw = course_answer_text(f.answer, 100, "  ");
  INFO(raw);
  CHECK(raw.rfind("  On this model, over 10 stories at a budget of 10%, H2O against a window", 0) ==
        0);
  std::istringstream lines(raw);
  for (std::string line; std::getline(lines, line);) {
    CHECK(line.size() <= 100);
    CHECK(line.rfind("  ", 0) == 0);
  }
  const std::string text = flat(raw);
  CHECK_THAT(text, Contains("Where H2O wins: perplexity and long-gap names (of 10 long-gap names "
                            "H2O predicted 5, the window 2, the full cache 9): it holds old tokens "
                            "the window has dropped."));
  // The perplexity's verdict is the first sentence's, said once.
  CHECK_THAT(text, !Contains("beyond noise:"));
  CHECK_THAT(text, Contains("It loses nowhere here; the heads: 2 of 4 KV heads are local (their "
                            "last 16 tokens hold 85.0% of their attention, their 16 heavy hitters "
                            "outside them 7.5%)"));
  CHECK_THAT(text, !Contains("Where it loses"));
  CHECK_THAT(text, Contains("1 is a sink (the largest first-token share 30.0x uniform"));
  CHECK_THAT(text, Contains("12 of the 40 heavy hitters it held at the end of the first story "
                            "(30.0%) lie in its oldest tenth"));
  CHECK_THAT(text, Contains("sums grow with age"));
  CHECK_THAT(text, Contains("In the other 2 heads the last 16 tokens hold 55.0% and the 16 heavy "
                            "hitters 32.5%: those are the heads H2O serves."));
  // Rules per head: the targets by verdict, each number left to the caller's table.
  CHECK_THAT(text, Contains("What rules per head change (FastGen against the window at the bytes "
                            "it held): better beyond noise at no target; worse at T = 50%; no "
                            "different within noise at T = 90%."));
  CHECK_THAT(text, !Contains("25.0%"));  // FastGen's bytes: the table's
  CHECK_THAT(text, !Contains("PyramidKV"));
}

TEST_CASE("the course's answer where H2O loses: no win claimed, the loss and its heads",
          "[course_answer]") {
  Fixture f(1.1, 1);  // higher perplexity beyond noise, fewer names
  const std::string text = f.text();
  INFO(text);
  CHECK_THAT(text, !Contains("Where H2O wins"));
  CHECK_THAT(text, Contains("H2O wins nowhere here: of 10 long-gap names H2O predicted 1, the "
                            "window 2"));
  CHECK_THAT(text, Contains("Where it loses: perplexity and long-gap names; why: 2 of 4 KV heads "
                            "are local"));
  CHECK_THAT(text, !Contains("its perplexity is"));  // said once, in the first sentence
  CHECK_THAT(text, Contains("one token fewer there"));
  // FastGen at 90% better beyond noise: the targets listed by verdict.
  f.fastgen = constructed_run("fastgen", 0.7, 6, 10, 250);
  CHECK_THAT(f.text(), Contains("better beyond noise at T = 90%; worse at T = 50%."));
}

TEST_CASE("the course's answer where H2O is no different: neither a win nor a loss",
          "[course_answer]") {
  Fixture f(1.0, 2);  // the window's own numbers
  const std::string text = f.text();
  INFO(text);
  CHECK_THAT(text, Contains("H2O wins nowhere here: of 10 long-gap names H2O predicted 2, the "
                            "window 2"));
  CHECK_THAT(text, Contains("It loses nowhere here; the heads: 2 of 4 KV heads are local"));
  CHECK_THAT(text, !Contains("Where H2O wins"));
  CHECK_THAT(text, !Contains("Where it loses"));
  CHECK_THAT(text, Contains("no different within noise at T = 90%."));
  // More names alone: a win on names, and the perplexity's "no difference" not said twice.
  f.h2o.names_correct = 3;
  const std::string more = f.text();
  CHECK_THAT(more, Contains("Where H2O wins: long-gap names only (of 10 long-gap names H2O "
                            "predicted 3, the window 2, the full cache"));
  CHECK_THAT(more, Contains("old names the window has dropped. "));
  CHECK_THAT(more, !Contains("its perplexity is no different"));
  // Fewer names alone: a loss on names, not on perplexity.
  f.h2o.names_correct = 1;
  CHECK_THAT(f.text(),
             Contains("Where it loses: long-gap names (H2O 1, the window 2); the heads:"));
}

TEST_CASE("the course's answer without name events: names not counted as 0 of 0",
          "[course_answer]") {
  Fixture f(1.0, 0);
  f.h2o.name_events = f.window.name_events = f.full.name_events = 0;
  f.answer.profiles[1][1].kind = HeadKind::Mixed;
  f.answer.old = {40, 4};
  const std::string text = f.text();
  INFO(text);
  CHECK_THAT(text, Contains("H2O wins nowhere here, and there is no long-gap name to count."));
  CHECK_THAT(text, Contains("none is a sink"));
  CHECK_THAT(text, Contains("no age bias here"));
  CHECK_THAT(text, !Contains("0 of 0"));
  CHECK_THAT(text, !Contains("long-gap names H2O predicted"));
  // H2O better on perplexity, with nothing to say of names.
  Fixture better(0.9, 0);
  better.h2o.name_events = better.window.name_events = 0;
  CHECK_THAT(better.text(), Contains("Where H2O wins: perplexity: it holds old tokens"));
}

TEST_CASE("the course's answer where names and perplexity disagree says so", "[course_answer]") {
  Fixture worse(1.1, 5);  // higher perplexity beyond noise, yet more names
  const std::string text = worse.text();
  INFO(text);
  CHECK_THAT(text, Contains("Where H2O wins: long-gap names only (of 10 long-gap names H2O "
                            "predicted 5, the window 2, the full cache 9), old names the window "
                            "has dropped; the names and the perplexity disagree."));
  CHECK_THAT(text, Contains("Where it loses: perplexity; why:"));
  Fixture better(0.9, 1);  // lower perplexity beyond noise, yet fewer names
  CHECK_THAT(better.text(), Contains("H2O wins on perplexity but not on names: of 10 long-gap "
                                     "names H2O predicted 1, the window 2"));
  CHECK_THAT(better.text(), Contains("Where it loses: long-gap names (H2O 1, the window 2)"));
}

TEST_CASE("the course's answer refuses a missing run and heads without a kind", "[course_answer]") {
  Fixture f(0.9, 5);
  f.answer.profiles[0][0].kind = HeadKind::Unclassified;
  CHECK_THROWS_WITH(course_answer_text(f.answer, 100, ""), Contains("kKindSizes"));
  f.answer.profiles[0][0].kind = HeadKind::Local;
  f.answer.rules[1].window = nullptr;
  CHECK_THROWS_WITH(course_answer_text(f.answer, 100, ""), Contains("a run is missing"));
  f.answer.rules[1].window = &f.window_at;
  f.answer.window = nullptr;
  CHECK_THROWS_WITH(course_answer_text(f.answer, 100, ""), Contains("a run is missing"));
}
