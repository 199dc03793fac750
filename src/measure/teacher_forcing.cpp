#include "h2o/measure/teacher_forcing.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include "h2o/base/xtensor.hpp"

#include "h2o/text/sampler.hpp"

namespace h2o {

namespace {
// A NaN or infinite logit (a model whose numbers overflow) makes every measure meaningless: one
// error naming the first such logit, as the sampler names it for generate.
[[noreturn]] void throw_overflowed(const float* logits, std::size_t V, std::size_t step) {
  std::size_t v = 0;
  while (v + 1 < V && std::isfinite(logits[v])) ++v;
  throw std::runtime_error("the model's logit for token " + std::to_string(v) + " at position " +
                           std::to_string(step) + " is " + std::to_string(logits[v]) +
                           " (its numbers overflowed): this model cannot be measured");
}
}  // namespace

double TeacherForcedRun::mean_nll() const {
  double sum = 0.0;
  for (double nll : token_nll) sum += nll;
  return token_nll.empty() ? 0.0 : sum / static_cast<double>(token_nll.size());
}

double TeacherForcedRun::perplexity() const { return std::exp(mean_nll()); }

double TeacherForcedRun::agreement() const {
  return steps() == 0 ? 0.0 : static_cast<double>(agreements) / static_cast<double>(steps());
}

double TeacherForcedRun::mean_kl() const {
  return steps() == 0 ? 0.0 : kl_sum / static_cast<double>(steps());
}

TeacherForcedRun read_with_teacher_forcing(Decoder& decoder, const std::vector<int>& tokens,
                                           const TeacherForcingOptions& options) {
  const std::size_t n = tokens.size();
  if (n < 2) throw std::invalid_argument("teacher forcing needs a text of at least 2 tokens");
  if (n > decoder.max_positions()) {
    throw std::invalid_argument("the text has " + std::to_string(n) +
                                " tokens; the decoder reads at most " +
                                std::to_string(decoder.max_positions()));
  }
  if (decoder.position() != 0) throw std::invalid_argument("teacher forcing needs a fresh decoder");
  const TeacherForcedRun* reference = options.reference;
  const bool compare_kl = reference != nullptr && reference->log_probs.shape()[0] > 0;
  if (reference != nullptr && reference->steps() != n - 1) {
    throw std::invalid_argument("the reference run read a text of another length");
  }

  const std::size_t V = decoder.config().vocab_size, steps = n - 1;
  TeacherForcedRun run;
  run.token_nll.reserve(steps);
  run.top1.reserve(steps);
  if (options.keep_log_probs) run.log_probs = xt::zeros<float>({steps, V});
  std::vector<double> log_probs(V);  // (V,) this step's log-softmax, in double for the sums

  // The text goes through the decoder in slices (forward_batch: matrix products over the slice's
  // tokens, the same logits as one token at a time), each slice's logits kept for the statistics.
  // With an after_step callback, which wants to look at the caches after every single step, the
  // tokens go one at a time instead.
  const std::size_t slice = options.after_step ? 1 : kTeacherForcingSlice;
  const std::size_t prompt = options.compressed_prompt;
  if (prompt >= n) {
    throw std::invalid_argument("a compressed prompt of " + std::to_string(prompt) +
                                " tokens leaves nothing of a " + std::to_string(n) +
                                "-token text to continue");
  }
  Matrix slice_logits;  // (slice, V)
  for (std::size_t first = 0, count = 0; first < steps; first += count) {
    count = first == 0 && prompt > 0 ? prompt : std::min(slice, steps - first);
    if (first == 0 && prompt > 0) {
      decoder.read_prompt_compressed(
          std::vector<int>(tokens.begin(), tokens.begin() + static_cast<long>(prompt)),
          &slice_logits);  // (after_step then sees each prompt step's caches after the cut)
    } else if (options.after_step) {
      const Vector& logits = decoder.forward(tokens[first]);
      slice_logits = xt::zeros<float>({std::size_t{1}, V});
      std::copy_n(logits.data(), V, slice_logits.data());
    } else {
      decoder.forward_batch(std::vector<int>(tokens.begin() + static_cast<long>(first),
                                             tokens.begin() + static_cast<long>(first + count)),
                            &slice_logits);
    }
    for (std::size_t i = 0; i < count; ++i) {
      const std::size_t t = first + i;
      const float* logits = &slice_logits(i, 0);  // (V,)
      // log softmax, computed stably: subtract the largest logit before exponentiating.
      const double max_logit = *std::max_element(logits, logits + V);
      double sum_exp = 0.0;
      for (std::size_t v = 0; v < V; ++v) sum_exp += std::exp(logits[v] - max_logit);
      const double log_sum = max_logit + std::log(sum_exp);
      if (!std::isfinite(log_sum)) throw_overflowed(logits, V, t);
      for (std::size_t v = 0; v < V; ++v) log_probs[v] = logits[v] - log_sum;

      run.token_nll.push_back(-log_probs[static_cast<std::size_t>(tokens[t + 1])]);
      run.top1.push_back(sample_argmax(logits, V));
      if (options.keep_log_probs) {
        for (std::size_t v = 0; v < V; ++v) run.log_probs(t, v) = static_cast<float>(log_probs[v]);
      }
      if (reference != nullptr) {
        run.agreements += run.top1.back() == reference->top1[t] ? 1 : 0;
        if (compare_kl) {
          // KL(p || q) = sum_v p(v) (log p(v) - log q(v)), p = the reference's distribution.
          double kl = 0.0;
          for (std::size_t v = 0; v < V; ++v) {
            const double log_p = reference->log_probs(t, v);
            kl += std::exp(log_p) * (log_p - log_probs[v]);
          }
          run.kl_sum += std::max(0.0, kl);  // rounding can dip a hair below 0 for equal runs
        }
      }
      if (options.after_step) options.after_step(t);
    }
  }
  return run;
}

}  // namespace h2o
