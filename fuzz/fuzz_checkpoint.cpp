// fuzz_checkpoint.cpp: libFuzzer harness for the llama2.c checkpoint loader (checkpoint.hpp).
//
// Input: the bytes of a checkpoint file. The loader must either refuse it with the exceptions it
// documents (std::runtime_error, std::invalid_argument: one-line messages) or return weights that
// match the header; a model it accepts must then run: a few decoder steps with an evicting H2O
// cache, and sampling from the logits (which may refuse non-finite logits with runtime_error).
// Anything else (a crash, a sanitizer report, a leak, another exception) is a finding.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>

#include "fuzz_support.hpp"
#include "h2o/model/checkpoint.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/policy/h2o_policy.hpp"
#include "h2o/text/sampler.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  h2o_fuzz::write_scratch(data, size);
  const std::string& path = h2o_fuzz::scratch_file();
  try {
    const h2o::ModelConfig header = h2o::read_checkpoint_config(path);
    auto weights = std::make_shared<const h2o::DecoderWeights>(h2o::load_checkpoint(path));
    const h2o::ModelConfig& c = weights->config;
    if (c.describe() != header.describe() || c.shared_classifier != header.shared_classifier) {
      h2o_fuzz::broken("load_checkpoint and read_checkpoint_config disagree on the shape");
    }
    if (size != h2o::kCheckpointHeaderBytes + 4 * c.checkpoint_float_count()) {
      h2o_fuzz::broken("a checkpoint was accepted although its size is not the header's");
    }
    // Run it: at most 4 positions through an H2O cache of 2 tokens, so eviction happens.
    h2o::Decoder decoder(weights, std::make_unique<h2o::H2OPolicy>(h2o::CacheBudget{1, 1}),
                         std::min<std::size_t>(c.seq_len, 4));
    h2o::Sampler sampler(c.vocab_size, 0.8f, 0.9f, size);
    int token = c.vocab_size > 1 ? 1 : 0;  // BOS, as generation starts
    for (std::size_t pos = 0; pos < decoder.max_positions(); ++pos) {
      token = sampler.sample(decoder.forward(token));
    }
  } catch (const std::runtime_error&) {
    // Refused with a message (I/O, sizes, non-finite weights or logits): the documented outcome.
  } catch (const std::invalid_argument&) {
    // A header value out of range: documented too.
  }
  return 0;
}
