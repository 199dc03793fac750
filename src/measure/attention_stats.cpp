#include "h2o/measure/attention_stats.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>

namespace h2o {

std::size_t count_below_fraction_of_max(const float* weights, std::size_t n, double fraction) {
  if (n == 0) return 0;
  const double threshold = fraction * *std::max_element(weights, weights + n);
  return static_cast<std::size_t>(
      std::count_if(weights, weights + n, [&](float w) { return w < threshold; }));
}

double top_share(std::vector<double> scores, double fraction) {
  const double total = std::accumulate(scores.begin(), scores.end(), 0.0);
  if (scores.empty() || total <= 0) return 0.0;
  const auto k = static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(scores.size())));
  std::sort(scores.begin(), scores.end(), std::greater<double>());
  return std::accumulate(scores.begin(), scores.begin() + static_cast<std::ptrdiff_t>(k), 0.0) /
         total;
}

PowerLawFit fit_power_law(std::vector<double> scores) {
  std::sort(scores.begin(), scores.end(), std::greater<double>());
  std::vector<double> xs, ys;  // log10 rank, log10 score
  for (std::size_t i = 0; i < scores.size() && scores[i] > 0; ++i) {
    xs.push_back(std::log10(static_cast<double>(i + 1)));
    ys.push_back(std::log10(scores[i]));
  }
  PowerLawFit fit;
  fit.points = xs.size();
  if (xs.size() < 2) return fit;
  const double n = static_cast<double>(xs.size());
  const double mean_x = std::accumulate(xs.begin(), xs.end(), 0.0) / n;
  const double mean_y = std::accumulate(ys.begin(), ys.end(), 0.0) / n;
  double sxx = 0, sxy = 0, syy = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    sxx += (xs[i] - mean_x) * (xs[i] - mean_x);
    sxy += (xs[i] - mean_x) * (ys[i] - mean_y);
    syy += (ys[i] - mean_y) * (ys[i] - mean_y);
  }
  fit.slope = sxy / sxx;
  fit.intercept = mean_y - fit.slope * mean_x;
  fit.r2 = syy > 0 ? (sxy * sxy) / (sxx * syy) : 1.0;
  return fit;
}

std::vector<std::size_t> top_k_positions(const std::vector<double>& scores, std::size_t k) {
  std::vector<std::size_t> order(scores.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return scores[a] > scores[b]; });
  order.resize(std::min(k, order.size()));
  return order;
}

std::size_t top_k_kept(const std::vector<double>& before, const std::vector<double>& after,
                       std::size_t k) {
  const std::vector<std::size_t> first = top_k_positions(before, k);
  std::vector<std::size_t> later = top_k_positions(after, k);
  std::sort(later.begin(), later.end());
  return static_cast<std::size_t>(std::count_if(first.begin(), first.end(), [&](std::size_t p) {
    return std::binary_search(later.begin(), later.end(), p);
  }));
}

AgeProfile age_profile(const std::vector<double>& scores, std::size_t parts, double top_fraction,
                       const std::vector<double>& decayed) {
  const std::size_t n = scores.size();
  if (parts == 0 || parts > n || !(top_fraction > 0.0 && top_fraction <= 1.0)) {
    throw std::invalid_argument("age_profile: " + std::to_string(parts) + " parts of " +
                                std::to_string(n) + " scores, top fraction " +
                                std::to_string(top_fraction) +
                                " (needs 1 to the number of scores, and a fraction in (0, 1])");
  }
  if (!decayed.empty() && decayed.size() != n) {
    throw std::invalid_argument("age_profile: " + std::to_string(decayed.size()) +
                                " decayed sums for " + std::to_string(n) + " scores");
  }
  std::vector<double> per_step(n);  // (T,) each score divided by the steps that looked at it
  for (std::size_t p = 0; p < n; ++p) per_step[p] = scores[p] / static_cast<double>(n - p);
  AgeProfile profile;
  profile.mean_score.assign(parts, 0.0);
  profile.mean_per_step.assign(parts, 0.0);
  std::vector<std::size_t> size(parts, 0);
  auto part_of = [&](std::size_t p) { return p * parts / n; };
  for (std::size_t p = 0; p < n; ++p) {
    profile.mean_score[part_of(p)] += scores[p];
    profile.mean_per_step[part_of(p)] += per_step[p];
    ++size[part_of(p)];
  }
  for (std::size_t j = 0; j < parts; ++j) {
    profile.mean_score[j] /= static_cast<double>(size[j]);
    profile.mean_per_step[j] /= static_cast<double>(size[j]);
  }
  const auto k = static_cast<std::size_t>(std::ceil(top_fraction * static_cast<double>(n)));
  auto shares = [&](const std::vector<double>& ranked_by) {
    std::vector<double> share(parts, 0.0);
    for (std::size_t p : top_k_positions(ranked_by, k)) share[part_of(p)] += 1.0 / k;
    return share;
  };
  profile.top_share_by_sum = shares(scores);
  profile.top_share_by_per_step = shares(per_step);
  if (!decayed.empty()) profile.top_share_by_decayed = shares(decayed);
  return profile;
}

AttentionStatistics::AttentionStatistics(std::size_t n_layers, std::size_t n_heads,
                                         std::size_t max_steps,
                                         std::vector<std::size_t> snapshot_steps,
                                         double tiny_fraction, double decay)
    : tiny_fraction_(tiny_fraction),
      decay_(decay),
      n_heads_(n_heads),
      snapshot_steps_(std::move(snapshot_steps)),
      tiny_(n_layers, 0),
      weights_(n_layers, 0),
      accumulated_(n_layers, std::vector<double>(max_steps, 0.0)),
      decayed_(accumulated_),
      snapshots_(n_layers) {
  if (n_layers == 0 || n_heads == 0) {
    throw std::invalid_argument("AttentionStatistics: a model needs layers and heads");
  }
  check_h2o_decay(decay);
  std::sort(snapshot_steps_.begin(), snapshot_steps_.end());
  snapshot_steps_.erase(std::unique(snapshot_steps_.begin(), snapshot_steps_.end()),
                        snapshot_steps_.end());
}

void AttentionStatistics::add_step(const Decoder& decoder) {
  const std::size_t step = steps_;
  for (std::size_t l = 0; l < accumulated_.size(); ++l) {
    const AttentionRecord& record = decoder.attention(l);
    const std::size_t live = record.weights.shape()[1];
    if (record.weights.shape()[0] != n_heads_ || live != step + 1 ||
        live > accumulated_[l].size()) {
      throw std::invalid_argument("AttentionStatistics: step " + std::to_string(step) +
                                  " recorded " + std::to_string(live) +
                                  " keys; it needs a full cache with attention recording on");
    }
    const double share = 1.0 / static_cast<double>(n_heads_);
    for (std::size_t s = 0; s < live; ++s) decayed_[l][s] *= decay_;
    for (std::size_t h = 0; h < n_heads_; ++h) {
      const float* row = &record.weights(h, 0);  // (T,) slot s = position s: a full cache
      tiny_[l] += count_below_fraction_of_max(row, live, tiny_fraction_);
      weights_[l] += live;
      for (std::size_t s = 0; s < live; ++s) {
        accumulated_[l][s] += share * row[s];
        decayed_[l][s] += share * row[s];
      }
    }
    if (std::count(snapshot_steps_.begin(), snapshot_steps_.end(), step) > 0) {
      snapshots_[l].emplace_back(accumulated_[l].begin(), accumulated_[l].begin() + live);
    }
  }
  ++steps_;
}

double AttentionStatistics::sparsity(std::size_t layer) const {
  return weights_.at(layer) == 0 ? 0.0 : static_cast<double>(tiny_[layer]) / weights_[layer];
}

double AttentionStatistics::sparsity() const {
  const double tiny = std::accumulate(tiny_.begin(), tiny_.end(), 0.0);
  const double all = std::accumulate(weights_.begin(), weights_.end(), 0.0);
  return all == 0 ? 0.0 : tiny / all;
}

const std::vector<double>& AttentionStatistics::snapshot(std::size_t layer,
                                                         std::size_t step) const {
  // Snapshots are taken in step order, one per listed step, so the k-th listed step is the k-th.
  const auto at = std::lower_bound(snapshot_steps_.begin(), snapshot_steps_.end(), step);
  const auto index = static_cast<std::size_t>(at - snapshot_steps_.begin());
  if (at == snapshot_steps_.end() || *at != step || index >= snapshots_.at(layer).size()) {
    throw std::out_of_range("AttentionStatistics: no snapshot after step " + std::to_string(step));
  }
  return snapshots_[layer][index];
}

AgeProfile AttentionStatistics::mean_age_profile(std::size_t parts, double top_fraction) const {
  AgeProfile mean;
  for (std::vector<double>* entry : {&mean.mean_score, &mean.mean_per_step, &mean.top_share_by_sum,
                                     &mean.top_share_by_per_step, &mean.top_share_by_decayed}) {
    entry->assign(parts, 0.0);
  }
  const auto L = static_cast<double>(layers());
  for (std::size_t l = 0; l < layers(); ++l) {
    const AgeProfile layer = age_profile(accumulated_[l], parts, top_fraction, decayed_[l]);
    for (std::size_t j = 0; j < parts; ++j) {
      mean.mean_score[j] += layer.mean_score[j] / L;
      mean.mean_per_step[j] += layer.mean_per_step[j] / L;
      mean.top_share_by_sum[j] += layer.top_share_by_sum[j] / L;
      mean.top_share_by_per_step[j] += layer.top_share_by_per_step[j] / L;
      mean.top_share_by_decayed[j] += layer.top_share_by_decayed[j] / L;
    }
  }
  return mean;
}

void AttentionStatistics::require_finite() const {
  for (std::size_t l = 0; l < layers(); ++l) {
    const std::vector<double>& scores = accumulated_[l];
    if (!std::isfinite(sparsity(l)) ||
        !std::all_of(scores.begin(), scores.end(), [](double v) { return std::isfinite(v); })) {
      throw std::runtime_error("the attention of layer " + std::to_string(l) +
                               " is not a number (its scores overflow): this model cannot be "
                               "measured");
    }
  }
}

}  // namespace h2o
