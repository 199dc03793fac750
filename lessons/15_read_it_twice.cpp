// Lesson 15: read it twice - what a cache is for
//
// Beyond the blog. Lessons 09-14 asked how much worse a model predicts when its cache forgets.
// This one asks what the tokens a cache keeps are for. A model that has read a passage can predict
// it the second time round by copying: at each piece it finds the same piece in the first reading
// and predicts the one that followed it there (an "induction head"). It can only do that while
// its cache holds the first reading. So a "secret" of F random pieces of the vocabulary is planted
// before each story and again after it: no knowledge of the language predicts it, only the first
// reading does (the passkey test of StreamingLLM, the needle in a haystack of the KV-cache papers).
// Right after BOS the secret sits where the attention sinks are, which H2O keeps whatever comes;
// --secret-at P plants it after the story's first P tokens, where it has to earn its place.
// The answer comes first; then the steps behind it:
//   Step 1  the model, the stories and the secret planted in each (written out, and checked
//           against measure/second_reading.hpp's plant_secret);
//   Step 2  the full cache reads them: the share of each reading predicted top-1, counted here
//           and checked against second_reading();
//   Step 3  H2O and the window at each budget: the second reading, and how much of the secret
//           each still held when it came back (story 1, every layer and KV head);
//   Step 4  H2O against the window on the second reading, story by story, with a 95% interval.
// From the library: the runs (measure/policy_sweep.hpp), the bootstrap (measure/verdict.hpp).
// `compare_policies --secret N` and `explore --secret N` run the same test on any text.
//
// Dimension legend: F = pieces of the secret, P = story tokens before its first copy (--secret-at),
// N = tokens of a story with its secret planted (BOS + P + F + rest of the story + F),
// S = N - 1 predictions, K = stories.
#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/app/model_and_stories.hpp"
#include "h2o/app/program.hpp"
#include "h2o/app/read_twice_options.hpp"
#include "h2o/base/format.hpp"
#include "h2o/measure/policy_sweep.hpp"
#include "h2o/measure/second_reading.hpp"
#include "h2o/measure/verdict.hpp"
#include "h2o/report/second_reading_report.hpp"
#include "h2o/report/table.hpp"

using h2o::fixed;
using h2o::share_text;

namespace {
// Step 2: the pieces of one reading predicted top-1. Step t reads token t and predicts token
// t + 1, so piece j of a reading that starts at `start` is predicted at step start + j - 1; the
// first piece (j = 0) is left out: nothing before it says the passage starts.
std::vector<double> hits_of_reading(const std::vector<int>& tokens, const std::vector<int>& top1,
                                    std::size_t start, std::size_t pieces) {
  std::vector<double> hits;  // (F - 1,) 1 = predicted top-1
  for (std::size_t j = 1; j < pieces; ++j) {
    hits.push_back(top1[start + j - 1] == tokens[start + j] ? 1.0 : 0.0);
  }
  return hits;
}

std::size_t count_of(const std::vector<std::vector<double>>& hits) {  // (K,) x (F - 1,)
  std::size_t count = 0;
  for (const std::vector<double>& story : hits) {
    for (double hit : story) count += hit > 0 ? 1 : 0;
  }
  return count;
}

// Step 3: how much of story 1's first reading a policy still holds at the step before the second
// reading starts (the last step whose cache the second reading's first prediction reads): the
// share of the secret's F positions held, over every layer and KV head. The decoder calls the
// observer after each step of each layer, each layer's steps in order; a chunk of tokens read at
// once goes through layer 0 before layer 1, so every layer counts its own steps.
struct HeldAtReturn {
  std::size_t first = 0, pieces = 0, step_wanted = 0;  // the secret's positions; the step
  std::vector<std::size_t> steps{};                      // (L) steps seen so far, per layer
  std::size_t held = 0, slots = 0;
  h2o::Decoder::StepObserver observer() {
    return [this](std::size_t layer, const h2o::LayerKVCache& cache) {
      if (layer >= steps.size()) steps.resize(layer + 1, 0);
      if (steps[layer]++ != step_wanted) return;
      for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
        for (std::size_t s = 0; s < cache.size(g); ++s) {
          const std::size_t p = static_cast<std::size_t>(cache.positions(g)[s]);
          if (p >= first && p < first + pieces) ++held;
        }
        slots += pieces;
      }
    };
  }
  double share() const { return slots == 0 ? 0.0 : static_cast<double>(held) / slots; }
};

// Step 4: H2O's second reading against the window's, prediction by prediction (1: only H2O
// predicted the piece, -1: only the window), bootstrapped over the stories.
h2o::BootstrapMean second_reading_difference(const h2o::SweepRun& a, const h2o::SweepRun& b,
                                             const std::vector<h2o::TwoReadings>& texts) {
  std::vector<std::vector<double>> difference;  // (K,) x (F - 1,)
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const h2o::TwoReadings& t = texts[i];
    const std::vector<double> ha =
        hits_of_reading(t.tokens, a.readings[i].top1, t.second, t.passage);
    const std::vector<double> hb =
        hits_of_reading(t.tokens, b.readings[i].top1, t.second, t.passage);
    std::vector<double> d(ha.size());
    for (std::size_t j = 0; j < ha.size(); ++j) d[j] = ha[j] - hb[j];
    difference.push_back(d);
  }
  return h2o::bootstrap_mean(h2o::units_of(difference));
}

std::string points(double share) {  // "+12.5 points"
  return (share >= 0 ? "+" : "") + fixed(100.0 * share, 1) + " points";
}

std::string interval_text(const h2o::BootstrapMean& m) {
  return m.has_interval() ? share_text(m.low) + " to " + share_text(m.high) : "-";
}
}  // namespace

int run_lesson(int argc, char** argv) {
  h2o::ArgParser args("15_read_it_twice",
                      "Lesson 15: a secret planted before each story and again after it: does the "
                      "cache let the model copy it?");
  h2o::add_model_options(args);
  h2o::add_stories_options(args, "12")
      .add_option("secret", "N", "32", "pieces of the secret planted before and after each story")
      .add_option("secret-at", "P", "0",
                  "plant the secret's first copy after each story's first P tokens, away from "
                  "the attention sinks right after BOS")
      .add_option("budgets", "LIST", "10,25,50", "tokens each policy keeps, percent of each text");
  args.parse(argc, argv);
  const std::size_t pieces = static_cast<std::size_t>(args.integer("secret", 2, 512));
  const std::size_t at = static_cast<std::size_t>(args.integer("secret-at", 0, 100000));
  const std::vector<int> percents = h2o::parse_percent_list("budgets", args.text("budgets"));

  // Step 1: the model and the stories; the secret planted in each by the library, checked below.
  const h2o::ModelAndStories loaded = h2o::load_model_and_stories(args);
  const auto& weights = loaded.weights;
  h2o::ReadTwiceOptions secret;
  secret.secret = pieces;
  secret.secret_at = at;
  const std::string text_name = std::filesystem::path(args.text("text")).filename().string();
  const std::vector<h2o::TwoReadings> texts = h2o::two_readings(
      secret, loaded.read.texts, loaded.tokenizer, weights->config.seq_len, text_name);
  std::vector<std::vector<int>> planted;  // (K,) x (N,)
  for (const h2o::TwoReadings& t : texts) planted.push_back(t.tokens);
  const h2o::SweepText text = h2o::sweep_text(loaded.tokenizer, planted, {}, 64);

  // Step 2: the full cache, every story; each reading's pieces predicted top-1, counted here.
  HeldAtReturn full_held{texts[0].first, pieces, texts[0].second - 1};
  h2o::SweepOptions full_options;
  full_options.first_story_observer = [&](const h2o::SweepRun&) { return full_held.observer(); };
  const h2o::SweepRun full = h2o::read_full_cache(weights, text, full_options);
  std::vector<std::vector<double>> first_hits, second_hits;  // (K,) x (F - 1,)
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const std::vector<int>& top1 = full.readings[i].top1;
    first_hits.push_back(hits_of_reading(texts[i].tokens, top1, texts[i].first, pieces));
    second_hits.push_back(hits_of_reading(texts[i].tokens, top1, texts[i].second, pieces));
  }
  const h2o::SecondReading library_full = h2o::second_reading(full, texts);
  const bool full_copies = h2o::copies(library_full);

  // Step 3: H2O and the window at every budget, each recording story 1's cache at the return.
  struct Row {
    int percent;
    h2o::SweepRun run;
    h2o::SecondReading reading;
    double held;
  };
  std::vector<Row> rows;
  for (const int percent : percents) {
    for (const char* name : {"h2o", "window"}) {
      HeldAtReturn held{texts[0].first, pieces, texts[0].second - 1};
      h2o::SweepOptions options;
      options.first_story_observer = [&held](const h2o::SweepRun&) { return held.observer(); };
      h2o::SweepRun run =
          h2o::read_stories(weights, text, {name, name}, {percent, 0}, &full, options);
      if (!run.refused.empty()) throw std::runtime_error(run.refused);
      h2o::SecondReading reading = h2o::second_reading(run, texts);
      rows.push_back({percent, std::move(run), std::move(reading), held.share()});
    }
  }
  // Step 4: at each budget (rows 2b and 2b + 1), H2O's second reading against the window's.
  std::vector<h2o::BootstrapMean> h2o_minus_window;  // (budgets,)
  for (std::size_t r = 0; r + 1 < rows.size(); r += 2) {
    h2o_minus_window.push_back(second_reading_difference(rows[r].run, rows[r + 1].run, texts));
  }

  // The answer: what the full cache copies, and what each policy keeps of it.
  std::cout << "Lesson 15: read it twice - what a cache is for (beyond the blog)\n\n"
            << "The answer (details in steps 1-4 below)\n";
  std::string answer = "Over " + loaded.read.counted() + " with a secret of " +
                       std::to_string(pieces) + " pieces " +
                       (at == 0 ? "before and after each"
                                : "after the first " + std::to_string(at) +
                                      " tokens of each and again at its end") +
                       ", the full cache predicts " + share_text(library_full.second.mean) +
                       " of the second reading against " + share_text(library_full.first.mean) +
                       " of the first: ";
  if (!full_copies) {
    answer +=
        "not 10 points more beyond noise, so this model does not copy what it has read, "
        "and no cache has anything to keep for it. The rows below say nothing of what a "
        "cache is for (docs/models.md: copying by content).";
  } else {
    answer += "it copies. ";
    for (std::size_t r = 0; r + 1 < rows.size(); r += 2) {
      const Row& h = rows[r];
      const Row& w = rows[r + 1];
      const h2o::BootstrapMean& d = h2o_minus_window[r / 2];
      const bool better = d.has_interval() && d.low > 0, worse = d.has_interval() && d.high < 0;
      answer += "At " + std::to_string(h.percent) + "% H2O copies " +
                share_text(h.reading.second.mean) + ", the window " +
                share_text(w.reading.second.mean) + " (" + points(d.mean) + ": " +
                (better  ? "H2O better"
                 : worse ? "H2O worse"
                         : "no difference within noise") +
                "). ";
    }
    answer +=
        "A window forgets the first reading before it comes back; H2O keeps what its "
        "attention chose before it knew the secret would return.";
  }
  std::cout << h2o::wrap_words("  " + answer, 100, "  ") << "\n\n";

  // Step 1 shown: story 1's secret planted by hand, beside the library's text.
  const h2o::TwoReadings& t1 = texts.front();
  const std::vector<int>& story1 = loaded.read.stories.front();  // (BOS + story,)
  const auto secret_start = t1.tokens.begin() + static_cast<long>(t1.first);
  const std::vector<int> secret1(secret_start, secret_start + static_cast<long>(pieces));  // (F,)
  const auto split = story1.begin() + 1 + static_cast<long>(at);
  std::vector<int> by_hand(story1.begin(), split);  // BOS and the story's first P tokens,
  by_hand.insert(by_hand.end(), secret1.begin(), secret1.end());  // the secret,
  by_hand.insert(by_hand.end(), split, story1.end());             // the rest of the story,
  by_hand.insert(by_hand.end(), secret1.begin(), secret1.end());  // the secret again
  std::string shown;  // the secret's first pieces as text, as the model reads them
  for (std::size_t j = 0; j < std::min<std::size_t>(pieces, 8); ++j) {
    shown += loaded.tokenizer.piece(secret1[j]);
  }
  std::cout << "Step 1: " << std::filesystem::path(loaded.files.model).filename().string()
            << " reads " << loaded.read.counted() << " of " << text_name << ", each as\n"
            << (at == 0 ? "        BOS + secret (" + std::to_string(pieces) +
                              ") + story + the same secret; story 1: 1 + "
                        : "        BOS + story's first " + std::to_string(at) + " + secret (" +
                              std::to_string(pieces) + ") + the rest + the same secret;\n" +
                              "        story 1: 1 + " + std::to_string(at) + " + ")
            << pieces << " + " << story1.size() - 1 - at << " + " << pieces << " = "
            << by_hand.size() << " tokens,\n        the second reading " << t1.distance()
            << " tokens after the first.\n        Story 1's secret, its first pieces: \""
            << h2o::printable(shown) << "\"" << (pieces > 8 ? " ..." : "")
            << "\n        The library's planted text the same: "
            << (by_hand == t1.tokens ? "yes" : "NO") << ".\n\n";

  // Step 2 shown: the full cache.
  const std::size_t first_count = count_of(first_hits), second_count = count_of(second_hits);
  const bool same_counts =
      first_count == library_full.first_correct && second_count == library_full.second_correct;
  std::cout << "Step 2: the full cache predicts top-1 " << first_count << " of the first reading's "
            << library_full.predictions << " pieces and " << second_count
            << " of the second's\n        (each reading's first piece left out, every story); "
            << "second_reading() counts the same: " << (same_counts ? "yes" : "NO") << ".\n\n";

  // Step 3 shown: every policy at every budget.
  std::cout << "Step 3: H2O and the window at each budget; 'held': the share of story 1's secret\n"
            << "        in the cache (all layers and KV heads) when it comes back. "
            << (at == 0 ? "The secret sits\n        right after BOS, where the attention sinks "
                          "are (--secret-at P plants it further in).\n"
                        : "The secret sits\n        " + std::to_string(at) +
                              " tokens into the story, away from the attention sinks.\n");
  h2o::Table table({"budget", "policy", "kept", "held", "2nd reading", "95% interval", "vs full"});
  table.row("full", "full", full.kept, share_text(full_held.share()),
            share_text(library_full.second.mean), interval_text(library_full.second), "");
  for (const Row& row : rows) {
    table.row(std::to_string(row.percent) + "%", row.run.policy, row.run.kept, share_text(row.held),
              share_text(row.reading.second.mean), interval_text(row.reading.second),
              points(row.reading.second.mean - library_full.second.mean));
  }
  table.print(std::cout);

  // Step 4 shown: H2O against the window, the difference bootstrapped over the stories.
  std::cout << "\nStep 4: H2O's second reading against the window's, piece by piece, with a 95%\n"
            << "        interval (bootstrap over the stories):\n";
  h2o::Table verdicts({"budget", "h2o - window", "95% interval"});
  for (std::size_t r = 0; r + 1 < rows.size(); r += 2) {
    const h2o::BootstrapMean& d = h2o_minus_window[r / 2];
    verdicts.row(std::to_string(rows[r].percent) + "%", points(d.mean),
                 d.has_interval() ? points(d.low) + " to " + points(d.high) : "-");
  }
  verdicts.print(std::cout);
  return 0;
}

int main(int argc, char** argv) { return h2o::run_program(argc, argv, run_lesson); }
