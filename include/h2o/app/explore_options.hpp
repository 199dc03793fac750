// explore_options.hpp: the command line of tools/explore.cpp (the explorer page): its option table
// and the checks of every value, as library functions, like the other tools' *_options.hpp.
//
// Every problem with an option is a UsageError (exit code 2) with a one-line message naming the
// option; nothing here reads a file (the model, tokenizer and --text are read by the program).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/app/read_twice_options.hpp"
#include "h2o/cache/kv_quantiser.hpp"
#include "h2o/policy/policy_factory.hpp"

namespace h2o {

// Tokens of the longest text the explorer reads (the model's seq_len may lower it): the page
// holds one or two bytes per kept position, step, layer and KV head.
constexpr std::size_t kMaxExploreTokens = 2048;
// Largest page (and so, about, the traces in memory) the explorer writes; its size is estimated
// before the runs (report/explorer_page.hpp: explorer_page_bytes). With the shipped model that
// allows any budget for h2o beside window on the held-out story (912 tokens at 100%: 20 MB, which
// a browser opens in seconds) and refuses two policies with scores at 100% (26 MB).
constexpr std::uint64_t kMaxExploreBytes = 24ull << 20;
// A policy whose rules decide what each head keeps (FastGen, DuoAttention) has a page whose size
// only its run tells: before the runs the explorer knows the most it could be (every head keeping
// every token), and allows that up to this bound (the traces in memory take about the page's
// bytes), then weighs the page itself against kMaxExploreBytes.
constexpr std::uint64_t kMaxExploreRunBytes = 4 * kMaxExploreBytes;

// --budget: "10%" (a share of the text's tokens) or "91" (tokens per layer and KV head).
struct ExploreBudget {
  int percent = 0;         // 1..100 when given as a share, else 0
  std::size_t tokens = 0;  // when given as a count, else 0
  // Tokens per layer and KV head for a text of n tokens.
  std::size_t for_text(std::size_t n) const;
  std::string describe(std::size_t n) const;  // "91 tokens (10% of 912)"
};

struct ExploreOptions {
  std::vector<std::string> policies;  // --policies: 1 or 2 names, factory order
  ExploreBudget budget;               // --budget
  std::string out_path;               // --out: the page
  std::string kept_path;              // --kept: every step's kept positions as text ("" = none)
  PolicySettings scoring;             // --scoring, --h2o-score, --start-area, --heavy-share
  KvFormat kv_format;                 // --kv-bits, --kv-group: the policies' caches (the full
                                      // cache, the reference, keeps float32)
  ReadTwiceOptions read_twice;        // --twice, --secret: the story read twice
                                      // (app/read_twice_options.hpp)
};

// explore's options (model, tokenizer and text files included) and --help text.
ArgParser explore_arguments();

// Reads and checks every option of a parsed explore_arguments(); throws UsageError.
ExploreOptions explore_options(const ArgParser& args);

// "10%" or "91"; a UsageError naming --budget otherwise.
ExploreBudget parse_explore_budget(const std::string& text);

}  // namespace h2o
