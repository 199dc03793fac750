// fuzz_checkpoint.cpp: libFuzzer harness for the llama2.c checkpoint loader (checkpoint.hpp).
//
// Input: the bytes of a checkpoint file. The loader must either refuse it with the exceptions it
// documents (std::runtime_error, std::invalid_argument: one-line messages) or return weights that
// match the header; a model it accepts must then run: a few decoder steps with an evicting H2O
// cache, and sampling from the logits (which may refuse non-finite logits with runtime_error).
// The same file opened as generate opens it (memory-mapped, its weights checked by the first
// token's logits: FiniteCheck::by_first_token) must then be refused with load_checkpoint's very
// message, or accepted when load_checkpoint accepts it.
// Anything else (a crash, a sanitizer report, a leak, another exception) is a finding.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "fuzz_support.hpp"
#include "h2o/model/checkpoint.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/policy/cache_policy.hpp"
#include "h2o/policy/h2o_policy.hpp"
#include "h2o/text/sampler.hpp"

namespace {

// The message of the documented exception `run` throws (I/O, sizes, non-finite weights or logits:
// std::runtime_error; a header value out of range: std::invalid_argument), or "" for none.
template <class Run>
std::string refusal(Run run) {
  try {
    run();
  } catch (const std::runtime_error& e) {
    return e.what();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  h2o_fuzz::write_scratch(data, size);
  const std::string& path = h2o_fuzz::scratch_file();
  std::shared_ptr<const h2o::DecoderWeights> weights;
  const std::string load_refusal = refusal([&] {
    const h2o::ModelConfig header = h2o::read_checkpoint_config(path);
    weights = std::make_shared<const h2o::DecoderWeights>(h2o::load_checkpoint(path));
    const h2o::ModelConfig& c = weights->config;
    if (c.describe() != header.describe() || c.shared_classifier != header.shared_classifier) {
      h2o_fuzz::broken("load_checkpoint and read_checkpoint_config disagree on the shape");
    }
    if (size != h2o::kCheckpointHeaderBytes + 4 * c.checkpoint_float_count()) {
      h2o_fuzz::broken("a checkpoint was accepted although its size is not the header's");
    }
  });
  // BOS, as generation starts (token 0 in a one-token vocabulary).
  const int first_token = weights && weights->config.vocab_size == 1 ? 0 : 1;
  const std::string mapped_refusal = refusal([&] {
    const auto mapped = h2o::MappedCheckpoint::open(path, h2o::FiniteCheck::by_first_token);
    h2o::Decoder decoder(mapped->view(), mapped, h2o::policy_of<h2o::FullCachePolicy>(), 1);
    decoder.forward(first_token);
  });
  if (mapped_refusal != load_refusal) {
    h2o_fuzz::broken("load_checkpoint said \"" + load_refusal +
                     "\", the mapped file checked by its first token \"" + mapped_refusal + "\"");
  }
  if (!weights) return 0;
  refusal([&] {
    // Run it: at most 4 positions through an H2O cache of 2 tokens, so eviction happens.
    const h2o::ModelConfig& c = weights->config;
    h2o::Decoder decoder(weights, h2o::policy_of<h2o::H2OPolicy>(h2o::CacheBudget{1, 1}),
                         std::min<std::size_t>(c.seq_len, 4));
    h2o::Sampler sampler(c.vocab_size, 0.8f, 0.9f, size);
    int token = first_token;
    for (std::size_t pos = 0; pos < decoder.max_positions(); ++pos) {
      token = sampler.sample(decoder.forward(token));
    }
  });
  return 0;
}
