// test_kv_cache.cpp: the preallocated per-layer KV cache (kv_cache.hpp).
//
// The cache is compared, slot by slot, with a plain reference model: one std::vector of rows per
// KV head, where append is push_back, evicting slot s copies the last row into s and pops it, and
// keep_per_head gathers rows. Every key and value number encodes (head, position, index), so a
// row that drifted away from its position or score would be caught at once.
//
// Dimension legend: G = KV heads, S = slot capacity, D = head_dim.
#include <algorithm>
#include "h2o_catch.hpp"
#include <numeric>
#include <stdexcept>
#include <vector>

#include "h2o/base/random.hpp"
#include "h2o/cache/kv_cache.hpp"

using namespace h2o;

namespace {

// A number unique to (head, position, index, key or value), exactly representable in float.
float encode(std::size_t g, Position p, std::size_t d, bool is_value) {
  return static_cast<float>(g * 100000 + static_cast<std::size_t>(p) * 100 + d * 2 +
                            (is_value ? 1 : 0));
}

struct RefRow {
  Position position;
  float score;
};

struct Reference {
  std::vector<std::vector<RefRow>> heads;  // (G, T)
};

// Appends the token at `position` to the cache and the reference; rows come from encode().
void append_with_reference(LayerKVCache& cache, Reference& ref, Position position) {
  const std::size_t G = cache.n_kv_heads(), D = cache.head_dim();
  std::vector<float> keys(G * D), values(G * D);  // (G * D,)
  for (std::size_t g = 0; g < G; ++g) {
    for (std::size_t d = 0; d < D; ++d) {
      keys[g * D + d] = encode(g, position, d, false);
      values[g * D + d] = encode(g, position, d, true);
    }
  }
  cache.append(keys.data(), values.data(), position);
  for (auto& head : ref.heads) head.push_back(RefRow{position, 0.0f});
}

// Every live slot holds exactly the reference row; the live rows of head g are slots
// [0, size(g)), and the counts over all heads agree.
void require_matches(const LayerKVCache& cache, const Reference& ref) {
  const std::size_t G = cache.n_kv_heads(), D = cache.head_dim();
  std::size_t total = 0, largest = 0;
  for (std::size_t g = 0; g < G; ++g) {
    REQUIRE(ref.heads[g].size() == cache.size(g));
    total += cache.size(g);
    largest = std::max(largest, cache.size(g));
    for (std::size_t s = 0; s < cache.size(g); ++s) {
      const RefRow& row = ref.heads[g][s];
      INFO("head " << g << ", slot " << s);
      REQUIRE(cache.positions(g)[s] == row.position);
      REQUIRE(cache.scores(g)[s] == row.score);
      for (std::size_t d = 0; d < D; ++d) {
        REQUIRE(cache.keys(g)[s * D + d] == encode(g, row.position, d, false));
        REQUIRE(cache.values(g)[s * D + d] == encode(g, row.position, d, true));
      }
    }
  }
  REQUIRE(cache.total_size() == total);
  REQUIRE(cache.max_size() == largest);
  REQUIRE(cache.live_kv_numbers() == 2 * total * D);
}

// Evicts slot s of head g from the reference as the cache does: the last row moves into s.
void remove_from_reference(Reference& ref, std::size_t g, std::size_t s) {
  auto& head = ref.heads[g];
  head[s] = head.back();
  head.pop_back();
}

}  // namespace

TEST_CASE("kv cache refuses empty dimensions", "[kv_cache]") {
  CHECK_THROWS_AS(LayerKVCache(0, 8, 4), std::invalid_argument);
  CHECK_THROWS_AS(LayerKVCache(2, 0, 4), std::invalid_argument);
  CHECK_THROWS_AS(LayerKVCache(2, 8, 0), std::invalid_argument);
  const LayerKVCache cache(2, 8, 4);
  CHECK(cache.uniform_size() == 0);
  CHECK(cache.capacity() == 4);
  CHECK(cache.n_kv_heads() == 2);
  CHECK(cache.head_dim() == 8);
}

TEST_CASE("kv cache append keeps rows positions and scores together", "[kv_cache]") {
  LayerKVCache cache(3, 4, 5);
  Reference ref{std::vector<std::vector<RefRow>>(3)};
  for (Position p = 0; p < 5; ++p) {
    append_with_reference(cache, ref, p);
    CHECK(cache.uniform_size() == static_cast<std::size_t>(p + 1));
    require_matches(cache, ref);
  }
  // New tokens enter with score 0 even into a slot that held a scored token before.
  cache.scores(1)[4] = 9.0f;
  ref.heads[1][4].score = 9.0f;
  const std::size_t last_slot[3] = {4, 4, 4};
  cache.remove_one_per_head(last_slot);
  for (auto& head : ref.heads) head.pop_back();
  append_with_reference(cache, ref, 5);
  CHECK(cache.scores(1)[4] == 0.0f);
  require_matches(cache, ref);
}

TEST_CASE("kv cache swap remove matches a reference model", "[kv_cache]") {
  // Random appends, evictions (a different slot in each head, or one head alone, so the heads'
  // counts drift apart) and score updates.
  const std::uint64_t seed = GENERATE(range(1, 31));
  Rng rng(seed);
  const std::size_t G = 1 + rng.below(4), D = 1 + rng.below(6), S = 1 + rng.below(12);
  LayerKVCache cache(G, D, S);
  Reference ref{std::vector<std::vector<RefRow>>(G)};
  Position next = 0;
  INFO("seed " << seed << ", G " << G << ", D " << D << ", S " << S);
  auto smallest = [&] {
    std::size_t n = cache.size(0);
    for (std::size_t g = 1; g < G; ++g) n = std::min(n, cache.size(g));
    return n;
  };
  for (int step = 0; step < 300; ++step) {
    const std::uint32_t action = rng.below(4);
    if (action == 0 && cache.max_size() < S) {
      append_with_reference(cache, ref, next++);
    } else if (action == 1 && smallest() > 0) {
      std::vector<std::size_t> slots(G);  // (G,)
      for (std::size_t g = 0; g < G; ++g) {
        slots[g] = rng.below(static_cast<std::uint32_t>(cache.size(g)));
        remove_from_reference(ref, g, slots[g]);
      }
      cache.remove_one_per_head(slots.data());
    } else if (action == 2) {
      const std::size_t g = rng.below(static_cast<std::uint32_t>(G));
      if (cache.size(g) == 0) continue;
      const std::size_t s = rng.below(static_cast<std::uint32_t>(cache.size(g)));
      remove_from_reference(ref, g, s);
      cache.remove_slot(g, s);
    } else {
      for (std::size_t g = 0; g < G; ++g) {
        if (cache.size(g) == 0) continue;
        const std::size_t s = rng.below(static_cast<std::uint32_t>(cache.size(g)));
        const float add = static_cast<float>(rng.below(8));  // small whole numbers: exact sums
        cache.scores(g)[s] += add;
        ref.heads[g][s].score += add;
      }
    }
    require_matches(cache, ref);
  }
}

TEST_CASE("kv cache keep_per_head gathers rows in the given order", "[kv_cache]") {
  const std::uint64_t seed = GENERATE(range(1, 21));
  Rng rng(seed);
  const std::size_t G = 1 + rng.below(4), D = 1 + rng.below(5), S = 2 + rng.below(10);
  LayerKVCache cache(G, D, S);
  Reference ref{std::vector<std::vector<RefRow>>(G)};
  for (Position p = 0; p < static_cast<Position>(S); ++p) append_with_reference(cache, ref, p);
  for (std::size_t g = 0; g < G; ++g) {
    for (std::size_t s = 0; s < S; ++s) {
      cache.scores(g)[s] = static_cast<float>(g * 10 + s);
      ref.heads[g][s].score = static_cast<float>(g * 10 + s);
    }
  }
  // Every head keeps its own random subset, in a random order.
  const std::size_t keep = 1 + rng.below(static_cast<std::uint32_t>(S));
  std::vector<std::vector<std::size_t>> slots(G);
  for (std::size_t g = 0; g < G; ++g) {
    std::vector<std::size_t> all(S);
    std::iota(all.begin(), all.end(), std::size_t{0});
    for (std::size_t i = S - 1; i > 0; --i) {
      std::swap(all[i], all[rng.below(static_cast<std::uint32_t>(i + 1))]);
    }
    slots[g].assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(keep));
    std::vector<RefRow> kept;
    for (std::size_t s : slots[g]) kept.push_back(ref.heads[g][s]);
    ref.heads[g] = kept;
  }
  cache.keep_per_head(slots);
  INFO("seed " << seed << ", keep " << keep << " of " << S);
  require_matches(cache, ref);

  // The freed slots are reusable.
  if (keep < S) {
    append_with_reference(cache, ref, static_cast<Position>(S));
    require_matches(cache, ref);
  }
}

TEST_CASE("kv cache refuses bad keep lists and leaves itself unchanged", "[kv_cache]") {
  LayerKVCache cache(2, 3, 6);
  Reference ref{std::vector<std::vector<RefRow>>(2)};
  for (Position p = 0; p < 4; ++p) append_with_reference(cache, ref, p);

  CHECK_THROWS_AS(cache.keep_per_head({{0, 1}}), std::invalid_argument);          // one list
  CHECK_THROWS_AS(cache.keep_per_head({{0, 1}, {2, 4}}), std::out_of_range);      // slot 4 dead
  CHECK_THROWS_AS(cache.keep_per_head({{0, 9}, {2, 3}}), std::out_of_range);      // first head
  CHECK_THROWS_AS(cache.keep_per_head({{0, 1}, {2, 2}}), std::invalid_argument);  // twice
  CHECK_THROWS_AS(cache.keep_per_head({{0, 1, 2, 3, 3}, {0, 1, 2, 3, 0}}),        // too many
                  std::invalid_argument);
  require_matches(cache, ref);  // a refused call changes nothing
}

TEST_CASE("kv cache refuses bad evictions and leaves itself unchanged", "[kv_cache]") {
  LayerKVCache cache(3, 2, 5);
  Reference ref{std::vector<std::vector<RefRow>>(3)};
  const std::size_t none[3] = {0, 0, 0};
  CHECK_THROWS_AS(cache.remove_one_per_head(none), std::logic_error);  // nothing to evict
  for (Position p = 0; p < 4; ++p) append_with_reference(cache, ref, p);
  // Heads 0 and 1 name live slots; head 2 names slot 4, which is not live. Nothing may move.
  const std::size_t bad[3] = {0, 1, 4};
  CHECK_THROWS_AS(cache.remove_one_per_head(bad), std::out_of_range);
  CHECK_THROWS_AS(cache.remove_slot(3, 0), std::out_of_range);  // no head 3
  CHECK_THROWS_AS(cache.remove_slot(1, 4), std::out_of_range);  // slot 4 is not live
  require_matches(cache, ref);
  // A head emptied alone: the others still evict one by one, the empty head refuses.
  for (std::size_t s = 0; s < 4; ++s) {
    cache.remove_slot(2, 0);
    remove_from_reference(ref, 2, 0);
  }
  CHECK_THROWS_AS(cache.remove_slot(2, 0), std::out_of_range);
  const std::size_t two_heads[3] = {0, 0, 0};
  CHECK_THROWS_AS(cache.remove_one_per_head(two_heads), std::logic_error);  // head 2 is empty
  require_matches(cache, ref);
}

TEST_CASE("kv cache heads hold their own numbers of tokens", "[kv_cache]") {
  // Two KV heads, four tokens each; head 0 evicts two of them alone, then head 1 keeps three.
  LayerKVCache cache(2, 3, 6);
  Reference ref{std::vector<std::vector<RefRow>>(2)};
  for (Position p = 0; p < 4; ++p) append_with_reference(cache, ref, p);
  CHECK(cache.uniform_size() == 4);
  cache.remove_slot(0, 1);  // position 3 moves into slot 1
  remove_from_reference(ref, 0, 1);
  cache.remove_slot(0, 0);  // position 2 moves into slot 0
  remove_from_reference(ref, 0, 0);
  require_matches(cache, ref);
  CHECK(cache.size(0) == 2);
  CHECK(cache.size(1) == 4);
  CHECK(cache.sorted_positions(0) == std::vector<Position>{2, 3});
  CHECK(cache.sorted_positions(1) == std::vector<Position>{0, 1, 2, 3});
  CHECK_THROWS_AS(cache.uniform_size(), std::logic_error);  // the heads differ now
  CHECK(cache.live_kv_bytes() == 2 * (2 + 4) * 3 * sizeof(float));

  // The next token lands in each head's own next slot; keep lists may differ in length.
  append_with_reference(cache, ref, 4);
  CHECK(cache.positions(0)[2] == 4);
  CHECK(cache.positions(1)[4] == 4);
  cache.keep_per_head({{2, 0}, {4, 1, 0}});
  ref.heads[0] = {ref.heads[0][2], ref.heads[0][0]};
  ref.heads[1] = {ref.heads[1][4], ref.heads[1][1], ref.heads[1][0]};
  require_matches(cache, ref);
  CHECK(cache.sorted_positions(0) == std::vector<Position>{2, 4});
  CHECK(cache.sorted_positions(1) == std::vector<Position>{0, 1, 4});

  // Full means one head is at capacity: the others cannot take another token either.
  append_with_reference(cache, ref, 5);
  append_with_reference(cache, ref, 6);
  append_with_reference(cache, ref, 7);
  CHECK(cache.size(1) == 6);
  std::vector<float> row(2 * 3, 0.0f);
  CHECK_THROWS_AS(cache.append(row.data(), row.data(), 8), std::length_error);
  require_matches(cache, ref);
  cache.clear();
  CHECK(cache.uniform_size() == 0);
}

TEST_CASE("kv cache refuses to append past its capacity", "[kv_cache]") {
  LayerKVCache cache(2, 4, 3);
  Reference ref{std::vector<std::vector<RefRow>>(2)};
  for (Position p = 0; p < 3; ++p) append_with_reference(cache, ref, p);
  std::vector<float> row(8, 1.0f);
  CHECK_THROWS_AS(cache.append(row.data(), row.data(), 3), std::length_error);
  CHECK_THROWS_WITH(cache.append(row.data(), row.data(), 3), h2o_catch::Contains("full (3 slots)"));
  CHECK(cache.uniform_size() == 3);
  require_matches(cache, ref);
}

TEST_CASE("kv cache counts live and reserved bytes", "[kv_cache]") {
  const std::size_t G = 4, D = 8, S = 10;
  LayerKVCache cache(G, D, S);
  Reference ref{std::vector<std::vector<RefRow>>(G)};
  const std::size_t reserved = 2 * G * S * D * sizeof(float);  // keys + values, every slot
  CHECK(cache.reserved_kv_bytes() == reserved);
  CHECK(cache.live_kv_bytes() == 0);
  for (Position p = 0; p < 7; ++p) append_with_reference(cache, ref, p);
  CHECK(cache.live_kv_numbers() == 2 * G * 7 * D);
  CHECK(cache.live_kv_bytes() == 2 * G * 7 * D * sizeof(float));
  CHECK(cache.reserved_kv_bytes() == reserved);  // reserving never changes
  const std::size_t slots[G] = {0, 1, 2, 3};
  cache.remove_one_per_head(slots);
  CHECK(cache.live_kv_bytes() == 2 * G * 6 * D * sizeof(float));
  cache.clear();
  CHECK(cache.uniform_size() == 0);
  CHECK(cache.live_kv_bytes() == 0);
  CHECK(cache.reserved_kv_bytes() == reserved);
}

TEST_CASE("kv cache bytes_for counts every array a cache allocates", "[kv_cache]") {
  // Keys and values are not all: positions (int64) and scores (float) take one slot each too,
  // which with head_dim 2 is 75% more than the keys and values alone.
  for (const std::size_t G : {1, 2, 5}) {
    for (const std::size_t D : {2, 4, 8, 64}) {
      for (const std::size_t S : {1, 7, 100}) {
        const LayerKVCache cache(G, D, S);
        INFO("G " << G << ", D " << D << ", S " << S);
        CHECK(cache.reserved_bytes() == LayerKVCache::bytes_for(G, D, S));
        CHECK(LayerKVCache::bytes_for(G, D, S) == G * S * (2 * D * 4 + 8 + 4));
      }
    }
  }
  const LayerKVCache narrow(3, 2, 10);
  CHECK(4 * narrow.reserved_bytes() == 7 * narrow.reserved_kv_bytes());  // 1.75 times
}

TEST_CASE("kv cache sorted_positions lists live positions in order", "[kv_cache]") {
  LayerKVCache cache(2, 2, 6);
  Reference ref{std::vector<std::vector<RefRow>>(2)};
  for (Position p = 0; p < 6; ++p) append_with_reference(cache, ref, p);
  const std::size_t slots[2] = {1, 3};  // head 0 drops position 1, head 1 drops position 3
  cache.remove_one_per_head(slots);
  CHECK(cache.sorted_positions(0) == std::vector<Position>{0, 2, 3, 4, 5});
  CHECK(cache.sorted_positions(1) == std::vector<Position>{0, 1, 2, 4, 5});
  // Swap-remove: slot 1 of head 0 now holds the former last row (position 5).
  CHECK(cache.positions(0)[1] == 5);
  CHECK(cache.positions(1)[3] == 5);
}
