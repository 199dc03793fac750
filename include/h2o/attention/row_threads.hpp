// row_threads.hpp: the threads that share the weight products (--threads N), from OpenMP.
//
// A product's output rows are cut into contiguous blocks, and an OpenMP `parallel for` hands the
// blocks to a team of N threads (the caller and N - 1 of OpenMP's), as llama2.c's run.c does with
// `#pragma omp parallel for` over its matmul's rows when built with -fopenmp. Each output row is
// computed by one thread, front to back, exactly as with one thread: the results are the same
// bits whatever N is. The decoder shares attention's KV heads the same way.
//
// OpenMP's runtime (GCC's libgomp, LLVM's libomp) starts the team at the first shared product and
// keeps it: between two products its threads spin for a while, then sleep, and the next product
// reuses the same team (no thread is started and nothing is allocated per product).
//
// Every shared product ends at OpenMP's barrier, which waits until each thread of the team has
// run, and between two products the team's threads wait for the next one. How they wait decides
// what threads are worth on a busy machine. OpenMP's default (GCC's libgomp: 300,000 checks of a
// flag, one `pause` instruction apart, before a thread sleeps: 3 ms on an old CPU, 18 ms on a
// Sapphire Rapids Xeon, whose `pause` takes about 60 ns) spins so long that on a machine with more
// busy programs than cores a waiting thread burns the core that the thread it waits for needs:
// --threads 2 ran at a tenth of one thread's speed beside other work. So when the user sets none
// of OMP_WAIT_POLICY, GOMP_SPINCOUNT and KMP_BLOCKTIME, the program chooses: a waiting thread
// spins for 1,000 checks (60 us on that Xeon; libomp: 1 ms), then sleeps. Within a token the next
// product comes far sooner, so on a quiet machine the team never sleeps between products; on a
// busy one a thread without a core costs the others at most that long. LLVM's libomp takes the
// choice at once (kmp_set_blocktime); GCC's libgomp reads its variables only while the program is
// loaded, so a program about to share products starts itself again with them set
// (app/threads_option.hpp), once, before it has read or written anything. A user's own setting of
// any of the three wins, whole.
//
// A short wait is not enough where the machine has more busy programs than cores: N threads that
// meet at every product's end then wait for each other's turn on a core, and can run slower than
// one thread. So each decoded token runs on the N threads or on the calling thread alone, whichever
// recent tokens ran faster on (TokenThreads, below; --fixed-threads turns it off).
//
// Built without OpenMP (no compiler support found, or -DH2O_OPENMP=OFF), every product runs on the
// calling thread: row_threads_available() is false, set_row_threads still accepts any N and
// row_threads() stays 1. The programs then print a one-line note for --threads N > 1.
//
// OpenBLAS, which the batched prompt's matrix-matrix products use, is kept at one thread: those
// products are split over these same threads too (linear.cpp), so the two never compete for cores.
//
// Dimension legend: rows = output rows of one product.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace h2o {

// Most threads set_row_threads accepts.
constexpr std::size_t kMaxRowThreads = 256;

// Below this many floats read (256 KiB) a product stays on the calling thread: waking the team and
// waiting for it at the end costs about a microsecond, as much as such a product itself (every
// product of stories260K is this small; stories15M's smallest, 288 x 288, is not). The `share`
// argument of for_row_blocks is `floats read >= kMinFloatsToShare`.
constexpr std::size_t kMinFloatsToShare = std::size_t{1} << 16;

// Whether this build can share products between threads (it was built with OpenMP).
bool row_threads_available();

// N threads share the products from now on, N in [1, kMaxRowThreads] (std::invalid_argument
// otherwise); 1 = everything on the calling thread. Without OpenMP any N runs on one thread.
// Not to be called while a product runs.
void set_row_threads(std::size_t threads);
// The threads a shared product runs on: the last N set (1 without OpenMP).
std::size_t row_threads();

// How waiting threads wait (see above), in words for a report: "spin for 1000 checks (libomp:
// 1 ms), then sleep: the program's choice", or "as OMP_WAIT_POLICY=passive says: your choice".
std::string row_threads_wait_policy();
// True while the program's choice is due but not in effect: OpenMP is there and the user set none
// of the three variables.
bool program_wait_pending();
// Puts the program's choice in effect where the runtime still takes it (libomp); false when it
// does not (libgomp): then only a program started with program_wait_environment() has it.
bool apply_program_wait();
// The variables that give the program's choice to a program started with them (and say so to it).
std::vector<std::pair<std::string, std::string>> program_wait_environment();

// ------------------------------------------------------------ one thread or N, token by token
// On a machine busier than its cores (a browser, a build, two other programs), N threads that
// meet at every product's barrier can be slower than one: a thread without a core holds the
// others up, and the waiting costs more than the sharing gains. So with N > 1 threads set, each
// decoded token (one TokenThreads in Decoder::forward) runs its products either on the N threads
// or on the calling thread alone, whichever recent tokens ran faster on. Tokens are timed in
// blocks of kChoiceBlockTokens; after `period` blocks on the current choice one block runs on the
// other (a probe), and each choice keeps a running mean of its seconds per token over its blocks
// (half the last block, half the mean before). A probe that confirms the choice doubles the period,
// up to kLongestChoicePeriod blocks; one that overturns it starts it again at
// kFirstChoicePeriod. The results are the same bits either way (each row is computed by one thread
// in any case); only the speed changes. On a quiet machine 1 block in kLongestChoicePeriod + 1
// runs on one thread once the choice is settled; on a busy one, as many run on N.
// The costs are lopsided, and a short run pays them before any choice has settled: on a quiet
// machine a token alone costs about 1.3 on N threads, on a busy one a token on N threads can cost
// 4 to 10 alone. So the first tokens run alone (N threads have to prove themselves), and a probe
// token slower than kProbeGiveUp times the current choice's mean ends its probe at once: a losing
// probe costs one token, not a block.
constexpr std::size_t kChoiceBlockTokens = 4;
constexpr std::size_t kFirstChoicePeriod = 2;
constexpr std::size_t kLongestChoicePeriod = 64;
constexpr double kProbeGiveUp = 1.25;

// How the tokens of this program ran so far (for a report: "2 threads for 97% of the tokens").
struct TokenThreadCounts {
  std::size_t on_all = 0;  // tokens run on the N threads
  std::size_t on_one = 0;  // tokens run on the calling thread alone
};
TokenThreadCounts token_thread_counts();

// The choice itself, given each token's seconds (TokenThreads times them; tests give their own).
class TokenThreadChoice {
 public:
  // Whether the next token runs on the N threads (true) or alone.
  bool next_on_all() const { return probing_ ? !on_all_ : on_all_; }
  // The token just run (on next_on_all()'s choice) took `seconds`. The first token given is not
  // counted (it warms the caches: a measure of neither choice).
  void token_done(double seconds);
  // The running means of seconds per token, alone and on N threads (0: not measured yet).
  double seconds_alone() const { return seconds_per_token_[0]; }
  double seconds_on_all() const { return seconds_per_token_[1]; }

 private:
  bool on_all_ = false;   // the current choice: alone until N threads have run faster
  bool probing_ = false;  // the block running now is a probe of the other choice
  bool warm_ = false;
  double seconds_per_token_[2] = {0.0, 0.0};  // (2,): alone, on N threads
  std::size_t block_tokens_ = 0;
  double block_seconds_ = 0.0;
  std::size_t period_ = kFirstChoicePeriod;
  std::size_t blocks_until_probe_ = kFirstChoicePeriod;
};

// Whether the choice above is made (the default) or every token runs on the N threads
// (bench_decode --fixed-threads, to measure what N threads do on their own).
void set_token_thread_choice(bool choose);

// One decoded token: its constructor sets how many threads this token's products run on, its
// destructor times the token and updates the choice. Does nothing with one thread set.
class TokenThreads {
 public:
  TokenThreads();
  ~TokenThreads();
  TokenThreads(const TokenThreads&) = delete;
  TokenThreads& operator=(const TokenThreads&) = delete;

 private:
  bool timed_ = false;
  long long start_ns_ = 0;  // steady clock, nanoseconds
};

// Runs work(context, first, last) over rows [0, rows), cut into contiguous blocks shared by the
// threads, and returns when every block is done; every row is in exactly one block. With `share`
// false (a product too small to be worth waking the team), or while a token runs alone
// (TokenThreads), the calling thread does all the rows itself, in one call.
using RowWork = void (*)(void* context, std::size_t first, std::size_t last);
void for_row_blocks(std::size_t rows, bool share, RowWork work, void* context);

}  // namespace h2o
