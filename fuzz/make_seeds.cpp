// make_seeds.cpp: writes the seed corpus of every harness in fuzz/, so the repository holds no
// binary inputs. libFuzzer starts from these and mutates them; valid inputs let it reach the
// code behind the format checks at once.
//
//   fuzz_make_seeds OUTPUT_FOLDER [TOKENIZER_FILE]
// writes OUTPUT_FOLDER/checkpoint/, OUTPUT_FOLDER/tokenizer/ and OUTPUT_FOLDER/options/ (one file
// per seed). TOKENIZER_FILE, when it exists (e.g. stories260K's tok512.bin, 512 tokens), adds
// seeds with a real vocabulary.
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/app/program.hpp"
#include "h2o/base/random.hpp"
#include "h2o/model/checkpoint.hpp"
#include "h2o/model/weights.hpp"
#include "h2o/text/tokenizer.hpp"

namespace {

using Bytes = std::vector<char>;
namespace fs = std::filesystem;

Bytes read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& path, const Bytes& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write '" + path.string() + "'");
}

h2o::ModelConfig shape(std::size_t dim, std::size_t hidden, std::size_t layers, std::size_t heads,
                       std::size_t kv_heads, std::size_t vocab, std::size_t seq_len, bool shared) {
  h2o::ModelConfig c;
  c.dim = dim;
  c.hidden_dim = hidden;
  c.n_layers = layers;
  c.n_heads = heads;
  c.n_kv_heads = kv_heads;
  c.vocab_size = vocab;
  c.seq_len = seq_len;
  c.shared_classifier = shared;
  return c;
}

void checkpoint_seeds(const fs::path& folder) {
  fs::create_directories(folder);
  const h2o::ModelConfig shapes[] = {
      shape(2, 2, 1, 1, 1, 3, 2, true), shape(4, 4, 1, 2, 1, 6, 4, true),
      shape(4, 4, 1, 2, 1, 6, 4, false), shape(8, 12, 2, 4, 2, 16, 8, true),
      shape(16, 24, 2, 4, 4, 40, 12, false)};
  int n = 0;
  for (const h2o::ModelConfig& c : shapes) {
    const fs::path path = folder / ("model_" + std::to_string(n++) + ".bin");
    h2o::save_checkpoint(path.string(), h2o::random_weights(c, static_cast<std::uint64_t>(n)));
  }
  // Damaged ones: the header alone, cut in the middle, the versioned export's magic.
  const Bytes good = read_bytes((folder / "model_1.bin").string());
  write_bytes(folder / "header_only.bin", Bytes(good.begin(), good.begin() + 28));
  write_bytes(folder / "cut.bin", Bytes(good.begin(), good.begin() + good.size() / 2));
  Bytes versioned = good;
  std::memcpy(versioned.data(), "ak42", 4);
  write_bytes(folder / "versioned.bin", versioned);
}

// <unk>, BOS, EOS and the byte tokens: the 259 entries every llama2.c vocabulary starts with.
void base_entries(std::vector<std::string>& pieces, std::vector<float>& scores) {
  pieces = h2o::Tokenizer::base_pieces();
  scores.assign(pieces.size(), 0.0f);
}

// A vocabulary with merges over a few letters, "é" and a space, scores with ties; `rng` varies
// which pieces and scores it has.
h2o::Tokenizer letters_vocabulary(h2o::Rng& rng) {
  std::vector<std::string> pieces;
  std::vector<float> scores;
  base_entries(pieces, scores);
  const char* const symbols[] = {" ", "a", "b", "c", "\xC3\xA9", "\n"};
  for (const char* s : symbols) {
    pieces.push_back(s);
    scores.push_back(0.0f);
  }
  for (int i = 0; i < 40; ++i) {
    std::string piece;
    for (std::uint32_t k = 1 + rng.below(3); k > 0; --k) piece += symbols[rng.below(6)];
    pieces.push_back(piece);
    scores.push_back(static_cast<float>(rng.below(5)));
  }
  return h2o::Tokenizer(pieces, scores);
}

// One tokenizer seed: flags, the vocabulary size, the text's length and bytes, then the file.
Bytes tokenizer_seed(int flags, std::size_t vocab, const std::string& text, const Bytes& file) {
  Bytes seed = {static_cast<char>(flags), static_cast<char>(vocab & 0xFF),
                static_cast<char>(vocab >> 8), static_cast<char>(text.size() & 0xFF),
                static_cast<char>(text.size() >> 8)};
  seed.insert(seed.end(), text.begin(), text.end());
  seed.insert(seed.end(), file.begin(), file.end());
  return seed;
}

void tokenizer_seeds(const fs::path& folder, const std::string& real_tokenizer) {
  fs::create_directories(folder);
  const std::string texts[] = {"",
                               "abc aaa",
                               "Once upon a time, Lily's mom said \"hi\".\n",
                               "caf\xC3\xA9 na\xC3\xAFve \xF0\x9F\x99\x82 \xE6\x97\xA5",
                               std::string("\x00\x01\xFF\xFE\x80 b", 7),
                               "ab ab ab abc bca cab \xC3\xA9\xC3\xA9"};
  std::vector<std::pair<std::size_t, Bytes>> files;  // vocabulary size, file bytes
  const fs::path scratch = folder / "scratch.bin";
  h2o::Rng rng(2024);
  for (int i = 0; i < 3; ++i) {
    const h2o::Tokenizer t = letters_vocabulary(rng);
    t.save(scratch.string());
    files.emplace_back(t.vocab_size(), read_bytes(scratch.string()));
  }
  fs::remove(scratch);
  if (!real_tokenizer.empty() && fs::exists(real_tokenizer)) {
    files.emplace_back(512, read_bytes(real_tokenizer));
  }
  int n = 0;
  for (const auto& [vocab, file] : files) {
    for (const std::string& text : texts) {
      write_bytes(folder / ("seed_" + std::to_string(n) + ".bin"),
                  tokenizer_seed(n % 4, vocab, text, file));
      ++n;
    }
  }
}

void options_seeds(const fs::path& folder) {
  fs::create_directories(folder);
  // The examples the README and the tools' comments give, and a few wrong ones.
  const std::vector<std::vector<std::string>> command_lines = {
      {"--temperature", "0", "--steps", "200"},
      {"--temperature", "0", "--cache", "h2o", "--heavy", "16", "--recent", "16"},
      {"--temperature", "0", "--cache", "sinks", "--sinks", "4", "--recent", "28"},
      {"--prompt", "Once upon a time", "--seed", "7"},
      {"--cache", "random", "--evict-seed", "5", "--scoring", "shared", "--top-p=0.5"},
      {"--cache", "tova", "--heavy", "0", "--recent", "0"},
      {"--cache", "h2o", "--h2o-score", "normalised-sum", "--start-area", "4", "--compress-prompt"},
      {"--cache", "snapkv", "--snapkv-pool", "max", "--snapkv-kernel", "7", "--compress-prompt"},
      {"--snapkv-pool", "median", "--snapkv-kernel", "4"},
      {"--budgets", "5,10", "--policies", "h2o,window,sinks"},
      {"--svg", "/tmp/policies.svg", "--picture-budget", "20", "--text", "story.txt"},
      {"--policies=all", "--budgets", "1,2,3,5,10,20,50,100"},
      {"--lengths", "512,8192", "--heavy", "32", "--recent", "32", "--repeats", "5"},
      {"--model", "m.bin", "--tokenizer", "t.bin", "--help"},
      {"--steps", "-5", "--temperature", "1e-38", "--seed=99999999999999999999"}};
  int n = 0;
  for (const auto& words : command_lines) {
    Bytes seed;
    for (std::size_t i = 0; i < words.size(); ++i) {
      if (i > 0) seed.push_back('\0');
      seed.insert(seed.end(), words[i].begin(), words[i].end());
    }
    write_bytes(folder / ("seed_" + std::to_string(n++) + ".bin"), seed);
  }
}

void text_seeds(const fs::path& folder) {
  fs::create_directories(folder);
  // Names files and texts as people write them, and as they go wrong.
  const std::vector<std::string> texts = {
      "Lily\nTom\nSam\n",
      "Lily\r\nTom\r\n\r\nSam",
      "Mary Ann\nBob\n",
      "\xef\xbb\xbfZo\xc3\xab\n\xc5\x81ukasz\nO'Brien\nMary-Jane\nZoe\xcc\x88\n",
      "O'\nMary--Jane\n-Tom\n",
      "Once upon a time, Lily had a red ball.\nShe played.\n\nTom ran home.\n",
      "A story.\r\nIts second line.\r\n\r\nAnother story.\r\n",
      "\n\n\nOnly newlines around\n\n\n\n",
      "caf\xc3\xa9 \xe2\x80\x94 \x1b[31mred\x1b[0m \xff\xfe \xc2\x9b\x00end",
      std::string(300, 'x') + "\n\xed\xa0\x80\n"};
  int n = 0;
  for (const std::string& text : texts) {
    write_bytes(folder / ("seed_" + std::to_string(n++) + ".txt"), Bytes(text.begin(), text.end()));
  }
}

int make_seeds(int argc, char** argv) {
  if (argc < 2 || argc > 3) throw h2o::UsageError("usage: fuzz_make_seeds FOLDER [TOKENIZER]");
  const fs::path folder = argv[1];
  checkpoint_seeds(folder / "checkpoint");
  tokenizer_seeds(folder / "tokenizer", argc == 3 ? argv[2] : "");
  options_seeds(folder / "options");
  text_seeds(folder / "text");
  std::cout << "fuzz_make_seeds: wrote the seed corpora into " << folder.string() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return h2o::run_program(argc, argv, make_seeds); }
