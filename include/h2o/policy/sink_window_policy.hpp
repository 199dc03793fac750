// sink_window_policy.hpp: StreamingLLM's cache: the first few tokens ("attention sinks") plus a
// recent window.
//
// Dimension legend: G = KV heads, S = slot capacity of a layer cache.
//
// StreamingLLM (Xiao et al., mit-han-lab/streaming-llm) observed that models pour much of their
// attention onto the first tokens of a sequence whatever those tokens say, and that a plain sliding
// window breaks down once those tokens slide out. So it keeps them for good:
//   sinks  = the tokens at positions 0 .. sinks-1 (the sequence's first tokens; 4 by default);
//   recent = the last `recent` tokens;
//   budget = sinks + recent tokens per layer and KV head.
// Once a layer holds more than the budget, the oldest token that is not a sink leaves every KV
// head. Attention plays no part and the per-slot scores are left at 0. Positions are distinct, so
// there are no ties to break. With sinks = 0 it is the sliding window (sliding_window_policy.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "h2o/policy/cache_policy.hpp"

namespace h2o {

// The slot of the oldest token at or after position `sinks` (the oldest that is not a sink),
// among n slots of `positions` (n,); std::logic_error when every token is a sink. The victim of
// StreamingLLM's cache, and of every head that keeps sinks and a window (FastGen, DuoAttention).
std::size_t oldest_non_sink(const Position* positions, std::size_t n, std::size_t sinks);

class SinkWindowPolicy final : public LayerPolicy {
 public:
  static constexpr std::size_t kDefaultSinks = 4;  // StreamingLLM's choice

  // recent must be at least 1: with sinks alone, every new token would be evicted at once
  // (std::invalid_argument).
  SinkWindowPolicy(std::size_t sinks, std::size_t recent, const LayerShape& shape = {});

  std::string name() const override { return "sinks"; }
  // "attention sinks 4 + recent 60 = 64 tokens (StreamingLLM)"
  std::string describe() const override;
  // Keeps no scores; the victim is the oldest token that is not a sink.
  void observe(LayerKVCache&, const StepAttention&) override {}
  void choose_victims(LayerKVCache& cache, std::size_t* victims) override;

  std::size_t sinks() const { return sinks_; }
  std::size_t recent() const { return recent_; }
  std::size_t budget() const { return sinks_ + recent_; }

 private:
  std::size_t sinks_, recent_;
};

}  // namespace h2o
