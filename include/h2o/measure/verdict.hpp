// verdict.hpp: is one cache policy better than another on a text, or is the gap noise?
//
// Two teacher-forced readings of the same text (teacher_forcing.hpp), with policy A and policy B,
// give -log p of every prediction. Their perplexities compare as a ratio:
//   change = perplexity_A / perplexity_B - 1 = exp(sum(nll_A - nll_B) / predictions) - 1
// (-0.026: A's perplexity is 2.6% lower). How sure is that? A percentile bootstrap says: draw
// as many units as the text has, with replacement, recompute the change, 2000 times (a fixed seed:
// the same interval on every run); the middle 95% of those changes is the interval.
// The units must be independent of each other, or the interval comes out too narrow:
//   several stories (at least kMinStoriesToResample): each story is a unit;
//   fewer (one story, as the lessons read): blocks of kBootstrapBlock consecutive predictions of
//     each story. Neighbouring predictions are not independent - a token evicted too early hurts
//     the next few predictions together, a name's pieces go right or wrong together - so single
//     positions would pretend to more certainty than the text holds; blocks of 32 keep such runs
//     together and still give about 28 units for a 900-token story.
// The verdict reads the interval: "better" when it lies wholly below 0 (A's perplexity lower),
// "worse" wholly above, "no difference within noise" when it holds 0 - or when there are too few
// units (fewer than kMinUnits) to draw an interval at all.
// Only numbers here: the words for them, the sentence every program prints, are
// report/verdict_text.hpp's.
//
// Dimension legend: S = predictions of a story, U = units (stories or blocks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace h2o {

constexpr std::size_t kBootstrapBlock = 32;        // predictions per block (one story)
constexpr std::size_t kMinStoriesToResample = 8;   // from this many stories on, stories are units
constexpr std::size_t kMinUnits = 4;               // fewer units: no interval
constexpr std::size_t kBootstrapResamples = 2000;  // resamples of the bootstrap
constexpr std::uint64_t kBootstrapSeed = 1;        // its seed: the same interval every run

// One unit the bootstrap draws: a story or a block of a story.
struct PairedUnit {
  double nll_difference = 0.0;  // sum over its predictions of nll_A - nll_B, in nats
  std::size_t predictions = 0;
};

// The units of readings nll_a, nll_b (stories,) x (S,) of the same stories, by the rule above.
// Throws std::invalid_argument when the two do not have the same stories and lengths.
std::vector<PairedUnit> paired_units(const std::vector<std::vector<double>>& nll_a,
                                     const std::vector<std::vector<double>>& nll_b);

// The same rule for any one measure given prediction by prediction, (stories,) x (S,): each
// unit's nll_difference holds the sum of that measure over its predictions (a share of top-1
// hits: 1 for a hit, 0 for a miss; measure/second_reading.hpp).
std::vector<PairedUnit> units_of(const std::vector<std::vector<double>>& values);

// The bootstrap itself, for a measure that is a mean per prediction: mean = the units' summed
// nll_difference / their predictions, and the middle 95% of that mean over `resamples` draws of
// U units with replacement (Rng(seed)): with the draws' means sorted, low is the one at index
// floor(resamples * 0.025), high the one as far from the top. perplexity_difference below is
// exp(mean) - 1 of these numbers.
struct BootstrapMean {
  double mean = 0.0;  // over all units (0 without any)
  double low = 0.0;   // the 95% interval of mean (both = mean without an interval)
  double high = 0.0;
  std::size_t units = 0;  // units drawn (U)
  std::size_t predictions = 0;
  bool has_interval() const { return units >= kMinUnits; }
};
BootstrapMean bootstrap_mean(const std::vector<PairedUnit>& units,
                             std::size_t resamples = kBootstrapResamples,
                             std::uint64_t seed = kBootstrapSeed);

struct PerplexityDifference {
  double change = 0.0;  // perplexity_A / perplexity_B - 1 over all units (0 without any)
  double low = 0.0;     // the 95% interval of change (both = change without an interval)
  double high = 0.0;
  std::size_t units = 0;  // units drawn (U)
  std::size_t predictions = 0;
  bool has_interval() const { return units >= kMinUnits; }
};

// The change and its 95% percentile-bootstrap interval: `resamples` draws of U units with
// replacement (Rng(seed)); with the draws' changes sorted, low is the one at index
// floor(resamples * 0.025), high the one as far from the top.
PerplexityDifference perplexity_difference(const std::vector<PairedUnit>& units,
                                           std::size_t resamples = kBootstrapResamples,
                                           std::uint64_t seed = kBootstrapSeed);

enum class Verdict { Better, Worse, WithinNoise };
Verdict verdict_of(const PerplexityDifference& difference);

// One policy against another budget by budget: the verdict at each, and at how many budgets
// the first recalled more (fewer) long-gap names.
struct BudgetComparison {
  std::vector<Verdict> verdicts;
  std::size_t more_names = 0, fewer_names = 0;
  std::size_t count(Verdict verdict) const;
};

}  // namespace h2o
