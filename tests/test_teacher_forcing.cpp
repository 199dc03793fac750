// test_teacher_forcing.cpp: the one perplexity / agreement / KL routine (teacher_forcing.hpp),
// against a straightforward recomputation from the decoder's logits.
#include "h2o_catch.hpp"
#include <cmath>
#include <memory>
#include <vector>

#include "h2o/measure/teacher_forcing.hpp"
#include "h2o/policy/h2o_policy.hpp"
#include "policy_test_support.hpp"

using namespace h2o;

TEST_CASE("teacher forcing measures perplexity and top-1 from the logits", "[teacher_forcing]") {
  const auto weights = h2o_test::random_model(64, 5);
  const std::vector<int> tokens = h2o_test::random_tokens(40, weights->config.vocab_size, 6);
  Decoder decoder(weights, policy_of<FullCachePolicy>(), 64);
  const TeacherForcedRun run = read_with_teacher_forcing(decoder, tokens, {true, nullptr, {}});

  // The same numbers, straight from a second decoder's logits.
  Decoder again(weights, policy_of<FullCachePolicy>(), 64);
  double total = 0.0;
  for (std::size_t t = 0; t + 1 < tokens.size(); ++t) {
    const Vector& logits = again.forward(tokens[t]);
    double max_logit = logits(0), sum = 0.0;
    for (float z : logits) max_logit = std::max(max_logit, static_cast<double>(z));
    for (float z : logits) sum += std::exp(z - max_logit);
    const double nll = -(logits(tokens[t + 1]) - max_logit - std::log(sum));
    CHECK(run.token_nll[t] == Approx(nll).epsilon(1e-5));  // batched vs one by one: rounding
    total += nll;
    int best = 0;
    for (std::size_t v = 1; v < logits.size(); ++v) {
      if (logits(v) > logits(best)) best = static_cast<int>(v);
    }
    CHECK(run.top1[t] == best);
  }
  REQUIRE(run.steps() == tokens.size() - 1);
  CHECK(run.perplexity() == Approx(std::exp(total / run.steps())).epsilon(1e-5));
  CHECK(run.log_probs.shape()[0] == run.steps());

  // Against itself: full agreement and no divergence.
  Decoder third(weights, policy_of<FullCachePolicy>(), 64);
  const TeacherForcedRun same = read_with_teacher_forcing(third, tokens, {false, &run, {}});
  CHECK(same.agreements == same.steps());
  CHECK(same.mean_kl() == Approx(0.0).margin(1e-6));  // float-stored reference

  // A small H2O cache drifts: some divergence, and the callback sees every step.
  Decoder small(weights, policy_of<H2OPolicy>(CacheBudget{2, 2}), 64);
  std::size_t calls = 0;
  const TeacherForcedRun drifted =
      read_with_teacher_forcing(small, tokens, {false, &run, [&](std::size_t) { ++calls; }});
  CHECK(calls == drifted.steps());
  CHECK(drifted.mean_kl() > 0.0);
  CHECK(drifted.agreement() <= 1.0);
}

TEST_CASE("teacher forcing refuses texts it cannot measure", "[teacher_forcing]") {
  const auto weights = h2o_test::random_model(16, 5);
  Decoder decoder(weights, policy_of<FullCachePolicy>(), 16);
  CHECK_THROWS_AS(read_with_teacher_forcing(decoder, {1}), std::invalid_argument);
  CHECK_THROWS_AS(read_with_teacher_forcing(decoder, std::vector<int>(17, 1)),
                  std::invalid_argument);
  decoder.forward(1);  // not fresh any more
  CHECK_THROWS_AS(read_with_teacher_forcing(decoder, {1, 2, 3}), std::invalid_argument);
  Decoder fresh(weights, policy_of<FullCachePolicy>(), 16);
  const TeacherForcedRun three = read_with_teacher_forcing(fresh, {1, 2, 3});
  Decoder other(weights, policy_of<FullCachePolicy>(), 16);
  CHECK_THROWS_AS(read_with_teacher_forcing(other, {1, 2, 3, 4}, {false, &three, {}}),
                  std::invalid_argument);  // a reference of another length
}
