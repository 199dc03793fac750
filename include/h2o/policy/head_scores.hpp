// head_scores.hpp: how one step's attention becomes a per-token score for each KV head.
//
// Dimension legend: H = query heads, G = KV heads (H is a multiple of G), T = live cache slots.
//
// Attention comes per QUERY head, but the cache keeps tokens per KV head, and several query heads
// may share one KV head (grouped-query attention). Every attention-scoring policy (H2O, TOVA,
// SnapKV) turns the H rows of weights into one number per slot and KV head the same way:
//   per-head: KV head g adds the weights of its own query group, heads g*H/G .. (g+1)*H/G - 1
//             (with H = G, exactly that head's weights, as in the H2O paper's code);
//   shared:   every KV head adds the weights of ALL H query heads, so all heads score, and keep,
//             the same tokens (the handbook's H2OCache; the TOVA paper).
// The papers average over the heads; a sum is the same average times a fixed count, so it ranks
// tokens the same way, and it needs no multiplication: a score is only ever added to, one row at
// a time, so its bits (and every tie) are the same in every build and on every CPU.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "h2o/attention/query_groups.hpp"
#include "h2o/cache/kv_cache.hpp"
#include "h2o/policy/cache_policy.hpp"

namespace h2o {

enum class ScoringMode { PerHead, Shared };

std::string to_string(ScoringMode mode);  // "per-head" / "shared"
// "per-head" / "shared", or "paper" when not set (each policy's paper default, policy_factory.hpp)
std::string to_string(const std::optional<ScoringMode>& mode);
ScoringMode parse_scoring_mode(const std::string& text);  // throws std::invalid_argument
// "per-head", "shared" or "paper" (none: the policy's paper's way); throws std::invalid_argument.
std::optional<ScoringMode> parse_scoring_choice(const std::string& text);

// The query heads whose attention scores KV head g, heads first .. first + count - 1: per-head its
// own query group (query_groups.hpp), shared all H.
struct ScoringHeads {
  std::size_t first, count;
};
ScoringHeads scoring_heads(const QueryGroups& groups, std::size_t g, ScoringMode mode);

// scores(g)[s] += this step's weight of slot s summed over the query heads KV head g reads, for
// every KV head and live slot. Throws std::invalid_argument when the query heads are not a
// multiple of the KV heads (query_groups.hpp).
void add_step_attention(LayerKVCache& cache, const StepAttention& attention, ScoringMode mode);

// scores(g)[s] *= gamma for every KV head and live slot: H2O's decayed sum forgets a little of
// every score before each step's attention is added (h2o_policy.hpp). A product is rounded once,
// in its own pass, so its bits too are the same in every build.
void decay_scores(LayerKVCache& cache, float gamma);

// The same sums into any buffer: out (G, out_stride), head g's first n entries.
void add_step_attention(float* out, std::size_t out_stride, std::size_t n_kv, std::size_t n,
                        const StepAttention& attention, ScoringMode mode);

// add_step_attention, and for every KV head g the slot slot_to_evict would then choose with
// `recent` protected slots: victims_out (G,). The same scores and slots as the two steps one after
// the other, but the rows are added in the same vectorised pass that finds the victim
// (eviction_scan.hpp). In shared mode every head gets head 0's slot.
void add_step_attention_and_pick_victims(LayerKVCache& cache, const StepAttention& attention,
                                         ScoringMode mode, std::size_t recent,
                                         std::size_t* victims_out);

}  // namespace h2o
