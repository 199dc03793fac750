// make_test_inputs.cpp: writes the model, tokenizer and text files the `generate` and
// `compare_policies` checks run on (tests/checks/, as {inputs}), good and deliberately damaged,
// into the folder given as the only argument. Also a named pipe and a folder, which every reader
// must refuse as not being regular files.
//
// Everything is synthetic (random weights, a made-up vocabulary), so these checks need no
// downloaded model. The tiny model: dim 16 (4 heads, 2 KV heads), hidden 24, 2 layers,
// vocab 300, seq_len 64.
#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/app/default_files.hpp"
#include "h2o/app/program.hpp"
#include "h2o/model/checkpoint.hpp"
#include "h2o/model/weights.hpp"
#include "h2o/text/tokenizer.hpp"

namespace {

using Bytes = std::vector<char>;

Bytes read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
}

Bytes header_only(std::int32_t dim, std::int32_t hidden, std::int32_t layers, std::int32_t heads,
                  std::int32_t kv_heads, std::int32_t vocab, std::int32_t seq_len) {
  const std::int32_t header[7] = {dim, hidden, layers, heads, kv_heads, vocab, seq_len};
  Bytes bytes(sizeof(header));
  std::memcpy(bytes.data(), header, sizeof(header));
  return bytes;
}

// <unk>, BOS, EOS, the 256 byte tokens, " ", "a".."z", then merges until `vocab` entries.
h2o::Tokenizer tiny_tokenizer(std::size_t vocab) {
  std::vector<std::string> pieces = h2o::Tokenizer::base_pieces();
  pieces.push_back(" ");
  for (char c = 'a'; c <= 'z'; ++c) pieces.push_back(std::string(1, c));
  const char* const merges[] = {"th", "he",  "the", " the", "an", "and", " and",
                                "in", "ing", "er",  "on",   " a", " o",  "ce"};
  for (const char* merge : merges) pieces.push_back(merge);
  for (int i = 0; pieces.size() < vocab; ++i) pieces.push_back("x" + std::to_string(i));
  pieces.resize(vocab);
  std::vector<float> scores(pieces.size(), 0.0f);
  for (std::size_t i = 259; i < scores.size(); ++i) scores[i] = -static_cast<float>(i - 259);
  return h2o::Tokenizer(pieces, scores);
}

int make_inputs(int argc, char** argv) {
  // A test helper, not a user's program; still, "--help" or any option is not taken for a folder.
  if (argc != 2 || argv[1][0] == '-') {
    throw h2o::UsageError("usage: make_test_inputs OUTPUT_FOLDER");
  }
  const std::filesystem::path folder = argv[1];
  std::filesystem::create_directories(folder);
  const auto at = [&](const std::string& name) { return (folder / name).string(); };

  // The good pair.
  h2o::ModelConfig config;
  config.dim = 16;
  config.hidden_dim = 24;
  config.n_layers = 2;
  config.n_heads = 4;
  config.n_kv_heads = 2;
  config.vocab_size = 300;
  config.seq_len = 64;
  h2o::DecoderWeights weights = h2o::random_weights(config, 1);
  // BOS ends generation; a zero embedding row makes its logit exactly 0, below the largest of the
  // other 299, so greedy runs on this model use every step they are given.
  for (std::size_t c = 0; c < config.dim; ++c) weights.token_embedding(1, c) = 0.0f;
  h2o::save_checkpoint(at("tiny_model.bin"), weights);
  tiny_tokenizer(300).save(at("tiny_tok.bin"));

  // Finite weights whose attention overflows: queries and keys 1e20 times too large make every
  // score infinite and every attention weight NaN (lesson 10 must say so, not print -nan%).
  h2o::DecoderWeights overflowing = weights;
  overflowing.wq *= 1e20f;
  overflowing.wk *= 1e20f;
  h2o::save_checkpoint(at("overflow_model.bin"), overflowing);

  // A NaN deep in the last layer's w2 (its float 461 = [1][3][5]): generate finds it with the
  // first token's logits (FiniteCheck::by_first_token) and must name it as the full check does.
  h2o::DecoderWeights nan_weights = weights;
  nan_weights.w2(1, 3, 5) = std::numeric_limits<float>::quiet_NaN();
  h2o::save_checkpoint(at("nan_in_w2.bin"), nan_weights);

  // A model as long and as many-headed as the first shipped one (4 layers, 4 KV heads, 1,024
  // positions) but tiny otherwise, and a story of 1,015 of its tokens: the explorer's page
  // of two policies keeping every token would be over its size limit (explore.txt).
  h2o::ModelConfig wide = config;
  wide.n_layers = 4;
  wide.n_kv_heads = 4;
  wide.seq_len = 1024;
  h2o::save_checkpoint(at("wide_model.bin"), h2o::random_weights(wide, 2));

  // Damaged checkpoints.
  const Bytes good = read_bytes(at("tiny_model.bin"));
  write_bytes(at("empty.bin"), {});
  write_bytes(at("short_header.bin"), Bytes(good.begin(), good.begin() + 10));
  write_bytes(at("zero_dim.bin"), header_only(0, 24, 2, 4, 2, 300, 64));
  write_bytes(at("negative_layers.bin"), header_only(16, 24, -2, 4, 2, 300, 64));
  write_bytes(at("heads_not_dividing_dim.bin"), header_only(16, 24, 2, 3, 1, 300, 64));
  write_bytes(at("kv_heads_not_dividing_heads.bin"), header_only(16, 24, 2, 4, 3, 300, 64));
  write_bytes(at("absurd_dim.bin"), header_only(1 << 30, 24, 2, 4, 2, 300, 64));
  // Within every size limit, so only the file-size check prevents a giant allocation.
  write_bytes(at("huge_shape.bin"), header_only(16384, 65536, 512, 128, 128, -(1 << 20), 1 << 20));
  write_bytes(at("truncated_weights.bin"), Bytes(good.begin(), good.end() - 4));
  Bytes longer = good;
  longer.insert(longer.end(), 8, 0);
  write_bytes(at("trailing_bytes.bin"), longer);

  // Damaged or mismatched tokenizers.
  tiny_tokenizer(280).save(at("tok_280_entries.bin"));
  tiny_tokenizer(320).save(at("tok_320_entries.bin"));
  const Bytes tok = read_bytes(at("tiny_tok.bin"));
  write_bytes(at("tok_truncated.bin"), Bytes(tok.begin(), tok.end() - 3));
  write_bytes(at("tok_empty.bin"), {});
  Bytes negative = tok;
  const std::int32_t minus_one = -1;
  std::memcpy(negative.data() + 8, &minus_one, sizeof(minus_one));  // entry 0's length
  write_bytes(at("tok_negative_length.bin"), negative);

  // Texts for compare_policies: one the tiny model reads (about 40 tokens), one a byte over the
  // text limit, one within the limit but far too long for 64 positions, and an empty one.
  const std::string short_text = "the cat and the hat sat on the mat in the sun and then ran off";
  write_bytes(at("short.txt"), Bytes(short_text.begin(), short_text.end()));
  write_bytes(at("too_big.txt"), Bytes(h2o::kMaxTextBytes + 1, 'a'));
  std::string long_text;
  while (long_text.size() < 300'000) long_text += short_text + "\n";
  write_bytes(at("long.txt"), Bytes(long_text.begin(), long_text.end()));
  write_bytes(at("empty.txt"), {});
  std::string page_story;  // 26 lines: 1,015 tokens of the tiny tokenizer, BOS included
  for (int line = 0; line < 26; ++line) page_story += short_text + "\n";
  write_bytes(at("page_story.txt"), Bytes(page_story.begin(), page_story.end()));
  const std::string two_words = "The cat.\n";  // a story of a few tokens: too short to measure
  write_bytes(at("two_words.txt"), Bytes(two_words.begin(), two_words.end()));

  // One byte over the checkpoint and tokenizer limits, as sparse files (no disk space used): the
  // loaders must refuse them from their size, before reading.
  write_bytes(at("over_limit_model.bin"), {});
  std::filesystem::resize_file(at("over_limit_model.bin"), h2o::kMaxCheckpointBytes + 1);
  write_bytes(at("over_limit_tok.bin"), {});
  std::filesystem::resize_file(at("over_limit_tok.bin"), h2o::Tokenizer::kMaxFileBytes + 1);

  // For the training scripts (training/common.py): a story file holding NUL bytes (not text), a
  // pretokenized file of two empty stories (BOS, BOS), and a corpus one byte over the scripts'
  // corpus limit (LIMITS["corpus"], 1 GiB), sparse.
  const std::string nul_story = std::string("Once upon a time.\n") + std::string(4096, '\0');
  write_bytes(at("nul_story.txt"), Bytes(nul_story.begin(), nul_story.end()));
  write_bytes(at("bos_only.u16"), {1, 0, 1, 0});
  write_bytes(at("one_bos.u16"), {1, 0});       // a file of BOS alone: it starts as it should
  write_bytes(at("no_bos.u16"), {5, 0, 1, 0});  // starts with id 5, not BOS
  // A tokenizer of 10 one-letter entries: fewer than <unk>, BOS, EOS and the 256 byte tokens.
  Bytes few_entries = {1, 0, 0, 0};  // max_token_length 1
  for (int i = 0; i < 10; ++i) few_entries.insert(few_entries.end(), {0, 0, 0, 0, 1, 0, 0, 0, 'a'});
  write_bytes(at("tok_10_entries.bin"), few_entries);
  write_bytes(at("over_limit_corpus.txt"), {});
  std::filesystem::resize_file(at("over_limit_corpus.txt"), (1ull << 30) + 1);

  // Not regular files: a folder and a named pipe (opening a pipe would wait for a writer).
  std::filesystem::create_directories(folder / "a_folder");
  std::filesystem::remove(folder / "a_pipe");
  if (::mkfifo(at("a_pipe").c_str(), 0600) != 0) {
    throw std::runtime_error("cannot make the named pipe '" + at("a_pipe") + "' (errno " +
                             std::to_string(errno) + ")");
  }

  std::cout << "wrote the test inputs into " << folder.string() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return h2o::run_program(argc, argv, make_inputs); }
