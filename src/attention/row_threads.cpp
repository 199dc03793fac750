#include "h2o/attention/row_threads.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define H2O_CPU_RELAX() _mm_pause()
#else
#define H2O_CPU_RELAX() std::this_thread::yield()
#endif

namespace h2o {

namespace {

// How long an idle worker spins before it sleeps: longer than the gap between two products of one
// token (a norm, attention, a sampler), much shorter than anything a person would notice.
constexpr auto kSpinBeforeSleep = std::chrono::microseconds(1000);

// How a product's rows are handed out: every thread (the caller too) takes the next piece of the
// rows still free, a piece being that remainder / (kShareOfRemainder * threads) rows, and never
// fewer than rows / (kSmallestPieces * threads). The first pieces are big (few hand-overs: each
// costs a cache-line transfer between the cores), the last ones small, so the threads finish close
// together (with 8 equal blocks per product, 256 tokens of 15M on a busy 2-core AMD EPYC, the
// caller spent 290-310 ms waiting for the worker's last block; with these pieces 67-79 ms). On a
// busy machine a worker may not get a core for milliseconds; the caller then takes the pieces it
// would have taken.
constexpr std::size_t kShareOfRemainder = 2;
constexpr std::size_t kSmallestPieces = 16;

class Workers {
 public:
  explicit Workers(std::size_t threads) : threads_(threads) {
    for (std::size_t k = 1; k < threads; ++k) pool_.emplace_back([this] { serve(); });
  }
  ~Workers() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_.store(true, std::memory_order_relaxed);
      state_.fetch_add(kOneProduct, std::memory_order_release);
    }
    wake_.notify_all();
    for (std::thread& t : pool_) t.join();
  }
  std::size_t threads() const { return threads_; }

  // Runs one product over the pool, the caller taking pieces too, and waits for every row.
  // rows < 2^32 (for_row_blocks runs bigger products alone).
  void run(std::size_t rows, RowWork work, void* context) {
    rows_.store(rows, std::memory_order_relaxed);
    smallest_piece_.store(std::max<std::size_t>(1, rows / (kSmallestPieces * threads_)),
                          std::memory_order_relaxed);
    work_ = work;
    context_ = context;
    done_.store(0, std::memory_order_relaxed);
    std::uint64_t product;
    {
      // Under the mutex, so that a worker between its last look and its wait cannot miss it.
      std::lock_guard<std::mutex> lock(mutex_);
      product = (state_.load(std::memory_order_relaxed) | (kOneProduct - 1)) + 1;  // row 0
      state_.store(product, std::memory_order_release);
    }
    wake_.notify_all();  // no system call when nobody sleeps
    while (take_piece(product)) {
    }
    for (unsigned spins = 0; done_.load(std::memory_order_acquire) != rows; ++spins) {
      if (spins < 4096) {
        H2O_CPU_RELAX();
      } else {
        std::this_thread::yield();  // a worker lost its core mid-piece: let it finish
      }
    }
  }

 private:
  // state_ = (product number << 32) | next free row. A piece is taken by moving the row on with
  // compare-exchange, which also fails when a new product has started meanwhile, so a worker that
  // wakes late never takes rows of a product that is over.
  static constexpr std::uint64_t kOneProduct = std::uint64_t{1} << 32;

  // Takes the next free piece of `product` and runs it; false when there is none.
  bool take_piece(std::uint64_t product) {
    std::uint64_t state = state_.load(std::memory_order_acquire);
    for (;;) {
      if ((state >> 32) != (product >> 32)) return false;  // a later product
      const std::size_t first = static_cast<std::size_t>(state & (kOneProduct - 1));
      // (A late worker may read the next product's fields here; its exchange then fails.)
      const std::size_t rows = rows_.load(std::memory_order_relaxed);
      if (first >= rows) return false;
      const std::size_t piece = std::max(smallest_piece_.load(std::memory_order_relaxed),
                                         (rows - first) / (kShareOfRemainder * threads_));
      const std::size_t last = std::min(rows, first + piece);
      if (state_.compare_exchange_weak(state, state + (last - first),
                                       std::memory_order_acq_rel)) {
        // The piece is ours: the product (and its fields) stays until we report it done.
        work_(context_, first, last);
        done_.fetch_add(last - first, std::memory_order_release);
        return true;
      }
    }
  }

  void serve() {
    std::uint64_t seen = 0;  // the product number last served
    for (;;) {
      std::uint64_t now = state_.load(std::memory_order_acquire) >> 32;
      if (now == seen) {
        const auto spin_until = std::chrono::steady_clock::now() + kSpinBeforeSleep;
        for (unsigned spins = 0; now == seen; ++spins) {
          H2O_CPU_RELAX();
          now = state_.load(std::memory_order_acquire) >> 32;
          if (now == seen && spins % 256 == 255 && std::chrono::steady_clock::now() > spin_until) {
            std::unique_lock<std::mutex> lock(mutex_);
            wake_.wait(lock, [&] {
              return (state_.load(std::memory_order_acquire) >> 32) != seen;
            });
            now = state_.load(std::memory_order_acquire) >> 32;
          }
        }
      }
      seen = now;
      if (stop_.load(std::memory_order_relaxed)) return;  // set before state_ moved on
      while (take_piece(now << 32)) {
      }
    }
  }

  const std::size_t threads_;
  std::vector<std::thread> pool_;
  std::mutex mutex_;
  std::condition_variable wake_;
  // Each on its own cache line: state_ is written by every hand-over, done_ after every piece,
  // the product's fields once per product.
  alignas(64) std::atomic<std::uint64_t> state_{0};  // product number and next free row
  alignas(64) std::atomic<std::size_t> done_{0};     // rows of the current product finished
  alignas(64) std::atomic<bool> stop_{false};        // the pool is closing
  // The current product: written by run() before state_ announces it, read after a piece is taken.
  // Atomic (relaxed) because a worker that wakes late may read them while the next product is
  // being set up; its exchange on state_ then fails and the values are not used.
  std::atomic<std::size_t> rows_{0};
  std::atomic<std::size_t> smallest_piece_{1};
  RowWork work_ = nullptr;
  void* context_ = nullptr;
};

std::size_t g_threads = 1;           // set_row_threads
std::unique_ptr<Workers> g_workers;  // started at the first product worth sharing
std::atomic<bool> g_busy{false};     // a product is running on the workers

}  // namespace

void set_row_threads(std::size_t threads) {
  if (threads < 1 || threads > kMaxRowThreads) {
    throw std::invalid_argument("the weight products can use 1 to " +
                                std::to_string(kMaxRowThreads) + " threads, not " +
                                std::to_string(threads));
  }
  if (threads == g_threads) return;
  g_workers.reset();
  g_threads = threads;
}

std::size_t row_threads() { return g_threads; }

void for_row_blocks(std::size_t rows, bool share, RowWork work, void* context) {
  if (rows == 0) return;
  // A second caller while the workers are busy (two decoders on two threads) runs its product
  // on its own thread: correct, only not shared.
  if (!share || g_threads == 1 || rows < 2 || rows >= (std::size_t{1} << 32) ||
      g_busy.exchange(true, std::memory_order_acquire)) {
    work(context, 0, rows);
    return;
  }
  // Started only now: a model whose products are all too small (stories260K) never has workers
  // spinning next to it. (The one allocation, at the first shared product.)
  if (!g_workers) g_workers = std::make_unique<Workers>(g_threads);
  g_workers->run(rows, work, context);
  g_busy.store(false, std::memory_order_release);
}

}  // namespace h2o
