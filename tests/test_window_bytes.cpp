// test_window_bytes.cpp: a sliding window's KV bytes counted on a cache of zero rows
// (cache/window_bytes.hpp), against a real decoder's window, and the window that fits given bytes.
#include <memory>
#include <vector>

#include "h2o/cache/window_bytes.hpp"
#include "h2o/measure/teacher_forcing.hpp"
#include "h2o/policy/policy_factory.hpp"
#include "h2o_catch.hpp"
#include "policy_test_support.hpp"

using namespace h2o;

TEST_CASE("a float32 window's bytes are its tokens' rows", "[window_bytes]") {
  // 2 KV heads of size 8: a token is 2 heads x (8 key + 8 value) floats = 128 bytes.
  CHECK(window_layer_kv_bytes(2, 8, {}, 100, 10) == 10 * 128);
  CHECK(window_layer_kv_bytes(2, 8, {}, 5, 10) == 5 * 128);  // fewer tokens than the window
  CHECK(window_tokens_for_bytes(2, 8, {}, 100, 10 * 128) == 10);
  CHECK(window_tokens_for_bytes(2, 8, {}, 100, 10 * 128 + 63) == 10);  // nearer 10 than 11
  CHECK(window_tokens_for_bytes(2, 8, {}, 100, 10 * 128 + 64) == 10);  // a tie: the smaller
  CHECK(window_tokens_for_bytes(2, 8, {}, 100, 10 * 128 + 65) == 11);
  CHECK(window_tokens_for_bytes(2, 8, {}, 100, 0) == 1);
  CHECK(window_tokens_for_bytes(2, 8, {}, 100, 1000000) == 100);
  CHECK_THROWS_WITH(window_layer_kv_bytes(2, 8, {}, 100, 0),
                    "window_layer_kv_bytes: a window of 0 tokens");
}

TEST_CASE("a quantised window's bytes are those a decoder's window holds", "[window_bytes]") {
  const KvFormat format = GENERATE(KvFormat{4, 8, 0}, KvFormat{8, 32, 0}, KvFormat{2, 8, 16});
  const std::size_t window = GENERATE(5, 16, 33);
  const auto weights = h2o_test::random_model(80, 7);
  const ModelConfig& c = weights->config;
  const std::vector<int> tokens = h2o_test::random_tokens(70, c.vocab_size, 7);
  Decoder decoder(weights, make_policy("window", settings_for_budget("window", window)), 80,
                  format);
  read_with_teacher_forcing(decoder, tokens);  // reads 69 tokens: the last is only predicted
  const std::size_t layer = window_layer_kv_bytes(c.n_kv_heads, c.head_dim(), format, 69, window);
  CHECK(decoder.live_kv_bytes() == c.n_layers * layer);
  // Bytes grow with the window, so the bytes of a window give that window back.
  CHECK(window_tokens_for_bytes(c.n_kv_heads, c.head_dim(), format, 69, layer) == window);
  CHECK(window_layer_kv_bytes(c.n_kv_heads, c.head_dim(), format, 69, window + 1) > layer);
}
