// test_checkpoint.cpp: reading and writing llama2.c checkpoints (checkpoint.hpp).
//
// Small checkpoints are written from random weights into a temporary folder, then loaded back,
// truncated, extended or patched to check every one-line error. The real stories260K checkpoint
// (H2O_MODELS_DIR) checks the loader against llama2.c's own numbers; those tests print SKIPPED and
// pass when the folder is absent.
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "h2o/base/random.hpp"
#include "h2o/base/xtensor.hpp"
#include "h2o/model/checkpoint.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/policy/h2o_policy.hpp"
#include "h2o/policy/policy_factory.hpp"
#include "h2o/text/sampler.hpp"
#include "h2o_catch.hpp"
#include "logit_bound.hpp"
#include "test_support.hpp"

using namespace h2o;
using h2o_catch::Contains;
using h2o_test::error_of;
using h2o_test::model_file;
using h2o_test::read_bytes;
using h2o_test::TempDir;
using h2o_test::write_bytes;

namespace {

bool have_real_model() { return std::filesystem::exists(model_file("stories260K.bin")); }

std::vector<char> header_bytes(const std::int32_t (&header)[7]) {
  std::vector<char> bytes(sizeof(header));
  std::memcpy(bytes.data(), header, sizeof(header));
  return bytes;
}

// dim 16 (4 heads of 4, 2 KV heads), hidden 24, 2 layers, vocab 40, seq_len 12.
ModelConfig tiny_config(bool shared_classifier) {
  ModelConfig c;
  c.dim = 16;
  c.hidden_dim = 24;
  c.n_layers = 2;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.vocab_size = 40;
  c.seq_len = 12;
  c.shared_classifier = shared_classifier;
  return c;
}

// An empty tensor (wcls of a shared classifier) may have null data, and memcmp's pointers must
// never be null, even for 0 bytes (UBSan stops the test otherwise).
bool same_tensor(const float* a, const float* b, std::size_t n) {
  return n == 0 || std::memcmp(a, b, n * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("save and load round trip keeps every weight and the file size") {
  const bool shared = GENERATE(true, false);
  const std::uint64_t seed = GENERATE(1u, 2u, 3u);
  TempDir dir("checkpoint_roundtrip");
  const DecoderWeights original = random_weights(tiny_config(shared), seed);
  const std::string path = dir.file("tiny.bin");
  save_checkpoint(path, original);

  const ModelConfig& c = original.config;
  CHECK(std::filesystem::file_size(path) ==
        kCheckpointHeaderBytes + 4 * c.checkpoint_float_count());
  const ModelConfig header_only = read_checkpoint_config(path);
  CHECK(header_only.describe() == c.describe());
  CHECK(header_only.shared_classifier == shared);

  const DecoderWeights loaded = load_checkpoint(path);
  CHECK(loaded.config.describe() == c.describe());
  CHECK(loaded.config.shared_classifier == shared);
  CHECK(same_tensor(loaded.token_embedding.data(), original.token_embedding.data(),
                    original.token_embedding.size()));
  CHECK(same_tensor(loaded.rms_att.data(), original.rms_att.data(), original.rms_att.size()));
  CHECK(same_tensor(loaded.wq.data(), original.wq.data(), original.wq.size()));
  CHECK(same_tensor(loaded.wk.data(), original.wk.data(), original.wk.size()));
  CHECK(same_tensor(loaded.wv.data(), original.wv.data(), original.wv.size()));
  CHECK(same_tensor(loaded.wo.data(), original.wo.data(), original.wo.size()));
  CHECK(same_tensor(loaded.rms_ffn.data(), original.rms_ffn.data(), original.rms_ffn.size()));
  CHECK(same_tensor(loaded.w1.data(), original.w1.data(), original.w1.size()));
  CHECK(same_tensor(loaded.w2.data(), original.w2.data(), original.w2.size()));
  CHECK(same_tensor(loaded.w3.data(), original.w3.data(), original.w3.size()));
  CHECK(same_tensor(loaded.rms_final.data(), original.rms_final.data(), original.rms_final.size()));
  CHECK(loaded.wcls.shape() == original.wcls.shape());
  CHECK(same_tensor(loaded.wcls.data(), original.wcls.data(), original.wcls.size()));
  // Untied: the classifier really is the separate matrix, not the embedding.
  CHECK(&loaded.classifier() == (shared ? &loaded.token_embedding : &loaded.wcls));
}

TEST_CASE("a saved checkpoint stores a negative vocab_size exactly when the classifier is untied") {
  const bool shared = GENERATE(true, false);
  TempDir dir("checkpoint_vocabsign");
  save_checkpoint(dir.file("tiny.bin"), random_weights(tiny_config(shared), 7));
  const std::vector<char> bytes = read_bytes(dir.file("tiny.bin"));
  std::int32_t header[7];
  std::memcpy(header, bytes.data(), sizeof(header));
  CHECK(header[0] == 16);
  CHECK(header[1] == 24);
  CHECK(header[2] == 2);
  CHECK(header[3] == 4);
  CHECK(header[4] == 2);
  CHECK(header[5] == (shared ? 40 : -40));
  CHECK(header[6] == 12);
  // The first RoPE table entry after the weights is cos(0) = 1, as llama2.c's export writes it.
  const std::size_t rope_offset =
      kCheckpointHeaderBytes +
      4 * (tiny_config(shared).checkpoint_float_count() - 12 * 4 - (shared ? 0 : 40 * 16));
  float first_cos = 0.0f;
  std::memcpy(&first_cos, bytes.data() + rope_offset, sizeof(float));
  CHECK(first_cos == 1.0f);
}

TEST_CASE("a loaded checkpoint gives the same logits as the weights it was saved from") {
  TempDir dir("checkpoint_logits");
  auto original = std::make_shared<const DecoderWeights>(random_weights(tiny_config(false), 11));
  save_checkpoint(dir.file("tiny.bin"), *original);
  auto loaded = std::make_shared<const DecoderWeights>(load_checkpoint(dir.file("tiny.bin")));
  Decoder a(original, policy_of<FullCachePolicy>());
  Decoder b(loaded, policy_of<FullCachePolicy>());
  for (int token : {1, 5, 39, 0, 17}) {
    const Vector logits_a = a.forward(token);
    const Vector& logits_b = b.forward(token);
    CHECK(same_tensor(logits_a.data(), logits_b.data(), logits_a.size()));
  }
}

TEST_CASE("missing empty and directory checkpoints are refused with the file named") {
  TempDir dir("checkpoint_missing");
  const std::string missing = dir.file("nope.bin");
  std::string message = error_of<std::runtime_error>([&] { load_checkpoint(missing); });
  CHECK_THAT(message, Contains(missing) && Contains("does not exist"));

  write_bytes(dir.file("empty.bin"), {});
  message = error_of<std::runtime_error>([&] { load_checkpoint(dir.file("empty.bin")); });
  CHECK_THAT(message, Contains("empty.bin") && Contains("is empty"));

  message = error_of<std::runtime_error>([&] { load_checkpoint(dir.path.string()); });
  CHECK_THAT(message, Contains("is a directory"));
}

TEST_CASE("a truncated header is refused") {
  TempDir dir("checkpoint_shortheader");
  write_bytes(dir.file("short.bin"), std::vector<char>(10, 1));
  const std::string message =
      error_of<std::runtime_error>([&] { load_checkpoint(dir.file("short.bin")); });
  CHECK_THAT(message, Contains("short.bin") && Contains("truncated") &&
                          Contains("header needs 28 bytes, the file has 10"));
  CHECK(message.find('\n') == std::string::npos);
}

TEST_CASE("bad header values are refused before anything is allocated") {
  struct Case {
    std::int32_t header[7];
    const char* expected;
  };
  // The file holds only the header: a check that trusted the sizes would allocate or read past it.
  const Case cases[] = {
      {{0, 24, 2, 4, 2, 40, 12}, "dim is 0, it must be positive"},
      {{16, -24, 2, 4, 2, 40, 12}, "hidden_dim is -24, it must be positive"},
      {{16, 24, 0, 4, 2, 40, 12}, "n_layers is 0, it must be positive"},
      {{16, 24, 2, -4, 2, 40, 12}, "n_heads is -4, it must be positive"},
      {{16, 24, 2, 4, 0, 40, 12}, "n_kv_heads is 0, it must be positive"},
      {{16, 24, 2, 4, 2, 0, 12}, "vocab_size is 0, it must be non-zero"},
      {{16, 24, 2, 4, 2, 40, -1}, "seq_len is -1, it must be positive"},
      {{16, 24, 2, 3, 1, 40, 12}, "n_heads 3 does not divide dim 16"},
      {{16, 24, 2, 4, 3, 40, 12}, "n_kv_heads 3 does not divide n_heads 4"},
      {{12, 24, 2, 4, 2, 40, 12}, "head size 3 is odd"},
      {{1 << 30, 24, 2, 4, 2, 40, 12}, "dim 1073741824 is absurdly large"},
      {{16, 24, 100000, 4, 2, 40, 12}, "n_layers 100000 is absurdly large"},
      {{16, 24, 2, 4, 2, std::numeric_limits<std::int32_t>::min(), 12}, "absurdly large"},
      {{16, 24, 2, 4, 2, 40, 2000000000}, "seq_len 2000000000 is absurdly large"},
      {{0x616b3432, 1, 2, 4, 2, 40, 12}, "versioned llama2.c export"},
  };
  TempDir dir("checkpoint_badheader");
  for (const Case& c : cases) {
    INFO(c.expected);
    write_bytes(dir.file("bad.bin"), header_bytes(c.header));
    const std::string message =
        error_of<std::invalid_argument>([&] { load_checkpoint(dir.file("bad.bin")); });
    CHECK_THAT(message, Contains("bad.bin") && Contains(c.expected));
    CHECK(message.find('\n') == std::string::npos);
  }
}

TEST_CASE("a header at the size limits over a tiny file is refused as truncated") {
  // Every field is within ModelConfig's limits, so only the file-size check stands between this
  // header and an allocation of hundreds of gigabytes.
  TempDir dir("checkpoint_huge");
  const std::int32_t header[7] = {16384, 65536, 512, 128, 128, -(1 << 20), 1 << 20};
  std::vector<char> bytes = header_bytes(header);
  bytes.resize(bytes.size() + 4096, 0);
  write_bytes(dir.file("huge.bin"), bytes);
  const std::string message =
      error_of<std::runtime_error>([&] { load_checkpoint(dir.file("huge.bin")); });
  CHECK_THAT(message,
             Contains("huge.bin") && Contains("is truncated") && Contains("the file has 4124"));
}

TEST_CASE("truncated weights and trailing bytes are refused with both sizes named") {
  const bool shared = GENERATE(true, false);
  TempDir dir("checkpoint_sizes");
  save_checkpoint(dir.file("good.bin"), random_weights(tiny_config(shared), 5));
  const std::vector<char> good = read_bytes(dir.file("good.bin"));
  const std::string expected_size = std::to_string(good.size());

  std::vector<char> shorter(good.begin(), good.end() - 4);
  write_bytes(dir.file("short.bin"), shorter);
  std::string message =
      error_of<std::runtime_error>([&] { load_checkpoint(dir.file("short.bin")); });
  CHECK_THAT(message, Contains("short.bin") && Contains("is truncated") &&
                          Contains("implies " + expected_size + " bytes, the file has " +
                                   std::to_string(good.size() - 4)));

  std::vector<char> longer = good;
  longer.insert(longer.end(), {0, 0, 0, 0, 0, 0});
  write_bytes(dir.file("long.bin"), longer);
  message = error_of<std::runtime_error>([&] { load_checkpoint(dir.file("long.bin")); });
  CHECK_THAT(message, Contains("long.bin") && Contains("has 6 trailing bytes"));

  // The same weights under a header that claims the other classifier layout.
  std::vector<char> flipped = good;
  std::int32_t vocab = shared ? -40 : 40;
  std::memcpy(flipped.data() + 5 * sizeof(std::int32_t), &vocab, sizeof(vocab));
  write_bytes(dir.file("flipped.bin"), flipped);
  message = error_of<std::runtime_error>([&] { load_checkpoint(dir.file("flipped.bin")); });
  CHECK_THAT(message, Contains(shared ? "is truncated" : "has 2560 trailing bytes"));
}

TEST_CASE("a non-finite weight is refused with the tensor named") {
  TempDir dir("checkpoint_nan");
  save_checkpoint(dir.file("good.bin"), random_weights(tiny_config(true), 3));
  std::vector<char> bytes = read_bytes(dir.file("good.bin"));
  // The 3rd float of wq: after the header, token_embedding (40 x 16) and rms_att (2 x 16).
  const std::size_t offset = kCheckpointHeaderBytes + 4 * (40 * 16 + 2 * 16 + 2);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(bytes.data() + offset, &nan, sizeof(nan));
  write_bytes(dir.file("nan.bin"), bytes);
  const std::string message =
      error_of<std::runtime_error>([&] { load_checkpoint(dir.file("nan.bin")); });
  CHECK_THAT(message, Contains("nan.bin") && Contains("tensor wq") && Contains("non-finite") &&
                          Contains("index 2"));
}

TEST_CASE(
    "a memory-mapped checkpoint refuses a non-finite weight wherever the threads' shares "
    "split the file") {
  // 14.6 million floats: the mapped check splits them over up to 3 threads (4 Mi floats each at
  // least), so bad values near the start, at the edges of the shares (a third, a half) and in the
  // last tensor are each found by one of them, and the message names the tensor and the index.
  ModelConfig config;
  config.dim = 512;
  config.hidden_dim = 1024;
  config.n_layers = 4;
  config.n_heads = 8;
  config.n_kv_heads = 8;
  config.vocab_size = 8000;
  config.seq_len = 8;
  TempDir dir("checkpoint_mapped_nan");
  save_checkpoint(dir.file("good.bin"), random_weights(config, 5));
  REQUIRE_NOTHROW(MappedCheckpoint::open(dir.file("good.bin")));
  const std::vector<char> good = read_bytes(dir.file("good.bin"));
  const std::size_t C = 512, F = 1024, L = 4, V = 8000;
  const std::size_t wq_start = V * C + L * C;                                 // floats before wq
  const std::size_t w2_start = wq_start + 4 * L * C * C + L * C + L * F * C;  // before w2
  const std::size_t total =
      w2_start + 2 * L * F * C + C;  // every checked float (shared classifier)
  struct Case {
    std::size_t index;  // float index after the header
    const char* expect;
  };
  const float inf = std::numeric_limits<float>::infinity();
  for (const Case& c :
       {Case{wq_start + 2, "tensor wq holds a non-finite value (inf) at index 2"},
        Case{total / 3, "tensor wq"}, Case{total / 2 - 1, "tensor wo"},
        Case{total / 2, "tensor wo"},
        Case{total - 1,
             "tensor rms_final holds a non-finite value (inf) at "
             "index 511"},
        Case{w2_start + 7, "tensor w2 holds a non-finite value (inf) at index 7"}}) {
    INFO("float " << c.index << " of " << total);
    std::vector<char> bytes = good;
    std::memcpy(bytes.data() + kCheckpointHeaderBytes + 4 * c.index, &inf, sizeof(inf));
    write_bytes(dir.file("bad.bin"), bytes);
    const std::string message =
        error_of<std::runtime_error>([&] { MappedCheckpoint::open(dir.file("bad.bin")); });
    CHECK_THAT(message, Contains("bad.bin") && Contains(c.expect));
  }
}

TEST_CASE("stories260K loads with its header shape and llama2.c logits at position 0") {
  if (!have_real_model()) {
    WARN("SKIPPED: " << model_file("stories260K.bin") << " is absent");
    return;
  }
  auto weights =
      std::make_shared<const DecoderWeights>(load_checkpoint(model_file("stories260K.bin")));
  const ModelConfig& c = weights->config;
  CHECK(c.describe() == stories260k_shape().describe());
  CHECK(c.shared_classifier);
  CHECK(c.head_dim() == 8);
  CHECK(c.kv_dim() == 32);

  Decoder decoder(weights, policy_of<FullCachePolicy>());
  const Vector& logits = decoder.forward(1);  // BOS
  const int best = sample_argmax(logits.data(), logits.size());
  CHECK(best == 403);  // " Once"
  CHECK(logits(403) == Approx(17.023516).margin(1e-4));
  CHECK(logits(1) == Approx(8.404342).margin(1e-4));
}

TEST_CASE("stories260K greedy decoding reproduces llama2.c token ids") {
  if (!have_real_model()) {
    WARN("SKIPPED: " << model_file("stories260K.bin") << " is absent");
    return;
  }
  std::ifstream ids_file(model_file("expected_greedy_ids_n200.txt"));
  std::vector<int> expected{std::istream_iterator<int>(ids_file), std::istream_iterator<int>()};
  REQUIRE(expected.size() == 201);  // BOS + one token after each of the 200 positions

  auto weights =
      std::make_shared<const DecoderWeights>(load_checkpoint(model_file("stories260K.bin")));
  // Full cache, and H2O with a budget that covers every position (so it never evicts).
  const int which = GENERATE(0, 1, 2);
  std::unique_ptr<CachePolicy> policy;
  if (which == 0) policy = policy_of<FullCachePolicy>();
  if (which == 1) policy = policy_of<H2OPolicy>(CacheBudget{100, 100}, ScoringMode::PerHead);
  if (which == 2) policy = policy_of<H2OPolicy>(CacheBudget{0, 200}, ScoringMode::Shared);
  Decoder decoder(weights, std::move(policy), 200);
  std::vector<int> ids{1};
  while (ids.size() < expected.size()) {
    const Vector& logits = decoder.forward(ids.back());
    ids.push_back(sample_argmax(logits.data(), logits.size()));
  }
  CHECK(ids == expected);
}

TEST_CASE("a truncated copy of stories260K is refused") {
  if (!have_real_model()) {
    WARN("SKIPPED: " << model_file("stories260K.bin") << " is absent");
    return;
  }
  TempDir dir("checkpoint_realcut");
  std::vector<char> bytes = read_bytes(model_file("stories260K.bin"));
  REQUIRE(bytes.size() == 1056540);
  bytes.resize(bytes.size() - 1000);
  write_bytes(dir.file("cut.bin"), bytes);
  const std::string message =
      error_of<std::runtime_error>([&] { load_checkpoint(dir.file("cut.bin")); });
  CHECK_THAT(message, Contains("cut.bin") && Contains("is truncated") &&
                          Contains("implies 1056540 bytes, the file has 1055540"));
}

TEST_CASE("a memory-mapped checkpoint gives the loaded one's logits bit for bit") {
  const bool shared = GENERATE(true, false);
  TempDir dir("checkpoint_mapped");
  const ModelConfig config = tiny_config(shared);
  save_checkpoint(dir.file("tiny.bin"), random_weights(config, 11));
  auto loaded = std::make_shared<const DecoderWeights>(load_checkpoint(dir.file("tiny.bin")));
  const auto mapped = MappedCheckpoint::open(dir.file("tiny.bin"));
  CHECK(mapped->config().describe() == loaded->config.describe());
  CHECK(mapped->config().shared_classifier == shared);
  Decoder a(loaded, policy_of<FullCachePolicy>());
  Decoder b(mapped->view(), mapped, policy_of<FullCachePolicy>());
  for (int token : {1, 5, 39, 0, 7}) {
    const Vector& la = a.forward(token);
    const Vector& lb = b.forward(token);
    CHECK(same_tensor(la.data(), lb.data(), config.vocab_size));
  }
}

namespace {

// One stored tensor of a checkpoint of `c`: its name and where its floats are (after the header).
struct StoredTensor {
  const char* name;
  std::size_t first, count;
};

// Every tensor the decoder reads, in file order (checkpoint.hpp's layout).
std::vector<StoredTensor> stored_tensors(const ModelConfig& c) {
  const std::size_t V = c.vocab_size, C = c.dim, F = c.hidden_dim, L = c.n_layers, KV = c.kv_dim();
  std::vector<StoredTensor> out;
  std::size_t next = 0;
  auto add = [&](const char* name, std::size_t count) {
    out.push_back({name, next, count});
    next += count;
  };
  add("token_embedding", V * C);
  add("rms_att", L * C);
  add("wq", L * C * C);
  add("wk", L * KV * C);
  add("wv", L * KV * C);
  add("wo", L * C * C);
  add("rms_ffn", L * C);
  add("w1", L * F * C);
  add("w2", L * C * F);
  add("w3", L * F * C);
  add("rms_final", C);
  next += 2 * c.seq_len * (c.head_dim() / 2);  // the RoPE tables, never read
  if (!c.shared_classifier) add("wcls", V * C);
  return out;
}

}  // namespace

TEST_CASE(
    "a checkpoint checked by its first token names every planted NaN or infinity as "
    "the full check does") {
  // For each tensor, a NaN, +inf or -inf at its first float, its last and a random one: the
  // first call of a decoder on the mapped file (forward, forward_batch of a prompt, or
  // read_prompt_compressed with an H2O cache too small for the prompt, taking turns) must throw
  // exactly the message that FiniteCheck::at_open gives for the same file.
  const bool shared = GENERATE(true, false);
  const ModelConfig config = tiny_config(shared);
  TempDir dir("checkpoint_first_token");
  save_checkpoint(dir.file("good.bin"), random_weights(config, 21));
  const std::vector<char> good = read_bytes(dir.file("good.bin"));
  const std::vector<int> prompt = {1, 7, 30, 2, 39, 11};
  const float bad_values[3] = {std::numeric_limits<float>::quiet_NaN(),
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity()};
  Rng rng(shared ? 5 : 6);
  int turn = 0, cases = 0;
  for (const StoredTensor& t : stored_tensors(config)) {
    const std::size_t random_index = rng.below(static_cast<std::uint32_t>(t.count));
    for (const std::size_t index : {std::size_t{0}, t.count - 1, random_index}) {
      for (const float bad : bad_values) {
        const int way = turn++ % 3;
        INFO(t.name << "[" << index << "] = " << bad << ", first call " << way);
        std::vector<char> bytes = good;
        std::memcpy(bytes.data() + kCheckpointHeaderBytes + 4 * (t.first + index), &bad, 4);
        const std::string path = dir.file("bad.bin");
        write_bytes(path, bytes);
        const std::string expected =
            error_of<std::runtime_error>([&] { MappedCheckpoint::open(path); });
        REQUIRE_THAT(expected, Contains(std::string("tensor ") + t.name + " holds a non-finite"));
        const std::string actual = error_of<std::runtime_error>([&] {
          const auto mapped = MappedCheckpoint::open(path, FiniteCheck::by_first_token);
          const std::string policy = way == 2 ? "h2o" : "full";
          Decoder decoder(mapped->view(), mapped,
                          make_policy(policy, settings_for_budget(policy, 3)));
          if (way == 0) decoder.forward(prompt[0]);
          if (way == 1) decoder.forward_batch(prompt);
          if (way == 2) decoder.read_prompt_compressed(prompt);
        });
        CHECK(actual == expected);
        ++cases;
      }
    }
  }
  CHECK(cases == (shared ? 11 : 12) * 3 * 3);
}

TEST_CASE("a checkpoint checked by its first token runs like one checked at open") {
  const bool shared = GENERATE(true, false);
  const ModelConfig config = tiny_config(shared);
  TempDir dir("checkpoint_first_token_good");
  DecoderWeights weights = random_weights(config, 22);
  save_checkpoint(dir.file("good.bin"), weights);
  const std::vector<int> tokens = {1, 5, 39, 0, 7, 22, 3};
  const std::vector<double> tolerance = h2o_test::logit_tolerances(weights, tokens.size());
  // Finite weights whose attention overflows (queries and keys 1e20 times too large): the logits
  // are NaN, yet no tensor is to blame, so the first token must not throw either.
  weights.wq *= 1e20f;
  weights.wk *= 1e20f;
  save_checkpoint(dir.file("overflow.bin"), weights);
  for (const std::string name : {"good.bin", "overflow.bin"}) {
    INFO(name);
    const auto checked = MappedCheckpoint::open(dir.file(name));
    const auto unchecked = MappedCheckpoint::open(dir.file(name), FiniteCheck::by_first_token);
    CHECK_FALSE(checked->view().name_non_finite_weight);
    CHECK(unchecked->view().name_non_finite_weight);
    // Token by token: the same logits, bit for bit (NaNs included).
    Decoder a(checked->view(), checked, make_policy("full"));
    Decoder b(unchecked->view(), unchecked, make_policy("full"));
    for (int token : tokens) {
      const Vector& la = a.forward(token);
      const Vector& lb = b.forward(token);
      CHECK(same_tensor(la.data(), lb.data(), config.vocab_size));
    }
    // A batch: the first token alone, then the chunks; the same as token by token, up to the order
    // of additions in the products (the bound of logit_bound.hpp).
    if (name == "good.bin") {
      Decoder c(unchecked->view(), unchecked, make_policy("full"));
      Matrix all_logits;
      c.forward_batch(tokens, &all_logits);
      a.reset();
      for (std::size_t i = 0; i < tokens.size(); ++i) {
        INFO("token " << i);
        const Vector& la = a.forward(tokens[i]);
        CHECK(h2o_test::worst_over_tolerance(&all_logits(i, 0), la.data(), tolerance) <= 1.0);
      }
    }
  }
}

TEST_CASE("a decoder whose first token found a bad weight refuses the next token too") {
  TempDir dir("checkpoint_first_token_again");
  save_checkpoint(dir.file("good.bin"), random_weights(tiny_config(true), 23));
  std::vector<char> bytes = read_bytes(dir.file("good.bin"));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::memcpy(bytes.data() + bytes.size() - 4 * (2 * 12 * 2 + 1), &nan, 4);  // rms_final's last
  write_bytes(dir.file("nan.bin"), bytes);
  const auto mapped = MappedCheckpoint::open(dir.file("nan.bin"), FiniteCheck::by_first_token);
  Decoder decoder(mapped->view(), mapped, make_policy("full"));
  for (int token : {1, 2}) {
    INFO("token " << token);
    CHECK_THAT(error_of<std::runtime_error>([&] { decoder.forward(token); }),
               Contains("nan.bin") && Contains("tensor rms_final holds a non-finite value (nan)"));
  }
}

TEST_CASE("a memory-mapped checkpoint is refused with load_checkpoint's one-line errors") {
  TempDir dir("checkpoint_mapped_bad");
  save_checkpoint(dir.file("good.bin"), random_weights(tiny_config(false), 3));
  const std::vector<char> good = read_bytes(dir.file("good.bin"));
  std::vector<char> nan_in_wcls = good;  // the last float: the untied classifier's
  const float inf = std::numeric_limits<float>::infinity();
  std::memcpy(nan_in_wcls.data() + good.size() - 4, &inf, sizeof(inf));
  write_bytes(dir.file("inf.bin"), nan_in_wcls);
  write_bytes(dir.file("cut.bin"), std::vector<char>(good.begin(), good.end() - 4));
  std::vector<char> longer = good;
  longer.push_back(0);
  write_bytes(dir.file("long.bin"), longer);
  write_bytes(dir.file("empty.bin"), {});
  const std::int32_t zero_dim[7] = {0, 24, 2, 4, 2, 40, 12};
  write_bytes(dir.file("zero_dim.bin"), header_bytes(zero_dim));
  for (const std::string name :
       {"inf.bin", "cut.bin", "long.bin", "empty.bin", "zero_dim.bin", "missing.bin"}) {
    INFO(name);
    const std::string path = dir.file(name);
    std::string expected, actual;
    try {
      load_checkpoint(path);
    } catch (const std::exception& e) {
      expected = e.what();
    }
    try {
      MappedCheckpoint::open(path);
    } catch (const std::exception& e) {
      actual = e.what();
    }
    CHECK_FALSE(expected.empty());
    CHECK(actual == expected);
    CHECK(actual.find('\n') == std::string::npos);
  }
}
