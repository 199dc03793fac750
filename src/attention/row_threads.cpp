#include "h2o/attention/row_threads.hpp"

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

class Workers {
 public:
  explicit Workers(std::size_t threads) : threads_(threads) {
    for (std::size_t k = 1; k < threads; ++k) pool_.emplace_back([this, k] { serve(k); });
  }
  ~Workers() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    for (std::thread& t : pool_) t.join();
  }
  std::size_t threads() const { return threads_; }

  // Runs one product over the pool (the caller does block 0) and waits for every block.
  void run(std::size_t rows, RowWork work, void* context) {
    blocks_ = std::min(threads_, rows);
    rows_ = rows;
    work_ = work;
    context_ = context;
    pending_.store(threads_ - 1, std::memory_order_relaxed);
    {
      // Under the mutex, so that a worker between its last look and its wait cannot miss it.
      std::lock_guard<std::mutex> lock(mutex_);
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();  // no system call when nobody sleeps
    do_block(0);
    for (unsigned spins = 0; pending_.load(std::memory_order_acquire) != 0; ++spins) {
      if (spins < 4096) {
        H2O_CPU_RELAX();
      } else {
        std::this_thread::yield();  // a worker lost its core (a busy machine): let it run
      }
    }
  }

 private:
  void do_block(std::size_t k) {
    if (k >= blocks_) return;
    const std::size_t first = rows_ * k / blocks_, last = rows_ * (k + 1) / blocks_;
    if (first < last) work_(context_, first, last);
  }

  void serve(std::size_t k) {
    std::uint64_t seen = 0;
    for (;;) {
      std::uint64_t now = generation_.load(std::memory_order_acquire);
      if (now == seen) {
        const auto spin_until = std::chrono::steady_clock::now() + kSpinBeforeSleep;
        for (unsigned spins = 0; now == seen; ++spins) {
          H2O_CPU_RELAX();
          now = generation_.load(std::memory_order_acquire);
          if (now == seen && spins % 256 == 255 && std::chrono::steady_clock::now() > spin_until) {
            std::unique_lock<std::mutex> lock(mutex_);
            wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
            now = generation_.load(std::memory_order_acquire);
          }
        }
      }
      seen = now;
      if (stop_) return;
      do_block(k);
      pending_.fetch_sub(1, std::memory_order_release);
    }
  }

  const std::size_t threads_;
  std::vector<std::thread> pool_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<std::uint64_t> generation_{0};  // one more for every product handed out
  std::atomic<std::size_t> pending_{0};       // workers not yet done with the current product
  bool stop_ = false;                         // written under mutex_, read after generation_
  // The current product (written before generation_ moves on, read after).
  std::size_t blocks_ = 1, rows_ = 0;
  RowWork work_ = nullptr;
  void* context_ = nullptr;
};

std::unique_ptr<Workers> g_workers;  // null: one thread
std::atomic<bool> g_busy{false};     // a product is running on the workers

}  // namespace

void set_row_threads(std::size_t threads) {
  if (threads < 1 || threads > kMaxRowThreads) {
    throw std::invalid_argument("the weight products can use 1 to " +
                                std::to_string(kMaxRowThreads) + " threads, not " +
                                std::to_string(threads));
  }
  if (threads == row_threads()) return;
  g_workers.reset();
  if (threads > 1) g_workers = std::make_unique<Workers>(threads);
}

std::size_t row_threads() { return g_workers ? g_workers->threads() : 1; }

void for_row_blocks(std::size_t rows, bool share, RowWork work, void* context) {
  if (rows == 0) return;
  // A second caller while the workers are busy (two decoders on two threads) runs its product
  // on its own thread: correct, only not shared.
  if (!share || !g_workers || rows < 2 || g_busy.exchange(true, std::memory_order_acquire)) {
    work(context, 0, rows);
    return;
  }
  g_workers->run(rows, work, context);
  g_busy.store(false, std::memory_order_release);
}

}  // namespace h2o
