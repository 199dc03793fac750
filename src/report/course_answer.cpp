// course_answer.cpp: the course's answer in one paragraph (course_answer.hpp).
#include "h2o/report/course_answer.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "h2o/base/format.hpp"
#include "h2o/report/svg.hpp"
#include "h2o/report/verdict_text.hpp"

namespace h2o {

OldHeavyHitters old_heavy_hitters(const std::vector<std::vector<Position>>& kept,
                                  std::size_t n_tokens, std::size_t recent) {
  OldHeavyHitters count;
  for (const std::vector<Position>& layer : kept) {
    for (Position p : layer) {
      if (p < 0 || static_cast<std::size_t>(p) >= n_tokens) {
        throw std::invalid_argument("old_heavy_hitters: position " + std::to_string(p) +
                                    " is outside a story of " + std::to_string(n_tokens) +
                                    " tokens");
      }
      if (static_cast<std::size_t>(p) + recent >= n_tokens) continue;  // in the recent window
      ++count.held;
      count.oldest += static_cast<std::size_t>(p) < n_tokens / 10;
    }
  }
  return count;
}

namespace {

std::string percent_of(double share) { return fixed(100.0 * share, 1) + "%"; }

// Adds `label` to the list of its verdict against the window (the closing sentence).
void tally(const SweepRun& run, const SweepRun& window, const std::string& label,
           std::vector<std::string>& better, std::vector<std::string>& worse,
           std::vector<std::string>& same) {
  const Verdict verdict = verdict_of(difference(run, window));
  (verdict == Verdict::Better ? better : verdict == Verdict::Worse ? worse : same).push_back(label);
}

std::string listed(const std::vector<std::string>& labels) {
  if (labels.empty()) return "none";
  std::string text;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == labels.size() ? " and " : ", ") + labels[i];
  }
  return text;
}

}  // namespace

std::string course_answer_text(const CourseAnswer& a, std::size_t width,
                               const std::string& indent) {
  for (const SweepRun* run : {a.full, a.h2o, a.window}) {
    if (run == nullptr) throw std::invalid_argument("course_answer_text: a run is missing");
  }
  for (const RulesReading& rules : a.rules) {
    if (rules.fastgen == nullptr || rules.window == nullptr) {
      throw std::invalid_argument("course_answer_text: a run is missing");
    }
  }
  for (const std::vector<HeadProfile>& layer : a.profiles) {
    for (const HeadProfile& p : layer) {
      if (p.kind == HeadKind::Unclassified) {
        throw std::invalid_argument(
            "course_answer_text: the heads must be profiled at the kind's "
            "sizes (kKindSizes), to say which are local");
      }
    }
  }
  const auto against = [](const SweepRun& run, const SweepRun& window) {
    return verdict_against(run, window, "the window");
  };
  const Verdict verdict = verdict_of(difference(*a.h2o, *a.window));
  const std::size_t events = a.h2o->name_events;
  const std::size_t h2o_names = a.h2o->names_correct, window_names = a.window->names_correct;
  const bool more_names = events > 0 && h2o_names > window_names;
  const bool fewer_names = events > 0 && h2o_names < window_names;
  const std::string names_counted = "of " + std::to_string(events) +
                                    " long-gap names H2O predicted " + std::to_string(h2o_names) +
                                    ", the window " + std::to_string(window_names) +
                                    ", the full cache " + std::to_string(a.full->names_correct);
  std::vector<std::string> sentences;
  sentences.push_back("On this model, over " + a.stories + " at a budget of " +
                      std::to_string(a.percent) + "%, H2O against a window of the same bytes: " +
                      against(*a.h2o, *a.window) + ".");
  // Where H2O wins: said only of what the numbers show beyond noise (perplexity) or in counts
  // (names); where they disagree, said so. The perplexity's verdict is the sentence before's,
  // named here, not said again.
  if (verdict == Verdict::Better && !fewer_names) {
    sentences.push_back("Where H2O wins: perplexity" +
                        (events > 0 ? " and long-gap names (" + names_counted + ")" : "") +
                        ": it holds old tokens the window has dropped.");
  } else if (verdict == Verdict::Better) {
    sentences.push_back("H2O wins on perplexity but not on names: " + names_counted + ".");
  } else if (more_names) {
    sentences.push_back("Where H2O wins: long-gap names only (" + names_counted +
                        "), old names the window has dropped" +
                        (verdict == Verdict::Worse ? "; the names and the perplexity disagree."
                                                   : "."));
  } else {
    sentences.push_back("H2O wins nowhere here" +
                        (events == 0 ? ", and there is no long-gap name to count"
                                     : ": " + names_counted) +
                        ".");
  }
  // The heads by the one definition of a kind (kKindSizes): how many are local, what their window
  // recovers; in the others what the heavy hitters add to it.
  const HeadKindCounts kinds = count_head_kinds(a.profiles);
  const std::size_t others = kinds.all - kinds.local;
  double local_window_share = 0, local_heavy_share = 0, other_window_share = 0,
         other_heavy_share = 0;
  for (const std::vector<HeadProfile>& layer : a.profiles) {
    for (const HeadProfile& p : layer) {
      if (p.kind == HeadKind::Local) {
        local_window_share += p.local_share / static_cast<double>(kinds.local);
        local_heavy_share += p.heavy_share / static_cast<double>(kinds.local);
      } else {
        other_window_share += p.local_share / static_cast<double>(others);
        other_heavy_share += p.heavy_share / static_cast<double>(others);
      }
    }
  }
  const std::string r = std::to_string(kKindSizes.recent), k = std::to_string(kKindSizes.heavy);
  std::string heads =
      std::to_string(kinds.local) + " of " + std::to_string(kinds.all) + " KV heads are local";
  if (kinds.local > 0) {
    heads += " (their last " + r + " tokens hold " + percent_of(local_window_share) +
             " of their attention, their " + k + " heavy hitters outside them " +
             percent_of(local_heavy_share) + ")";
  }
  std::string loses;
  if (verdict == Verdict::Worse) {
    loses = std::string("Where it loses: perplexity") +
            (fewer_names ? " and long-gap names" : "") + "; why: " + heads;
    if (kinds.local > 0) loses += ", and each slot a heavy hitter takes is one token fewer there";
  } else if (fewer_names) {
    loses = "Where it loses: long-gap names (H2O " + std::to_string(h2o_names) + ", the window " +
            std::to_string(window_names) + "); the heads: " + heads;
  } else {
    loses = "It loses nowhere here; the heads: " + heads;
  }
  const std::string largest = "the largest first-token share " +
                              fixed(kinds.largest_sink_ratio, 1) + "x uniform; a sink: 10x";
  loses += kinds.sink == 0
               ? "; none is a sink (" + largest +
                     "), so the first token, which large models fill with attention and H2O "
                     "keeps, counts for little here"
               : "; " + std::to_string(kinds.sink) +
                     (kinds.sink == 1 ? " is a sink (" : " are sinks (") + largest +
                     "), whose first token H2O keeps as a heavy hitter";
  const double old_share =
      a.old.held == 0 ? 0.0 : static_cast<double>(a.old.oldest) / static_cast<double>(a.old.held);
  const std::string old_count = std::to_string(a.old.oldest) + " of the " +
                                std::to_string(a.old.held) +
                                " heavy hitters it held at the end of the first story (" +
                                percent_of(old_share) + ") lie in its oldest tenth";
  loses += old_share > 0.1 ? "; and its sums grow with age: " + old_count + "."
                           : "; its sums show no age bias here: " + old_count + ".";
  sentences.push_back(loses);
  if (others > 0) {
    sentences.push_back("In the other " + std::to_string(others) + " heads the last " + r +
                        " tokens hold " + percent_of(other_window_share) + " and the " + k +
                        " heavy hitters " + percent_of(other_heavy_share) +
                        (other_heavy_share > 0.5 * other_window_share
                             ? ": those are the heads H2O serves."
                             : ": even there the window holds the most."));
  }
  // Rules per head: the targets by verdict, in one sentence (the numbers are the caller's table).
  if (!a.rules.empty()) {
    std::vector<std::string> better, worse, same;
    for (const RulesReading& rules : a.rules) {
      tally(*rules.fastgen, *rules.window, fixed(100.0 * rules.target, 0) + "%", better, worse,
            same);
    }
    std::string change = "What rules per head change (FastGen against the window at the bytes it "
                         "held): better beyond noise at " +
                         (better.empty() ? std::string("no target") : "T = " + listed(better));
    if (!worse.empty()) change += "; worse at T = " + listed(worse);
    if (!same.empty()) change += "; no different within noise at T = " + listed(same);
    sentences.push_back(change + ".");
  }
  std::string text;
  for (const std::string& sentence : sentences) {
    text += wrap_words(indent + sentence, width, indent) + "\n";
  }
  return text;
}

void write_course_answer_picture(const std::string& dir, const CourseAnswer& a,
                                 const std::string& command) {
  const auto share = [&](const SweepRun& run) {
    return 100.0 * static_cast<double>(run.stories_kv_bytes) /
           static_cast<double>(a.full->stories_kv_bytes);
  };
  std::string targets;
  for (const RulesReading& r : a.rules) {
    targets += (targets.empty() ? "" : ", ") + fixed(100.0 * r.target, 0) + "%";
  }
  LineChart chart{{"Rules per head: perplexity against KV bytes",
                   {"FastGen at targets T = " + targets + " beside the window at its bytes;",
                    "H2O and the window at " + std::to_string(a.percent) + "% of each story; " +
                        a.stories},
                   command},
                  "KV bytes at the end of a story (% of the full cache's)",
                  "perplexity",
                  false,
                  false,
                  {},
                  720,
                  440};
  Series fastgen{"FastGen", {}, {}, false, true}, window{"window", {}, {}, true, true};
  for (const RulesReading& r : a.rules) {
    fastgen.x.push_back(share(*r.fastgen));
    fastgen.y.push_back(r.fastgen->perplexity());
    window.x.push_back(share(*r.window));
    window.y.push_back(r.window->perplexity());
  }
  window.x.insert(window.x.begin(), share(*a.window));
  window.y.insert(window.y.begin(), a.window->perplexity());
  for (Series* line : {&fastgen, &window}) {  // left to right, whatever the targets' order
    std::vector<std::pair<double, double>> points;
    for (std::size_t i = 0; i < line->x.size(); ++i) points.emplace_back(line->x[i], line->y[i]);
    std::sort(points.begin(), points.end());
    for (std::size_t i = 0; i < points.size(); ++i) {
      line->x[i] = points[i].first, line->y[i] = points[i].second;
    }
  }
  chart.series = {fastgen, window};
  chart.series.push_back({"h2o", {share(*a.h2o)}, {a.h2o->perplexity()}, false, true});
  save_svg(dir + "/rules_per_head.svg", line_chart_svg(chart));
}

}  // namespace h2o
