// Lesson 10: attention is sparse, and heavy hitters exist - why H2O is allowed to forget.
//
// Beyond the blog. The H2O paper rests on three observations about trained models, and notes a
// fourth that works against it; this lesson measures each on a real model reading a long story
// with the FULL cache:
//   1. sparsity: most attention weights are tiny. The paper counts weights below 1% of their row's
//      largest and finds over 95% in almost every layer.
//   2. heavy hitters: summing each token's attention over all later steps (its H2O score), a few
//      tokens hold most of it, and score falls with rank like a power law (a straight line on a
//      log-log plot).
//   3. stability: the tokens that lead at step t still lead at step 2t, so the attention a token
//      has collected so far predicts the attention it will get - which is what H2O bets on.
//   4. age bias: a score sums every step since the token came, so the oldest tokens lead because
//      they are old: score against position, and the heavy-hitter slots the oldest tenth takes -
//      ranked by the sum, by the sum per step (normalised) and by a decayed sum.
//   5. heads differ (FastGen, Ge et al. 2024): per layer and KV head, the attention on the first
//      token (a sink, against the uniform share), on the last r tokens, and on the r heavy hitters
//      outside them (r = 16: head_profile.hpp's kKindSizes, the one definition of a kind that
//      lesson 14 and the explorer page use too); a head is local, heavy, a sink or mixed
//      (h2o::profile_heads), and what that says of a window against H2O, in the sentence the
//      explorer page gives as its reason.
// The new idea written out here is reading those numbers off the attention; the collector of the
// raw counts (h2o::AttentionStatistics), the decoder, the tables and the pictures come from the
// library. With --pictures DIR it also draws one head's attention and every layer's rank/score.
// The answer is printed first (Step 8 works it out from the measures); the steps follow.
//
// Dimension legend: L = layers, H = query heads, T = tokens of the text.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/app/default_files.hpp"
#include "h2o/app/program.hpp"
#include "h2o/app/reading_report.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/output_file.hpp"
#include "h2o/base/xtensor.hpp"
#include "h2o/measure/attention_stats.hpp"
#include "h2o/measure/prompt_profile.hpp"
#include "h2o/model/checkpoint.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/policy/head_profile.hpp"
#include "h2o/report/attention_pictures.hpp"
#include "h2o/report/attention_report.hpp"
#include "h2o/report/table.hpp"
#include "h2o/text/token_text.hpp"
#include "h2o/text/tokenizer.hpp"

using h2o::fixed;

constexpr auto percent = h2o::percent_text;  // "12.3%"

int run_lesson(int argc, char** argv) {
  h2o::ArgParser args("10_sparse_attention",
                      "Lesson 10: attention is sparse and heavy hitters exist, measured on a real "
                      "model.");
  h2o::add_model_options(args);
  h2o::add_text_option(args);
  args.add_output("pictures", "DIR", "", "also write the SVG pictures into this folder");
  args.parse(argc, argv);
  const std::string pictures = args.text("pictures");
  if (!pictures.empty()) h2o::make_output_folder(pictures, "--pictures");  // before the work
  std::ostringstream steps;  // Steps 1-7, printed after the answer

  // Step 1: the model reads the text with the full cache, its attention recorded at every step.
  const h2o::ModelFiles files = h2o::model_files_from_options(args);
  auto weights = std::make_shared<const h2o::DecoderWeights>(h2o::load_checkpoint(files.model));
  const h2o::ModelConfig& config = weights->config;
  const h2o::Tokenizer tokenizer = h2o::Tokenizer::load(files.tokenizer, config.vocab_size);
  const h2o::StoryTokens story = h2o::read_story(args, tokenizer, 16, config.seq_len);
  const std::vector<int>& tokens = story.tokens;  // the first story of the file, whole
  const std::size_t n = tokens.size(), L = config.n_layers, H = config.n_heads;
  const std::string text_name = std::filesystem::path(args.text("text")).filename().string();
  // Stability compares step t with step 2t, at t = n/8, n/4 and n/2 (0-based step indices).
  const std::vector<std::size_t> early = {n / 8 - 1, n / 4 - 1, n / 2 - 1};
  h2o::AttentionStatistics stats(
      L, H, n,
      {early[0], early[1], early[2], 2 * early[0] + 1, 2 * early[1] + 1, 2 * early[2] + 1});
  h2o::Decoder decoder(weights, h2o::policy_of<h2o::FullCachePolicy>(), n);
  decoder.set_record_attention(true);
  const std::size_t shown = std::min<std::size_t>(n, 192);  // the heatmap: the first steps
  std::vector<h2o::Matrix> first_rows(L, xt::zeros<float>({shown, shown}));  // (L, steps, keys)
  const std::size_t P = std::min(n, h2o::kProfiledTokens);  // the prompt Step 7 profiles
  h2o::PromptProfiler prompt(config, P);  // each layer's rows (H, P, P) over the first P steps
  for (std::size_t t = 0; t < n; ++t) {
    decoder.forward(tokens[t]);
    stats.add_step(decoder);
    prompt.add_step(decoder, t);
    for (std::size_t l = 0; l < L; ++l) {
      const h2o::Matrix& weights = decoder.attention(l).weights;  // (H, t + 1)
      for (std::size_t k = 0; t < shown && k <= t; ++k) first_rows[l](t, k) = weights(0, k);
    }
  }
  stats.require_finite();  // overflowing scores (NaN weights): one error, no meaningless numbers
  steps << "Step 1: " << std::filesystem::path(files.model).filename().string() << " ("
        << config.describe() << ")\n        reads " << n << " tokens of " << text_name
        << " with the full cache:\n        " << L << " layers x " << H << " heads x " << n
        << " steps of attention.\n";

  // Step 2: sparsity, and Step 3: concentration, layer by layer. A token's accumulated attention
  // is the mean over heads of the attention it received, summed over every step: with the full
  // cache, exactly H2O's shared score. Sorted from the largest down, it is the rank/score curve.
  h2o::Table table({"layer", "weights < 1% of row max", "top 1% hold", "top 5%", "top 10%",
                    "power-law slope", "R^2"});
  std::vector<h2o::PowerLawFit> fits;
  double best_top10 = 0.0;
  std::size_t most_concentrated = 0;
  for (std::size_t l = 0; l < L; ++l) {
    const std::vector<double>& scores = stats.accumulated(l);
    fits.push_back(h2o::fit_power_law(scores));
    const double top10 = h2o::top_share(scores, 0.10);
    if (top10 > best_top10) best_top10 = top10, most_concentrated = l;
    table.row(l, percent(stats.sparsity(l)), percent(h2o::top_share(scores, 0.01)),
              percent(h2o::top_share(scores, 0.05)), percent(top10), fixed(fits.back().slope, 2),
              fixed(fits.back().r2, 2));
  }
  steps << "\nSteps 2-3: how sparse, and how concentrated on a few tokens, each layer's "
        << "attention is\n";
  table.print(steps);
  steps << "  all layers: " << percent(stats.sparsity()) << " of the weights are below 1% of "
        << "their row's largest (the paper: over 95%)\n";

  // Step 4: stability. Of the k = 10 tokens with the most accumulated attention after step t, how
  // many are still among the 10 leaders after step 2t?
  const std::size_t k = 10;
  h2o::Table stable(
      {"layer", "t=" + std::to_string(early[0] + 1) + " -> " + std::to_string(2 * early[0] + 2),
       "t=" + std::to_string(early[1] + 1) + " -> " + std::to_string(2 * early[1] + 2),
       "t=" + std::to_string(early[2] + 1) + " -> " + std::to_string(2 * early[2] + 2)});
  std::size_t kept = 0;
  for (std::size_t l = 0; l < L; ++l) {
    std::vector<std::string> cells = {std::to_string(l)};
    for (std::size_t t : early) {
      const std::size_t still =
          h2o::top_k_kept(stats.snapshot(l, t), stats.snapshot(l, 2 * t + 1), k);
      kept += still;
      cells.push_back(std::to_string(still) + " of " + std::to_string(k));
    }
    stable.add(cells);
  }
  steps << "\nStep 4: of the " << k << " tokens with the most accumulated attention after "
        << "t tokens,\n        how many still lead at 2t\n";
  stable.print(steps);

  // Step 5: who the heavy hitters are, in the most concentrated layer.
  const std::vector<std::size_t> leaders =
      h2o::top_k_positions(stats.accumulated(most_concentrated), 8);
  std::string names;
  for (std::size_t i = 0; i < leaders.size(); ++i) {  // four to a line
    names += std::string(i > 0 && i % 4 == 0 ? "\n  " : " ") +
             h2o::shown_token(tokenizer, tokens, leaders[i]) + "[" + std::to_string(leaders[i]) +
             "]=" + fixed(stats.accumulated(most_concentrated)[leaders[i]], 1);
  }
  steps << "\nStep 5: the heaviest hitters of layer " << most_concentrated << " (token[position]"
        << "=accumulated attention; '_' is a space)\n " << names << "\n";

  // Step 6: the age bias. A token at position p has been looked at by n - p steps, so the oldest
  // collect score for longer: the mean score per tenth of the text, the same per step (OpenVINO's
  // normalised sum), and in which tenth the heavy hitters of a 10% budget sit, over all layers,
  // ranked by the sum, by the sum per step and by the decayed sum (every score times gamma each
  // step, so only the last few dozen steps count much: h2o_policy.hpp).
  const h2o::AgeProfile age = stats.mean_age_profile(10, 0.10);  // tenths, 10% heavy
  steps
      << "\nStep 6: the age bias. The text in tenths, oldest first: the mean accumulated attention "
      << "of\n        their tokens (over the " << L << " layers), the same divided by the steps "
      << "that looked at each\n        token, and where the heavy hitters of a 10% budget (the "
      << "top 10% of tokens) sit,\n        ranked by score, by score per step, and by the sum "
      << "decayed by " << fixed(stats.decay(), 2) << " per step\n";
  h2o::age_profile_table(age, n).print(steps);

  // Step 7: every head its own profile, over the first P tokens read as a prompt. Sink share is
  // the mean weight on the first token, beside the share an even row would give it; the window
  // and the heavy hitters are r = 16 tokens each, the sizes that define a head's kind in every
  // program (policy/head_profile.hpp's kKindSizes).
  const h2o::HeadProfileOptions& sizes = h2o::kKindSizes;  // r = k = 16, one sink token
  const std::vector<std::vector<h2o::HeadProfile>> profiles = prompt.profiles(sizes);  // (L, G)
  h2o::HeadKindCounts kinds;
  steps << "\nStep 7: every KV head over the first " << P << " tokens: where its attention goes"
        << "\n        (local: its last " << sizes.recent << " tokens hold at least half of it and "
        << "twice what its " << sizes.heavy << " heavy hitters get)\n";
  h2o::head_profile_table(profiles, sizes, &kinds).print(steps);

  // Step 8: what the numbers say, in words chosen from them.
  const double stability = static_cast<double>(kept) / static_cast<double>(L * early.size() * k);
  double mean_slope = 0.0, mean_r2 = 0.0;
  for (const h2o::PowerLawFit& fit : fits) mean_slope += fit.slope / L, mean_r2 += fit.r2 / L;
  std::cout << "Lesson 10: attention is sparse and heavy hitters exist (beyond the blog)\n\n"
            << h2o::reading_summary(text_name, 1, story.stories_in_file, story.paragraphs, n,
                                    std::nullopt)
            << "\n\nThe answer (details in steps 1-7 below)\n  sparsity: "
            << percent(stats.sparsity())
            << (stats.sparsity() >= 0.95 ? " - as sparse as the paper's models"
                                         : " - sparse, though less than the paper's 95%")
            << "\n  concentration: the top 10% of tokens hold " << percent(best_top10)
            << " of layer " << most_concentrated << "'s attention;\n  mean slope "
            << fixed(mean_slope, 2) << ", mean R^2 " << fixed(mean_r2, 2)
            << (mean_r2 >= 0.8 ? " (close to a power law)" : " (only roughly a power law)")
            << "\n  stability: " << percent(stability) << " of the leaders at t still lead at 2t"
            << (stability >= 0.5 ? ":\n  past attention is a fair guess of future attention.\n"
                                 : ":\n  leaders change; past attention is a weak guess here.\n")
            << "  age bias: " << h2o::age_bias_words(age, stats.decay())
            << "\n  heads: " << kinds.describe() << "\n"
            << h2o::wrap_words("  so: " + h2o::head_profile_reason(profiles, sizes), 100, "  ")
            << "\n\n"
            << steps.str();

  // Step 9: the pictures (report/attention_pictures.hpp).
  if (!pictures.empty()) {
    h2o::save_attention_pictures(pictures, first_rows[most_concentrated], most_concentrated,
                                 stats.accumulated(),
                                 std::filesystem::path(files.model).stem().string(), text_name,
                                 h2o::command_line(argc, argv));
    std::cout << "\n"
              << h2o::wrap_words("Pictures written to " + pictures +
                                     ": attention_heatmap.svg, rank_score.svg",
                                 100, "  ")
              << "\n";
  }
  return 0;
}

int main(int argc, char** argv) { return h2o::run_program(argc, argv, run_lesson); }
