// course_answer.cpp: the course's answer in one paragraph (course_answer.hpp).
#include "h2o/report/course_answer.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "h2o/base/format.hpp"
#include "h2o/report/svg.hpp"

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

// "H2O 19, the window 5" style counts of long-gap names.
std::string names(const SweepRun& run) { return std::to_string(run.names_correct); }

// Adds `label` to the list of its verdict against the window (the closing sentence).
void tally(const SweepRun& run, const SweepRun& window, const std::string& label,
           std::vector<std::string>& better, std::vector<std::string>& worse) {
  const Verdict verdict = verdict_of(difference(run, window));
  if (verdict == Verdict::Better) better.push_back(label);
  if (verdict == Verdict::Worse) worse.push_back(label);
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
  for (const SweepRun* run : {a.full, a.h2o, a.window, a.pyramid, a.adakv, a.h2o_cut,
                              a.window_cut}) {
    if (run == nullptr) throw std::invalid_argument("course_answer_text: a run is missing");
  }
  const auto against = [](const SweepRun& run, const SweepRun& window) {
    return verdict_against(run, window, "the window");
  };
  std::vector<std::string> sentences;
  sentences.push_back("On this model, over " + a.stories + " at a budget of " +
                      std::to_string(a.percent) + "%, H2O against a window of the same bytes: " +
                      against(*a.h2o, *a.window) + ".");
  std::string wins = "Where H2O wins: it holds old tokens the window has dropped";
  wins += a.h2o->name_events == 0
              ? " (no long-gap name to count here)"
              : " (of " + std::to_string(a.h2o->name_events) + " long-gap names H2O predicted " +
                    names(*a.h2o) + ", the window " + names(*a.window) + ", the full cache " +
                    names(*a.full) + ")";
  sentences.push_back(wins + "; and cutting a prompt of " + std::to_string(a.prompt) +
                      " tokens once, by all the scores it gathered, rather than token by token: " +
                      against(*a.h2o_cut, *a.window_cut) + ".");
  // The profile: how many heads of each kind, what the window recovers in the local heads, and
  // in the others what H2O's heavy hitters add to it.
  const HeadKindCounts kinds = count_head_kinds(a.profiles);
  const std::size_t others = kinds.all - kinds.local;
  double local_window_share = 0, other_window_share = 0, other_heavy_gain = 0;
  for (const std::vector<HeadProfile>& layer : a.profiles) {
    for (const HeadProfile& p : layer) {
      const double window = p.recovered_by(HeadRule::Window);
      if (p.kind == HeadKind::Local) {
        local_window_share += window / static_cast<double>(kinds.local);
      } else {
        other_window_share += window / static_cast<double>(others);
        other_heavy_gain += (p.recovered_by(HeadRule::HeavyWindow) - window) /
                            static_cast<double>(others);
      }
    }
  }
  std::string loses = "Where it loses: " + std::to_string(kinds.local) + " of " +
                      std::to_string(kinds.all) + " KV heads are local";
  if (kinds.local > 0) {
    loses += " (their last " + std::to_string(a.sizes.recent) + " tokens hold " +
             percent_of(local_window_share) +
             " of their attention), and each slot a heavy hitter takes is one token fewer in "
             "that window";
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
    sentences.push_back("In the other " + std::to_string(others) + " heads the window holds " +
                        percent_of(other_window_share) + " and H2O's heavy hitters add " +
                        fixed(100.0 * other_heavy_gain, 1) +
                        " points: those are the heads H2O serves.");
  }
  std::vector<std::string> better, worse;
  tally(*a.h2o, *a.window, "H2O", better, worse);
  tally(*a.pyramid, *a.window, "PyramidKV", better, worse);
  tally(*a.adakv, *a.window, "Ada-KV", better, worse);
  sentences.push_back("Budgets per layer (PyramidKV): " + against(*a.pyramid, *a.window) +
                      "; per KV head (Ada-KV): " + against(*a.adakv, *a.window) + ".");
  for (const RulesReading& r : a.rules) {
    const std::string label = "FastGen at T = " + fixed(100.0 * r.target, 0) + "%";
    sentences.push_back(
        "Rules per head (" + label + ", holding " +
        percent_of(static_cast<double>(r.fastgen->stories_kv_bytes) /
                   static_cast<double>(a.full->stories_kv_bytes)) +
        " of the full cache's bytes), against the window at those bytes: " +
        against(*r.fastgen, *r.window) + ".");
    tally(*r.fastgen, *r.window, label, better, worse);
  }
  sentences.push_back("So, beyond noise, better than the window: " + listed(better) +
                      "; worse: " + listed(worse) + "; the rest within noise.");
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
  LineChart chart{{"Every head its own cache: perplexity against KV bytes",
                   {"FastGen at targets T = " + targets + " beside the window at its bytes;",
                    "the other policies at " + std::to_string(a.percent) + "% of each story; " +
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
  for (const auto& [name, run] : {std::pair<const char*, const SweepRun*>{"h2o", a.h2o},
                                  {"pyramid", a.pyramid},
                                  {"adakv", a.adakv}}) {
    chart.series.push_back({name, {share(*run)}, {run->perplexity()}, false, true});
  }
  save_svg(dir + "/every_head_its_cache.svg", line_chart_svg(chart));
}

}  // namespace h2o
