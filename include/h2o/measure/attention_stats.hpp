// attention_stats.hpp: why H2O is allowed to forget - the H2O paper's observations, measured.
//
// The paper rests on three facts about trained models, each a number here:
//   sparsity       most attention weights are tiny: the share of weights below 1% of their row's
//                  largest (the paper's threshold; it finds over 95% in almost every layer);
//   heavy hitters  accumulated attention (each token's attention summed over every later step, the
//                  H2O score of a full cache) is concentrated: the top 1% / 5% / 10% of tokens hold
//                  most of it, and score against rank follows a power law (a straight line on a
//                  log-log plot: log score = slope * log rank + c);
//   stability      the tokens that lead at step t still lead at step 2t, so past attention is a
//                  fair guess of future attention (the "oracle" in the name).
// And one fact that works against H2O (the paper and the handbook both note it):
//   age bias       a token at position p of T has been looked at by T - p queries, so its
//                  accumulated score grows with its age even when attention is spread evenly
//                  (1 / (t + 1) from every step t gives it about ln(T / p)): the oldest tokens
//                  take heavy-hitter slots because they are old. Dividing each score by its
//                  T - p steps (OpenVINO's normalised sum, h2o_policy.hpp) takes out the number
//                  of steps, though not that the early steps shared attention among few tokens.
//                  A decayed sum (every score times gamma before each step's attention is added,
//                  h2o_policy.hpp) lets old attention fade instead: a token's score is mostly
//                  what the last 1 / (1 - gamma) steps gave it, whatever its age.
// AttentionStatistics collects them from a decoder reading a text with the full cache and its
// attention recording switched on; the small functions below are the definitions, testable alone.
//
// Dimension legend: L = layers, H = query heads, T = tokens read so far (keys), S = steps.
#pragma once

#include <cstddef>
#include <vector>

#include "h2o/base/tensor.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/policy/h2o_policy.hpp"

namespace h2o {

// How many of the weights (n,) are below `fraction` of the largest of them.
std::size_t count_below_fraction_of_max(const float* weights, std::size_t n, double fraction);

// The share of the total held by the largest ceil(fraction * n) of scores (n,); 0 for no scores.
double top_share(std::vector<double> scores, double fraction);

struct PowerLawFit {
  double slope = 0, intercept = 0;  // log10(score) = slope * log10(rank) + intercept
  double r2 = 0;                    // 1 = a perfect straight line on the log-log plot
  std::size_t points = 0;           // positive scores used
};

// Least squares of log10(score) on log10(rank), ranks 1..n of the scores sorted largest first;
// scores <= 0 are left out (their logarithm does not exist). Fewer than 2 points: all zeros.
PowerLawFit fit_power_law(std::vector<double> scores);

// Of the k highest-scoring positions in `before` (ties: the earlier position first), how many are
// still among the k highest of `after` (which may hold more positions, e.g. later in the text).
std::size_t top_k_kept(const std::vector<double>& before, const std::vector<double>& after,
                       std::size_t k);

// The positions of the k highest scores, highest first (ties: the earlier position first).
std::vector<std::size_t> top_k_positions(const std::vector<double>& scores, std::size_t k);

// Where accumulated scores sit along the text: scores (T,) of a full cache after its last step,
// positions cut into `parts` runs of (nearly) equal length, the oldest first (position p is in
// part p * parts / T).
struct AgeProfile {
  std::vector<double> mean_score;     // (parts,) mean accumulated score of the part's positions
  std::vector<double> mean_per_step;  // (parts,) the same with each score divided by T - p
  // (parts,) share of the heavy hitters in each part: the ceil(top_fraction * T) highest scores
  // (top_k_positions' ties), ranked by the sums, by the sums per step and by the decayed sums
  // (empty when none were given). Each sums to 1.
  std::vector<double> top_share_by_sum, top_share_by_per_step, top_share_by_decayed;
};

// The profile above; `decayed` (T,): the same tokens' decayed sums, or none. Throws
// std::invalid_argument unless 1 <= parts <= T and 0 < top_fraction <= 1, and when `decayed` is
// given for another number of tokens.
AgeProfile age_profile(const std::vector<double>& scores, std::size_t parts, double top_fraction,
                       const std::vector<double>& decayed = {});

class AttentionStatistics {
 public:
  // For a decoder of this shape reading up to max_steps tokens with the FULL cache (so slot s holds
  // position s). Scores are snapshotted after each step listed in snapshot_steps (0-based).
  // The decayed sums forget `decay` (0 < decay < 1; std::invalid_argument otherwise) per step.
  AttentionStatistics(std::size_t n_layers, std::size_t n_heads, std::size_t max_steps,
                      std::vector<std::size_t> snapshot_steps, double tiny_fraction = 0.01,
                      double decay = kDefaultH2ODecay);

  // After each decoder.forward() (attention recording on): counts tiny weights, adds the mean over
  // the query heads of this step's attention to every token's accumulated score and, after
  // multiplying them by the decay, to its decayed sum; and snapshots.
  void add_step(const Decoder& decoder);

  std::size_t steps() const { return steps_; }
  std::size_t layers() const { return accumulated_.size(); }
  double sparsity(std::size_t layer) const;  // share of weights below the threshold
  double sparsity() const;                   // over every layer
  // (T,) accumulated attention of every token in a layer, mean over heads, summed over steps.
  const std::vector<double>& accumulated(std::size_t layer) const { return accumulated_.at(layer); }
  const std::vector<std::vector<double>>& accumulated() const { return accumulated_; }  // (L, T)
  // (T,) the same with every step's attention decayed by decay() per later step (H2O's decayed
  // sum): sum over steps t of decay^(last step - t) * mean attention at t.
  const std::vector<double>& decayed(std::size_t layer) const { return decayed_.at(layer); }
  double decay() const { return decay_; }
  // The same as it stood after step `step` (one of snapshot_steps).
  const std::vector<double>& snapshot(std::size_t layer, std::size_t step) const;
  // age_profile of every layer's accumulated (and decayed) scores, each entry the mean over the
  // layers.
  AgeProfile mean_age_profile(std::size_t parts, double top_fraction) const;
  // Throws std::runtime_error naming the first layer whose attention is not a number (a model
  // whose scores overflow float range gives NaN weights): no measure of it would mean anything.
  void require_finite() const;

 private:
  double tiny_fraction_, decay_;
  std::size_t n_heads_, steps_ = 0;
  std::vector<std::size_t> snapshot_steps_;
  std::vector<std::size_t> tiny_, weights_;                  // (L,) counts
  std::vector<std::vector<double>> accumulated_, decayed_;   // (L, T) each
  std::vector<std::vector<std::vector<double>>> snapshots_;  // (L, snapshots, T)
};

}  // namespace h2o
