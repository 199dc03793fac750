// bench_decode_options.hpp: the command line of tools/bench_decode.cpp: its option table and the
// checks of every value, as library functions. The program and the option fuzz harness (fuzz/)
// both call them, so the harness parses exactly what users type into bench_decode.
//
// Every problem with an option is a UsageError (exit code 2) with a one-line message naming the
// option.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/app/threads_option.hpp"
#include "h2o/cache/budget.hpp"
#include "h2o/cache/kv_quantiser.hpp"
#include "h2o/model/model_config.hpp"

namespace h2o {

// Longest sequence a user may ask for. The full cache's total cost grows with N^2 (16384 tokens
// cost about 16 times the default 4096), so far beyond this a run would look like a hang.
constexpr long long kMaxBenchLength = 16384;

struct BenchDecodeOptions {
  std::vector<std::string> sections;  // --sections: bandwidth, lengths, kv-bits, eviction, prompt
  ModelConfig shape;                  // --shape: 260k, 15m or 110m (random weights)
  std::vector<std::size_t> lengths;   // --lengths, in the order given
  CacheBudget budget{64, 64};         // --heavy, --recent (section lengths)
  std::vector<std::size_t> budgets;   // --budgets (section eviction), each at least 2
  std::vector<std::size_t> prompts;   // --prompt (section prompt)
  ThreadsOption threads;              // --threads N, --fixed-threads
  std::size_t repeats = 3;            // --repeats
  std::uint64_t seed = 1;             // --seed
  std::size_t kv_group = 32;          // --kv-group (section kv-bits)
  std::size_t kv_residual = 0;        // --kv-residual (section kv-bits), a multiple of kv_group
};

// bench_decode's options and --help text.
ArgParser bench_decode_arguments();

// Reads and checks every option of a parsed bench_decode_arguments(); throws UsageError.
BenchDecodeOptions bench_decode_options(const ArgParser& args);

// "128,256" -> {128, 256}: whole numbers from 1 to kMaxBenchLength separated by commas; anything
// else is a UsageError naming --option (`noun` names one item: "length", "budget").
std::vector<std::size_t> parse_sizes(const std::string& option, const std::string& noun,
                                     const std::string& text);

// "lengths,prompt" -> the sections to print, each once; an unknown name is a UsageError.
std::vector<std::string> parse_sections(const std::string& text);

}  // namespace h2o
