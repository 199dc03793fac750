// test_kv_quant.cpp: the reference quantiser (kv_quantiser.hpp) and the quantised storage of the
// layer KV cache (kv_cache.hpp): worked examples, the half-step error bound over seeded random
// groups, packing, and a quantised cache checked slot by slot against a plain reference under
// random evictions, with its bytes counted exactly.
//
// Dimension legend: G = KV heads, D = head_dim, B = key group (positions), n = numbers in a group.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>

#include "h2o/attention/attention.hpp"
#include "h2o/attention/quantised_attention.hpp"
#include "h2o/base/random.hpp"
#include "h2o/cache/kv_cache.hpp"
#include "h2o/cache/kv_quantiser.hpp"
#include "h2o_catch.hpp"

using namespace h2o;

namespace {

std::vector<float> round_trip(const std::vector<float>& x, unsigned bits) {
  const QuantStep step = quant_step_of(x.data(), x.size(), 1, bits);
  std::vector<float> out;
  for (float v : x) out.push_back(dequantise_number(quantise_number(v, step, bits), step));
  return out;
}

}  // namespace

TEST_CASE("quantiser worked examples", "[kv_quant]") {
  // 2 bits over [0, 3]: scale 1, zero 0, every number exact.
  const std::vector<float> x = {0.0f, 1.0f, 2.0f, 3.0f};
  const QuantStep step = quant_step_of(x.data(), 4, 1, 2);
  CHECK(step.scale == 1.0f);
  CHECK(step.zero == 0.0f);
  CHECK(round_trip(x, 2) == x);
  // [-1, 0.5, 2] at 2 bits: scale 1, zero -1; 0.5 is 1.5 steps up, a tie, rounded to even (2).
  const std::vector<float> y = {-1.0f, 0.5f, 2.0f};
  const QuantStep ystep = quant_step_of(y.data(), 3, 1, 2);
  CHECK(quantise_number(0.5f, ystep, 2) == 2);
  CHECK(round_trip(y, 2) == std::vector<float>{-1.0f, 1.0f, 2.0f});
  // A group of equal numbers: scale 0, every code 0, read back exactly.
  const std::vector<float> same = {0.25f, 0.25f};
  CHECK(quant_step_of(same.data(), 2, 1, 4).scale == 0.0f);
  CHECK(round_trip(same, 4) == same);
  // A strided group (a key channel over tokens): every second number.
  const std::vector<float> rows = {5.0f, -2.0f, 7.0f, 100.0f, 6.0f, 0.0f};
  const QuantStep col = quant_step_of(rows.data(), 3, 2, 8);
  CHECK(col.zero == 5.0f);
  CHECK(col.scale == 2.0f / 255.0f);
}

TEST_CASE("quantised numbers stay within half a step of the group's range", "[kv_quant]") {
  Rng rng(2024);
  for (unsigned bits : {8u, 4u, 2u}) {
    for (int trial = 0; trial < 200; ++trial) {
      const std::size_t n = 1 + rng.below(64);
      const float spread = std::pow(10.0f, rng.uniform(-3.0f, 3.0f));
      std::vector<float> x(n);
      for (float& v : x) v = spread * rng.normal();
      const QuantStep step = quant_step_of(x.data(), n, 1, bits);
      const float lo = *std::min_element(x.begin(), x.end());
      const float hi = *std::max_element(x.begin(), x.end());
      const float half_step = (hi - lo) / static_cast<float>((1u << bits) - 1u) / 2.0f;
      for (float v : x) {
        const std::uint8_t code = quantise_number(v, step, bits);
        CHECK(code < (1u << bits));
        // Half a step, plus float rounding of the subtraction, division and multiplication.
        const float slack = 1e-6f * std::max(std::fabs(lo), std::fabs(hi));
        CHECK(std::fabs(dequantise_number(code, step) - v) <= half_step + slack);
      }
    }
  }
}

TEST_CASE("codes pack lowest bits first and unpack unchanged", "[kv_quant]") {
  std::vector<std::uint8_t> packed(packed_bytes(6, 4), 0);
  CHECK(packed.size() == 3);
  const std::uint8_t codes[6] = {1, 15, 0, 9, 4, 2};
  for (std::size_t i = 0; i < 6; ++i) put_code(packed.data(), i, 4, codes[i]);
  CHECK(packed[0] == 0xF1);  // code 0 in the low nibble, code 1 in the high one
  CHECK(packed[1] == 0x90);
  Rng rng(5);
  for (unsigned bits : {8u, 4u, 2u}) {
    const std::size_t n = 37;
    std::vector<std::uint8_t> want(n), bytes(packed_bytes(n, bits), 0xAB);
    for (auto& c : want) c = static_cast<std::uint8_t>(rng.below(1u << bits));
    for (std::size_t i = 0; i < n; ++i) put_code(bytes.data(), i, bits, want[i]);
    for (std::size_t i = 0; i < n; ++i) CHECK(get_code(bytes.data(), i, bits) == want[i]);
  }
  CHECK(packed_bytes(16, 2) == 4);
  CHECK(packed_bytes(16, 8) == 16);
}

TEST_CASE("kv formats are checked", "[kv_quant]") {
  CHECK_THROWS_AS(check_kv_format({3, 32}), std::invalid_argument);
  CHECK_THROWS_AS(check_kv_format({16, 32}), std::invalid_argument);
  CHECK_THROWS_AS(check_kv_format({4, 0}), std::invalid_argument);
  CHECK_NOTHROW(check_kv_format({2, 1}));
  CHECK_THROWS_AS(LayerKVCache(1, 8, 4, KvFormat{5, 32}), std::invalid_argument);
  CHECK(describe_kv_format({}) == "fp32");
  CHECK(describe_kv_format({4, 32}) == "4-bit, groups of 32");
}

TEST_CASE("a quantised cache counts its bytes exactly", "[kv_quant]") {
  // G = 1, D = 8, B = 4, 4 bits: a quantised row is 4 + 4 bytes of codes and two value groups
  // of 4 channels, a scale and zero each (16 bytes): 24; a key group is 2 * 8 floats (64 bytes);
  // a residual row 2 * 8 floats (64 bytes).
  LayerKVCache cache(1, 8, 8, KvFormat{4, 4});
  std::vector<float> k(8), v(8);
  for (Position p = 0; p < 5; ++p) {
    for (std::size_t d = 0; d < 8; ++d) {
      k[d] = static_cast<float>(p) + 0.1f * static_cast<float>(d);
      v[d] = -k[d];
    }
    cache.append(k.data(), v.data(), p);
  }
  CHECK(cache.quantised_rows(0) == 4);        // positions 0..3 closed when position 4 came
  CHECK(cache.live_kv_bytes() == 4 * 24 + 64 + 64);
  const std::size_t slot0 = 0;
  cache.remove_one_per_head(&slot0);          // a quantised row goes; its group stays
  CHECK(cache.live_kv_bytes() == 3 * 24 + 64 + 64);
  for (int i = 0; i < 3; ++i) {
    // Evict the rest of group 0 (every slot but the residual one, position 4).
    std::size_t slot = 0;
    while (cache.positions(0)[slot] == 4) ++slot;
    cache.remove_one_per_head(&slot);
  }
  CHECK(cache.quantised_rows(0) == 0);
  CHECK(cache.live_kv_bytes() == 64);         // the group's floats went with its last member
  CHECK(cache.reserved_bytes() == LayerKVCache::bytes_for(1, 8, 8, KvFormat{4, 4}));
  const LayerKVCache bounded(3, 16, 40, KvFormat{2, 8}, 100);
  CHECK(bounded.reserved_bytes() == LayerKVCache::bytes_for(3, 16, 40, KvFormat{2, 8}, 100));
  CHECK(bounded.reserved_bytes() < LayerKVCache::bytes_for(3, 16, 40, KvFormat{2, 8}));
}

TEST_CASE("a quantised cache under random evictions holds KIVI's numbers", "[kv_quant]") {
  // Reference: every token's original rows by position; when a position group closes, its
  // surviving tokens are quantised together (keys per channel, values per token and channel
  // group). Every live slot must read back exactly the reference's dequantised numbers.
  const std::size_t G = 2, D = 8, S = 10;
  for (unsigned bits : {8u, 4u, 2u}) {
    for (std::size_t group : {std::size_t{4}, std::size_t{8}}) {
      // B = 4: value groups of 4 channels; B = 8 = D: one value group per row.
      LayerKVCache cache(G, D, S, KvFormat{bits, group});
      Rng rng(17 + bits + group);
      std::map<Position, std::vector<float>> keys, values;      // (G * D,) each
      std::map<Position, std::vector<float>> expect_k, expect_v;  // once quantised
      std::set<Position> live;
      auto close_group = [&](Position first) {
        std::vector<Position> members;
        for (Position p : live) {
          if (p >= first && expect_k.count(p) == 0) members.push_back(p);
        }
        for (Position p : members) {
          expect_k[p].resize(G * D);
          expect_v[p].resize(G * D);
        }
        for (std::size_t g = 0; g < G; ++g) {
          for (std::size_t d = 0; d < D; ++d) {
            std::vector<float> channel;
            for (Position p : members) channel.push_back(keys[p][g * D + d]);
            if (channel.empty()) continue;
            const QuantStep step = quant_step_of(channel.data(), channel.size(), 1, bits);
            for (Position p : members) {
              expect_k[p][g * D + d] = dequantise_number(
                  quantise_number(keys[p][g * D + d], step, bits), step);
            }
          }
          for (Position p : members) {
            for (std::size_t c = 0; c < D; c += group) {
              const float* row = &values[p][g * D + c];
              const QuantStep step = quant_step_of(row, group, 1, bits);
              for (std::size_t d = c; d < c + group; ++d) {
                expect_v[p][g * D + d] =
                    dequantise_number(quantise_number(values[p][g * D + d], step, bits), step);
              }
            }
          }
        }
      };
      std::vector<float> buffer(D);
      for (Position p = 0; p < 60; ++p) {
        if (p % static_cast<Position>(group) == 0 && p > 0) {
          close_group(p - static_cast<Position>(group));
        }
        std::vector<float> k(G * D), v(G * D);
        for (float& x : k) x = rng.normal();
        for (float& x : v) x = 3.0f * rng.normal();
        keys[p] = k;
        values[p] = v;
        cache.append(k.data(), v.data(), p);
        live.insert(p);
        // Evict one slot (the same position in every head, so one reference serves all heads)
        // when full, or now and then.
        if (cache.uniform_size() == S || rng.below(3) == 0) {
          const std::size_t slot = rng.below(static_cast<std::uint32_t>(cache.uniform_size()));
          const Position gone = cache.positions(0)[slot];
          std::vector<std::size_t> slots(G);
          for (std::size_t g = 0; g < G; ++g) {
            slots[g] = static_cast<std::size_t>(
                std::find(cache.positions(g), cache.positions(g) + cache.uniform_size(), gone) -
                cache.positions(g));
          }
          cache.remove_one_per_head(slots.data());
          live.erase(gone);
        }
        for (std::size_t g = 0; g < G; ++g) {
          for (std::size_t s = 0; s < cache.uniform_size(); ++s) {
            const Position q = cache.positions(g)[s];
            const bool quantised = expect_k.count(q) > 0;
            const std::vector<float>& want_k = quantised ? expect_k[q] : keys[q];
            const std::vector<float>& want_v = quantised ? expect_v[q] : values[q];
            INFO("bits " << bits << ", position " << q << ", head " << g);
            const float* got_k = cache.key_row(g, s, buffer.data());
            for (std::size_t d = 0; d < D; ++d) REQUIRE(got_k[d] == want_k[g * D + d]);
            const float* got_v = cache.value_row(g, s, buffer.data());
            for (std::size_t d = 0; d < D; ++d) REQUIRE(got_v[d] == want_v[g * D + d]);
          }
        }
      }
    }
  }
}

TEST_CASE("attention over a quantised cache is attention over its dequantised rows",
          "[kv_quant]") {
  const std::size_t G = 2, D = 16, Q = 2, S = 40;
  LayerKVCache cache(G, D, S, KvFormat{4, 8});
  Rng rng(9);
  std::vector<float> k(G * D), v(G * D);
  for (Position p = 0; p < 37; ++p) {
    for (float& x : k) x = rng.normal();
    for (float& x : v) x = rng.normal();
    cache.append(k.data(), v.data(), p);
  }
  const std::size_t slot = 3;
  const std::size_t slots[2] = {slot, slot + 1};
  cache.remove_one_per_head(slots);
  std::vector<float> queries(Q * D), buffer(D);
  for (float& x : queries) x = rng.normal();
  const std::size_t T = cache.uniform_size();
  for (std::size_t g = 0; g < G; ++g) {
    std::vector<float> keys(T * D), values(T * D);  // (T, D) dequantised
    for (std::size_t t = 0; t < T; ++t) {
      std::copy_n(cache.key_row(g, t, buffer.data()), D, &keys[t * D]);
      std::copy_n(cache.value_row(g, t, buffer.data()), D, &values[t * D]);
    }
    std::vector<float> w_ref(Q * T), out_ref(Q * D), w(Q * T), out(Q * D);
    attend_group_into(queries.data(), Q, keys.data(), values.data(), T, D, w_ref.data(), T,
                      out_ref.data());
    attend_cached_group(cache, g, queries.data(), Q, w.data(), T, out.data(), buffer.data());
    for (std::size_t i = 0; i < Q * T; ++i) CHECK(w[i] == Approx(w_ref[i]).margin(1e-6));
    for (std::size_t i = 0; i < Q * D; ++i) CHECK(out[i] == Approx(out_ref[i]).margin(1e-5));
  }
  CHECK_THROWS_AS(cache.keys(0), std::logic_error);
}

namespace {
// A quantised cache of one KV head with T live tokens out of `appended`: random keys and values
// (an outlier channel in the keys, as real keys have), some evicted at random so that slots are
// out of position order and key groups are split into short runs. residual: KIVI's window R.
LayerKVCache random_quantised_cache(std::size_t D, unsigned bits, std::size_t group,
                                    std::size_t appended, bool evict, Rng& rng,
                                    std::size_t residual = 0) {
  LayerKVCache cache(1, D, appended, KvFormat{bits, group, residual});
  std::vector<float> k(D), v(D);
  for (std::size_t p = 0; p < appended; ++p) {
    for (std::size_t d = 0; d < D; ++d) k[d] = rng.normal() * (d == 1 ? 8.0f : 1.0f);
    for (float& x : v) x = 2.0f * rng.normal();
    cache.append(k.data(), v.data(), static_cast<Position>(p));
    if (evict && cache.size(0) > 4 && rng.below(3) == 0) {
      cache.remove_slot(0, rng.below(static_cast<std::uint32_t>(cache.size(0))));
    }
  }
  return cache;
}

// The builds of the fused kernel this CPU can run: the SSE2 baseline always, AVX2 where it has it
// (the avx512 choice runs the AVX2 build too).
std::vector<MatvecKernel> runnable_builds() {
  std::vector<MatvecKernel> builds;
  for (MatvecKernel build : {MatvecKernel::baseline, MatvecKernel::avx2}) {
    if (kernel_supported(build)) builds.push_back(build);
  }
  return builds;
}
}  // namespace

TEST_CASE("every build of the fused quantised kernel matches the dequantising reference",
          "[kv_quant]") {
  // The bound (quantised_attention.hpp): weights within 2e-6, outputs within 2e-6 of the largest
  // |value| read back. The fused kernel folds the steps into the query and adds in another order.
  // Each build this CPU can run is checked (the SSE2 one on any x86-64 CPU). The AVX2 build
  // fuses its multiply-adds, so the builds differ from each other within the same bound.
  Rng rng(35);
  const std::vector<MatvecKernel> builds = runnable_builds();
  double worst_weight = 0, worst_output = 0;
  std::size_t cases = 0;
  for (std::size_t D : {8, 16, 32, 48, 64, 128}) {
    for (unsigned bits : {8u, 4u, 2u}) {
      for (std::size_t group : {std::size_t{8}, std::size_t{32}}) {
        for (bool evict : {false, true}) {
          // KIVI's window of 4 groups (R = 128 at groups of 32) on half the caches, with and
          // without evictions.
          const std::size_t residual = (cases / 4 + cases) % 2 == 1 ? 4 * group : 0;
          const std::size_t appended = 8 + rng.below(300);
          const LayerKVCache cache =
              random_quantised_cache(D, bits, group, appended, evict, rng, residual);
          const QuantisedRows rows = cache.quantised_store().rows(0);
          REQUIRE(has_fused_kernel(rows));
          const std::size_t T = cache.size(0), Q = 1 + rng.below(7);  // blocks of 4, 2 and 1
          std::vector<float> queries(Q * D), buffer(D);
          for (float& x : queries) x = rng.normal();
          float largest_value = 0;
          for (std::size_t t = 0; t < T; ++t) {
            const float* value = cache.value_row(0, t, buffer.data());
            for (std::size_t d = 0; d < D; ++d) {
              largest_value = std::max(largest_value, std::fabs(value[d]));
            }
          }
          const std::size_t stride = T + 3;  // rows of weights need not be packed
          std::vector<float> w_ref(Q * stride), out_ref(Q * D), w(Q * stride), out(Q * D);
          attend_quantised_group_reference(rows, T, queries.data(), Q, w_ref.data(), stride,
                                           out_ref.data(), buffer.data());
          std::vector<float> active_w, active_out;  // the numbers of the build a step runs
          for (MatvecKernel build : builds) {
            std::fill(w.begin(), w.end(), 0.0f);
            attend_quantised_group_with(build, rows, T, queries.data(), Q, w.data(), stride,
                                        out.data(), buffer.data());
            INFO(kernel_name(build) << " build, D " << D << ", " << bits << " bits, group "
                                         << group << ", R " << residual << ", T " << T << ", Q "
                                         << Q);
            for (std::size_t j = 0; j < Q; ++j) {
              for (std::size_t t = 0; t < T; ++t) {
                const double gap = std::fabs(w[j * stride + t] - w_ref[j * stride + t]);
                worst_weight = std::max(worst_weight, gap);
                REQUIRE(gap <= 2e-6);
              }
            }
            for (std::size_t i = 0; i < Q * D; ++i) {
              const double gap = std::fabs(out[i] - out_ref[i]) / largest_value;
              worst_output = std::max(worst_output, gap);
              REQUIRE(gap <= 2e-6);
            }
          }
          // The default runs the build of the decode kernel in use (matvec_kernel.hpp).
          attend_quantised_group_with(active_matvec_kernel(), rows, T, queries.data(), Q,
                                      w.data(), stride, out.data(), buffer.data());
          active_w = w;
          active_out = out;
          attend_quantised_group(rows, T, queries.data(), Q, w.data(), stride, out.data(),
                                 buffer.data());
          CHECK(w == active_w);
          CHECK(out == active_out);
          ++cases;
        }
      }
    }
  }
  CHECK(cases == 72);
  // Measured on an AVX-512 machine (both builds): 9.5e-7 and 9.3e-7.
  CHECK(worst_weight > 0.0);  // the kernels do round differently: the bound is not idle
  CHECK(worst_output > 0.0);
  // A build this CPU lacks is refused, not run.
  if (!kernel_supported(MatvecKernel::avx2)) {
    const LayerKVCache cache = random_quantised_cache(8, 4, 8, 16, false, rng);
    std::vector<float> q(8, 1.0f), w(16), out(8), buffer(8);
    CHECK_THROWS_AS(attend_quantised_group_with(MatvecKernel::avx2, cache.quantised_store().rows(0),
                                                16, q.data(), 1, w.data(), 16, out.data(),
                                                buffer.data()),
                    std::invalid_argument);
  }
}

TEST_CASE("the reference kernel choice runs the dequantising reference, bit for bit",
          "[kv_quant]") {
  // H2O_MATVEC_KERNEL=reference picks the readable loops for a whole decode step, this one too.
  Rng rng(37);
  const LayerKVCache cache = random_quantised_cache(16, 4, 8, 100, true, rng, 16);
  const QuantisedRows rows = cache.quantised_store().rows(0);
  REQUIRE(has_fused_kernel(rows));
  const std::size_t T = cache.size(0), Q = 3, D = 16;
  std::vector<float> queries(Q * D), buffer(D);
  for (float& x : queries) x = rng.normal();
  std::vector<float> w_ref(Q * T), out_ref(Q * D), w(Q * T), out(Q * D);
  attend_quantised_group_reference(rows, T, queries.data(), Q, w_ref.data(), T, out_ref.data(),
                                   buffer.data());
  attend_quantised_group_with(MatvecKernel::reference, rows, T, queries.data(), Q, w.data(), T,
                              out.data(), buffer.data());
  CHECK(w == w_ref);
  CHECK(out == out_ref);
}

TEST_CASE("shapes without a fused kernel run the reference, bit for bit", "[kv_quant]") {
  Rng rng(36);
  // D = 12: no 8-lane kernel; D = 8 with groups of 4: value groups narrower than 8 lanes.
  for (std::size_t D : {12, 8}) {
    const std::size_t group = 4;
    const LayerKVCache cache = random_quantised_cache(D, 4, group, 50, true, rng);
    const QuantisedRows rows = cache.quantised_store().rows(0);
    CHECK_FALSE(has_fused_kernel(rows));
    const std::size_t T = cache.size(0), Q = 2;
    std::vector<float> queries(Q * D), buffer(D);
    for (float& x : queries) x = rng.normal();
    std::vector<float> w_ref(Q * T), out_ref(Q * D), w(Q * T), out(Q * D);
    attend_quantised_group_reference(rows, T, queries.data(), Q, w_ref.data(), T, out_ref.data(),
                                     buffer.data());
    attend_quantised_group(rows, T, queries.data(), Q, w.data(), T, out.data(), buffer.data());
    CHECK(w == w_ref);
    CHECK(out == out_ref);
  }
  // No live token: a zero output.
  const LayerKVCache empty(1, 8, 4, KvFormat{4, 8});
  std::vector<float> q(8, 1.0f), w(1), out(8, 7.0f), buffer(8);
  attend_quantised_group(empty.quantised_store().rows(0), 0, q.data(), 1, w.data(), 1, out.data(),
                         buffer.data());
  CHECK(out == std::vector<float>(8, 0.0f));
}

TEST_CASE("KIVI's residual window keeps the newest R tokens float32, then quantises B at a time",
          "[kv_quant]") {
  // B = 4, R = 8: positions 0..7 stay float32 until position 8 comes; then they close as two key
  // groups (0..3 and 4..7), each with its own steps, the same numbers as a cache with R = B.
  const std::size_t D = 8;
  LayerKVCache window(1, D, 16, KvFormat{4, 4, 8}), plain(1, D, 16, KvFormat{4, 4});
  Rng rng(37);
  std::vector<float> k(D), v(D), a(D), b(D);
  for (Position p = 0; p < 9; ++p) {
    for (float& x : k) x = rng.normal();
    for (float& x : v) x = rng.normal();
    window.append(k.data(), v.data(), p);
    plain.append(k.data(), v.data(), p);
    if (p == 7) {
      CHECK(window.quantised_rows(0) == 0);  // 8 tokens, all float32
      CHECK(plain.quantised_rows(0) == 4);
    }
  }
  CHECK(window.quantised_rows(0) == 8);
  for (std::size_t s = 0; s < 9; ++s) {
    const float* wk = window.key_row(0, s, a.data());
    const float* pk = plain.key_row(0, s, b.data());
    for (std::size_t d = 0; d < D; ++d) CHECK(wk[d] == pk[d]);
  }
  // Two key groups' floats and 8 quantised rows, one float32 row.
  CHECK(window.live_kv_bytes() == plain.live_kv_bytes());
  CHECK(window.reserved_bytes() == LayerKVCache::bytes_for(1, D, 16, KvFormat{4, 4, 8}));
  CHECK_THROWS_AS(check_kv_format({4, 32, 40}), std::invalid_argument);
  CHECK(describe_kv_format({4, 32, 128}) == "4-bit, groups of 32, newest 128 fp32");
  CHECK(describe_kv_format({4, 32, 32}) == "4-bit, groups of 32");
}
