// Lesson 09: H2O on a real pretrained language model.
//
// Beyond the blog: lessons 01-08 used made-up numbers. Here the library's decoder loads
// stories260K, a real Llama-architecture model trained by someone else on children's stories
// (llama2.c format), and reads one short story twice over: once with a full KV cache and once per
// H2O budget. For each run we measure
//   perplexity  = exp(mean over positions of -log p(next token))   lower = the model is less
//   surprised agreement   = how often the most likely next token is the same as with the full cache
// and we look inside the H2O cache at the end: which words did it keep as heavy hitters?
// A sliding window of the same size (H2O with heavy = 0) shows what the heavy hitters are worth.
// The new idea written out here is the measurement (teacher-forced perplexity); loading, the
// decoder and H2O come from the library.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/base/format.hpp"
#include "h2o/model/checkpoint.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/policy/h2o_policy.hpp"
#include "h2o/text/tokenizer.hpp"

using h2o::fixed;
using h2o::pad_left;
using h2o::pad_right;

namespace {

struct RunResult {
  std::string label;
  std::size_t budget_tokens = 0;  // heavy + recent (0 = full cache)
  double perplexity = 0.0;
  std::size_t agreements = 0;     // top token equal to the full cache's
  std::size_t live_kv_bytes = 0;  // at the end
  bool evicted = false;           // did the cache ever drop a token?
  std::vector<int> top_tokens;    // (T - 1,) most likely next token at each position
};

std::size_t argmax(const h2o::Vector& v) {
  return static_cast<std::size_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

// Feeds the text token by token ("teacher forcing": the next input is the text's token, not the
// model's guess) and scores how well each position's logits predict the token that follows.
RunResult read_text(h2o::Decoder& decoder, const std::vector<int>& tokens, const RunResult* full) {
  RunResult result;
  double total_negative_log_likelihood = 0.0;
  for (std::size_t t = 0; t + 1 < tokens.size(); ++t) {
    const h2o::Vector& logits = decoder.forward(tokens[t]);  // (V,)
    // -log softmax(logits)[next], computed stably: log-sum-exp with the maximum taken out.
    const double max_logit = *std::max_element(logits.begin(), logits.end());
    double sum_exp = 0.0;
    for (float z : logits) sum_exp += std::exp(static_cast<double>(z) - max_logit);
    const double log_prob =
        static_cast<double>(logits(tokens[t + 1])) - max_logit - std::log(sum_exp);
    total_negative_log_likelihood -= log_prob;

    result.top_tokens.push_back(static_cast<int>(argmax(logits)));
    if (full != nullptr) result.agreements += full->top_tokens[t] == result.top_tokens.back();
  }
  const double predictions = static_cast<double>(tokens.size() - 1);
  result.perplexity = std::exp(total_negative_log_likelihood / predictions);
  if (full == nullptr) result.agreements = result.top_tokens.size();
  result.live_kv_bytes = decoder.live_kv_bytes();
  result.evicted = decoder.evicted_tokens(0) > 0;
  return result;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open text file " + path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// A token's text for a table: spaces shown as '_', newlines as '/', so words stay readable.
std::string visible(const h2o::Tokenizer& tokenizer, int previous, int token) {
  std::string piece = tokenizer.decode_piece(previous, token);
  for (char& ch : piece) {
    if (ch == ' ') ch = '_';
    if (ch == '\n') ch = '/';
  }
  return piece;
}

}  // namespace

int main(int argc, char** argv) {
  return h2o::run_program("09_real_model", [&] {
    // Where the model is looked for: $H2O_MODELS_DIR if set, else the folder chosen at build time.
    const char* models_env = std::getenv("H2O_MODELS_DIR");
    const std::string model_dir =
        std::string(models_env != nullptr ? models_env : H2O_MODELS_DIR) + "/stories260K";
    h2o::ArgParser args(
        "09_real_model",
        "Lesson 09: full cache vs H2O on the real stories260K model, reading one story.");
    args.add_option("model", "PATH", model_dir + "/stories260K.bin", "llama2.c checkpoint");
    args.add_option("tokenizer", "PATH", model_dir + "/tok512.bin", "llama2.c tokenizer for it");
    args.add_option("text", "PATH", std::string(H2O_DATA_DIR) + "/story.txt", "the text to read");
    args.add_option("budgets", "LIST", "10,20,50", "H2O budgets, in percent of the text's tokens");
    args.add_option("scoring", "MODE", "per-head", "H2O scoring: per-head or shared");
    if (!args.parse(argc, argv)) return 0;
    const h2o::ScoringMode mode = h2o::parse_scoring_mode(args.text("scoring"));
    const std::vector<int> percents = h2o::parse_percent_list("budgets", args.text("budgets"));
    const std::string model_path = args.text("model"), tokenizer_path = args.text("tokenizer");
    const std::string text_path = args.text("text");

    std::cout << "Lesson 09: H2O on a real model (beyond the blog)\n\n";

    // Step 1: find and load the model. Without it (at the default place) the lesson explains where
    // to get it and stops; a path typed on the command line must exist, so a typo is an error.
    const bool default_paths = !args.given("model") && !args.given("tokenizer");
    if (default_paths && (!std::ifstream(model_path) || !std::ifstream(tokenizer_path))) {
      std::cout << "The real model is not in its default place:\n";
      for (const std::string& path : {model_path, tokenizer_path}) {
        if (!std::ifstream(path)) std::cout << "  missing: " << path << "\n";
      }
      std::cout
          << "\nThis lesson needs karpathy's stories260K (MIT licence): stories260K.bin and\n"
          << "tok512.bin from the Hugging Face repository karpathy/tinyllamas, folder "
             "stories260K.\n"
          << "Download both, then run:\n"
          << "  build/bin/09_real_model --model PATH/stories260K.bin --tokenizer PATH/tok512.bin\n";
      return 0;
    }
    auto weights = std::make_shared<const h2o::DecoderWeights>(h2o::load_checkpoint(model_path));
    const h2o::ModelConfig& config = weights->config;
    const h2o::Tokenizer tokenizer = h2o::Tokenizer::load(tokenizer_path, config.vocab_size);
    std::cout << "Step 1: loaded " << std::filesystem::path(model_path).filename().string()
              << "\n        " << config.describe() << "\n";

    // Step 2: the text, as token ids (BOS first, as the model was trained).
    const std::vector<int> tokens = tokenizer.encode(read_file(text_path), true, false);
    if (tokens.size() < 3)
      throw std::runtime_error("the text in " + text_path + " is too short to measure");
    if (tokens.size() > config.seq_len) {
      throw std::runtime_error("the text has " + std::to_string(tokens.size()) +
                               " tokens; the model reads at most " +
                               std::to_string(config.seq_len));
    }
    const std::size_t n = tokens.size();
    std::cout << "Step 2: the text in " << std::filesystem::path(text_path).filename().string()
              << " is " << n << " tokens long (BOS included); every run predicts\n"
              << "        each next token from the ones before it (" << n - 1 << " predictions).\n";

    // Step 3: the full cache is the reference.
    RunResult full;
    {
      h2o::Decoder decoder(weights, std::make_unique<h2o::FullCachePolicy>());
      full = read_text(decoder, tokens, nullptr);
      full.label = "full cache";
    }
    std::cout << "Step 3: the full cache keeps all " << n - 1 << " tokens; perplexity "
              << fixed(full.perplexity, 3) << "\n";

    // Step 4: H2O at each budget, and a sliding window (heavy = 0) of the same size. Runs come in
    // pairs: runs[2i] is H2O, runs[2i + 1] the window.
    std::vector<RunResult> runs;
    std::unique_ptr<h2o::Decoder> smallest_h2o;  // kept for step 5
    for (int percent : percents) {
      const std::size_t budget =
          std::max<std::size_t>(2, (n * static_cast<std::size_t>(percent) + 50) / 100);
      const h2o::CacheBudget h2o_budget{budget / 2, budget - budget / 2};
      const h2o::CacheBudget window_budget{0, budget};
      for (const h2o::CacheBudget& b : {h2o_budget, window_budget}) {
        auto decoder =
            std::make_unique<h2o::Decoder>(weights, std::make_unique<h2o::H2OPolicy>(b, mode));
        runs.push_back(read_text(*decoder, tokens, &full));
        runs.back().budget_tokens = budget;
        runs.back().label = (b.heavy > 0 ? "H2O " : "window ") + std::to_string(percent) + "% (" +
                            std::to_string(b.heavy) + "+" + std::to_string(b.recent) + ")";
        if (b.heavy > 0 && !smallest_h2o) smallest_h2o = std::move(decoder);  // percents ascend
      }
    }

    std::cout << "\nStep 4: H2O (" << to_string(mode)
              << " scores) and a plain window (heavy 0) of the same size\n\n";
    std::cout
        << "  cache                    perplexity  vs full  top token = full's  KV bytes at end\n";
    auto print_row = [&](const RunResult& r) {
      const double change = 100.0 * (r.perplexity / full.perplexity - 1.0);
      const std::string change_text =
          r.budget_tokens == 0 ? "" : (change >= 0 ? "+" : "") + fixed(change, 1) + "%";
      const double agreement =
          100.0 * static_cast<double>(r.agreements) / static_cast<double>(n - 1);
      std::cout << "  " << pad_right(r.label, 24) << pad_left(fixed(r.perplexity, 3), 11)
                << pad_left(change_text, 9) << pad_left(fixed(agreement, 1) + "%", 20)
                << pad_left(std::to_string(r.live_kv_bytes), 17) << "\n";
    };
    print_row(full);
    for (const RunResult& r : runs) print_row(r);

    // Step 5: inside the smallest H2O cache at the end: the kept old tokens (heavy hitters).
    const h2o::Decoder& inside = *smallest_h2o;
    const auto& policy = dynamic_cast<const h2o::H2OPolicy&>(inside.policy());
    const std::size_t recent = policy.budget().recent;
    std::size_t heavy_total = 0, heavy_near_start = 0;
    std::cout << "\nStep 5: the heavy hitters the " << policy.budget().describe()
              << " cache holds at the end\n";
    if (inside.evicted_tokens(0) == 0) {
      std::cout << "        none: that budget holds the whole text, so nothing was evicted\n";
    } else {
      std::cout << "        (KV head 0 of each layer; '_' is a space; position in brackets)\n";
      const auto first_recent = static_cast<h2o::Position>(n - 1 - recent);
      for (std::size_t l = 0; l < config.n_layers; ++l) {
        std::string line = "  layer " + std::to_string(l) + ":";
        for (h2o::Position p : inside.cache(l).sorted_positions(0)) {
          if (p >= first_recent) continue;  // the recent window, kept for being new
          ++heavy_total;
          heavy_near_start += p < 10;
          const auto at = static_cast<std::size_t>(p);
          const std::string word =
              p == 0 ? "<BOS>" : visible(tokenizer, tokens[at - 1], tokens[at]);
          const std::string entry = " " + word + "[" + std::to_string(p) + "]";
          if (line.size() + entry.size() > 96) {
            std::cout << line << "\n";
            line = "         ";
          }
          line += entry;
        }
        std::cout << line << "\n";
      }
    }

    // Step 6: what the numbers say, in words chosen from the numbers.
    std::cout << "\nStep 6: what it shows\n";
    std::size_t h2o_wins = 0, comparisons = 0;
    double largest_gap = 0.0;  // between H2O and the window, in percent of the window's perplexity
    for (std::size_t i = 0; i + 1 < runs.size(); i += 2) {
      const RunResult& with_heavy = runs[i];
      const RunResult& window = runs[i + 1];
      std::string verdict = "same: nothing was evicted";
      if (with_heavy.evicted) {
        const bool heavy_helps = with_heavy.perplexity < window.perplexity;
        ++comparisons;
        h2o_wins += heavy_helps;
        largest_gap = std::max(largest_gap,
                               100.0 * std::fabs(with_heavy.perplexity / window.perplexity - 1.0));
        verdict = heavy_helps ? "heavy hitters help" : "window as good or better";
      }
      std::cout << "  "
                << pad_right(std::to_string(with_heavy.budget_tokens) + " of " + std::to_string(n) +
                                 " tokens kept: ",
                             25)
                << "H2O " << fixed(with_heavy.perplexity, 3) << ", window "
                << fixed(window.perplexity, 3) << ", full " << fixed(full.perplexity, 3) << " -> "
                << verdict << "\n";
    }
    if (comparisons > 0) {
      std::cout << "  Heavy hitters beat a plain window of the same size at " << h2o_wins << " of "
                << comparisons << " budgets; the two differ\n  by at most " << fixed(largest_gap, 1)
                << "% in perplexity.";
      if (2 * h2o_wins <= comparisons) {
        std::cout << " This small model gets most of what it needs from recent\n"
                     "  tokens; the paper measured its gains on models with billions of weights.\n";
      } else {
        std::cout << " Keeping old tokens that earned attention helps at most\n  budgets here"
                  << (largest_gap < 5.0 ? ", if only a little.\n" : ".\n");
      }
    }
    if (heavy_total > 0) {
      std::cout << "  " << heavy_near_start << " of the " << heavy_total
                << " heavy hitters listed sit in the first 10 positions: early tokens collect\n"
                << "  attention from every later step (the bias the handbook warns about).\n";
    }
    return 0;
  });
}
