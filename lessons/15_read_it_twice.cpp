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
//   Step 4  H2O against the window on the second reading, story by story, with a 95% interval;
//   Step 5  why H2O copies less than it holds: which heads copy (the full cache's attention on the
//           piece to copy) and whether H2O still held that piece where they look.
// From the library: the runs (measure/policy_sweep.hpp), the bootstrap (measure/verdict.hpp).
// `compare_policies --secret N` and `explore --secret N` run the same test on any text.
//
// Dimension legend: F = pieces of the secret, P = story tokens before its first copy (--secret-at),
// N = tokens of a story with its secret planted (BOS + P + F + rest of the story + F),
// S = N - 1 predictions, K = stories, L = layers, H = query heads, G = KV heads.
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
#include "h2o/measure/teacher_forcing.hpp"
#include "h2o/measure/verdict.hpp"
#include "h2o/policy/policy_factory.hpp"
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

// Steps 3 and 5: which of each story's secret positions a policy held when the second reading
// came back. Prediction j of the second reading (j = 1..F-1: piece j, at step second + j - 1)
// attends to the cache as the step before left it, so the observer notes, after each step from
// second - 1 to second + F - 3, which of the F positions of the first reading every layer and KV
// head still holds. The decoder calls the observer after each step of each layer, once the layer
// has evicted, each layer's steps in order; a chunk of tokens read at once goes through layer 0
// before layer 1, so every layer counts its own steps.
struct SecretHeld {
  SecretHeld(const std::vector<h2o::TwoReadings>& texts, std::size_t layers, std::size_t kv_heads)
      : texts(texts), layers(layers), kv_heads(kv_heads), held(texts.size()) {}
  const std::vector<h2o::TwoReadings>& texts;
  std::size_t layers, kv_heads;
  // (K,) x (F - 1,) x (L,) x (G,) x (F,) whether the secret's piece f was in the cache that
  // prediction j read, flattened as [(j - 1) * L * G + l * G + g][f]
  std::vector<std::vector<std::vector<bool>>> held;

  h2o::Decoder::StepObserver observer(std::size_t story) {
    const h2o::TwoReadings& t = texts[story];
    held[story].assign((t.passage - 1) * layers * kv_heads, std::vector<bool>(t.passage, false));
    auto steps = std::make_shared<std::vector<std::size_t>>(layers, 0);  // (L,) seen so far
    return [this, story, steps, &t](std::size_t layer, const h2o::LayerKVCache& cache) {
      const std::size_t step = (*steps)[layer]++;
      if (step + 1 < t.second || step + 2 > t.second + t.passage - 1) return;
      const std::size_t j = step + 2 - t.second;  // the prediction that reads this cache
      for (std::size_t g = 0; g < kv_heads; ++g) {
        std::vector<bool>& row = held[story][((j - 1) * layers + layer) * kv_heads + g];
        for (std::size_t s = 0; s < cache.size(g); ++s) {
          const std::size_t p = static_cast<std::size_t>(cache.positions(g)[s]);
          if (p >= t.first && p < t.first + t.passage) row[p - t.first] = true;
        }
      }
    };
  }
  // Whether layer l's KV head g held piece f of story i's secret at prediction j.
  bool at(std::size_t i, std::size_t j, std::size_t l, std::size_t g, std::size_t f) const {
    return held[i][((j - 1) * layers + l) * kv_heads + g][f];
  }
  // Step 3: the share of story 1's secret held, over every layer and KV head, when the second
  // reading's first prediction (j = 1) reads the cache.
  double share_at_return() const {
    std::size_t count = 0, slots = 0;
    for (std::size_t l = 0; l < layers; ++l) {
      for (std::size_t g = 0; g < kv_heads; ++g) {
        for (std::size_t f = 0; f < texts[0].passage; ++f) count += at(0, 1, l, g, f) ? 1 : 0;
        slots += texts[0].passage;
      }
    }
    return static_cast<double>(count) / static_cast<double>(slots);
  }
};

// Step 5: the full cache's attention on the piece to copy. Prediction j reads piece j - 1 of the
// second reading; an induction head finds piece j - 1 in the first reading and attends to the
// position right after it, first + j, whose piece is the one to predict. Each story is read once
// more, token by token with the attention recorded. (K,) x (F - 1,) x (L,) x (H,), flattened as
// [i][(j - 1) * L * H + l * H + h].
std::vector<std::vector<double>> attention_on_piece_to_copy(
    const std::shared_ptr<const h2o::DecoderWeights>& weights,
    const std::vector<h2o::TwoReadings>& texts) {
  const std::size_t L = weights->config.n_layers, H = weights->config.n_heads;
  const h2o::QueryGroups groups = weights->config.query_groups();
  std::vector<std::vector<double>> on_piece;
  for (const h2o::TwoReadings& t : texts) {
    std::vector<double> story((t.passage - 1) * L * H, 0.0);
    h2o::Decoder full(weights, h2o::make_policy("full"), t.tokens.size());
    full.set_record_attention(true);
    h2o::TeacherForcingOptions options;
    options.after_step = [&](std::size_t step) {
      if (step < t.second || step > t.second + t.passage - 2) return;
      const std::size_t j = step + 1 - t.second;
      const std::size_t target = t.first + j;  // the piece to copy, in the first reading
      for (std::size_t l = 0; l < L; ++l) {
        const h2o::AttentionRecord& record = full.attention(l);
        for (std::size_t h = 0; h < H; ++h) {
          const std::vector<h2o::Position>& held = record.positions[groups.kv_head_of(h)];
          for (std::size_t s = 0; s < held.size(); ++s) {
            if (static_cast<std::size_t>(held[s]) == target) {
              story[((j - 1) * L + l) * H + h] = record.weights(h, s);
              break;
            }
          }
        }
      }
    };
    h2o::read_with_teacher_forcing(full, t.tokens, options);
    on_piece.push_back(std::move(story));
  }
  return on_piece;
}

// Step 5, one row: the share of the secret a run held (every layer and KV head, at every
// prediction), the share of predictions at which every copying head's KV head held the piece to
// copy, and the pieces it copied with that piece held and without it. copying: layer * H + head
// of each copying query head.
struct CopySplit {
  std::string secret, piece, with, without;
};
CopySplit copy_split(const h2o::SweepRun& run, const SecretHeld& held,
                     const std::vector<h2o::TwoReadings>& texts,
                     const std::vector<std::size_t>& copying, const h2o::QueryGroups& groups) {
  const std::size_t H = groups.n_heads();
  std::size_t secret = 0, slots = 0, predictions = 0, with = 0, with_hit = 0, lost_hit = 0;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const h2o::TwoReadings& t = texts[i];
    const std::vector<double> hits =
        hits_of_reading(t.tokens, run.readings[i].top1, t.second, t.passage);  // (F - 1,)
    for (std::size_t j = 1; j < t.passage; ++j, ++predictions) {
      for (std::size_t l = 0; l < held.layers; ++l) {
        for (std::size_t g = 0; g < held.kv_heads; ++g) {
          for (std::size_t f = 0; f < t.passage; ++f) secret += held.at(i, j, l, g, f) ? 1 : 0;
          slots += t.passage;
        }
      }
      bool piece_held = true;
      for (const std::size_t lh : copying) {
        piece_held = piece_held && held.at(i, j, lh / H, groups.kv_head_of(lh % H), j);
      }
      const bool hit = hits[j - 1] > 0;
      with += piece_held ? 1 : 0;
      (piece_held ? with_hit : lost_hit) += hit ? 1 : 0;
    }
  }
  const auto share = [](std::size_t part, std::size_t whole) {
    return share_text(static_cast<double>(part) / static_cast<double>(whole));
  };
  const auto of = [&](std::size_t part, std::size_t whole) {
    return whole == 0 ? std::string("-") : share(part, whole) + " of " + std::to_string(whole);
  };
  return CopySplit{share(secret, slots), share(with, predictions), of(with_hit, with),
                   of(lost_hit, predictions - with)};
}

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
  const std::size_t layers = weights->config.n_layers, kv_heads = weights->config.n_kv_heads;
  SecretHeld full_held(texts, layers, kv_heads);
  h2o::SweepOptions full_options;
  full_options.story_observer = [&](const h2o::SweepRun&, std::size_t story) {
    return full_held.observer(story);
  };
  const h2o::SweepRun full = h2o::read_full_cache(weights, text, full_options);
  std::vector<std::vector<double>> first_hits, second_hits;  // (K,) x (F - 1,)
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const std::vector<int>& top1 = full.readings[i].top1;
    first_hits.push_back(hits_of_reading(texts[i].tokens, top1, texts[i].first, pieces));
    second_hits.push_back(hits_of_reading(texts[i].tokens, top1, texts[i].second, pieces));
  }
  const h2o::SecondReading library_full = h2o::second_reading(full, texts);
  const bool full_copies = h2o::copies(library_full);

  // Step 3: H2O and the window at every budget, each recording what it held of every secret.
  struct Row {
    int percent;
    h2o::SweepRun run;
    h2o::SecondReading reading;
    SecretHeld held;
  };
  std::vector<Row> rows;
  for (const int percent : percents) {
    for (const char* name : {"h2o", "window"}) {
      SecretHeld held(texts, layers, kv_heads);
      h2o::SweepOptions options;
      options.story_observer = [&held](const h2o::SweepRun&, std::size_t story) {
        return held.observer(story);
      };
      h2o::SweepRun run =
          h2o::read_stories(weights, text, {name, name}, {percent, 0}, &full, options);
      if (!run.refused.empty()) throw std::runtime_error(run.refused);
      h2o::SecondReading reading = h2o::second_reading(run, texts);
      rows.push_back({percent, std::move(run), std::move(reading), std::move(held)});
    }
  }
  // Step 4: at each budget (rows 2b and 2b + 1), H2O's second reading against the window's.
  std::vector<h2o::BootstrapMean> h2o_minus_window;  // (budgets,)
  for (std::size_t r = 0; r + 1 < rows.size(); r += 2) {
    h2o_minus_window.push_back(second_reading_difference(rows[r].run, rows[r + 1].run, texts));
  }

  // The answer: what the full cache copies, and what each policy keeps of it.
  std::cout << "Lesson 15: read it twice - what a cache is for (beyond the blog)\n\n"
            << "The answer (details in steps 1-5 below)\n";
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
  table.row("full", "full", full.kept, share_text(full_held.share_at_return()),
            share_text(library_full.second.mean), interval_text(library_full.second), "");
  for (const Row& row : rows) {
    table.row(std::to_string(row.percent) + "%", row.run.policy, row.run.kept,
              share_text(row.held.share_at_return()),
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

  // Step 5: which heads copy (the full cache's attention on the piece to copy, mean over every
  // prediction of every second reading), and whether H2O held that piece where they look.
  if (!full_copies) {
    std::cout << "\nStep 5: left out: the full cache does not copy the secret, so no head copies.\n";
    return 0;
  }
  const std::size_t H = weights->config.n_heads;
  const h2o::QueryGroups groups = weights->config.query_groups();
  const std::vector<std::vector<double>> on_piece = attention_on_piece_to_copy(weights, texts);
  std::vector<double> mean_on_piece(layers * H, 0.0);  // (L * H,)
  std::size_t predictions = 0;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    for (std::size_t j = 1; j < pieces; ++j, ++predictions) {
      for (std::size_t lh = 0; lh < layers * H; ++lh) {
        mean_on_piece[lh] += on_piece[i][(j - 1) * layers * H + lh];
      }
    }
  }
  for (double& m : mean_on_piece) m /= static_cast<double>(predictions);
  const double most = *std::max_element(mean_on_piece.begin(), mean_on_piece.end());
  std::vector<std::size_t> copying;  // layer * H + head of the heads that copy
  for (std::size_t lh = 0; lh < layers * H; ++lh) {
    if (mean_on_piece[lh] >= most / 2) copying.push_back(lh);
  }
  std::cout << "\nStep 5: why H2O copies less than it holds. Prediction j of the second reading reads\n"
            << "        piece j - 1; a head that copies finds piece j - 1 in the first reading and\n"
            << "        attends to the position after it, the piece to copy. The full cache's\n"
            << "        attention on that piece, mean over every prediction (* a copying head: at\n"
            << "        least half the attention of the most attentive one):\n";
  std::vector<std::string> titles{"layer"};
  for (std::size_t h = 0; h < H; ++h) titles.push_back("head " + std::to_string(h));
  h2o::Table heads(titles);
  for (std::size_t l = 0; l < layers; ++l) {
    std::vector<std::string> cells{std::to_string(l)};
    for (std::size_t h = 0; h < H; ++h) {
      const bool copies = std::find(copying.begin(), copying.end(), l * H + h) != copying.end();
      cells.push_back(share_text(mean_on_piece[l * H + h]) + (copies ? " *" : "  "));
    }
    heads.add(cells);
  }
  heads.print(std::cout);
  std::cout << "        The full cache and H2O at each budget: the share of the secret held (every\n"
            << "        layer and KV head, at every prediction), the share of predictions at which\n"
            << "        every copying head's KV head held the piece to copy, and what was copied\n"
            << "        then and else:\n";
  h2o::Table copy_table({"budget", "secret held", "piece held", "copied: held", "copied: not held"});
  const CopySplit full_split = copy_split(full, full_held, texts, copying, groups);  // every piece held, by definition
  copy_table.row("full", full_split.secret, full_split.piece, full_split.with, full_split.without);
  std::string last_budget;  // the largest budget's row, said in words below the table
  for (std::size_t r = 0; r < rows.size(); r += 2) {
    const CopySplit budget = copy_split(rows[r].run, rows[r].held, texts, copying, groups);
    copy_table.row(std::to_string(rows[r].percent) + "%", budget.secret, budget.piece, budget.with,
                   budget.without);
    last_budget = "At " + std::to_string(rows[r].percent) + "% H2O held " + budget.secret +
                  " of the secret, but the piece to copy in every copying head at only " +
                  budget.piece + " of the predictions: with it H2O copied " + budget.with +
                  " pieces, without it " + budget.without + ".";
  }
  copy_table.print(std::cout);
  std::cout << h2o::wrap_words(
                   "  " + last_budget +
                       " Copying reads one position, the piece to copy, in the copying heads "
                       "at the step that needs it; H2O chose what to keep by the attention paid "
                       "before the secret came back.",
                   100, "  ")
            << "\n";
  return 0;
}

int main(int argc, char** argv) { return h2o::run_program(argc, argv, run_lesson); }
