// compare_policies.cpp: every KV-cache policy the factory knows, side by side on a real model.
//
// It reads one text with stories260K (teacher forcing, as lesson 09 does) once with the full cache
// and then with every other policy at several budgets, and shows what each policy does:
//   a TABLE   perplexity and bits per byte (measure/bits_per_byte.hpp), change versus the full
//             cache, how often the most likely next token is the full cache's, name recall, the KV
//             bytes held at the end; the best policy at each budget is marked, it is weighed
//             against the runner-up, and H2O against the window is stated as a perplexity
//             difference with a 95% interval (bootstrap over the stories, or over blocks of one
//             story: measure/verdict.hpp) - unless the full cache itself does not know the text
//             (bits_per_byte.hpp's rule): then one warning and no verdict; and the context gain
//             (how much the model uses its cache at all);
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
// bytes as a share of the float32 full cache's. The reference stays the float32 full cache.
//
//   bin/compare_policies                                  stories260K on data/story.txt, 10/20/50%
//   bin/compare_policies --budgets 5,10 --policies full,h2o --svg /tmp/policies.svg
//   bin/compare_policies --budgets 25,50 --policies h2o --kv-bits 4
//
// Dimension legend: N = tokens in the text (BOS included), S = N - 1 decoding steps (each step
// reads one token and predicts the next), V = vocabulary size.
#include <algorithm>
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
#include "h2o/app/reading_report.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/output_file.hpp"
#include "h2o/cache/budget.hpp"
#include "h2o/measure/bits_per_byte.hpp"
#include "h2o/measure/policy_sweep.hpp"
#include "h2o/model/checkpoint.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/policy/policy_factory.hpp"
#include "h2o/report/svg.hpp"
#include "h2o/report/table.hpp"
#include "h2o/text/stories.hpp"
#include "h2o/text/tokenizer.hpp"

using h2o::fixed;
using h2o::pad_left;
using h2o::pad_right;
using h2o::Position;

namespace {

// A policy that lets another decide and, after each of its calls for layer 0 (the first cache it
// meets), notes the positions KV head 0 holds: what that cache holds after every step, kept as
// spans (report/svg.hpp), at most one per position, so memory grows with the text, not with its
// square. Layer 0 finishes each token before later layers see it, so this records the same lists
// whether the decoder reads the text token by token or in batches (and lets it use batches).
class RecordingPolicy final : public h2o::CachePolicy {
 public:
  RecordingPolicy(std::unique_ptr<h2o::CachePolicy> inner, h2o::KeptSpanRecorder* recorder)
      : inner_(std::move(inner)), recorder_(recorder) {}
  std::string name() const override { return inner_->name(); }
  std::string describe() const override { return inner_->describe(); }
  std::size_t max_tokens(std::size_t max_positions) const override {
    return inner_->max_tokens(max_positions);
  }
  void after_attention(h2o::LayerKVCache& cache, const h2o::StepAttention& attention) override {
    inner_->after_attention(cache, attention);
    if (layer0_ == nullptr) layer0_ = &cache;
    if (&cache == layer0_) recorder_->after_step(cache.sorted_positions(0));
  }
  void observe(h2o::LayerKVCache& cache, const h2o::StepAttention& attention) override {
    inner_->observe(cache, attention);
  }
  void choose_victims(h2o::LayerKVCache& cache, std::size_t* victims) override {
    inner_->choose_victims(cache, victims);
  }
  bool decisions_independent_of_layer_order() const override {
    return inner_->decisions_independent_of_layer_order();
  }

 private:
  std::unique_ptr<h2o::CachePolicy> inner_;
  h2o::KeptSpanRecorder* recorder_;
  const h2o::LayerKVCache* layer0_ = nullptr;
};

// ------------------------------------------------------------------------------------------------
// Text output

// "+4.2%" (change of a perplexity versus the full cache's).
std::string change_text(double perplexity, double full_perplexity) {
  const double change = 100.0 * (perplexity / full_perplexity - 1.0);
  const std::string text = fixed(change, 1);
  return (text[0] == '-' ? "" : "+") + text + "%";
}

// Sorted positions as ranges: "0-2 5 17 345-382".
std::string ranges(const std::vector<Position>& sorted) {
  std::string out;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    out += (out.empty() ? "" : " ") + std::to_string(sorted[i]);
    if (j > i) out += "-" + std::to_string(sorted[j]);
    i = j + 1;
  }
  return out.empty() ? "(none)" : out;
}

// One character per `per_char` positions: '#' all of them kept, '+' some, '.' none.
std::string strip(const std::vector<Position>& sorted, std::size_t steps, std::size_t per_char) {
  std::vector<std::size_t> kept_in_bucket((steps + per_char - 1) / per_char, 0);
  for (Position p : sorted) ++kept_in_bucket[static_cast<std::size_t>(p) / per_char];
  std::string out;
  for (std::size_t b = 0; b < kept_in_bucket.size(); ++b) {
    const std::size_t size = std::min(per_char, steps - b * per_char);
    out += kept_in_bucket[b] == size ? '#' : kept_in_bucket[b] > 0 ? '+' : '.';
  }
  return out;
}

int compare_policies(int argc, char** argv) {
  // Step 1: options, all checked before any file is read (app/compare_policies_options.hpp).
  h2o::ArgParser args = h2o::compare_policies_arguments();
  if (!args.parse(argc, argv)) return 0;
  const h2o::ComparePoliciesOptions options = h2o::compare_policies_options(args);
  const std::vector<int>& percents = options.percents;
  const std::vector<std::string>& policies = options.policies;
  const int picture_percent = options.picture_percent;
  const std::string& svg_path = options.svg_path;
  const std::string& text_path = options.text_path;
  // The picture's file is checked now (base/output_file.hpp), so that a path that cannot be
  // written fails before the runs; it replaces an existing file only once it is complete.
  std::optional<h2o::OutputFile> picture;
  if (!svg_path.empty()) picture.emplace(svg_path, "the picture");

  // Step 2: the model and the text, as token ids (BOS first, as the model was trained).
  const h2o::ModelFiles files = h2o::model_files_from_options(args);
  auto weights = std::make_shared<const h2o::DecoderWeights>(h2o::load_checkpoint(files.model));
  const h2o::ModelConfig& config = weights->config;
  const h2o::Tokenizer tokenizer = h2o::Tokenizer::load(files.tokenizer, config.vocab_size);
  // The text may hold several stories (text/stories.hpp: blank lines separate paragraphs, a line
  // holding only "<|story|>" stories): each is read on its own, whole, BOS first, and the measures
  // add up over all of them. A story too long for the model is refused before encoding when its
  // byte count proves it.
  std::vector<std::vector<int>> stories;
  for (const std::string& story : h2o::read_stories_option(args)) {
    try {
      stories.push_back(tokenizer.encode_at_most(story, true, false, config.seq_len));
    } catch (const h2o::TooManyTokens& e) {
      throw std::runtime_error("story " + std::to_string(stories.size() + 1) + " of '" + text_path +
                               "' has " + e.count_text() + "; the model reads at most " +
                               std::to_string(config.seq_len));
    }
    if (stories.back().size() < 3) {
      throw std::runtime_error("story " + std::to_string(stories.size()) + " of '" + text_path +
                               "' is too short to measure");
    }
  }
  if (stories.empty()) throw std::runtime_error("the text in '" + text_path + "' is empty");
  const std::size_t n = stories.front().size(), steps = n - 1;  // the pictures: the first story
  std::size_t text_tokens = 0;                                  // all stories
  for (const std::vector<int>& story : stories) text_tokens += story.size();
  const std::size_t gap = options.name_gap;
  const h2o::SweepText text =
      h2o::sweep_text(tokenizer, stories,
                      h2o::names_as_tokens(tokenizer, h2o::read_names(options.names_path)), gap);
  const h2o::NameTokens& names = text.names;
  const std::size_t picture_budget = h2o::tokens_for_percent(n, picture_percent);

  // Step 3: the runs (measure/policy_sweep.hpp). The full cache is the reference for "vs full"
  // and agreement; it is run once, whatever the budget. Runs at the picture's budget record what
  // layer 0 keeps, in the first story.
  const bool picture_in_table =
      std::find(percents.begin(), percents.end(), picture_percent) != percents.end();
  // What settings_for_budget does not set: --scoring, --h2o-score, --start-area, --heavy-share;
  // and --kv-bits.
  const h2o::KvFormat& format = options.kv_format;
  std::vector<h2o::SweepPolicy> evicting;
  for (const h2o::SweepPolicy& policy : h2o::evicting_policies(options.scoring, format)) {
    if (std::find(policies.begin(), policies.end(), policy.policy) != policies.end()) {
      evicting.push_back(policy);
    }
  }
  std::map<std::string, h2o::KeptSpanRecorder> recorders;  // policy -> what layer 0 kept
  h2o::SweepOptions recording;
  if (!svg_path.empty()) {  // only the picture needs the step-by-step record
    recording.first_story_policy = [&](std::unique_ptr<h2o::CachePolicy> policy,
                                       const h2o::SweepRun& run) {
      if (run.budget.percent != picture_percent) return policy;
      return std::unique_ptr<h2o::CachePolicy>(
          std::make_unique<RecordingPolicy>(std::move(policy), &recorders[run.policy]));
    };
  }
  const h2o::PolicySweep sweep = h2o::sweep_policies(weights, text, evicting, percents, recording);
  const h2o::SweepRun& full = sweep.full;
  std::optional<h2o::SweepRun> full_quantised;  // --kv-bits: every token kept, in that many bits
  if (format.quantised()) {
    const std::string& name = h2o::reference_policy().name;
    full_quantised = h2o::read_stories(weights, text, {name, name, {}, format}, {}, &full);
  }
  std::map<int, std::vector<const h2o::SweepRun*>> by_percent;  // percent -> runs, factory order
  for (std::size_t b = 0; b < percents.size(); ++b) {
    for (const std::vector<h2o::SweepRun>& by_budget : sweep.runs) {
      by_percent[percents[b]].push_back(&by_budget[b]);
    }
  }
  std::vector<h2o::SweepRun> picture_only;  // when --picture-budget is not one of --budgets
  if (!picture_in_table) {
    const h2o::SweepText first_story{{stories.front()}, {text.bytes.front()}, names, gap};
    for (const h2o::SweepPolicy& policy : evicting) {
      picture_only.push_back(
          h2o::read_stories(weights, first_story, policy, {picture_percent, 0}, &full, recording));
    }
  }
  std::vector<const h2o::SweepRun*> picture_runs = by_percent[picture_percent];
  for (const h2o::SweepRun& run : picture_only) picture_runs.push_back(&run);
  std::map<std::string, std::vector<h2o::KeptSpan>> spans;  // policy -> its spans
  for (auto& [policy, recorder] : recorders) spans[policy] = recorder.finish();
  const double full_perplexity = full.perplexity();
  // A text the model does not know: the table shows what was measured, but names no best policy.
  const bool no_verdict = h2o::beyond_model(full.bits_per_byte());
  const double context_gain = h2o::context_gain(weights, text, full);

  // Step 4: what was run, and how each policy spends each budget.
  std::cout << "compare_policies: " << policies.size()
            << (policies.size() == 1 ? " policy on " : " policies on ")
            << h2o::printable(std::filesystem::path(files.model).filename().string()) << " reading "
            << h2o::printable(std::filesystem::path(text_path).filename().string()) << "\n"
            << "model: " << config.describe() << "\n"
            << h2o::reading_summary(
                   h2o::printable(std::filesystem::path(text_path).filename().string()),
                   stories.size(), stories.size(), 0, text_tokens, full.name_events, gap)
            << "\n"
            << h2o::name_use_notes(names, stories, "  ") << "text: "
            << (stories.size() == 1 ? "" : std::to_string(stories.size()) + " stories; ")
            << "story 1: " << n << " tokens (BOS included); " << full.steps
            << " predictions per run (teacher forcing),\n"
            << full.name_events << " of them of a name last seen more than " << gap
            << " tokens back (name recall counts those)\n\n";
  // How settings_for_budget splits each budget (policy_factory.hpp), in one sentence.
  const int heavy_percent = options.scoring.heavy_percent;
  const std::string split =
      heavy_percent == h2o::kDefaultHeavyPercent
          ? "heavy = recent = half of the budget"
          : "heavy = " + std::to_string(heavy_percent) +
                "% of the budget (rounded down) and recent = the rest";
  std::cout << h2o::wrap_words("Budgets, in tokens per layer and KV head. Each policy gets " +
                                   split + " (sinks takes its " +
                                   std::to_string(h2o::PolicySettings{}.sinks) +
                                   " sinks out of the heavy part) and the factory's defaults "
                                   "otherwise, so every cache holds the same number of tokens. "
                                   "In each policy's own words:",
                               100, "")
            << "\n";
  if (format.quantised()) {
    std::cout << "KV storage of the evicting policies and of the full cache at '" << format.bits
              << "-bit all': " << h2o::describe_kv_format(format)
              << "\n(keys per channel, values per token, the newest group's tokens in float32;\n"
                 "the reference keeps float32).\n";
  }
  for (int percent : percents) {
    const std::string head = pad_right("  " + std::to_string(percent) + "% = " +
                                           std::to_string(h2o::tokens_for_percent(n, percent)),
                                       14);
    std::string indent(head.size(), ' ');
    bool first = true;
    for (const h2o::SweepRun* run : by_percent[percent]) {
      const std::string line =
          (first ? head : indent) + pad_right(run->policy, 9) +
          (run->refused.empty() ? run->description : "refused: " + run->refused);
      std::cout << h2o::wrap_words(line, 100, indent + std::string(9, ' ')) << "\n";
      first = false;
    }
    if (first) std::cout << head << "(only the full cache was asked for)\n";
  }

  // Step 5: the table. Within a budget the rows go from lowest perplexity (best) to highest.
  std::cout << "\nResults: perplexity (lower = better), bits per byte (the same, per byte of "
               "text), the change of\nperplexity versus the full cache, how often the most likely "
               "next token equals the full cache's,\nname recall, and the KV bytes held at the "
               "end (all layers). 'kept' = tokens layer 0 holds per KV\nhead after the last "
               "step.\n"
            << (format.quantised() ? "KV bytes count codes, scales and zeros exactly; KV share = "
                                     "their share of the full float32\ncache's (in place of "
                                     "bits per byte).\n"
                                   : "")
            << "\n";
  // Quantised, the KV bytes' share of the full float32 cache's takes bits per byte's column.
  h2o::Table table({"budget", "policy", "kept", "perplexity",
                    format.quantised() ? "KV share" : "bits/byte", "vs full", "top-1 = full",
                    "names", "KV bytes", ""});
  auto add_row = [&](const std::string& budget_text, const h2o::SweepRun& run, bool best) {
    if (!run.refused.empty()) {
      table.add({budget_text, run.policy, "", "", "", "", "", "", "", "refused (see above)"});
      return;
    }
    const double perplexity = run.perplexity();
    const double kv_share =
        static_cast<double>(run.live_kv_bytes) / static_cast<double>(full.live_kv_bytes);
    table.add(
        {budget_text, run.policy, std::to_string(run.kept), fixed(perplexity, 3),
         format.quantised() ? fixed(100.0 * kv_share, 1) + "%" : fixed(run.bits_per_byte(), 3),
         &run == &full ? "-" : change_text(perplexity, full_perplexity),
         fixed(100.0 * run.agreement(), 1) + "%",
         run.name_events == 0 ? "-" : fixed(100.0 * run.recall(), 1) + "%",
         std::to_string(run.live_kv_bytes), best ? "<- best" : ""});
  };
  add_row("reference", full, false);
  if (full_quantised) add_row(std::to_string(format.bits) + "-bit all", *full_quantised, false);
  std::vector<std::string> verdicts;
  for (int percent : percents) {
    std::vector<const h2o::SweepRun*> rows = by_percent[percent];
    std::stable_sort(rows.begin(), rows.end(), [](const h2o::SweepRun* a, const h2o::SweepRun* b) {
      if (a->refused.empty() != b->refused.empty()) return a->refused.empty();
      return a->refused.empty() && a->perplexity() < b->perplexity();
    });
    if (rows.empty()) continue;
    const std::size_t budget = h2o::tokens_for_percent(n, percent);
    const double best = rows.front()->perplexity();
    const bool any_measured = rows.front()->refused.empty();
    bool first = true;
    for (const h2o::SweepRun* run : rows) {
      const std::string budget_text =
          first ? std::to_string(percent) + "% = " + std::to_string(budget) : "";
      add_row(budget_text, *run,
              !no_verdict && any_measured && run->refused.empty() && run->perplexity() == best);
      first = false;
    }
    // One line per budget, chosen from the numbers.
    const std::string at = "  " + pad_right(std::to_string(budget) + " tokens:", 12);
    const bool none_evicted = std::all_of(rows.begin(), rows.end(), [](const h2o::SweepRun* r) {
      return r->refused.empty() && r->evicted == 0;
    });
    if (!any_measured) {
      verdicts.push_back(at + "every policy refused this budget");
    } else if (none_evicted) {
      const bool exact = std::all_of(rows.begin(), rows.end(), [&](const h2o::SweepRun* r) {
        return r->perplexity() == full_perplexity;
      });
      verdicts.push_back(at + "nothing was evicted: every policy equals the full cache" +
                         (exact                ? " exactly"
                          : format.quantised() ? " but for the quantisation"
                                               : " (NOT exactly: check the policies)"));
    } else {
      std::string line = at + "best " + rows.front()->policy + " (" +
                         change_text(best, full_perplexity) + " vs full)";
      const h2o::SweepRun* worst = rows.front();
      for (const h2o::SweepRun* r : rows) {
        if (r->refused.empty()) worst = r;
      }
      if (worst != rows.front()) {
        line += ", worst " + worst->policy + " (" +
                change_text(worst->perplexity(), full_perplexity) + ")";
      }
      verdicts.push_back(line);
      // Is the best one better than the runner-up beyond noise? The same 95% interval as below
      // (left out when the two are H2O and the window: the next line says it).
      const h2o::SweepRun* runner_up =
          rows.size() > 1 && rows[1]->refused.empty() ? rows[1] : nullptr;
      const auto is = [](const h2o::SweepRun* r, const char* name) { return r->policy == name; };
      if (runner_up != nullptr && !((is(rows.front(), "h2o") && is(runner_up, "window")) ||
                                    (is(rows.front(), "window") && is(runner_up, "h2o")))) {
        verdicts.push_back(
            h2o::wrap_words(std::string(14, ' ') + "best against the runner-up: " +
                                h2o::verdict_against(*rows.front(), *runner_up, runner_up->policy),
                            100, std::string(16, ' ')));
      }
      // H2O against the window, with its 95% interval (measure/verdict.hpp).
      const h2o::SweepRun *with_heavy = nullptr, *window = nullptr;
      for (const h2o::SweepRun* r : rows) {
        if (r->refused.empty() && r->policy == "h2o") with_heavy = r;
        if (r->refused.empty() && r->policy == "window") window = r;
      }
      if (with_heavy != nullptr && window != nullptr) {
        verdicts.push_back(
            h2o::wrap_words(std::string(14, ' ') + "H2O's " +
                                h2o::verdict_against(*with_heavy, *window, "the window's"),
                            100, std::string(16, ' ')));
      }
    }
  }
  table.print(std::cout);
  if (no_verdict) {
    std::cout << "\n" << h2o::beyond_model_warning(full.bits_per_byte());
  } else if (!verdicts.empty()) {
    std::cout << "\nAt each budget:\n";
    for (const std::string& line : verdicts) std::cout << line << "\n";
  }
  std::cout << "\n" << h2o::wrap_words(h2o::context_gain_sentence(context_gain), 100, "") << "\n";

  // Step 6: the text picture: which positions each policy still holds after the last step.
  std::vector<const h2o::SweepRun*> panels;
  for (const std::string& name : policies) {
    if (!h2o::policy_kind(name).evicts) {
      panels.push_back(&full);
      continue;
    }
    for (const h2o::SweepRun* run : picture_runs) {
      if (run->policy == name && run->refused.empty()) panels.push_back(run);
    }
  }
  const std::size_t per_char = (steps + 79) / 80;
  std::cout << "\nKept after the last step at " << picture_percent << "% = " << picture_budget
            << " tokens (layer 0, KV head 0; positions 0-" << steps - 1 << " left to right,\n"
            << "one character = " << per_char << (per_char == 1 ? " position" : " positions")
            << ": '#' all kept, '+' some, '.' none):\n";
  for (const h2o::SweepRun* run : panels) {
    const std::vector<Position>& last = run->kept_at_end.front();
    std::cout << "  " << pad_right(run->policy, 8) << strip(last, steps, per_char) << "\n";
    if (run->tokens > 0) {
      std::cout << h2o::wrap_words(std::string(10, ' ') + ranges(last), 100, std::string(10, ' '))
                << "\n";
    }
  }

  // Step 7: the picture itself (report/svg.hpp draws it).
  if (!svg_path.empty()) {
    h2o::OccupancyGrid grid;
    grid.text.title = "Which positions each policy keeps in the KV cache";
    grid.text.subtitle = {
        "budget " + std::to_string(picture_budget) + " tokens per layer and KV head (" +
            std::to_string(picture_percent) + "% of the text's " + std::to_string(n) +
            " tokens); " + std::filesystem::path(files.model).stem().string() + " reading " +
            std::filesystem::path(text_path).filename().string(),
        "layer 0, KV head 0; one cell = one decoding step x one original position"};
    grid.text.command = h2o::command_line(argc, argv);
    grid.steps = steps;
    for (const h2o::SweepRun* run : panels) {
      const double perplexity = run->perplexity();
      std::string subtitle = "perplexity " + fixed(perplexity, 3);
      if (run->tokens > 0) subtitle += " (" + change_text(perplexity, full_perplexity) + ")";
      subtitle += ", " + std::to_string(run->kept) + " kept at the end";
      std::vector<h2o::KeptSpan> kept = spans[run->policy];
      if (run->tokens == 0) {  // the full cache holds every position from the step that reads it
        for (std::size_t p = 0; p < steps; ++p)
          kept.push_back({static_cast<Position>(p), p, steps});
      }
      grid.panels.push_back({run->policy, subtitle, std::move(kept)});
    }
    picture->stream() << h2o::occupancy_svg(grid);
    picture->commit();
    std::cout << "\nPicture (" << panels.size() << " panels) written to " << svg_path << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return h2o::run_program("compare_policies", [&] { return compare_policies(argc, argv); });
}
