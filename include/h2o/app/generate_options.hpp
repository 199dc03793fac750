// generate_options.hpp: the command line of tools/generate.cpp: its option table and the checks
// of every value, as library functions. The program and the option fuzz harness (fuzz/) both call
// them, so the harness parses exactly what users type into generate.
//
// Every problem with an option is a UsageError (exit code 2) with a one-line message naming the
// option; nothing here reads a file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "h2o/app/cli.hpp"
#include "h2o/app/default_files.hpp"
#include "h2o/app/threads_option.hpp"
#include "h2o/cache/kv_quantiser.hpp"
#include "h2o/policy/cache_policy.hpp"
#include "h2o/policy/policy_factory.hpp"

namespace h2o {

// Most threads --threads accepts for the weight matrix products.
constexpr long long kMaxGenerateThreads = 64;

struct GenerateOptions {
  ModelFiles files;                     // --model, --tokenizer
  std::string prompt;                   // --prompt ("" = start from BOS alone)
  std::size_t steps = 0;                // --steps: positions, BOS included; 0 = the model's seq_len
  bool steps_given = false;             // --steps was typed (so capping it deserves a note)
  float temperature = 1.0f;             // --temperature: 0 = greedy
  float top_p = 0.9f;                   // --top-p
  std::uint64_t seed = 42;              // --seed
  ThreadsOption threads;                // --threads N, --fixed-threads
  PolicySettings settings;              // --heavy, --recent, --sinks, --evict-seed, --scoring,
                                        // --h2o-score, --start-area
  bool compress_prompt = false;         // --compress-prompt
  KvFormat kv_format;                   // --kv-bits, --kv-group
  std::unique_ptr<CachePolicy> policy;  // --cache, built from the settings (so they are checked)
};

// generate's options and --help text (the summary lists every policy of the factory).
ArgParser generate_arguments();

// Reads and checks every option of a parsed generate_arguments(); throws UsageError.
GenerateOptions generate_options(const ArgParser& args);

}  // namespace h2o
