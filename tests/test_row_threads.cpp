// test_row_threads.cpp: the threads that share the products (row_threads.hpp), under stress.
//
// 102,000 products, 34,000 on each of 2, 3 and 4 threads (4 is more than a 2-core machine has, so
// threads lose their core mid-product), with row counts that alternate between 1, odd sizes,
// 2^k - 1, 2^k, 2^k + 1 and large ones, big and small after each other: the pattern under which a
// late thread of one product could run rows of the next. Every row of every product must be done
// exactly once, every block handed out must lie inside its product, and every product must end:
// the test runs on a thread of its own and fails (ending the program) if it has not finished after
// kDeadline, instead of hanging CTest. A product costs a few microseconds on a quiet machine (about
// a second for all of them); on a machine busier than its cores, each product waits until every
// thread of the team has had a core again (OpenMP's barrier at the end of a parallel region),
// which can take a millisecond: hence the generous deadline. The same bits with 1 and N threads
// are checked on real products in test_matvec_kernel.cpp.
//
// Dimension legend: rows = output rows of one product.
#include <algorithm>
#include <atomic>
#include <chrono>
#include "h2o_catch.hpp"
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "h2o/attention/row_threads.hpp"

using namespace h2o;

namespace {

constexpr std::size_t kProducts = 34000;  // per thread count
constexpr auto kDeadline = std::chrono::seconds(600);

// The row counts, in the order they come round.
const std::size_t kRowCounts[] = {1,  7,   4097, 2,   31, 33,  1,    255, 257,  3,   6,
                                   63, 65,  1023, 1025, 5,  288, 4096, 1,   768, 17, 2049};

// What one product's blocks did: how many times each row was done, and blocks out of range.
struct Tally {
  std::size_t rows = 0;
  std::vector<std::atomic<unsigned>> done;  // (max rows,) times each row was done
  std::atomic<std::size_t> bad_blocks{0};
  std::mutex ids_mutex;
  std::set<std::thread::id> ids;  // threads that ran a block (first product of each size only)
  bool record_ids = false;
  explicit Tally(std::size_t max_rows) : done(max_rows) {}

  static void run(void* context, std::size_t first, std::size_t last) {
    Tally& t = *static_cast<Tally*>(context);
    if (first >= last || last > t.rows) {
      t.bad_blocks.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    for (std::size_t row = first; row < last; ++row) {
      t.done[row].fetch_add(1, std::memory_order_relaxed);
    }
    if (t.record_ids) {
      std::lock_guard<std::mutex> lock(t.ids_mutex);
      t.ids.insert(std::this_thread::get_id());
    }
  }
};

// Runs kProducts products on `threads` threads; the first problem found, or "" when none.
std::string stress(std::size_t threads, std::size_t* threads_seen) {
  set_row_threads(threads);
  const std::size_t max_rows = *std::max_element(std::begin(kRowCounts), std::end(kRowCounts));
  Tally tally(max_rows);
  const std::size_t sizes = std::size(kRowCounts);
  for (std::size_t product = 0; product < kProducts; ++product) {
    const std::size_t rows = kRowCounts[product % sizes];
    tally.rows = rows;
    tally.record_ids = product % 64 == 0;
    for_row_blocks(rows, true, &Tally::run, &tally);
    // for_row_blocks has returned: every row must be done once, and no row past the product.
    for (std::size_t row = 0; row < max_rows; ++row) {
      const unsigned times = tally.done[row].exchange(0, std::memory_order_relaxed);
      if (times != (row < rows ? 1u : 0u)) {
        return "product " + std::to_string(product) + " (" + std::to_string(rows) +
               " rows): row " + std::to_string(row) + " done " + std::to_string(times) + " times";
      }
    }
    if (tally.bad_blocks.load() != 0) {
      return "product " + std::to_string(product) + " (" + std::to_string(rows) +
             " rows): a block outside [0, rows)";
    }
  }
  *threads_seen = tally.ids.size();
  return "";
}

}  // namespace

TEST_CASE("102,000 products of mixed sizes on 2, 3 and 4 threads: every row once, all finish",
          "[row_threads][stress]") {
  for (std::size_t threads : {2, 3, 4}) {
    INFO(threads << " threads");
    std::size_t threads_seen = 0;
    // On a thread of its own, so that a hang fails the test rather than stopping CTest.
    auto result = std::async(std::launch::async, [&] { return stress(threads, &threads_seen); });
    if (result.wait_for(kDeadline) != std::future_status::ready) {
      std::fprintf(stderr, "row_threads stress test: %zu threads, not finished after %lld s\n",
                   threads, static_cast<long long>(kDeadline.count()));
      std::_Exit(1);
    }
    REQUIRE(result.get() == "");
    // The products were really shared (when this build has threads at all).
    if (row_threads_available()) {
      REQUIRE(threads_seen >= 2);
    } else {
      REQUIRE(threads_seen == 1);
    }
  }
  set_row_threads(1);
}

TEST_CASE("a product too small to share runs on the calling thread, in one block",
          "[row_threads]") {
  set_row_threads(4);
  struct Calls {
    std::vector<std::pair<std::size_t, std::size_t>> blocks;
    std::thread::id caller = std::this_thread::get_id();
    bool other_thread = false;
    static void run(void* context, std::size_t first, std::size_t last) {
      Calls& c = *static_cast<Calls*>(context);
      c.blocks.emplace_back(first, last);  // one block, on the caller: no race
      c.other_thread = c.other_thread || std::this_thread::get_id() != c.caller;
    }
  } calls;
  for_row_blocks(1000, false, &Calls::run, &calls);
  for_row_blocks(0, true, &Calls::run, &calls);  // nothing to do: not called
  for_row_blocks(1, true, &Calls::run, &calls);  // one row: one thread
  set_row_threads(1);
  for_row_blocks(500, true, &Calls::run, &calls);  // one thread
  using Block = std::pair<std::size_t, std::size_t>;
  REQUIRE(calls.blocks == std::vector<Block>{{0, 1000}, {0, 1}, {0, 500}});
  REQUIRE_FALSE(calls.other_thread);
}

TEST_CASE("the thread count is checked, and is 1 in a build without OpenMP", "[row_threads]") {
  REQUIRE_THROWS_AS(set_row_threads(0), std::invalid_argument);
  REQUIRE_THROWS_AS(set_row_threads(kMaxRowThreads + 1), std::invalid_argument);
  set_row_threads(3);
  REQUIRE(row_threads() == (row_threads_available() ? 3u : 1u));
  set_row_threads(1);
  REQUIRE(row_threads() == 1);
}

namespace {
// Feeds `tokens` tokens to `choice`, each taking `alone` seconds when it runs on the calling thread
// alone and `on_all` on the N threads; returns how many ran alone.
std::size_t run_tokens(TokenThreadChoice& choice, std::size_t tokens, double alone, double on_all) {
  std::size_t ran_alone = 0;
  for (std::size_t i = 0; i < tokens; ++i) {
    const bool all = choice.next_on_all();
    ran_alone += all ? 0 : 1;
    choice.token_done(all ? on_all : alone);
  }
  return ran_alone;
}

// Seconds `tokens` tokens take under `choice`, priced as in run_tokens.
double run_seconds(TokenThreadChoice& choice, std::size_t tokens, double alone, double on_all) {
  double seconds = 0.0;
  for (std::size_t i = 0; i < tokens; ++i) {
    const double token = choice.next_on_all() ? on_all : alone;
    seconds += token;
    choice.token_done(token);
  }
  return seconds;
}
}  // namespace

TEST_CASE("a machine where N threads are slower: the first tokens alone, one token per probe",
          "[row_threads]") {
  TokenThreadChoice choice;
  REQUIRE_FALSE(choice.next_on_all());  // alone until N threads have run faster
  // The warming token, then kFirstChoicePeriod blocks alone, then the first probe on N threads.
  const std::size_t first_probe = 1 + kFirstChoicePeriod * kChoiceBlockTokens;
  CHECK(run_tokens(choice, first_probe, 0.001, 0.002) == first_probe);
  CHECK(choice.next_on_all());  // the probe runs on N threads
  // Its first token is slower than kProbeGiveUp times a token alone: the probe ends there.
  CHECK(run_tokens(choice, 1, 0.001, 0.002) == 0);
  CHECK_FALSE(choice.next_on_all());
  CHECK(choice.seconds_alone() == Approx(0.001));
  CHECK(choice.seconds_on_all() == Approx(0.002));
  // From then on one token per probe runs on N threads, the probes ever further apart.
  const std::size_t later = 100000;
  const std::size_t alone = run_tokens(choice, later, 0.001, 0.002);
  CHECK(later - alone <= later / (kLongestChoicePeriod * kChoiceBlockTokens) + 6);
}

TEST_CASE("a probe that is not clearly losing runs its whole block", "[row_threads]") {
  TokenThreadChoice choice;
  const std::size_t first_probe = 1 + kFirstChoicePeriod * kChoiceBlockTokens;
  run_tokens(choice, first_probe, 0.001, 0.0012);  // N threads 1.2x slower: under kProbeGiveUp
  CHECK(run_tokens(choice, kChoiceBlockTokens, 0.001, 0.0012) == 0);
  CHECK_FALSE(choice.next_on_all());  // measured over the block, then turned down
  CHECK(choice.seconds_on_all() == Approx(0.0012));
}

TEST_CASE("a quiet machine: N threads after the first probe, one probe token alone per period",
          "[row_threads]") {
  TokenThreadChoice choice;
  const std::size_t tokens = 100000;
  const std::size_t alone = run_tokens(choice, tokens, 0.0015, 0.001);
  CHECK(choice.next_on_all());
  // The first 1 + kFirstChoicePeriod blocks alone, then probes of one token alone (0.0015 is
  // slower than kProbeGiveUp x 0.001), every 2, 4, ... 64 blocks, then every 64.
  const std::size_t start = 1 + kFirstChoicePeriod * kChoiceBlockTokens;
  CHECK(alone >= start + tokens / ((kLongestChoicePeriod + 1) * kChoiceBlockTokens) - 1);
  CHECK(alone <= start + tokens / (kLongestChoicePeriod * kChoiceBlockTokens) + 6);
}

TEST_CASE("short runs pay little for the choice, on a busy machine and on a quiet one",
          "[row_threads]") {
  // Busy: a token on N threads costs 4 alone (two busy loops on two cores, measured); quiet: a
  // token alone costs 1.3 on N threads. Any run from 32 tokens up keeps 0.8 of one thread's speed
  // on the busy machine, and on the quiet one never runs slower than alone, and from 256 tokens
  // up within 5% of running every token on N threads.
  for (const std::size_t tokens : {32, 48, 64, 100, 128, 200, 256, 512, 1024, 4096}) {
    CAPTURE(tokens);
    TokenThreadChoice busy;
    const double alone_seconds = 0.001 * static_cast<double>(tokens);
    CHECK(alone_seconds / run_seconds(busy, tokens, 0.001, 0.004) >= 0.8);
    TokenThreadChoice quiet;
    const double quiet_seconds = run_seconds(quiet, tokens, 0.0013, 0.001);
    CHECK(quiet_seconds <= 0.0013 * static_cast<double>(tokens));
    if (tokens >= 256) CHECK(quiet_seconds <= 1.05 * 0.001 * static_cast<double>(tokens));
  }
}

TEST_CASE("the choice follows the machine when it becomes busy, and quiet again",
          "[row_threads]") {
  TokenThreadChoice choice;
  run_tokens(choice, 20000, 0.0015, 0.001);  // quiet: settled on N threads, the longest period
  REQUIRE(choice.next_on_all());
  // Busy: within one longest period and its probe (and the running mean's catching up: a few more
  // probes) every token runs alone.
  const std::size_t catch_up = 4 * (kLongestChoicePeriod + 1) * kChoiceBlockTokens;
  run_tokens(choice, catch_up, 0.001, 0.004);
  CHECK_FALSE(choice.next_on_all());
  run_tokens(choice, catch_up, 0.0015, 0.001);
  CHECK(choice.next_on_all());
}
