// snapkv_policy.hpp: SnapKV (Li et al., 2024, "SnapKV: LLM Knows What You are Looking for Before
// Generation"): cut a prompt by what its last few queries look at.
//
// Dimension legend: H = query heads, G = KV heads, S = slot capacity, w = observation window.
//
// The paper's observation: the attention of the LAST w prompt tokens (the "observation window",
// where a question usually sits) already shows which earlier tokens generation will need. So
// when a prompt has been read (Decoder::read_prompt_compressed), per layer and KV head:
//   1. each older token's vote = the attention the window's w queries gave it, summed
//      (head_scores.hpp: the query heads of the KV head's group, or all with --scoring shared);
//   2. votes are pooled over neighbouring positions, so a token's neighbours come along with it:
//      over a kernel of K positions centred on the token (K odd), either the average of the K
//      votes (zero beyond the older tokens' ends, as PyTorch's avg_pool1d pads) or their largest
//      (max_pool1d; nothing counts beyond the ends). Default: average over 5, the paper code's
//      default; its benchmark configuration uses max over 7 (SnapKVPooling, --snapkv-pool/-kernel);
//   3. the `heavy` best pooled votes stay, plus the window itself (selection.hpp's rule with the
//      window as the recent part: lowest goes, on a tie the newer).
// Each kept token's score then starts from its window attention (step 1, not pooled).
//
// During decoding SnapKV itself does nothing (its paper leaves the cache to grow). This class
// follows OpenVINO GenAI, which ships SnapKV as the way to score a prompt ("snapkv_window_size")
// and then runs its H2O-style eviction: every step's attention is added to the scores and the
// lowest-scoring token outside the last `recent` goes (h2o_policy.hpp, plain sums). So token by
// token, with no prompt cut, it is exactly H2O with the same heavy and recent.
//
// Against the paper's code (FasterDecoding/SnapKV, snapkv_utils.py): window 32, kernel 5 and
// average pooling as its defaults (max pooling with kernel 7 in the configuration of its
// benchmarks); the window here is `recent` (policy_factory.hpp caps it at 32
// when it splits a budget). Differences: the paper repeats each KV head for its query heads
// (every query head keeps its own tokens); here, as in kvpress's SnapKVPress, the query heads of a
// group vote together for their KV head. Averages are written as sums (every average divides by
// the same K, so the ranking is the same). The paper
// does not cut a prompt shorter than its budget; neither does this.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "h2o/cache/budget.hpp"
#include "h2o/policy/cache_policy.hpp"
#include "h2o/policy/h2o_policy.hpp"
#include "h2o/policy/head_scores.hpp"

namespace h2o {

// How step 2 pools the votes over neighbouring positions.
enum class SnapKVPool { Average, Max };
std::string to_string(SnapKVPool pool);                 // "avg" / "max"
SnapKVPool parse_snapkv_pool(const std::string& text);  // throws std::invalid_argument

struct SnapKVPooling {
  SnapKVPool pool = SnapKVPool::Average;  // snapkv_utils.py's default
  std::size_t kernel = 5;                 // positions, odd, centred on the token (1: no pooling)
  std::string describe() const;           // "average pooling over 5 positions"
};

// The widest pooling kernel accepted (the largest odd number below model_config.hpp's longest
// sequence, 2^20 positions): a wider one would change nothing more.
constexpr std::size_t kMaxPoolKernel = 1048575;

// Throws std::invalid_argument naming the rule unless `kernel` is odd (a kernel centred on the
// token has as many neighbours on each side) and at most kMaxPoolKernel.
void check_pool_kernel(std::size_t kernel);

class SnapKVPolicy final : public LayerPolicy {
 public:
  static constexpr std::size_t kPaperWindow = 32;  // snapkv_utils.py: window_size 32

  // Keeps budget.heavy voted tokens + the observation window of budget.recent tokens; a window of 0
  // tokens or a bad kernel (check_pool_kernel) is refused (std::invalid_argument).
  explicit SnapKVPolicy(CacheBudget budget, ScoringMode mode = ScoringMode::PerHead,
                        SnapKVPooling pooling = {}, const LayerShape& shape = {});

  std::string name() const override { return "snapkv"; }
  // "SnapKV, heavy 59 + recent 32 = 91 tokens, window 32, average pooling over 5 positions,
  // per-head scores; decoding as H2O"
  std::string describe() const override;
  // Decoding: H2O's step (adds the attention, evicts outside the recent window).
  void after_attention(LayerKVCache& cache, const StepAttention& attention) override;
  // Reading a prompt: H2O's sums, and this step's attention kept for the window votes.
  void observe(LayerKVCache& cache, const StepAttention& attention) override;
  void choose_victims(LayerKVCache& cache, std::size_t* victims) override;
  // The SnapKV cut (steps 1-3 above). Needs the attention of the prompt's last min(recent, keep)
  // queries, recorded by observe() (std::logic_error otherwise).
  void compress(LayerKVCache& cache, std::size_t keep) override;

  const CacheBudget& budget() const { return budget_; }
  ScoringMode mode() const { return mode_; }
  const SnapKVPooling& pooling() const { return pooling_; }

 private:
  CacheBudget budget_;
  ScoringMode mode_;
  SnapKVPooling pooling_;
  H2OPolicy decoding_;
  // The attention of the last R = min(recent, S) steps of this layer's prompt: the step at
  // position p in row p mod R. Allocated when a prompt is read, never while decoding.
  std::vector<float> window_rows_;      // (R, G, S)
  std::vector<Position> row_position_;  // (R,) the query position each row holds, -1: none
};

}  // namespace h2o
