#include "h2o/app/explore_options.hpp"

#include <cctype>

#include "h2o/app/compare_policies_options.hpp"
#include "h2o/app/default_files.hpp"
#include "h2o/app/kv_format_options.hpp"
#include "h2o/app/policy_options.hpp"
#include "h2o/base/format.hpp"
#include "h2o/cache/budget.hpp"

namespace h2o {

std::size_t ExploreBudget::for_text(std::size_t n) const {
  return percent > 0 ? tokens_for_percent(n, percent) : tokens;
}

std::string ExploreBudget::describe(std::size_t n) const {
  const std::string count = std::to_string(for_text(n)) + " tokens per layer and KV head";
  if (percent == 0) return count;
  return count + " (" + std::to_string(percent) + "% of " + std::to_string(n) + ")";
}

ArgParser explore_arguments() {
  ArgParser args(
      "explore",
      "Writes an explorer page: one self-contained HTML file (no network, opens from disk) that\n"
      "replays, step by step, which tokens one or two cache policies keep while the model reads\n"
      "the first story of --text (at most " +
          std::to_string(kMaxExploreTokens) +
          " tokens and the model's seq_len), for every layer\n"
          "and KV head, with scores, attention and agreement with the full cache.\n" +
          wrap_words("Policies: " + policy_names() + ".", 100, "  "));
  add_model_options(args);
  add_text_option(args);
  add_names_option(args);
  args.add_option("policies", "LIST", "h2o,window", "one or two policies, shown side by side");
  args.add_option("budget", "B", "10%",
                  "cache budget: a share of the text (10%) or tokens per layer and head (91)");
  args.add_output("out", "PATH", "explorer.html", "the page to write");
  args.add_output("kept", "PATH", "",
                  "also write every step's kept positions as text (for tests)");
  add_read_twice_options(args, "the story's");
  add_heavy_share_option(args);
  add_scoring_options(args);
  add_kv_format_options(args);
  return args;
}

ExploreBudget parse_explore_budget(const std::string& text) {
  const std::string problem =
      "--budget expects a share such as 10% or a number of tokens such as 91, got '" + text + "'";
  const bool is_percent = !text.empty() && text.back() == '%';
  const std::string digits = is_percent ? text.substr(0, text.size() - 1) : text;
  if (digits.empty() || digits.size() > 7) throw UsageError(problem);
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) throw UsageError(problem);
  }
  const long value = std::stol(digits);
  ExploreBudget budget;
  if (is_percent) {
    if (value < 1 || value > 100) {
      throw UsageError("--budget must be between 1% and 100%, got " + text);
    }
    budget.percent = static_cast<int>(value);
  } else {
    if (value < 2) throw UsageError("--budget must be at least 2 tokens, got " + text);
    budget.tokens = static_cast<std::size_t>(value);
  }
  return budget;
}

ExploreOptions explore_options(const ArgParser& args) {
  ExploreOptions options;
  if (args.text("policies") == "all") {
    throw UsageError("--policies takes one or two names, not all (" + policy_names() + ")");
  }
  options.policies = parse_policy_list("policies", args.text("policies"));
  if (options.policies.size() > 2) {
    throw UsageError("--policies takes one or two names (shown side by side), got " +
                     std::to_string(options.policies.size()));
  }
  options.budget = parse_explore_budget(args.text("budget"));
  options.out_path = args.text("out");    // never empty: cli.hpp refuses an empty PATH
  options.kept_path = args.text("kept");  // "" only when not given
  read_scoring_options(args, options.scoring);
  read_heavy_share_option(args, options.scoring);
  options.kv_format = read_kv_format_options(args);
  options.read_twice = read_twice_options(args);
  return options;
}

}  // namespace h2o
