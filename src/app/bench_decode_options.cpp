#include "h2o/app/bench_decode_options.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <stdexcept>

namespace h2o {

ArgParser bench_decode_arguments() {
  ArgParser args(
      "bench_decode",
      "Decode speed and KV-cache memory (full cache versus H2O), H2O's bookkeeping\n"
      "next to attention, and batched prompt speed, on a random decoder of a story\n"
      "model's shape; and this core's memory read bandwidth. Prints figures, checks\n"
      "nothing. H2O_MATVEC_KERNEL=reference|baseline|avx2|avx512 forces a decode kernel.");
  args.add_option("sections", "LIST", "lengths",
                  "any of bandwidth, lengths, kv-bits, eviction, prompt (comma-separated)");
  args.add_option("shape", "NAME", "260k", "model shape: 260k, 15m or 110m (random weights)");
  args.add_option("lengths", "N,N,...", "128,256,512,1024,2048,4096",
                  "lengths: lengths to decode (1.." + std::to_string(kMaxBenchLength) + " each)");
  add_budget_options(args, 64, 64);
  args.add_option("budgets", "N,N,...", "64,256,1024", "eviction: H2O budgets to measure");
  args.add_option("prompt", "N,N,...", "512", "prompt: prompt lengths in tokens");
  add_threads_options(args, 64, "the weight matrix products");
  args.add_option("repeats", "N", "3", "timed runs per measurement; the median is shown");
  args.add_option("seed", "N", "1", "seed of the random weights and tokens");
  args.add_option("kv-group", "B", std::to_string(KvFormat{}.group),
                  "kv-bits: tokens per key group, channels per value group");
  args.add_option("kv-residual", "R", std::to_string(KvFormat{}.residual),
                  "kv-bits: newest R tokens in fp32, a multiple of B (KIVI: 128; 0: B)");
  return args;
}

BenchDecodeOptions bench_decode_options(const ArgParser& args) {
  BenchDecodeOptions options;
  options.sections = parse_sections(args.text("sections"));
  options.lengths = parse_sizes("lengths", "length", args.text("lengths"));
  options.budgets = parse_sizes("budgets", "budget", args.text("budgets"));
  options.prompts = parse_sizes("prompt", "prompt length", args.text("prompt"));
  options.budget = budget_from_options(args, kMaxBenchLength);
  options.repeats = static_cast<std::size_t>(args.integer("repeats", 1, 100));
  options.seed = static_cast<std::uint64_t>(args.integer("seed", 0, 1LL << 62));
  options.threads = read_threads_options(args, 64);
  options.kv_group = static_cast<std::size_t>(args.integer("kv-group", 1, 4096));
  options.kv_residual = static_cast<std::size_t>(args.integer("kv-residual", 0, kMaxBenchLength));
  const bool quantised = std::find(options.sections.begin(), options.sections.end(), "kv-bits") !=
                         options.sections.end();
  for (const char* option : {"kv-group", "kv-residual"}) {
    if (!quantised && args.given(option)) {
      throw UsageError(std::string("--") + option +
                       " shapes the kv-bits section only: add kv-bits to --sections");
    }
  }
  if (options.kv_residual % options.kv_group != 0) {
    throw UsageError("--kv-residual " + std::to_string(options.kv_residual) +
                     " must be a multiple of --kv-group " + std::to_string(options.kv_group));
  }
  try {
    options.shape = story_shape(args.text("shape"));
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--shape: ") + e.what());
  }
  for (std::size_t b : options.budgets) {
    if (b < 2) throw UsageError("--budgets: each budget must be at least 2 (heavy + recent)");
  }
  return options;
}

std::vector<std::size_t> parse_sizes(const std::string& option, const std::string& noun,
                                     const std::string& text) {
  std::vector<std::size_t> sizes;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    long long n = 0;
    if (!parse_whole_number(item, &n)) {
      throw UsageError("--" + option + " expects whole numbers separated by commas, got '" + text +
                       "'");
    }
    if (n < 1 || n > kMaxBenchLength) {
      throw UsageError("--" + option + ": each " + noun + " must be between 1 and " +
                       std::to_string(kMaxBenchLength) + ", got " + item);
    }
    sizes.push_back(static_cast<std::size_t>(n));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return sizes;
}

std::vector<std::string> parse_sections(const std::string& text) {
  static const std::vector<std::string> kSections = {"bandwidth", "lengths", "kv-bits", "eviction",
                                                     "prompt"};
  std::vector<std::string> sections;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (std::find(kSections.begin(), kSections.end(), item) == kSections.end()) {
      throw UsageError(
          "--sections: unknown section '" + item +
          "' (expected bandwidth, lengths, kv-bits, eviction or prompt, separated by commas)");
    }
    if (std::find(sections.begin(), sections.end(), item) == sections.end()) {
      sections.push_back(item);
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return sections;
}

}  // namespace h2o
