#include "h2o/app/generate_options.hpp"

#include <stdexcept>

#include "h2o/app/kv_format_options.hpp"
#include "h2o/app/policy_options.hpp"
#include "h2o/base/format.hpp"
#include "h2o/model/model_config.hpp"

namespace h2o {

ArgParser generate_arguments() {
  // The summary lists every cache policy from the factory's table, so a new one shows up here.
  std::string summary =
      "Generates text with a llama2.c checkpoint, as llama2.c's run.c does, with a full\n"
      "KV cache or one that evicts tokens. Text goes to stdout; speed and cache figures\n"
      "to stderr.\n\n" +
      policy_list_help();
  ArgParser args("generate", summary);
  add_model_options(args);
  args.add_option("prompt", "TEXT", "", "text to continue (default: none, start from BOS alone)");
  args.add_option("steps", "N", "256", "positions to run, BOS included, as run.c -n (0 = seq_len)");
  args.add_option("temperature", "T", "1.0", "0 = greedy (always the most likely token)");
  args.add_option("top-p", "P", "0.9", "nucleus sampling threshold; 0 or 1 = whole distribution");
  args.add_option("seed", "N", "42", "random seed for sampling (same seed, same text)");
  args.add_option("cache", "NAME", "full", "KV-cache policy, one of those listed above");
  args.add_option("heavy", "N", "64",
                  "tokens kept for their score, of heavy + recent (see each policy)");
  args.add_option("recent", "N", "64", "recent window, tokens per layer and KV head");
  args.add_option("sinks", "N", std::to_string(PolicySettings{}.sinks),
                  "sinks: first tokens always kept; budget sinks + recent");
  args.add_option("evict-seed", "N", "1", "random: seed of the eviction draws");
  add_scoring_options(args);
  add_kv_format_options(args);
  args.add_flag("compress-prompt",
                "keep the whole prompt, then cut to the budget once (as the paper)");
  add_threads_options(args, kMaxGenerateThreads, "the weight products and attention's heads");
  return args;
}

GenerateOptions generate_options(const ArgParser& args) {
  GenerateOptions options;
  const auto max_count = static_cast<long long>(ModelConfig::kMaxSeqLen);
  options.files = model_files_from_options(args);
  options.prompt = args.text("prompt");
  options.steps = static_cast<std::size_t>(args.integer("steps", 0, max_count));
  options.steps_given = args.given("steps");
  options.temperature = static_cast<float>(args.real("temperature", 0.0, 1000.0));
  options.top_p = static_cast<float>(args.real("top-p", 0.0, 1.0));
  options.seed = static_cast<std::uint64_t>(args.integer("seed", 0, 1LL << 62));
  options.threads = read_threads_options(args, kMaxGenerateThreads);
  options.settings.heavy = static_cast<std::size_t>(args.integer("heavy", 0, max_count));
  options.settings.recent = static_cast<std::size_t>(args.integer("recent", 0, max_count));
  options.settings.sinks = static_cast<std::size_t>(args.integer("sinks", 0, max_count));
  options.settings.seed = static_cast<std::uint64_t>(args.integer("evict-seed", 0, 1LL << 62));
  read_scoring_options(args, options.settings);
  options.compress_prompt = args.flag("compress-prompt");
  options.kv_format = read_kv_format_options(args);
  const std::string cache = args.text("cache");
  if (!is_policy_name(cache)) throw UsageError(unknown_policy_message(cache));
  try {
    options.policy = make_policy(cache, options.settings);
  } catch (const std::invalid_argument& e) {
    throw UsageError("--cache " + cache + ": " + e.what());
  }
  return options;
}

}  // namespace h2o
