// test_no_allocation.cpp: a decode step allocates nothing (decoder.hpp's promise), and the
// decoder's memory guard counts every byte its caches take (Decoder::cache_memory_bytes).
//
// This file replaces the global operator new and delete to count calls, so it is built as its own
// executable (h2o_alloc_tests): the counting must not leak into the other tests. Counting is
// switched on only around the steps being measured, and no Catch2 macro runs while it is on
// (Catch2 itself allocates).
//
// The counter sees operator new; with glibc (and no sanitizer) also malloc, calloc and realloc,
// which the test of a decode step on 2 threads checks too (OpenMP's runtime uses them).
#include <atomic>
#include "h2o_catch.hpp"
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "h2o/attention/linear.hpp"
#include "h2o/attention/row_threads.hpp"
#include "h2o/base/random.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/policy/fastgen_policy.hpp"
#include "h2o/policy/h2o_policy.hpp"
#include "h2o/policy/policy_factory.hpp"
#include "policy_test_support.hpp"

// =============================================================================================
// Counting replacements of the global allocation functions

namespace {

std::atomic<bool> counting{false};
std::atomic<std::size_t> new_calls{0};
std::atomic<std::size_t> new_bytes{0};

void count(std::size_t size) {
  if (!counting.load(std::memory_order_relaxed)) return;
  new_calls.fetch_add(1, std::memory_order_relaxed);
  new_bytes.fetch_add(size, std::memory_order_relaxed);
}

void* counted_allocation(std::size_t size) {
  count(size);
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void* counted_aligned_allocation(std::size_t size, std::align_val_t alignment) {
  count(size);
  const std::size_t align = static_cast<std::size_t>(alignment);
  const std::size_t rounded = ((size == 0 ? 1 : size) + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

// Counts operator new calls made while `body` runs.
template <class Body>
std::size_t count_new_calls(Body&& body) {
  new_calls.store(0);
  counting.store(true);
  body();
  counting.store(false);
  return new_calls.load();
}

// Bytes asked of operator new while `body` runs.
template <class Body>
std::size_t count_new_bytes(Body&& body) {
  new_bytes.store(0);
  counting.store(true);
  body();
  counting.store(false);
  return new_bytes.load();
}

}  // namespace

void* operator new(std::size_t size) { return counted_allocation(size); }
void* operator new[](std::size_t size) { return counted_allocation(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return counted_allocation(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return counted_allocation(size);
  } catch (...) {
    return nullptr;
  }
}
void* operator new(std::size_t size, std::align_val_t a) {
  return counted_aligned_allocation(size, a);
}
void* operator new[](std::size_t size, std::align_val_t a) {
  return counted_aligned_allocation(size, a);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

// malloc, calloc and realloc, counted too where that is safe (glibc, no sanitizer: a sanitizer
// replaces them itself): OpenMP's runtime takes its memory with malloc, not operator new.
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) && \
    !defined(H2O_NO_MALLOC_COUNT)
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define H2O_NO_MALLOC_COUNT 1
#endif
#endif
#endif
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) && \
    !defined(H2O_NO_MALLOC_COUNT)
#define H2O_MALLOC_COUNTED 1
namespace {
std::atomic<std::size_t> malloc_calls{0};
}  // namespace
extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* malloc(std::size_t size) {
  if (counting.load(std::memory_order_relaxed)) malloc_calls.fetch_add(1);
  return __libc_malloc(size);
}
void* calloc(std::size_t n, std::size_t size) {
  if (counting.load(std::memory_order_relaxed)) malloc_calls.fetch_add(1);
  return __libc_calloc(n, size);
}
void* realloc(void* p, std::size_t size) {
  if (counting.load(std::memory_order_relaxed)) malloc_calls.fetch_add(1);
  return __libc_realloc(p, size);
}
}
#endif

// =============================================================================================
// Tests

using namespace h2o;

namespace {

std::shared_ptr<const DecoderWeights> stories_shaped_model(std::size_t seq_len) {
  ModelConfig config = stories260k_shape();
  config.seq_len = seq_len;
  return std::make_shared<const DecoderWeights>(random_weights(config, 42));
}

std::vector<int> random_tokens(std::size_t n, std::size_t vocab) {
  Rng rng(43);
  std::vector<int> tokens(n);
  for (int& t : tokens) t = static_cast<int>(rng.below(static_cast<std::uint32_t>(vocab)));
  return tokens;
}

// Runs `warm_up` tokens, then counts operator new calls over the following `measured` tokens.
std::size_t new_calls_while_decoding(Decoder& decoder, const std::vector<int>& tokens,
                                     std::size_t warm_up, std::size_t measured) {
  for (std::size_t i = static_cast<std::size_t>(decoder.position()); i < warm_up; ++i) {
    decoder.forward(tokens[i]);
  }
  return count_new_calls([&] {
    for (std::size_t i = warm_up; i < warm_up + measured; ++i) decoder.forward(tokens[i]);
  });
}

}  // namespace

TEST_CASE("the allocation counter sees operator new", "[no_allocation]") {
  // Without this, a broken counter would let every other test here pass.
  // The pointers escape through a volatile, so the compiler cannot optimise the allocations away.
  static void* volatile escape = nullptr;
  const std::size_t calls = count_new_calls([] {
    auto* p = new int(7);
    escape = p;
    std::vector<float> v(100);
    escape = v.data();
    delete p;
  });
  CHECK(calls == 2);
  CHECK(escape != nullptr);
#ifdef H2O_MALLOC_COUNTED
  malloc_calls.store(0);
  count_new_calls([] {
    void* p = std::malloc(64);
    escape = p;
    std::free(p);
  });
  CHECK(malloc_calls.load() == 1);
#endif
}

TEST_CASE("a full cache decode step allocates nothing", "[no_allocation]") {
  const auto weights = stories_shaped_model(256);
  const std::vector<int> tokens = random_tokens(256, weights->config.vocab_size);
  Decoder decoder(weights, policy_of<FullCachePolicy>());
  CHECK(new_calls_while_decoding(decoder, tokens, 8, 200) == 0);
  CHECK(decoder.position() == 208);
}

TEST_CASE("a decode step shared by 2 threads allocates nothing", "[no_allocation]") {
  const auto weights = h2o_test::random_shared_products_model(128, 44);
  const ModelConfig& config = weights->config;
  const std::vector<int> tokens = random_tokens(128, config.vocab_size);
  set_matmul_threads(2);  // OpenMP starts its threads at the first shared product (allocates)
  Decoder decoder(weights, policy_of<FullCachePolicy>());
#ifdef H2O_MALLOC_COUNTED
  malloc_calls.store(0);
#endif
  // The first tokens run alone until N threads have proved themselves (row_threads.hpp): warm up
  // past the first probe on the 2 threads, so that OpenMP's team has started.
  const std::size_t warm = 1 + (kFirstChoicePeriod + 1) * kChoiceBlockTokens;
  const std::size_t calls = new_calls_while_decoding(decoder, tokens, warm, 100);
  set_matmul_threads(1);
  CHECK(calls == 0);
  CHECK(decoder.position() == warm + 100);
#ifdef H2O_MALLOC_COUNTED
  // Nor does OpenMP's runtime, which reuses its team from one product to the next (the counter
  // counts operator new's own mallocs too, and there were none).
  CHECK(malloc_calls.load() == 0);
#endif
}

TEST_CASE("an h2o decode step with evictions allocates nothing", "[no_allocation]") {
  const ScoringMode mode = GENERATE(ScoringMode::PerHead, ScoringMode::Shared);
  const auto weights = stories_shaped_model(256);
  const std::vector<int> tokens = random_tokens(256, weights->config.vocab_size);
  Decoder decoder(weights, policy_of<H2OPolicy>(CacheBudget{8, 8}, mode));
  // The warm-up already fills the budget, so every measured step evicts one token per head.
  CHECK(new_calls_while_decoding(decoder, tokens, 20, 200) == 0);
  CHECK(decoder.evicted_tokens(0) == 220 - 16);
}

namespace {
// Steps to read before counting: `steps`, or for a policy that profiles its first tokens
// (FastGen, DuoAttention) past its profile, whose last token sets the rules and cuts each head
// once (that cut allocates, as a prompt's one cut does).
std::size_t warm_up_steps(const Decoder& decoder, std::size_t steps) {
  return std::max(steps, decoder.policy().prompt_tokens() + 1);
}
}  // namespace

TEST_CASE("every policy's decode steps with evictions allocate nothing", "[no_allocation]") {
  const ScoringMode mode = GENERATE(ScoringMode::PerHead, ScoringMode::Shared);
  for (const PolicyKind& kind : policy_kinds()) {
    INFO(kind.name << ", " << to_string(mode) << " scores");
    const auto weights = stories_shaped_model(256);
    const std::vector<int> tokens = random_tokens(256, weights->config.vocab_size);
    PolicySettings settings = settings_for_budget(kind.name, 16);
    settings.scoring = mode;
    Decoder decoder(weights, make_policy(kind.name, settings));
    const std::size_t budget = decoder.policy().max_tokens(256);
    // The warm-up already fills the budget, so every measured step evicts one token per head
    // (the full cache excepted: it only grows, within what it reserved).
    CHECK(new_calls_while_decoding(decoder, tokens, warm_up_steps(decoder, 20), 200) == 0);
    // FastGen's heads keep what their rules keep (test_fastgen_policy.cpp counts them).
    if (!kind.sized_by_budget) continue;
    // As many evictions in all as a uniform budget makes (budgets may differ by layer or head).
    const ModelConfig& c = decoder.config();
    std::size_t held = 0;
    for (std::size_t l = 0; l < c.n_layers; ++l) held += decoder.cache(l).total_size();
    CHECK(held == c.n_layers * c.n_kv_heads * std::min<std::size_t>(budget, 220));
  }
}

TEST_CASE("quantised caches' decode steps allocate nothing, with every policy", "[no_allocation]") {
  // Quantising a closed group, dequantising rows for attention and evicting from a group all
  // work in the arrays the cache allocated once (2 full groups of 8 pass in the measured steps).
  const unsigned bits = GENERATE(8u, 4u, 2u);
  for (const PolicyKind& kind : policy_kinds()) {
    INFO(kind.name << ", " << bits << " bits");
    const auto weights = stories_shaped_model(256);
    const std::vector<int> tokens = random_tokens(256, weights->config.vocab_size);
    Decoder decoder(weights, make_policy(kind.name, settings_for_budget(kind.name, 16)), 0,
                    KvFormat{bits, 8});
    CHECK(new_calls_while_decoding(decoder, tokens, warm_up_steps(decoder, 20), 100) == 0);
    CHECK(decoder.cache(0).quantised_rows(0) > 0);
  }
}

TEST_CASE("attention recording and filter rows eviction do allocate", "[no_allocation]") {
  // The two documented exceptions, measured so the counter is known to see decoder allocations.
  const auto weights = stories_shaped_model(64);
  const std::vector<int> tokens = random_tokens(64, weights->config.vocab_size);
  Decoder recording(weights, policy_of<FullCachePolicy>());
  recording.set_record_attention(true);
  CHECK(new_calls_while_decoding(recording, tokens, 4, 10) > 0);

  Decoder filtering(weights, h2o_test::h2o_policy_in_style(CacheBudget{4, 4}, ScoringMode::PerHead,
                                                           h2o_test::EvictionStyle::FilterRows));
  CHECK(new_calls_while_decoding(filtering, tokens, 12, 10) > 0);
}

TEST_CASE("decode steps after a batched prompt allocate nothing", "[no_allocation]") {
  // forward_batch allocates its chunk buffers once; the steps after it are still free of
  // allocations, and so is a second prompt batch of the same decoder.
  for (const PolicyKind& kind : policy_kinds()) {
    INFO(kind.name);
    const auto weights = stories_shaped_model(256);
    const std::vector<int> tokens = random_tokens(256, weights->config.vocab_size);
    Decoder decoder(weights, make_policy(kind.name, settings_for_budget(kind.name, 16)));
    decoder.forward_batch(std::vector<int>(tokens.begin(), tokens.begin() + 100));
    CHECK(new_calls_while_decoding(decoder, tokens, 100, 100) == 0);
    const std::vector<int> more(tokens.begin() + 200, tokens.begin() + 240);
    CHECK(count_new_calls([&] { decoder.forward_batch(more); }) == 0);
    CHECK(decoder.position() == 240);
  }
}

TEST_CASE("the memory guard counts every byte a decoder allocates per cache slot",
          "[no_allocation]") {
  // Two decoders that differ only in how many positions they hold: what they allocate differs by
  // exactly the memory that grows with the slots, which Decoder::cache_memory_bytes must count,
  // or the 4 GiB guard lets through more than it says (it once counted only keys and values).
  const auto weights = stories_shaped_model(512);
  const auto bytes_of_decoder = [&](std::size_t positions) {
    std::unique_ptr<Decoder> decoder;
    std::unique_ptr<CachePolicy> policy = policy_of<FullCachePolicy>();
    const std::size_t bytes = count_new_bytes(
        [&] { decoder = std::make_unique<Decoder>(weights, std::move(policy), positions); });
    return bytes;
  };
  const std::size_t small = bytes_of_decoder(100), large = bytes_of_decoder(400);
  const ModelConfig& config = weights->config;
  CHECK(large - small ==
        Decoder::cache_memory_bytes(config, 400) - Decoder::cache_memory_bytes(config, 100));
  // And the estimate covers the per-slot part of what the constructor allocated.
  CHECK(Decoder::cache_memory_bytes(config, 400) <= large);
  // The same for a quantised cache (its arrays are other ones, and more of them).
  const KvFormat four_bits{4, 32};
  const auto bytes_of_quantised = [&](std::size_t positions) {
    std::unique_ptr<Decoder> decoder;
    std::unique_ptr<CachePolicy> policy = policy_of<FullCachePolicy>();
    return count_new_bytes([&] {
      decoder = std::make_unique<Decoder>(weights, std::move(policy), positions, four_bits);
    });
  };
  CHECK(bytes_of_quantised(400) - bytes_of_quantised(100) ==
        Decoder::cache_memory_bytes(config, 400, four_bits, 400) -
            Decoder::cache_memory_bytes(config, 100, four_bits, 100));
}
