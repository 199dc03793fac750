// teacher_forcing.hpp: how well a decoder, with whatever cache policy it runs, predicts a text.
//
// Teacher forcing: the decoder reads the text's own tokens one by one (never its own guesses),
// and after each token t its logits are a prediction of token t + 1. From these predictions:
//   perplexity = exp(mean over steps of -log p(next token))      lower = less surprised
//   top-1      = the most likely next token at each step (the first maximum, as greedy decoding)
// and, against a reference run of the same text (the full cache):
//   agreement  = share of steps whose top-1 equals the reference's
//   KL         = mean over steps of KL(reference || this run), in nats: how far this run's whole
//                next-token distribution moved away from the reference's (0 = identical)
// One routine serves lesson 09, compare_policies and the measurements of lessons 10 and 11, so
// they all measure the same thing.
//
// Dimension legend: N = tokens in the text (BOS first), S = N - 1 steps (predictions),
// V = vocabulary size.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "h2o/base/tensor.hpp"
#include "h2o/model/decoder.hpp"

namespace h2o {

struct TeacherForcedRun {
  std::vector<double> token_nll;  // (S,) -log p(text's next token), in nats
  std::vector<int> top1;          // (S,) most likely next token per step
  Matrix log_probs;               // (S, V) log-softmax per step, only when kept (for KL)
  std::size_t agreements = 0;     // steps whose top-1 equals the reference's (0 without one)
  double kl_sum = 0.0;            // sum over steps of KL(reference || this run) (0 without one)

  std::size_t steps() const { return token_nll.size(); }
  double mean_nll() const;
  double perplexity() const;
  double agreement() const;  // agreements / steps, in [0, 1]
  double mean_kl() const;    // kl_sum / steps
};

struct TeacherForcingOptions {
  // Keep every step's log-probabilities, so that later runs can measure KL against this one.
  bool keep_log_probs = false;
  // The reference run (with its log_probs kept, for KL) that agreement and KL compare with.
  const TeacherForcedRun* reference = nullptr;
  // Called after each step with the step's index, e.g. to look inside the caches.
  std::function<void(std::size_t step)> after_step;
  // > 0: the first `compressed_prompt` tokens are a prompt read with prompt-time compression
  // (Decoder::read_prompt_compressed: full cache, then one cut), the rest token by token.
  std::size_t compressed_prompt = 0;
};

// Tokens forward_batch reads at once here: its logits (slice, V) are kept until the slice's steps
// are counted (256 x 32000 floats = 32 MB for a 32000-token vocabulary).
constexpr std::size_t kTeacherForcingSlice = 256;

// Reads tokens (N >= 2, at most the decoder's max_positions) from a fresh decoder (position 0),
// in slices through Decoder::forward_batch (one token at a time when options.after_step is set,
// so that it sees the caches after every step); either way the same logits within 1e-5.
// Throws std::invalid_argument when the text is too short or too long for the decoder, or the
// reference has a different number of steps.
TeacherForcedRun read_with_teacher_forcing(Decoder& decoder, const std::vector<int>& tokens,
                                           const TeacherForcingOptions& options = {});

}  // namespace h2o
