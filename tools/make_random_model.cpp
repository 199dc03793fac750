// make_random_model.cpp: writes a llama2.c checkpoint with random weights, in the shape of one of
// karpathy's story models, and a made-up tokenizer for it, so that speed can be measured (here and
// with llama2.c's run.c) on the 15M and 110M shapes without downloading anything.
//
// Speed does not depend on the weights' values, only on the shape. Two details keep greedy runs
// comparable: BOS (id 1) gets a zero embedding row, so with the tied classifier its logit is
// exactly 0, below the largest of the others, and a greedy run never ends early; and the tokenizer
// holds every byte token, so any text encodes.
//
//   bin/make_random_model --shape 15m --out /tmp/m15           -> /tmp/m15/model.bin, tok.bin
//
// Dimension legend: V = vocabulary size, C = dim.
#include <filesystem>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/app/program.hpp"
#include "h2o/base/output_file.hpp"
#include "h2o/base/random.hpp"
#include "h2o/model/checkpoint.hpp"
#include "h2o/model/model_config.hpp"
#include "h2o/model/weights.hpp"
#include "h2o/text/tokenizer.hpp"

namespace {

// <unk>, BOS, EOS, the 256 byte tokens, printable ASCII characters, then made-up words (" " and 2
// to 7 lowercase letters) until V pieces; later pieces score lower (merge later).
h2o::Tokenizer made_up_tokenizer(std::size_t vocab, std::uint64_t seed) {
  std::vector<std::string> pieces = h2o::Tokenizer::base_pieces();
  std::set<std::string> seen(pieces.begin(), pieces.end());
  for (char ch = ' '; ch <= '~' && pieces.size() < vocab; ++ch) {
    if (seen.insert(std::string(1, ch)).second) pieces.push_back(std::string(1, ch));
  }
  h2o::Rng rng(seed);
  while (pieces.size() < vocab) {
    std::string word = rng.below(2) == 0 ? " " : "";
    const std::uint32_t letters = 2 + rng.below(6);
    for (std::uint32_t i = 0; i < letters; ++i) word += static_cast<char>('a' + rng.below(26));
    if (seen.insert(word).second) pieces.push_back(word);
  }
  pieces.resize(vocab);
  std::vector<float> scores(pieces.size(), 0.0f);
  for (std::size_t i = 259; i < scores.size(); ++i) scores[i] = -static_cast<float>(i - 259);
  return h2o::Tokenizer(pieces, scores);
}

int run(int argc, char** argv) {
  h2o::ArgParser args("make_random_model",
                      "Writes a llama2.c checkpoint with random weights in the shape of a story\n"
                      "model (model.bin) and a made-up tokenizer for it (tok.bin) into a folder.");
  args.add_option("shape", "NAME", "15m", "260k, 15m (dim 288, 6 layers) or 110m (dim 768, 12)");
  args.add_option("seq-len", "N", "0", "positions the model allows (0 = the shape's own)");
  args.add_output("out", "FOLDER", "", "folder to write model.bin and tok.bin into (required)");
  args.add_option("seed", "N", "1", "seed of the random weights");
  args.parse(argc, argv);
  h2o::ModelConfig config;
  try {
    config = h2o::story_shape(args.text("shape"));
  } catch (const std::invalid_argument& e) {
    throw h2o::UsageError(std::string("--shape: ") + e.what());
  }
  const auto seq_len = static_cast<std::size_t>(
      args.integer("seq-len", 0, static_cast<long long>(h2o::ModelConfig::kMaxSeqLen)));
  if (seq_len > 0) config.seq_len = seq_len;
  const auto seed = static_cast<std::uint64_t>(args.integer("seed", 0, 1LL << 62));
  const std::string out = args.text("out");
  if (out.empty()) throw h2o::UsageError("--out FOLDER is required");

  // Both files are checked before the weights are made, and each replaces an earlier file only
  // once it is complete (base/output_file.hpp).
  const std::filesystem::path folder = out;
  h2o::make_output_folder(out, "the output folder");
  h2o::OutputFile model_file((folder / "model.bin").string(), "checkpoint");
  h2o::OutputFile tokenizer_file((folder / "tok.bin").string(), "tokenizer");
  h2o::DecoderWeights weights = h2o::random_weights(config, seed);
  for (std::size_t c = 0; c < config.dim; ++c) weights.token_embedding(1, c) = 0.0f;  // BOS row
  h2o::write_checkpoint(model_file.stream(), weights);
  made_up_tokenizer(config.vocab_size, seed).write(tokenizer_file.stream());
  h2o::OutputFile::commit_together({&model_file, &tokenizer_file});  // both in place, or neither
  std::cout << "wrote " << (folder / "model.bin").string() << " (" << config.describe() << ") and "
            << (folder / "tok.bin").string() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return h2o::run_program(argc, argv, run); }
