// bench_decode.cpp: how fast a full KV cache and H2O decode, how much cache memory each holds,
// what H2O's bookkeeping costs next to attention, and how fast a prompt goes through in batches.
//
// Sections (--sections, any of them, in this order):
//   lengths   a decoder (random weights: speed does not depend on their values) decodes N tokens
//             one at a time, once with the full cache and once with H2O, for several lengths N.
//             The full cache attends over every earlier token, so its time per token grows with
//             N; H2O attends over at most heavy + recent tokens, so once its cache is full its
//             time per token stays flat.
//   kv-bits   the full cache decoding N tokens with its keys and values in float32, 8 and 4 bits
//             (kv_cache.hpp, KIVI's layout, --kv-group, --kv-residual): tokens per second and
//             the KV bytes attention read for each token, the mean over the run (codes, scales,
//             zeros and the float32 rows counted exactly), each as a ratio to float32's. With
//             --kv-residual R the newest R tokens stay float32 (KIVI's window). Attention reads the
//             codes directly (attention/quantised_attention.hpp), so fewer bytes cost no more
//             arithmetic per token than float32 rows.
//   eviction  one layer's cache at an H2O budget B (heavy = recent = B / 2), one token per step:
//             the time of attention (all query heads over the cache) next to the time of H2O's
//             scoring and eviction (after_attention) for the same cache, as a share.
//   prompt    a prompt of P tokens read token by token (forward) and in batches (forward_batch),
//             full cache: prompt tokens per second of each.
//   bandwidth how fast one core reads memory: a 256 MiB buffer (far bigger than any cache) summed
//             front to back, one stream, as decode reads its weights; the median of several
//             passes in GB/s. Decode of a big model cannot go faster than this many bytes per
//             second (scripts/bench_vs_llama2c.sh prints it next to its decode figures). With
//             --threads N, also N threads sharing the buffer as they share a weight product.
// --shape picks the model shape: 260k (default), 15m or 110m (llama2.c's story models).
//
// Measuring fairly: both policies run side by side in the same process, alternating (which one
// goes first swaps every repeat); each figure is the median of the repeats; one warm-up run of each
// policy comes first and is not counted; building a decoder (allocation) is outside the timing.
// Timings vary from run to run and machine to machine: this program prints figures, it checks
// nothing. Results go to stdout as a table.
//
// Dimension legend: N = sequence length (tokens decoded), L = layers, G = KV heads, D = head size.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "h2o/app/bench_decode_options.hpp"
#include "h2o/app/cli.hpp"
#include "h2o/app/kv_format_options.hpp"
#include "h2o/app/program.hpp"
#include "h2o/app/threads_option.hpp"
#include "h2o/attention/attention.hpp"
#include "h2o/attention/linear.hpp"
#include "h2o/attention/matvec_kernel.hpp"
#include "h2o/attention/row_threads.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/random.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/policy/h2o_policy.hpp"

using namespace h2o;

namespace {

// "Last stretch": time per token is also measured over the final tokens of each sequence.
constexpr std::size_t kTailTokens = 128;

// ---------------------------------------------------------------------------------------------
// Timing one decode

struct RunTiming {
  double total_seconds = 0.0;     // all N tokens
  double tail_seconds = 0.0;      // the last min(N, kTailTokens) tokens
  std::size_t live_kv_bytes = 0;  // at the end of the sequence
  // KV bytes attention read for a token, averaged over the N tokens: each step reads every live
  // key and value (codes, scales, zeros and float32 rows: Decoder::live_kv_bytes after append).
  double kv_bytes_read_per_token = 0.0;
};

RunTiming time_decode(const std::shared_ptr<const DecoderWeights>& weights,
                      std::unique_ptr<CachePolicy> policy, const std::vector<int>& tokens,
                      std::size_t length, const KvFormat& format = {}) {
  using Clock = std::chrono::steady_clock;
  Decoder decoder(weights, std::move(policy), length, format);
  const std::size_t tail_start = length - std::min(length, kTailTokens);
  const Clock::time_point start = Clock::now();
  Clock::time_point tail_begin = start;
  double bytes_read = 0.0;  // counted inside the loop: a few additions per layer, every format
  for (std::size_t i = 0; i < length; ++i) {
    if (i == tail_start) tail_begin = Clock::now();
    decoder.forward(tokens[i]);
    bytes_read += static_cast<double>(decoder.live_kv_bytes());
  }
  const Clock::time_point stop = Clock::now();
  RunTiming timing;
  timing.total_seconds = std::chrono::duration<double>(stop - start).count();
  timing.tail_seconds = std::chrono::duration<double>(stop - tail_begin).count();
  timing.live_kv_bytes = decoder.live_kv_bytes();
  timing.kv_bytes_read_per_token = bytes_read / static_cast<double>(length);
  return timing;
}

// The CPU's name as /proc/cpuinfo gives it ("model name"), or "unknown" where there is none.
std::string cpu_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const std::size_t colon = line.find(':');
    if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
  }
  return "unknown";
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// The median run of each policy at one length.
struct LengthResult {
  std::size_t length = 0;
  double full_seconds = 0.0, h2o_seconds = 0.0;            // whole sequence
  double full_tail_seconds = 0.0, h2o_tail_seconds = 0.0;  // last stretch
  std::size_t full_bytes = 0, h2o_bytes = 0;
};

// ---------------------------------------------------------------------------------------------
// Section "kv-bits": the full cache in float32, 8 and 4 bits

void kv_bits_section(const std::shared_ptr<const DecoderWeights>& weights,
                     const std::vector<int>& tokens, const std::vector<std::size_t>& lengths,
                     std::size_t group, std::size_t residual, std::size_t repeats) {
  const std::vector<unsigned> all_bits = {32, 8, 4};
  const std::string window = residual == 0 ? "" : ", newest " + std::to_string(residual) + " fp32";
  std::cout << "Full cache, keys and values in float32, 8 and 4 bits (groups of " << group << window
            << ");\nmedian of " << repeats << " runs, the formats alternating; ratios to float32:\n"
            << pad_right("", 6) << pad_right("  tokens per second", 34)
            << "KV bytes read a token (mean of the run)\n"
            << pad_left("length", 6) << pad_left("fp32", 9) << pad_left("8-bit", 8)
            << pad_left("4-bit", 8) << pad_left("8/32", 6) << pad_left("4/32", 6)
            << pad_left("fp32", 10) << pad_left("8-bit", 9) << pad_left("4-bit", 9)
            << pad_left("8/32", 7) << pad_left("4/32", 7) << "\n"
            << rule(88) << "\n";
  for (std::size_t length : lengths) {
    std::vector<std::vector<double>> seconds(all_bits.size());
    std::vector<double> bytes(all_bits.size());
    for (std::size_t r = 0; r < repeats; ++r) {
      for (std::size_t turn = 0; turn < all_bits.size(); ++turn) {
        const std::size_t f = (turn + r) % all_bits.size();  // who goes first rotates
        const RunTiming t = time_decode(weights, policy_of<FullCachePolicy>(), tokens, length,
                                        KvFormat{all_bits[f], group, residual});
        seconds[f].push_back(t.total_seconds);
        bytes[f] = t.kv_bytes_read_per_token;
      }
    }
    std::vector<double> speed;
    for (const auto& s : seconds) speed.push_back(static_cast<double>(length) / median(s));
    auto ratio = [](double a, double b, int width) { return pad_left(fixed(a / b, 2), width); };
    std::cout << pad_left(std::to_string(length), 6) << pad_left(fixed(speed[0], 0), 9)
              << pad_left(fixed(speed[1], 0), 8) << pad_left(fixed(speed[2], 0), 8)
              << ratio(speed[1], speed[0], 6) << ratio(speed[2], speed[0], 6)
              << pad_left(fixed(bytes[0], 0), 10) << pad_left(fixed(bytes[1], 0), 9)
              << pad_left(fixed(bytes[2], 0), 9) << ratio(bytes[1], bytes[0], 7)
              << ratio(bytes[2], bytes[0], 7) << "\n";
  }
  std::cout << "\n";
}

// ---------------------------------------------------------------------------------------------
// Section "eviction": H2O's bookkeeping next to attention, one layer, one token per step

struct EvictionCost {
  std::size_t budget = 0;
  double attention_ns = 0.0;  // per step: every query head attends over the cache
  double policy_ns = 0.0;     // per step: H2OPolicy::after_attention (scores and eviction)
};

// Nanoseconds that reading the clock twice adds to a measured interval (median of many).
double clock_overhead_ns() {
  using Clock = std::chrono::steady_clock;
  std::vector<double> samples(2001);
  for (double& sample : samples) {
    const Clock::time_point a = Clock::now();
    const Clock::time_point b = Clock::now();
    sample = std::chrono::duration<double, std::nano>(b - a).count();
  }
  return median(samples);
}

// One layer cache of the model's shape at `budget` tokens (heavy = recent = budget / 2): after
// 2 * budget warm-up steps (so the cache is full and scores are spread), `steps` timed steps of
// append, attention, after_attention. Random keys, values and queries, cycled from a pool.
EvictionCost measure_eviction(const ModelConfig& c, std::size_t budget, std::size_t steps,
                              std::uint64_t seed) {
  using Clock = std::chrono::steady_clock;
  const std::size_t H = c.n_heads, G = c.n_kv_heads, D = c.head_dim(), KV = c.kv_dim();
  const QueryGroups groups = c.query_groups();
  const std::size_t group = groups.size(), pool = 257;
  Rng rng(seed);
  std::vector<float> keys(pool * KV), values(pool * KV), queries(pool * H * D);
  for (float& x : keys) x = rng.normal();
  for (float& x : values) x = rng.normal();
  for (float& x : queries) x = rng.normal();
  LayerKVCache cache(G, D, budget + 1);
  H2OPolicy policy(CacheBudget{budget / 2, budget - budget / 2});
  std::vector<float> weights(H * (budget + 1)), outputs(H * D);  // (H, S), (H, D)
  const std::size_t stride = budget + 1;
  // Per-step times; their medians ignore the steps another process interrupted.
  std::vector<double> attention_ns, policy_ns;
  attention_ns.reserve(steps);
  policy_ns.reserve(steps);
  const std::size_t warm_up = 2 * budget;
  for (std::size_t step = 0; step < warm_up + steps; ++step) {
    const std::size_t row = step % pool;
    cache.append(&keys[row * KV], &values[row * KV], static_cast<Position>(step));
    const Clock::time_point t0 = Clock::now();
    for (std::size_t g = 0; g < G; ++g) {
      const std::size_t h = groups.first(g);
      attend_group_into(&queries[(row * H + h) * D], group, cache.keys(g), cache.values(g),
                        cache.size(g), D, &weights[h * stride], stride, &outputs[h * D]);
    }
    const Clock::time_point t1 = Clock::now();
    policy.after_attention(cache, StepAttention{weights.data(), H, stride});
    const Clock::time_point t2 = Clock::now();
    if (step >= warm_up) {
      attention_ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
      policy_ns.push_back(std::chrono::duration<double, std::nano>(t2 - t1).count());
    }
  }
  const double overhead = clock_overhead_ns();
  EvictionCost cost;
  cost.budget = budget;
  cost.attention_ns = std::max(0.0, median(attention_ns) - overhead);
  cost.policy_ns = std::max(0.0, median(policy_ns) - overhead);
  return cost;
}

void eviction_section(const ModelConfig& config, const std::vector<std::size_t>& budgets,
                      std::size_t repeats, std::uint64_t seed) {
  std::cout << "H2O scoring + eviction next to attention, one layer cache\n(" << config.n_heads
            << " query heads, " << config.n_kv_heads << " KV heads, head size " << config.head_dim()
            << "), heavy = recent = budget / 2, per token;\n"
            << "median step of 4096 (clock overhead subtracted), median of " << repeats
            << " runs:\n"
            << pad_left("budget", 8) << pad_left("attention ns", 14) << pad_left("H2O ns", 10)
            << pad_left("H2O / attention", 17) << "\n"
            << rule(49) << "\n";
  for (std::size_t budget : budgets) {
    std::vector<double> attention, policy, share;
    for (std::size_t r = 0; r < repeats; ++r) {
      const EvictionCost cost = measure_eviction(config, budget, 4096, seed + r);
      attention.push_back(cost.attention_ns);
      policy.push_back(cost.policy_ns);
      share.push_back(cost.attention_ns > 0.0 ? cost.policy_ns / cost.attention_ns : 0.0);
    }
    std::cout << pad_left(std::to_string(budget), 8) << pad_left(fixed(median(attention), 0), 14)
              << pad_left(fixed(median(policy), 0), 10)
              << pad_left(fixed(100.0 * median(share), 1) + "%", 17) << "\n";
  }
  std::cout << "\n";
}

// ---------------------------------------------------------------------------------------------
// Section "prompt": a prompt token by token versus in batches

void prompt_section(const std::shared_ptr<const DecoderWeights>& weights,
                    const std::vector<std::size_t>& prompt_lengths, std::size_t repeats,
                    std::uint64_t seed) {
  using Clock = std::chrono::steady_clock;
  const ModelConfig& c = weights->config;
  std::cout << "Prompt processing, full cache: token by token (forward) versus batches of up to "
            << Decoder::kChunkTokens << " tokens\n(forward_batch); median of " << repeats
            << " runs each, alternating:\n"
            << pad_left("prompt", 8) << pad_left("single tok/s", 14)
            << pad_left("batched tok/s", 15) << pad_left("batched/single", 16) << "\n"
            << rule(53) << "\n";
  for (std::size_t length : prompt_lengths) {
    Rng rng(seed + length);
    std::vector<int> tokens(length);
    for (int& t : tokens) t = static_cast<int>(rng.below(static_cast<std::uint32_t>(c.vocab_size)));
    std::vector<double> single, batched;
    for (std::size_t r = 0; r < repeats + 1; ++r) {  // the first round warms up, not counted
      for (int turn = 0; turn < 2; ++turn) {
        const bool batch_turn = (turn == 0) == (r % 2 == 0);
        Decoder decoder(weights, policy_of<FullCachePolicy>(), length);
        const Clock::time_point start = Clock::now();
        if (batch_turn) {
          decoder.forward_batch(tokens);
        } else {
          for (int token : tokens) decoder.forward(token);
        }
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        if (r > 0) (batch_turn ? batched : single).push_back(seconds);
      }
    }
    const double n = static_cast<double>(length);
    const double single_speed = n / median(single), batched_speed = n / median(batched);
    std::cout << pad_left(std::to_string(length), 8) << pad_left(fixed(single_speed, 0), 14)
              << pad_left(fixed(batched_speed, 0), 15)
              << pad_left(fixed(batched_speed / single_speed, 2) + "x", 16) << "\n";
  }
  std::cout << "\n";
}

// ---------------------------------------------------------------------------------------------
// Section "bandwidth": one core's read speed from memory

// Sum of the words of data (n,), as integers: integer additions may be regrouped, so the compiler
// turns this into vector loads and adds on any x86-64 (SSE2) and the loop runs at the speed of the
// loads. The sum is printed, so that the reads cannot be left out.
std::uint32_t sum_words(const std::uint32_t* data, std::size_t n) {
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += data[i];
  return sum;
}

// Sums words [first, last) of a buffer on whichever thread for_row_blocks gives them to.
struct SumBlocks {
  const std::uint32_t* data;
  std::atomic<std::uint32_t> sum{0};
  static void run(void* context, std::size_t first, std::size_t last) {
    SumBlocks& s = *static_cast<SumBlocks*>(context);
    s.sum.fetch_add(sum_words(s.data + first, last - first), std::memory_order_relaxed);
  }
};

// One core's read speed, then (threads > 1) that of `threads` threads sharing the buffer's blocks
// as they share a weight product's rows (row_threads.hpp): what --threads N can gain on decode.
void bandwidth_section(std::size_t repeats, std::size_t threads) {
  using Clock = std::chrono::steady_clock;
  constexpr std::size_t kBytes = std::size_t{256} << 20;
  const std::size_t passes = std::max<std::size_t>(5, 2 * repeats);
  std::vector<std::uint32_t> buffer(kBytes / sizeof(std::uint32_t));
  for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<std::uint32_t>(i);
  std::vector<std::size_t> counts = {1};
  if (threads > 1) counts.push_back(threads);
  for (std::size_t count : counts) {
    set_matmul_threads(count);
    std::vector<double> speeds;
    std::uint32_t check = 0;
    for (std::size_t pass = 0; pass <= passes; ++pass) {  // pass 0 warms up, not counted
      SumBlocks blocks{buffer.data()};
      const Clock::time_point start = Clock::now();
      for_row_blocks(buffer.size(), true, &SumBlocks::run, &blocks);
      const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
      check += blocks.sum.load();
      if (pass > 0) speeds.push_back(static_cast<double>(kBytes) / seconds / 1e9);
    }
    std::sort(speeds.begin(), speeds.end());
    std::cout << "read bandwidth, "
              << (count == 1 ? std::string("one core, one stream")
                             : std::to_string(count) + " threads")
              << " over 256 MiB: " << fixed(median(speeds), 1) << " GB/s (median of " << passes
              << " passes; lowest " << fixed(speeds.front(), 1) << ", highest "
              << fixed(speeds.back(), 1) << "; checksum " << check << ")\n";
  }
  set_matmul_threads(threads);
  std::cout << "\n";
}

int run(int argc, char** argv) {
  // Step 1: read the command line (its table lives in app/bench_decode_options.hpp).
  ArgParser args = bench_decode_arguments();
  args.parse(argc, argv);
  const BenchDecodeOptions options = bench_decode_options(args);
  const std::vector<std::string>& sections = options.sections;
  const std::vector<std::size_t>& lengths = options.lengths;
  const std::vector<std::size_t>& budgets = options.budgets;
  const std::vector<std::size_t>& prompts = options.prompts;
  const CacheBudget budget = options.budget;
  const std::size_t repeats = options.repeats;
  const std::uint64_t seed = options.seed;
  ModelConfig config = options.shape;
  use_threads_option("bench_decode", options.threads);
  if (std::find(sections.begin(), sections.end(), "kv-bits") != sections.end()) {
    check_kv_group(options.kv_group, config.head_dim());
  }
  auto wants = [&](const char* name) {
    return std::find(sections.begin(), sections.end(), name) != sections.end();
  };

  // Step 2: a random decoder of the chosen shape, able to run the longest sequence asked for.
  const std::size_t longest = std::max(*std::max_element(lengths.begin(), lengths.end()),
                                       *std::max_element(prompts.begin(), prompts.end()));
  config.seq_len = std::max(config.seq_len, longest);
  std::cout << "CPU:    " << cpu_name() << "\n"
            << "model:  random weights,\n        " << config.describe() << "\n"
            << "matrix products: " << matmul_threads() << " thread"
            << (matmul_threads() == 1 ? "" : "s") << ", decode kernel "
            << kernel_name(active_matvec_kernel()) << "\n"
            << (matmul_threads() > 1
                    ? "waiting threads: " + row_threads_wait_policy() + "\n" +
                          (options.threads.fixed ? "every token on them (--fixed-threads)\n"
                                                 : "each token on them or on one thread, whichever "
                                                   "ran faster (row_threads.hpp)\n")
                    : "")
            << "\n";
  if (wants("bandwidth")) bandwidth_section(repeats, matmul_threads());
  if (wants("eviction")) eviction_section(config, budgets, repeats, seed);
  if (!wants("lengths") && !wants("prompt") && !wants("kv-bits")) return 0;
  const auto weights = std::make_shared<const DecoderWeights>(random_weights(config, seed));
  if (wants("prompt")) prompt_section(weights, prompts, repeats, seed);
  Rng rng(seed + 1);
  std::vector<int> tokens(longest);  // the same input tokens for both policies
  const auto vocab = static_cast<std::uint32_t>(config.vocab_size);
  for (int& t : tokens) t = static_cast<int>(rng.below(vocab));
  if (wants("kv-bits")) {
    kv_bits_section(weights, tokens, lengths, options.kv_group, options.kv_residual, repeats);
  }
  if (!wants("lengths")) return 0;
  auto full_policy = [] { return policy_of<FullCachePolicy>(); };
  auto h2o_policy = [&] { return policy_of<H2OPolicy>(budget); };

  std::cout << "H2O:    " << budget.describe() << " per layer and KV head\n"
            << "        per-head scores, overwrite-slot eviction\n"
            << "timing: median of " << repeats << " repeat" << (repeats == 1 ? "" : "s")
            << ", full and H2O alternating; one warm-up run of each not counted\n\n";

  // Step 3: warm up (first touches of memory and code are slow), then measure.
  const std::size_t warm_up = std::min<std::size_t>(longest, 512);
  time_decode(weights, full_policy(), tokens, warm_up);
  time_decode(weights, h2o_policy(), tokens, warm_up);

  std::vector<LengthResult> results;
  for (std::size_t length : lengths) {
    std::vector<double> full_total, h2o_total, full_tail, h2o_tail;
    LengthResult result;
    result.length = length;
    for (std::size_t r = 0; r < repeats; ++r) {
      // Alternate which policy runs first, so neither always meets a warmer or cooler machine.
      for (int turn = 0; turn < 2; ++turn) {
        const bool full_turn = (turn == 0) == (r % 2 == 0);
        const RunTiming t = full_turn ? time_decode(weights, full_policy(), tokens, length)
                                      : time_decode(weights, h2o_policy(), tokens, length);
        (full_turn ? full_total : h2o_total).push_back(t.total_seconds);
        (full_turn ? full_tail : h2o_tail).push_back(t.tail_seconds);
        (full_turn ? result.full_bytes : result.h2o_bytes) = t.live_kv_bytes;
      }
    }
    result.full_seconds = median(full_total);
    result.h2o_seconds = median(h2o_total);
    result.full_tail_seconds = median(full_tail);
    result.h2o_tail_seconds = median(h2o_tail);
    results.push_back(result);
  }

  // Step 4: the table. Ratios are H2O / full: speed > 1 means H2O is faster, memory < 1 smaller.
  const std::string tail = std::to_string(kTailTokens);
  std::cout << pad_right("", 7) << pad_right("tokens per second", 28)
            << pad_right("live KV-cache bytes", 31) << "us per token, last " << tail << "\n"
            << pad_left("length", 6) << pad_left("full", 9) << pad_left("H2O", 9)
            << pad_left("H2O/full", 10) << pad_left("full", 12) << pad_left("H2O", 10)
            << pad_left("H2O/full", 10) << pad_left("full", 11) << pad_left("H2O", 9) << "\n"
            << rule(86) << "\n";
  for (const LengthResult& r : results) {
    const double n = static_cast<double>(r.length);
    const double tail_n = static_cast<double>(std::min(r.length, kTailTokens));
    const double full_speed = n / r.full_seconds, h2o_speed = n / r.h2o_seconds;
    std::cout << pad_left(std::to_string(r.length), 6) << pad_left(fixed(full_speed, 0), 9)
              << pad_left(fixed(h2o_speed, 0), 9)
              << pad_left(fixed(h2o_speed / full_speed, 2) + "x", 10)
              << pad_left(std::to_string(r.full_bytes), 12)
              << pad_left(std::to_string(r.h2o_bytes), 10)
              << pad_left(fixed(static_cast<double>(r.h2o_bytes) / r.full_bytes, 3), 10)
              << pad_left(fixed(1e6 * r.full_tail_seconds / tail_n, 1), 11)
              << pad_left(fixed(1e6 * r.h2o_tail_seconds / tail_n, 1), 9) << "\n";
  }
  if (std::any_of(lengths.begin(), lengths.end(), [](std::size_t n) { return n < kTailTokens; })) {
    std::cout << "(a length under " << tail << " shows the time per token over all its tokens)\n";
  }

  // Step 5: how the last stretch's time per token grew with length. The starting point is the
  // shortest length whose whole last stretch already ran with a full H2O cache (budget + stretch
  // tokens), so H2O's flat part is compared with itself; the end point is the longest length.
  auto by_length = [](const LengthResult& a, const LengthResult& b) { return a.length < b.length; };
  const LengthResult& longest_run = *std::max_element(results.begin(), results.end(), by_length);
  const LengthResult* first = &*std::min_element(results.begin(), results.end(), by_length);
  for (const LengthResult& r : results) {
    const bool steady = r.length >= budget.total() + kTailTokens;
    const bool first_steady = first->length >= budget.total() + kTailTokens;
    if (steady && (!first_steady || r.length < first->length)) first = &r;
  }
  auto tail_per_token = [](const LengthResult& r, double tail_seconds) {
    return tail_seconds / static_cast<double>(std::min(r.length, kTailTokens));
  };
  if (longest_run.length > first->length) {
    const double full_growth = tail_per_token(longest_run, longest_run.full_tail_seconds) /
                               tail_per_token(*first, first->full_tail_seconds);
    const double h2o_growth = tail_per_token(longest_run, longest_run.h2o_tail_seconds) /
                              tail_per_token(*first, first->h2o_tail_seconds);
    std::cout << "\nTime per token over the last stretch, length " << first->length << " -> "
              << longest_run.length << ": full cache x" << fixed(full_growth, 2) << ", H2O x"
              << fixed(h2o_growth, 2) << "\n(H2O attends over at most " << budget.total()
              << " tokens per KV head; the full cache over every earlier token)\n";
  }
  if (matmul_threads() > 1) std::cout << "\n" << token_threads_summary(options.threads) << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return h2o::run_program(argc, argv, run); }
