#include "h2o/attention/row_threads.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <string>

#ifdef _OPENMP
#include <omp.h>
// LLVM's libomp's own call for its block time; absent (null) under GCC's libgomp.
extern "C" void kmp_set_blocktime(int milliseconds) __attribute__((weak));
#endif

#include "h2o/base/format.hpp"

namespace h2o {

namespace {

// A shared product is cut into this many blocks per thread, and OpenMP hands them out one at a
// time to whichever thread is free (schedule(dynamic)). With one block per thread (run.c's static
// split) a thread that loses its core on a busy machine holds the whole product up until it gets
// the core back; with several, the other threads take its remaining blocks. Blocks stay big (a
// 288-row product of stories15M on 2 threads: 36 rows, 41 KiB of weights each), so handing one out
// (one atomic add in the runtime) costs nothing next to reading it.
constexpr std::size_t kBlocksPerThread = 4;

std::size_t g_threads = 1;  // set_row_threads

// ------------------------------------------------------------ one thread or N, token by token
// The program's choice (row_threads.hpp), made and read on the thread that decodes: OpenMP's
// threads never read it (for_row_blocks reads it before it starts them).
TokenThreadChoice g_choice;
bool g_choose = true;      // set_token_thread_choice
bool g_alone_now = false;  // the token running now runs on the calling thread alone
TokenThreadCounts g_counts;

long long steady_nanoseconds() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// ------------------------------------------------------------------ how a waiting thread waits
// The variables with which a user chooses how OpenMP's waiting threads wait: the standard one,
// GCC's libgomp's spin count and LLVM's libomp's block time. Any of them set: the user's choice.
constexpr const char* kUserWaitVariables[] = {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "KMP_BLOCKTIME"};
// The program's choice otherwise (row_threads.hpp says why): libgomp checks the flag it waits on
// kWaitSpins times, one `pause` instruction apart, before it sleeps; libomp spins for
// kWaitMilliseconds (its shortest block time but 0) before it sleeps.
constexpr const char* kWaitSpins = "1000";
constexpr int kWaitMilliseconds = 1;
// Set beside the program's choice in a restarted program's environment: those variables are the
// program's, not the user's, and already in effect.
constexpr const char* kChosenMarker = "H2O_OPENMP_WAIT";
constexpr const char* kChosenMarkerValue = "program";

enum class Wait { Unknown, User, ChosenPending, ChosenInEffect };
Wait g_wait = Wait::Unknown;

Wait wait_state() {
  if (g_wait != Wait::Unknown) return g_wait;
  const char* marker = std::getenv(kChosenMarker);
  if (marker != nullptr && std::string(marker) == kChosenMarkerValue)
    return g_wait = Wait::ChosenInEffect;
  for (const char* name : kUserWaitVariables) {
    if (std::getenv(name) != nullptr) return g_wait = Wait::User;
  }
  return g_wait = Wait::ChosenPending;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> program_wait_environment() {
  return {{"GOMP_SPINCOUNT", kWaitSpins},
          {"KMP_BLOCKTIME", std::to_string(kWaitMilliseconds)},
          {kChosenMarker, kChosenMarkerValue}};
}

bool program_wait_pending() {
  return row_threads_available() && wait_state() == Wait::ChosenPending;
}

bool apply_program_wait() {
  if (!program_wait_pending()) return true;
#ifdef _OPENMP
  if (kmp_set_blocktime != nullptr) {  // LLVM's libomp: it takes the block time at any moment
    kmp_set_blocktime(kWaitMilliseconds);
    g_wait = Wait::ChosenInEffect;
    return true;
  }
#endif
  return false;  // libgomp read its variables when the program was loaded
}

std::string row_threads_wait_policy() {
  if (!row_threads_available()) return "one thread (built without OpenMP)";
  const Wait state = wait_state();
  if (state == Wait::ChosenPending) return "as the OpenMP runtime waits by default";
  if (state == Wait::ChosenInEffect) {
    return std::string("spin for ") + kWaitSpins +
           " checks (libomp: " + std::to_string(kWaitMilliseconds) +
           " ms), then sleep: the program's choice";
  }
  std::string set;
  for (const char* name : kUserWaitVariables) {
    if (const char* value = std::getenv(name)) {
      set += (set.empty() ? "" : ", ") + std::string(name) + "=" + printable(value, 40);
    }
  }
  return "as " + set + " says: your choice";
}

bool row_threads_available() {
#ifdef _OPENMP
  return true;
#else
  return false;
#endif
}

void set_row_threads(std::size_t threads) {
  if (threads < 1 || threads > kMaxRowThreads) {
    throw std::invalid_argument("the weight products can use 1 to " +
                                std::to_string(kMaxRowThreads) + " threads, not " +
                                std::to_string(threads));
  }
  g_threads = row_threads_available() ? threads : 1;
}

std::size_t row_threads() { return g_threads; }

void TokenThreadChoice::token_done(double seconds) {
  if (!warm_) {
    warm_ = true;
    return;
  }
  block_seconds_ += seconds;
  ++block_tokens_;
  const double current = seconds_per_token_[on_all_ ? 1 : 0];
  const bool losing_probe = probing_ && current > 0.0 && seconds > kProbeGiveUp * current;
  if (block_tokens_ < kChoiceBlockTokens && !losing_probe) return;
  const double per_token = block_seconds_ / static_cast<double>(block_tokens_);
  double& mean = seconds_per_token_[next_on_all() ? 1 : 0];
  mean = mean == 0.0 ? per_token : 0.5 * mean + 0.5 * per_token;
  block_tokens_ = 0;
  block_seconds_ = 0.0;
  if (probing_) {
    probing_ = false;
    const bool both = seconds_per_token_[0] > 0.0 && seconds_per_token_[1] > 0.0;
    const bool faster_on_all = !both || seconds_per_token_[1] <= seconds_per_token_[0];
    period_ =
        faster_on_all == on_all_ ? std::min(2 * period_, kLongestChoicePeriod) : kFirstChoicePeriod;
    on_all_ = faster_on_all;
    blocks_until_probe_ = period_;
  } else if (--blocks_until_probe_ == 0) {
    probing_ = true;
  }
}

TokenThreadCounts token_thread_counts() { return g_counts; }

void set_token_thread_choice(bool choose) { g_choose = choose; }

TokenThreads::TokenThreads() {
  if (g_threads == 1) return;
  timed_ = g_choose;
  g_alone_now = timed_ && !g_choice.next_on_all();
  ++(g_alone_now ? g_counts.on_one : g_counts.on_all);
  if (timed_) start_ns_ = steady_nanoseconds();
}

TokenThreads::~TokenThreads() {
  g_alone_now = false;
  if (timed_) g_choice.token_done(static_cast<double>(steady_nanoseconds() - start_ns_) * 1e-9);
}

void for_row_blocks(std::size_t rows, bool share, RowWork work, void* context) {
  if (rows == 0) return;
  const std::size_t threads = g_alone_now ? 1 : std::min(g_threads, rows);
  if (!share || threads == 1) {
    work(context, 0, rows);
    return;
  }
#ifdef _OPENMP
  // Block b is rows [rows * b / blocks, rows * (b + 1) / blocks): contiguous, in order, together
  // exactly rows [0, rows), each handed to one thread.
  const std::size_t blocks = std::min(rows, threads * kBlocksPerThread);
  const long long block_count = static_cast<long long>(blocks);
#pragma omp parallel for num_threads(static_cast <int>(threads)) schedule(dynamic, 1)
  for (long long b = 0; b < block_count; ++b) {
    const std::size_t block = static_cast<std::size_t>(b);
    work(context, rows * block / blocks, rows * (block + 1) / blocks);
  }
#else
  work(context, 0, rows);  // not reached: g_threads is 1 without OpenMP
#endif
}

}  // namespace h2o
