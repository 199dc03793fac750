// compare_policies.cpp: every KV-cache policy the factory knows, side by side on a real model.
//
// It reads one text with stories260K (teacher forcing, as lesson 09 does) once with the full cache
// and then with every other policy at several budgets, and shows what each policy does:
//   a TABLE   perplexity and bits per byte (measure/bits_per_byte.hpp), change versus the full
//             cache, how often the most likely next token is the full cache's, name recall, the KV
//             bytes held at the end; the best policy at each budget is marked, it is weighed
//             against the runner-up, and the factory's subject (H2O) against its baseline (the
//             window) is stated as a perplexity difference with a 95% interval (bootstrap over
//             the stories, or over blocks of one story: measure/verdict.hpp; the table and these
//             lines: report/policy_comparison.hpp) - unless the full cache itself does not know
//             the text (bits_per_byte.hpp's rule): then one warning and no verdict; and the
//             context gain (how much the model uses its cache at all);
//   a PICTURE (--svg PATH) one panel per policy at one budget: x = decoding step, y = original
//             position, a cell is filled while that position is still in the cache of layer 0,
//             KV head 0. A recent window is a diagonal band, H2O's heavy hitters are horizontal
//             lines, attention sinks are lines along the bottom. stdout gets a text version: the
//             positions each policy still holds after the last step.
//
// The policies come from policy_factory.hpp (policy_kinds()), so a policy added there appears here
// without any change. Budgets are percentages of the text's length, turned into a token count per
// layer and KV head; the factory says how each policy spends it (settings_for_budget: heavy =
// recent = half, as in lesson 09), and every policy's own description is printed beside the
// numbers. The runs (measure/policy_sweep.hpp, teacher forcing) and the picture come from the
// library (measure/, report/), shared with the lessons.
// --kv-bits 8|4|2 stores every evicting policy's keys and values quantised (kv_cache.hpp) and adds
// a row "N-bit all": every token kept, quantised; the KV share column then gives each run's KV
// bytes as a share of the float32 full cache's. The reference stays the float32 full cache. As
// the same tokens then hold different bytes (a policy keeping scattered tokens pays for their key
// groups' scales: cache/window_bytes.hpp), no best is named: each policy is weighed against the
// window given the bytes it held (read_at_equal_bytes).
//
// --twice N / --secret N read it twice instead (measure/second_reading.hpp): each story's first N
// tokens twice in a row, or N random pieces (a secret) before each story (--secret-at P: after
// its first P tokens, away from the attention sinks) and again after it; for each policy and
// budget, how much of the second reading it predicts top-1 beside the first
// reading's, with a 95% interval, and what that shows (report/second_reading_report.hpp): whether
// the full cache copies at all, whether the window still reaches the first reading, where H2O's
// choice made before the passage came back loses.
//
//   bin/compare_policies                                  stories260K on data/story.txt, 10/20/50%
//   bin/compare_policies --budgets 5,10 --policies full,h2o --svg /tmp/policies.svg
//   bin/compare_policies --budgets 25,50 --policies h2o --kv-bits 4
//   bin/compare_policies --secret 32 --policies full,h2o,window
//   bin/compare_policies --secret 32 --secret-at 200 --policies full,h2o,window
//
// Dimension legend: N = tokens in the text (BOS included), S = N - 1 decoding steps (each step
// reads one token and predicts the next), V = vocabulary size.
#include <algorithm>
#include <deque>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/app/compare_policies_options.hpp"
#include "h2o/app/default_files.hpp"
#include "h2o/app/kv_format_options.hpp"
#include "h2o/app/program.hpp"
#include "h2o/app/reading_report.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/output_file.hpp"
#include "h2o/cache/budget.hpp"
#include "h2o/measure/bits_per_byte.hpp"
#include "h2o/measure/policy_sweep.hpp"
#include "h2o/measure/second_reading.hpp"
#include "h2o/model/checkpoint.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/policy/policy_factory.hpp"
#include "h2o/report/policy_comparison.hpp"
#include "h2o/report/second_reading_report.hpp"
#include "h2o/report/svg.hpp"
#include "h2o/report/sweep_report.hpp"
#include "h2o/report/verdict_reason.hpp"
#include "h2o/report/verdict_text.hpp"
#include "h2o/text/stories.hpp"
#include "h2o/text/tokenizer.hpp"

using h2o::fixed;
using h2o::pad_right;
using h2o::Position;

namespace {

// What layer 0's KV head 0 holds after every step of a run, noted by the decoder's step observer:
// kept as spans (report/svg.hpp), at most one per position, so memory grows with the text, not
// with its square. Layer 0 finishes each token before later layers see it, so this records the
// same lists whether the decoder reads the text token by token or in batches.
h2o::Decoder::StepObserver record_layer0(h2o::KeptSpanRecorder* recorder) {
  return [recorder](std::size_t layer, const h2o::LayerKVCache& cache) {
    if (layer == 0) recorder->after_step(cache.sorted_positions(0));
  };
}

// ------------------------------------------------------------------------------------------------
// The steps of compare_policies(), in order.

// Step 2: the text, as token ids (BOS first, as the model was trained). It may hold several
// stories (text/stories.hpp: blank lines separate paragraphs, a line holding only "<|story|>"
// stories): each is read on its own, whole, BOS first, and the measures add up over all of them.
// A story too long for the model is refused before encoding when its byte count proves it.
std::vector<std::vector<int>> read_text(const std::vector<std::string>& texts,
                                        const h2o::Tokenizer& tokenizer,
                                        const std::string& text_path, std::size_t seq_len) {
  std::vector<std::vector<int>> stories;
  for (const std::string& story : texts) {
    try {
      stories.push_back(tokenizer.encode_at_most(story, true, false, seq_len));
    } catch (const h2o::TooManyTokens& e) {
      throw std::runtime_error("story " + std::to_string(stories.size() + 1) + " of '" + text_path +
                               "' has " + e.count_text() + "; the model reads at most " +
                               std::to_string(seq_len));
    }
    if (stories.back().size() < 3) {
      throw std::runtime_error("story " + std::to_string(stories.size()) + " of '" + text_path +
                               "' is too short to measure");
    }
  }
  if (stories.empty()) throw std::runtime_error("the text in '" + text_path + "' is empty");
  return stories;
}

// The asked policies that evict, in --policies' order (the factory's: parse_policy_list), each
// with --scoring, --h2o-score, --start-area, --heavy-share and --kv-bits (what
// settings_for_budget does not set). FastGen and DuoAttention too, whose bytes are an outcome of
// their rules: they are weighed against the window at their bytes.
std::vector<h2o::SweepPolicy> evicting_asked(const h2o::ComparePoliciesOptions& options) {
  std::vector<h2o::SweepPolicy> evicting;
  for (const std::string& name : options.policies) {
    if (h2o::policy_kind(name).evicts) {
      evicting.push_back({name, name, options.scoring, options.kv_format});
    }
  }
  return evicting;
}

// Step 2's last check: a run the factory refuses measures nothing, and a picture without a panel
// shows nothing. When every policy asked for is refused at every budget, or at the picture's, that
// is an error now, before the runs, and no file is written.
void check_something_measured(const h2o::ComparePoliciesOptions& options,
                              const h2o::SweepText& text) {
  bool evicting = false, measured = false, pictured = false;
  std::string refused, picture_refused;  // the first refusal of each, for the message
  for (const std::string& name : options.policies) {
    if (!h2o::policy_kind(name).evicts) {  // the full cache, the reference: always read
      pictured = true;
      continue;
    }
    evicting = true;
    const h2o::SweepPolicy policy{name, name, options.scoring, options.kv_format};
    for (const int percent : options.percents) {
      const std::string refusal = h2o::sweep_refusal(text, policy, {percent, 0});
      measured = measured || refusal.empty();
      if (!refusal.empty() && refused.empty())
        refused = name + " at " + std::to_string(percent) + "%: " + refusal;
    }
    const std::string refusal = h2o::sweep_refusal(text, policy, {options.picture_percent, 0});
    pictured = pictured || refusal.empty();
    if (!refusal.empty() && picture_refused.empty()) picture_refused = name + ": " + refusal;
  }
  if (evicting && !measured) {
    throw std::runtime_error(
        "nothing to measure: every policy asked for is refused at every "
        "budget (" +
        refused + ")");
  }
  if (!options.svg_path.empty() && !pictured) {
    throw std::runtime_error("--svg: every policy asked for is refused at the picture's budget (" +
                             std::to_string(options.picture_percent) + "%, " + picture_refused +
                             "): the picture would be empty; choose another --picture-budget");
  }
}

// Everything the runs of Step 3 give the later steps.
struct Runs {
  h2o::PolicySweep sweep;
  std::optional<h2o::SweepRun> full_quantised;  // --kv-bits: every token kept, in that many bits
  std::vector<h2o::SweepRun> picture_only;      // when --picture-budget is not one of --budgets
  // The window at the bytes of each FastGen run (and, quantised, of every other policy's run)
  std::deque<h2o::SweepRun> equal_bytes;
  std::map<std::string, std::vector<h2o::KeptSpan>> spans;  // policy -> what layer 0 kept
  h2o::PolicyComparison comparison;                         // the table's view of the runs
  std::vector<const h2o::SweepRun*> picture_runs;           // the runs at the picture's budget
};

// Step 3: the runs (measure/policy_sweep.hpp). The full cache is the reference for "vs full" and
// agreement; it is run once, whatever the budget. Runs at the picture's budget record what layer
// 0 keeps, in the first story (only when a picture is drawn: it needs the step-by-step record).
std::unique_ptr<Runs> run_policies(std::shared_ptr<const h2o::DecoderWeights> weights,
                                   const h2o::SweepText& text,
                                   const h2o::ComparePoliciesOptions& options) {
  auto runs = std::make_unique<Runs>();
  const std::vector<int>& percents = options.percents;
  const int picture_percent = options.picture_percent;
  const h2o::KvFormat& format = options.kv_format;  // --kv-bits: the full cache's runs have it too
  const std::vector<h2o::SweepPolicy> evicting = evicting_asked(options);
  std::map<std::string, h2o::KeptSpanRecorder> recorders;
  h2o::SweepOptions recording;
  if (!options.svg_path.empty()) {
    recording.story_observer = [&](const h2o::SweepRun& run, std::size_t story) {
      if (story != 0 || run.budget.percent != picture_percent) return h2o::Decoder::StepObserver();
      return record_layer0(&recorders[run.policy]);
    };
  }
  runs->sweep = h2o::sweep_policies(weights, text, evicting, percents, recording);
  const h2o::SweepRun& full = runs->sweep.full;
  if (format.quantised()) {
    const std::string& name = h2o::reference_policy().name;
    runs->full_quantised = h2o::read_stories(weights, text, {name, name, {}, format}, {}, &full);
  }
  const std::size_t n = text.stories.front().size();
  h2o::PolicyComparison& comparison = runs->comparison;
  comparison.full = &full;
  comparison.full_quantised = runs->full_quantised ? &*runs->full_quantised : nullptr;
  comparison.quantised_bits = format.quantised() ? format.bits : 0;
  comparison.no_verdict = h2o::beyond_model(full.bits_per_byte());
  for (std::size_t b = 0; b < percents.size(); ++b) {
    h2o::BudgetRuns budget{percents[b], h2o::tokens_for_percent(n, percents[b]), {}, {}, {}};
    for (const std::vector<h2o::SweepRun>& by_budget : runs->sweep.runs) {
      budget.runs.push_back(&by_budget[b]);  // the factory's order
      const h2o::SweepRun& run = by_budget[b];
      const std::string& window = h2o::baseline_policy().name;
      if (!run.refused.empty()) continue;
      if (!run.kind->sized_by_budget) {
        runs->equal_bytes.push_back(h2o::read_at_equal_bytes(
            weights, text, {window, window, options.scoring, format}, run, &full));
        budget.equal_bytes.emplace_back(&run, &runs->equal_bytes.back());
      } else if (format.quantised() && run.policy != window && run.evicted > 0) {
        // Quantised, the same tokens are not the same bytes: the window gets the bytes run held.
        runs->equal_bytes.push_back(h2o::read_at_equal_bytes(
            weights, text, {window, window, options.scoring, format}, run, &full));
        budget.at_bytes.emplace_back(&run, &runs->equal_bytes.back());
      }
    }
    if (percents[b] == picture_percent) runs->picture_runs = budget.runs;
    comparison.budgets.push_back(std::move(budget));
  }
  if (std::find(percents.begin(), percents.end(), picture_percent) == percents.end()) {
    const h2o::SweepText first_story{
        {text.stories.front()}, {text.bytes.front()}, text.names, text.name_gap};
    for (const h2o::SweepPolicy& policy : evicting) {
      runs->picture_only.push_back(
          h2o::read_stories(weights, first_story, policy, {picture_percent, 0}, &full, recording));
    }
    for (const h2o::SweepRun& run : runs->picture_only) runs->picture_runs.push_back(&run);
  }
  for (auto& [policy, recorder] : recorders) runs->spans[policy] = recorder.finish();
  return runs;
}

// " (but FastGen's: its rules decide, ...)" when policies whose bytes are an outcome of their
// rules (FastGen, DuoAttention) were asked for, in the factory's order; "" when none was.
std::string own_bytes_note(const std::vector<std::string>& policies) {
  std::vector<std::string> names;
  for (const std::string& name : policies) {
    const h2o::PolicyKind& kind = h2o::policy_kind(name);
    if (!kind.sized_by_budget) names.push_back(kind.prose_name + "'s");
  }
  if (names.empty()) return "";
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i) {
    list += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  }
  return " (but " + list +
         (names.size() == 1 ? ": its rules decide, and it is weighed"
                            : ": their rules decide, and each is weighed") +
         " against the window at the bytes it held)";
}

// Step 4: what was run, and how each policy spends each budget, in its own words.
void print_setup(const h2o::ComparePoliciesOptions& options, const h2o::ModelFiles& files,
                 const h2o::ModelConfig& config, const h2o::SweepText& text, const Runs& runs) {
  const std::vector<std::vector<int>>& stories = text.stories;
  const std::string& text_path = options.text_path;
  const h2o::SweepRun& full = runs.sweep.full;
  const std::size_t n = stories.front().size(), policies = options.policies.size();
  std::size_t text_tokens = 0;  // all stories
  for (const std::vector<int>& story : stories) text_tokens += story.size();
  const std::string text_name =
      h2o::printable(std::filesystem::path(text_path).filename().string());
  std::cout << "compare_policies: " << policies << (policies == 1 ? " policy on " : " policies on ")
            << h2o::printable(std::filesystem::path(files.model).filename().string()) << " reading "
            << text_name << "\n"
            << "model: " << config.describe() << "\n"
            << h2o::reading_summary(text_name, stories.size(), stories.size(), 0, text_tokens,
                                    full.name_events, text.name_gap)
            << "\n"
            << h2o::name_use_notes(text.names, stories, "  ") << "text: "
            << (stories.size() == 1 ? "" : std::to_string(stories.size()) + " stories; ")
            << "story 1: " << n << " tokens (BOS included); " << full.steps
            << " predictions per run (teacher forcing),\n"
            << full.name_events << " of them of a name last seen more than " << text.name_gap
            << " tokens back (name recall counts those)\n\n";
  // How settings_for_budget splits each budget (policy_factory.hpp), in one sentence.
  const int heavy_percent = options.scoring.heavy_percent;
  const std::string split = heavy_percent == h2o::kDefaultHeavyPercent
                                ? "heavy = recent = half of the budget"
                                : "heavy = " + std::to_string(heavy_percent) +
                                      "% of the budget (rounded down) and recent = the rest";
  std::cout << h2o::wrap_words(
                   "Budgets, in tokens per layer and KV head. Each policy gets " + split +
                       " (sinks takes its " + std::to_string(h2o::PolicySettings{}.sinks) +
                       " sinks out of the heavy part) and the factory's defaults "
                       "otherwise, so every cache holds the same number of tokens" +
                       own_bytes_note(options.policies) + ". In each policy's own words:",
                   100, "")
            << "\n";
  const h2o::KvFormat& format = options.kv_format;
  if (format.quantised()) {
    std::cout << "KV storage of the evicting policies and of the full cache at '" << format.bits
              << "-bit all': " << h2o::describe_kv_format(format)
              << "\n(keys per channel, values per token, the newest group's tokens in float32;\n"
                 "the reference keeps float32).\n";
  }
  std::size_t width = 9;  // the names' column, widened for "pyramid:knorm"
  for (const std::string& name : options.policies) width = std::max(width, name.size() + 1);
  for (const h2o::BudgetRuns& budget : runs.comparison.budgets) {
    const std::string head = pad_right(
        "  " + std::to_string(budget.percent) + "% = " + std::to_string(budget.tokens), 14);
    const std::string indent(head.size(), ' ');
    bool first = true;
    for (const h2o::SweepRun* run : budget.runs) {
      const std::string line =
          (first ? head : indent) + pad_right(run->policy, width) +
          (run->refused.empty() ? run->description : "refused: " + run->refused);
      std::cout << h2o::wrap_words(line, 100, indent + std::string(width, ' ')) << "\n";
      first = false;
    }
    if (first) std::cout << head << "(only the full cache was asked for)\n";
  }
}

// Step 5: the table (report/policy_comparison.hpp), within a budget from the lowest perplexity
// (best) up; what the full cache recalls of the long-gap names (the policies' names say nothing
// when it recalls none); the lines that weigh each budget's runs; how much the model uses its
// cache at all.
void print_results(const h2o::PolicyComparison& comparison, std::size_t name_gap,
                   double context_gain) {
  std::cout << "\nResults: perplexity (lower = better), bits per byte (the same, per byte of "
               "text), the change of\nperplexity versus the full cache, how often the most likely "
               "next token equals the full cache's\n('agrees'), name recall, and the KV bytes held "
               "at the end (all layers). 'kept' = tokens layer 0\nholds per KV head after the "
               "last step.\n"
            << (comparison.quantised_bits != 0
                    ? "KV bytes count codes, scales and zeros exactly; KV share = "
                      "their share of the full float32\ncache's (in place of "
                      "bits per byte).\n"
                    : "")
            << "\n"
            << h2o::comparison_table(comparison);
  const std::vector<std::string> verdicts = h2o::budget_verdicts(comparison);
  const h2o::SweepRun& full = *comparison.full;
  std::string names = comparison.no_verdict  // no comparison at all: the count alone
                          ? h2o::full_cache_count(full.names_correct, full.name_events)
                          : h2o::full_cache_names(full.names_correct, full.name_events, name_gap);
  names[0] = 'T';  // a sentence of its own
  std::cout << "\n" << h2o::wrap_words(names + ".", 100, "") << "\n";
  if (comparison.no_verdict) {
    std::cout << "\n" << h2o::beyond_model_warning(comparison.full->bits_per_byte());
  } else if (!verdicts.empty()) {
    std::cout << "\nAt each budget:\n";
    for (const std::string& line : verdicts) std::cout << line << "\n";
  }
  std::cout << "\n" << h2o::wrap_words(h2o::context_gain_sentence(context_gain), 100, "") << "\n";
}

// The runs Steps 6 and 7 show, in the order of --policies: the full cache, or each policy's run at
// the picture's budget.
std::vector<const h2o::SweepRun*> picture_panels(const h2o::ComparePoliciesOptions& options,
                                                 const Runs& runs) {
  std::vector<const h2o::SweepRun*> panels;
  for (const std::string& name : options.policies) {
    if (name == runs.sweep.full.policy) {
      panels.push_back(&runs.sweep.full);
      continue;
    }
    for (const h2o::SweepRun* run : runs.picture_runs) {
      if (run->policy == name && run->refused.empty()) panels.push_back(run);
    }
  }
  return panels;
}

// Step 6: the text picture: which positions each policy still holds after the last step.
void print_kept(const std::vector<const h2o::SweepRun*>& panels, int picture_percent,
                std::size_t picture_budget, std::size_t steps) {
  const std::size_t per_char = (steps + 79) / 80;
  std::cout << "\nKept after the last step at " << picture_percent << "% = " << picture_budget
            << " tokens (layer 0, KV head 0; positions 0-" << steps - 1 << " left to right,\n"
            << "one character = " << per_char << (per_char == 1 ? " position" : " positions")
            << ": '#' all kept, '+' some, '.' none):\n";
  std::size_t width = 8;  // the names' column: "pyramid:knorm" and a space at most, so 97 columns
  for (const h2o::SweepRun* run : panels) width = std::max(width, run->policy.size() + 1);
  const std::string indent(2 + width, ' ');
  for (const h2o::SweepRun* run : panels) {
    const std::vector<Position>& last = run->kept_at_end.front();
    std::cout << "  " << pad_right(run->policy, width) << h2o::kept_strip(last, steps, per_char)
              << "\n";
    if (run->tokens > 0) {
      std::cout << h2o::wrap_words(indent + h2o::position_ranges(last), 100, indent) << "\n";
    }
  }
}

// Step 7: the picture itself (report/svg.hpp draws it): one panel per policy, x = step, y = the
// original position, filled while layer 0's KV head 0 holds it.
h2o::OccupancyGrid occupancy_grid(const std::vector<const h2o::SweepRun*>& panels, const Runs& runs,
                                  const std::string& about, std::size_t steps) {
  const double full_perplexity = runs.sweep.full.perplexity();
  h2o::OccupancyGrid grid;
  grid.text.title = "Which positions each policy keeps in the KV cache";
  grid.text.subtitle = {about,
                        "layer 0, KV head 0; one cell = one decoding step x one original position"};
  grid.steps = steps;
  for (const h2o::SweepRun* run : panels) {
    const double perplexity = run->perplexity();
    std::string subtitle = "perplexity " + fixed(perplexity, 3);
    if (run->tokens > 0) subtitle += " (" + h2o::change_text(perplexity, full_perplexity) + ")";
    subtitle += ", " + std::to_string(run->kept) + " kept at the end";
    std::vector<h2o::KeptSpan> kept;
    if (const auto it = runs.spans.find(run->policy); it != runs.spans.end()) kept = it->second;
    if (run->tokens == 0) {  // the full cache holds every position from the step that reads it
      for (std::size_t p = 0; p < steps; ++p) kept.push_back({static_cast<Position>(p), p, steps});
    }
    grid.panels.push_back({run->policy, subtitle, std::move(kept)});
  }
  return grid;
}

// ------------------------------------------------------------------------------------------------
// --twice N and --secret N: read it twice (measure/second_reading.hpp), instead of Steps 3 to 7.

// What was built and run, the table and what it shows (report/second_reading_report.hpp).
int read_it_twice(const h2o::ComparePoliciesOptions& options, const h2o::ModelFiles& files,
                  std::shared_ptr<const h2o::DecoderWeights> weights,
                  const h2o::Tokenizer& tokenizer, const std::vector<std::string>& stories) {
  const h2o::ModelConfig& config = weights->config;
  const std::vector<h2o::TwoReadings> readings = h2o::two_readings(
      options.read_twice, stories, tokenizer, config.seq_len,
      h2o::printable(std::filesystem::path(options.text_path).filename().string()));
  std::vector<std::vector<int>> tokens;
  for (const h2o::TwoReadings& reading : readings) tokens.push_back(reading.tokens);
  const h2o::SweepText text = h2o::sweep_text(tokenizer, std::move(tokens), {}, options.name_gap);
  const std::vector<h2o::SweepPolicy> evicting = evicting_asked(options);
  const h2o::PolicySweep sweep = h2o::sweep_policies(weights, text, evicting, options.percents);

  h2o::SecondReadingResults results;
  results.full = h2o::second_reading(sweep.full, readings);
  results.percents = options.percents;
  const h2o::TwoReadings& first = readings.front();
  results.text_tokens = first.tokens.size();
  results.distance = first.distance();
  for (int percent : options.percents) {
    results.budget_tokens.push_back(h2o::tokens_for_percent(first.tokens.size(), percent));
  }
  for (const std::vector<h2o::SweepRun>& by_budget : sweep.runs) {
    results.runs.emplace_back();
    for (const h2o::SweepRun& run : by_budget) {
      results.runs.back().push_back(h2o::second_reading(run, readings));
    }
  }

  // What was run.
  const bool twice = options.read_twice.twice > 0;
  const std::size_t n = first.passage, policies = options.policies.size();
  const std::string text_name =
      h2o::printable(std::filesystem::path(options.text_path).filename().string());
  std::cout << "compare_policies: " << policies << (policies == 1 ? " policy on " : " policies on ")
            << h2o::printable(std::filesystem::path(files.model).filename().string()) << " reading "
            << text_name << (twice ? ", read twice" : " with a secret") << "\n"
            << "model: " << config.describe() << "\n";
  const std::string stories_read =
      readings.size() == 1 ? "the story"
                           : "each of its " + std::to_string(readings.size()) + " stories";
  const std::string layout =
      twice ? "text: the first " + std::to_string(n) + " tokens of " + stories_read +
                  ", read twice in a row (story 1: BOS + " + std::to_string(n) + " + " +
                  std::to_string(n) + " = " + std::to_string(first.tokens.size()) + " tokens)."
            : "text: a secret of " + std::to_string(n) + " random pieces of the vocabulary " +
                  "(distinct, seeded: the same on every run) " +
                  options.read_twice.placement(stories_read) + " and again after it (story 1: " +
                  "BOS + " + (first.first > 1 ? std::to_string(first.first - 1) + " + " : "") +
                  std::to_string(n) + " + " + std::to_string(first.second - first.first - n) +
                  " + " + std::to_string(n) + " = " + std::to_string(first.tokens.size()) +
                  " tokens).";
  std::cout << h2o::wrap_words(layout, 100, "  ") << "\n"
            << h2o::wrap_words(
                   "The second reading starts " + std::to_string(first.distance()) +
                       " tokens after the first; " + std::to_string(results.full.predictions) +
                       " predictions per reading" +
                       (readings.size() == 1 ? "" : " over all stories") +
                       " (its first piece is not counted: nothing says the passage starts).",
                   100, "  ")
            << "\n";
  if (!twice) {
    // Each piece as the tokenizer holds it, a space shown as SentencePiece shows it, so that the
    // lines break between pieces only.
    std::string pieces = "The secret of story 1, piece by piece (\u2581 = a space):";
    for (std::size_t k = 0; k < n; ++k) {
      std::string piece = h2o::printable(tokenizer.piece(first.tokens[first.first + k]));
      for (std::size_t at = piece.find(' '); at != std::string::npos; at = piece.find(' ', at)) {
        piece.replace(at, 1, "\u2581");
      }
      pieces += " " + piece;
    }
    std::cout << h2o::wrap_words(pieces, 100, "  ") << "\n";
  }
  std::string budgets =
      "Budgets, in tokens per layer and KV head of story 1's reading (each "
      "policy splits them as in the default run):";
  for (std::size_t b = 0; b < options.percents.size(); ++b) {
    budgets += (b == 0 ? " " : ", ") + std::to_string(options.percents[b]) +
               "% = " + std::to_string(results.budget_tokens[b]);
  }
  std::cout << h2o::wrap_words(budgets + ".", 100, "  ") << "\n";

  // The table and what it shows.
  const h2o::BootstrapMean& second = results.full.second;
  const std::string units =
      h2o::units_name(std::vector<std::vector<double>>(readings.size()), second.units);
  std::cout << "\n"
            << h2o::wrap_words(
                   "Results: the share of each reading each policy predicts top-1 (its most "
                   "likely next token is the text's), the 95% interval of the second reading's "
                   "share (bootstrap over " +
                       units +
                       "; \"-\": too few for one), and the "
                       "second reading's share against the full cache's, in points. 'kept' = "
                       "tokens layer 0 holds per KV head after the last step; 'by rule': a "
                       "policy whose rules, not the budget, decide what it holds.",
                   100, "")
            << "\n\n"
            << h2o::second_reading_table(results) << "\n";
  for (const std::string& line : h2o::second_reading_findings(results)) {
    std::cout << line << "\n";
  }
  return 0;
}

int compare_policies(int argc, char** argv) {
  // Step 1: options, all checked before any file is read (app/compare_policies_options.hpp).
  h2o::ArgParser args = h2o::compare_policies_arguments();
  args.parse(argc, argv);
  const h2o::ComparePoliciesOptions options = h2o::compare_policies_options(args);
  // The picture's file is checked now (base/output_file.hpp), so that a path that cannot be
  // written fails before the runs; it replaces an existing file only once it is complete.
  std::optional<h2o::OutputFile> picture;
  if (!options.svg_path.empty()) picture.emplace(options.svg_path, "the picture");

  // Step 2: the model and the text.
  const h2o::ModelFiles files = h2o::model_files_from_options(args);
  auto weights = std::make_shared<const h2o::DecoderWeights>(h2o::load_checkpoint(files.model));
  const h2o::ModelConfig& config = weights->config;
  const h2o::Tokenizer tokenizer = h2o::Tokenizer::load(files.tokenizer, config.vocab_size);
  const h2o::KvFormat& format = options.kv_format;
  if (format.quantised()) h2o::check_kv_group(format.group, config.head_dim());
  const std::vector<std::string> stories = h2o::read_stories_option(args);
  if (options.read_twice.asked()) {
    return read_it_twice(options, files, weights, tokenizer, stories);
  }
  const std::vector<std::string> names = options.names_path.empty()
                                             ? h2o::default_names(stories)
                                             : h2o::read_names(options.names_path);
  const h2o::SweepText text =
      h2o::sweep_text(tokenizer, read_text(stories, tokenizer, options.text_path, config.seq_len),
                      h2o::names_as_tokens(tokenizer, names), options.name_gap);
  const std::size_t n = text.stories.front().size(), steps = n - 1;  // the pictures: story 1
  check_something_measured(options, text);

  // Steps 3-5: the runs, what was run, the results.
  const std::unique_ptr<Runs> runs = run_policies(weights, text, options);
  print_setup(options, files, config, text, *runs);
  print_results(runs->comparison, text.name_gap,
                h2o::context_gain(weights, text, runs->sweep.full));

  // Steps 6 and 7: what each policy keeps at the picture's budget, as text and as a picture.
  const std::vector<const h2o::SweepRun*> panels = picture_panels(options, *runs);
  const std::size_t picture_budget = h2o::tokens_for_percent(n, options.picture_percent);
  print_kept(panels, options.picture_percent, picture_budget, steps);
  if (picture) {
    const std::string about =
        "budget " + std::to_string(picture_budget) + " tokens per layer and KV head (" +
        std::to_string(options.picture_percent) + "% of the text's " + std::to_string(n) +
        " tokens); " + std::filesystem::path(files.model).stem().string() + " reading " +
        std::filesystem::path(options.text_path).filename().string();
    h2o::OccupancyGrid grid = occupancy_grid(panels, *runs, about, steps);
    grid.text.command = h2o::command_line(argc, argv);
    picture->stream() << h2o::occupancy_svg(grid);
    picture->commit();
    std::cout << "\nPicture (" << panels.size() << " panels) written to " << options.svg_path
              << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return h2o::run_program(argc, argv, compare_policies); }
