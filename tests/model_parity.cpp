// model_parity.cpp: the C++ side of the checks against the PyTorch code that trained the project's
// model (training/). CTest runs it around the Python scripts (python_checks.cmake):
//
//   h2o_model_parity write-tokens MODEL TOKENIZER TEXT IDS    the text's token ids (BOS first)
//   h2o_model_parity compare MODEL IDS LOGITS                 decoder logits vs PyTorch's
//   h2o_model_parity check-export TINY_BIN TINY_F32           loader reads the exporter's floats
//   h2o_model_parity kv-dump MODEL IDS GROUP OUT              layer 0's keys and values, float32
//                                                             and as the 8/4/2-bit caches read them
//   h2o_model_parity kvpress-dump OUT                         PyramidKV's budgets and Ada-KV's cut
//                                                             on seeded cases
//   h2o_model_parity duo-dump OUT                             DuoAttention's split and cut on
//                                                             seeded attention
//
// compare passes when max |C++ - PyTorch| <= 1e-4 * max(1, largest |logit|) over every position
// and vocabulary entry (float32 sums in another order differ at that scale, no more).
// check-export passes when every tensor the loader read equals, bit for bit, the floats the
// Python exporter says it wrote, in file order.
// kv-dump writes, for tests/kivi_anchor.py (KIVI's quantiser replayed in PyTorch): int32 T, G, D,
// GROUP, then float32 arrays (T, G, D): layer 0's keys and values as computed (a float32 full
// cache), then for 8, 4 and 2 bits the keys and values a quantised full cache of groups of GROUP
// reads back (LayerKVCache::key_row / value_row). Layer 0's keys and values depend on the tokens
// only, so every format caches the same numbers there.
// kvpress-dump writes, for tests/kvpress_anchor.py (kvpress's PyramidKVPress and AdaKVPress
// replayed), one case a line: "pyramid HEAVY LAYERS BETA MOST b_0 .. b_(L-1)", the heavy hitters
// pyramid_heavy_budget gives each layer; and "adakv G N RECENT HEAVY", then per head a line
// "scores s_0 .. s_(N-1)" (a cache of N tokens at positions 0..N-1, seeded random scores) and a
// line "kept p ..." (the positions AdaKVPolicy::compress keeps in that head; in every other case
// head 0 holds the lowest scores, so that only its floor keeps any of its old tokens); and
// "adakv-knorm G N RECENT HEAVY D", then per head a line "keys k_0 .. k_(N D - 1)" (N key rows of
// D numbers; each has one non-zero entry, so its L2 norm is exact, and the norms are distinct and
// exact at key norm's rounding) and a line "kept p ..." (the positions AdaKVPolicy over
// KeyNormPolicy keeps after scoring every token as it came and cutting once).
// duo-dump writes, for tests/duo_anchor.py (DuoAttention's sparsify_attention_heads and streaming
// cache replayed), per case a line "duo G H SINKS RECENT P N SPARSITY", the profile's attention
// rows "row h t w_0 .. w_t" (t < P, seeded, each summing to 1, every float's exact digits), then
// "scores" (each KV head's, %.17g), "retrieval" (1 or 0 per KV head) and per head "kept p ..."
// (the positions DuoAttentionPolicy holds after reading N tokens token by token).
//
// Dimension legend: T = tokens, V = vocabulary size, G = KV heads, D = head_dim, N = tokens.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/app/program.hpp"
#include "h2o/base/files.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/random.hpp"
#include "h2o/cache/kv_cache.hpp"
#include "h2o/policy/adakv_policy.hpp"
#include "h2o/policy/duo_attention_policy.hpp"
#include "h2o/policy/knorm_policy.hpp"
#include "h2o/policy/pyramid_policy.hpp"
#include "h2o/model/checkpoint.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/text/stories.hpp"
#include "h2o/text/tokenizer.hpp"

namespace {

std::vector<float> read_floats(const std::string& path) {
  const std::string bytes = h2o::read_file_bytes(path, "float file '" + path + "'", 1ull << 30);
  if (bytes.size() % sizeof(float) != 0) {
    throw std::runtime_error("'" + path + "' is not a whole number of float32 values");
  }
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

int write_tokens(const std::string& model, const std::string& tokenizer_path,
                 const std::string& text, const std::string& out_path) {
  const h2o::ModelConfig config = h2o::read_checkpoint_config(model);
  const h2o::Tokenizer tokenizer = h2o::Tokenizer::load(tokenizer_path, config.vocab_size);
  // The first story of the file, as the programs read it (text/stories.hpp).
  const std::vector<std::string> stories =
      h2o::split_stories(h2o::read_text_file(text, "text '" + text + "'", 1 << 20));
  if (stories.empty()) throw std::runtime_error("text '" + text + "' holds no story");
  const std::vector<int> ids = tokenizer.encode(stories.front(), true, false);
  std::ofstream out(out_path);
  for (int id : ids) out << id << "\n";
  if (!out) throw std::runtime_error("cannot write '" + out_path + "'");
  std::cout << ids.size() << " token ids written to " << out_path << "\n";
  return 0;
}

int compare(const std::string& model, const std::string& ids_path, const std::string& logits) {
  auto weights = std::make_shared<const h2o::DecoderWeights>(h2o::load_checkpoint(model));
  std::ifstream in(ids_path);
  std::vector<int> ids;
  for (int id; in >> id;) ids.push_back(id);
  const std::vector<float> reference = read_floats(logits);  // (T, V)
  const std::size_t V = weights->config.vocab_size;
  if (ids.empty() || reference.size() != ids.size() * V) {
    throw std::runtime_error("the reference holds " + std::to_string(reference.size()) +
                             " logits for " + std::to_string(ids.size()) + " tokens x " +
                             std::to_string(V));
  }
  h2o::Decoder decoder(weights, h2o::policy_of<h2o::FullCachePolicy>(), ids.size());
  double worst = 0.0, scale = 1.0;
  for (std::size_t t = 0; t < ids.size(); ++t) {
    const h2o::Vector& ours = decoder.forward(ids[t]);
    for (std::size_t v = 0; v < V; ++v) {
      const double theirs = reference[t * V + v];
      worst = std::max(worst, std::abs(static_cast<double>(ours(v)) - theirs));
      scale = std::max(scale, std::abs(theirs));
    }
  }
  const bool ok = worst <= 1e-4 * scale;
  std::cout << "max |C++ - PyTorch| = " << worst << " over " << ids.size() << " positions x " << V
            << " logits; largest |logit| " << scale << "; relative " << worst / scale
            << (ok ? " <= 1e-4: ok" : " > 1e-4: MISMATCH") << "\n";
  return ok ? 0 : 1;
}

int kv_dump(const std::string& model, const std::string& ids_path, const std::string& group_text,
            const std::string& out_path) {
  auto weights = std::make_shared<const h2o::DecoderWeights>(h2o::load_checkpoint(model));
  std::ifstream in(ids_path);
  std::vector<int> ids;
  for (int id; in >> id;) ids.push_back(id);
  if (ids.empty()) throw std::runtime_error("no token ids in '" + ids_path + "'");
  const auto group = static_cast<std::size_t>(std::stoul(group_text));
  const std::size_t T = ids.size(), G = weights->config.n_kv_heads, D = weights->config.head_dim();
  std::ofstream out(out_path, std::ios::binary);
  const std::int32_t header[4] = {static_cast<std::int32_t>(T), static_cast<std::int32_t>(G),
                                  static_cast<std::int32_t>(D), static_cast<std::int32_t>(group)};
  out.write(reinterpret_cast<const char*>(header), sizeof(header));
  std::vector<float> buffer(D);
  for (unsigned bits : {32u, 8u, 4u, 2u}) {
    h2o::Decoder decoder(weights, h2o::policy_of<h2o::FullCachePolicy>(), T,
                         h2o::KvFormat{bits, group});
    decoder.forward_batch(ids);
    const h2o::LayerKVCache& cache = decoder.cache(0);  // slot t = position t (nothing evicted)
    for (int values = 0; values < 2; ++values) {
      for (std::size_t t = 0; t < T; ++t) {
        for (std::size_t g = 0; g < G; ++g) {
          const float* row = values == 1 ? cache.value_row(g, t, buffer.data())
                                         : cache.key_row(g, t, buffer.data());
          out.write(reinterpret_cast<const char*>(row), static_cast<std::streamsize>(D * 4));
        }
      }
    }
  }
  if (!out) throw std::runtime_error("cannot write '" + out_path + "'");
  std::cout << "layer 0 keys and values of " << T << " tokens written to " << out_path << "\n";
  return 0;
}

int check_export(const std::string& tiny_bin, const std::string& tiny_f32) {
  const h2o::DecoderWeights w = h2o::load_checkpoint(tiny_bin);
  const std::vector<float> expected = read_floats(tiny_f32);
  // The tensors the loader keeps, in file order (the RoPE tables after them are recomputed).
  std::vector<float> loaded;
  auto add = [&](const float* data, std::size_t count) {
    loaded.insert(loaded.end(), data, data + count);
  };
  add(w.token_embedding.data(), w.token_embedding.size());
  add(w.rms_att.data(), w.rms_att.size());
  add(w.wq.data(), w.wq.size());
  add(w.wk.data(), w.wk.size());
  add(w.wv.data(), w.wv.size());
  add(w.wo.data(), w.wo.size());
  add(w.rms_ffn.data(), w.rms_ffn.size());
  add(w.w1.data(), w.w1.size());
  add(w.w2.data(), w.w2.size());
  add(w.w3.data(), w.w3.size());
  add(w.rms_final.data(), w.rms_final.size());
  const std::size_t rope = w.config.seq_len * w.config.head_dim();  // cos and sin tables
  if (expected.size() != loaded.size() + rope + w.wcls.size()) {
    throw std::runtime_error("the exporter wrote " + std::to_string(expected.size()) +
                             " floats; the loader's layout expects " +
                             std::to_string(loaded.size() + rope + w.wcls.size()));
  }
  const bool same = std::memcmp(loaded.data(), expected.data(), loaded.size() * sizeof(float)) == 0;
  std::cout << loaded.size() << " weights loaded from " << tiny_bin << ": "
            << (same ? "bit for bit the exporter's" : "DIFFERENT from the exporter's") << "\n";
  return same ? 0 : 1;
}

// PyramidKV's per-layer heavy budgets and Ada-KV's one cut, on seeded cases (see the top).
int kvpress_dump(const std::string& out_path) {
  std::ofstream out(out_path);
  h2o::Rng rng(20240611);
  const auto below = [&](std::size_t k) { return static_cast<std::size_t>(rng.next_u32() % k); };
  for (int c = 0; c < 300; ++c) {
    const std::size_t layers = 2 + below(31), most = 8 + below(2000);
    const std::size_t heavy = 1 + below(most - 1);  // below most: a line to spread
    const double beta = c % 3 == 0 ? 20.0 : c % 3 == 1 ? 1.0 + below(40) : 2.5;
    out << "pyramid " << heavy << " " << layers << " " << beta << " " << most;
    for (std::size_t l = 0; l < layers; ++l) {
      out << " " << h2o::pyramid_heavy_budget(heavy, l, layers, beta, most);
    }
    out << "\n";
  }
  for (int c = 0; c < 100; ++c) {
    const std::size_t G = 1 + below(8), recent = 1 + below(8);
    const std::size_t heavy = 1 + below(40), n = recent + heavy + 1 + below(80);
    h2o::LayerKVCache cache(G, 2, n);
    const std::vector<float> row(2 * G, 0.0f);
    for (std::size_t t = 0; t < n; ++t) cache.append(row.data(), row.data(), t);
    out << "adakv " << G << " " << n << " " << recent << " " << heavy << "\n";
    // Scores (i + 1) / (G N + 1) in a shuffled order: all distinct, so no tie is broken.
    std::vector<std::size_t> rank(G * n);
    for (std::size_t i = 0; i < rank.size(); ++i) rank[i] = i;
    // Every other case gives head 0 the N lowest scores, so that its floor must hold it.
    const auto shuffle = [&](std::size_t from, std::size_t to) {
      for (std::size_t i = to - 1; i > from; --i) {
        std::swap(rank[i], rank[from + below(i - from + 1)]);
      }
    };
    if (c % 2 == 0) {
      shuffle(0, n), shuffle(n, rank.size());
    } else {
      shuffle(0, rank.size());
    }
    for (std::size_t g = 0; g < G; ++g) {
      out << "scores";
      for (std::size_t s = 0; s < n; ++s) {
        const double score = static_cast<double>(rank[g * n + s] + 1) / (rank.size() + 1.0);
        cache.scores(g)[s] = static_cast<float>(score);
        out << " " << h2o::fixed(score, 9);
      }
      out << "\n";
    }
    h2o::AdaKVPolicy policy(h2o::CacheBudget{heavy, recent});
    policy.compress(cache, heavy + recent);
    for (std::size_t g = 0; g < G; ++g) {
      out << "kept";
      for (h2o::Position p : cache.sorted_positions(g)) out << " " << p;
      out << "\n";
    }
  }
  // Ada-KV over key norm: the scores are key norm's own, given as each token arrives.
  for (int c = 0; c < 100; ++c) {
    const std::size_t G = 1 + below(8), D = 2, recent = below(8);
    const std::size_t heavy = 1 + below(40), n = recent + heavy + 1 + below(80);
    // Norm rank i is (1 + (i mod 512) / 512) 2^(i / 512): distinct, exact in float, and exact at
    // the 10 bits key norm compares (so no tie is broken). Every other case gives head 0 the
    // longest keys (its lowest scores).
    std::vector<std::size_t> rank(G * n);
    for (std::size_t i = 0; i < rank.size(); ++i) rank[i] = i;
    const auto shuffle = [&](std::size_t from, std::size_t to) {
      for (std::size_t i = to; i > from + 1; --i) {
        std::swap(rank[i - 1], rank[from + below(i - from)]);
      }
    };
    if (c % 2 == 0) {
      shuffle(0, rank.size() - n), shuffle(rank.size() - n, rank.size());
      for (std::size_t s = 0; s < n; ++s) std::swap(rank[s], rank[rank.size() - n + s]);
    } else {
      shuffle(0, rank.size());
    }
    std::vector<float> keys(G * n * D, 0.0f);  // (G, N, D)
    for (std::size_t i = 0; i < G * n; ++i) {
      const std::size_t r = rank[i];
      const float norm = std::ldexp(1.0f + static_cast<float>(r % 512) / 512.0f,
                                    static_cast<int>(r / 512));
      keys[i * D + below(D)] = below(2) == 0 ? norm : -norm;
    }
    h2o::AdaKVPolicy policy(h2o::CacheBudget{heavy, recent},
                            std::make_unique<h2o::KeyNormPolicy>(h2o::CacheBudget{heavy, recent}),
                            h2o::AdaKVPolicy::kPaperSafeguard, h2o::LayerShape{0, 1, G});
    h2o::LayerKVCache cache(G, D, n);
    std::vector<float> key_rows(G * D), weights(G * n, 0.0f);  // key norm reads no attention
    for (std::size_t t = 0; t < n; ++t) {
      for (std::size_t g = 0; g < G; ++g) {
        for (std::size_t d = 0; d < D; ++d) key_rows[g * D + d] = keys[(g * n + t) * D + d];
      }
      cache.append(key_rows.data(), key_rows.data(), static_cast<h2o::Position>(t));
      policy.observe(cache, h2o::StepAttention{weights.data(), G, n});
    }
    policy.compress(cache, heavy + recent);
    out << "adakv-knorm " << G << " " << n << " " << recent << " " << heavy << " " << D << "\n";
    for (std::size_t g = 0; g < G; ++g) {
      out << "keys";
      for (std::size_t i = 0; i < n * D; ++i) out << " " << h2o::fixed(keys[g * n * D + i], 9);
      out << "\n";
    }
    for (std::size_t g = 0; g < G; ++g) {
      out << "kept";
      for (h2o::Position p : cache.sorted_positions(g)) out << " " << p;
      out << "\n";
    }
  }
  if (!out) throw std::runtime_error("cannot write '" + out_path + "'");
  std::cout << "500 cases written to " << out_path << "\n";
  return 0;
}

// DuoAttention's split and cut on seeded random attention (see the top).
int duo_dump(const std::string& out_path) {
  std::ofstream out(out_path);
  h2o::Rng rng(20241004);
  const auto below = [&](std::size_t k) { return static_cast<std::size_t>(rng.next_u32() % k); };
  const int n_cases = 120;
  char text[32];
  for (int c = 0; c < n_cases; ++c) {
    const std::size_t G = 1 + below(8), group = 1 + below(2), H = G * group;
    const std::size_t sinks = below(5), recent = 1 + below(8);
    const std::size_t P = sinks + recent + 1 + below(20), n = P + below(30);
    const double sparsity = static_cast<double>(below(9)) / 8.0;  // np.quantile's index exact
    h2o::DuoAttentionPolicy policy(sinks, recent, sparsity, P);
    h2o::LayerKVCache cache(G, 2, n + 1);
    out << "duo " << G << " " << H << " " << sinks << " " << recent << " " << P << " " << n << " "
        << h2o::fixed(sparsity, 3) << "\n";
    const std::vector<float> row(2 * G, 0.0f);
    std::vector<float> weights(H * (n + 1));  // (H, S) this step's rows
    for (std::size_t t = 0; t < n; ++t) {
      cache.append(row.data(), row.data(), static_cast<h2o::Position>(t));
      std::fill(weights.begin(), weights.end(), 0.0f);
      for (std::size_t h = 0; h < H; ++h) {
        // A row of t + 1 seeded weights summing to 1, over positions 0..t (the slots of head
        // h / group, in position order until the split, and only the profile's rows are dumped).
        const std::size_t g = h / group;
        float sum = 0.0f;
        std::vector<float> by_position(t + 1);
        for (float& w : by_position) sum += w = 0.01f + static_cast<float>(below(1000)) / 1000.0f;
        for (float& w : by_position) w /= sum;
        for (std::size_t s = 0; s < cache.size(g); ++s) {
          weights[h * (n + 1) + s] = by_position[static_cast<std::size_t>(cache.positions(g)[s])];
        }
        if (t < P) {
          out << "row " << h << " " << t;
          for (float w : by_position) {
            std::snprintf(text, sizeof text, " %.9g", w);  // every float's exact digits
            out << text;
          }
          out << "\n";
        }
      }
      policy.after_attention(cache, h2o::StepAttention{weights.data(), H, n + 1});
    }
    out << "scores";
    for (double s : policy.scores()) {
      std::snprintf(text, sizeof text, " %.17g", s);
      out << text;
    }
    out << "\nretrieval";
    for (bool r : policy.retrieval()) out << " " << (r ? 1 : 0);
    out << "\n";
    for (std::size_t g = 0; g < G; ++g) {
      out << "kept";
      for (h2o::Position p : cache.sorted_positions(g)) out << " " << p;
      out << "\n";
    }
  }
  if (!out) throw std::runtime_error("cannot write '" + out_path + "'");
  std::cout << n_cases << " cases written to " << out_path << "\n";
  return 0;
}

// One of the six jobs, by its first word.
int run(int argc, char** argv) {
  const std::vector<std::string> a(argv + 1, argv + argc);
  if (a.size() == 5 && a[0] == "write-tokens") return write_tokens(a[1], a[2], a[3], a[4]);
  if (a.size() == 4 && a[0] == "compare") return compare(a[1], a[2], a[3]);
  if (a.size() == 3 && a[0] == "check-export") return check_export(a[1], a[2]);
  if (a.size() == 5 && a[0] == "kv-dump") return kv_dump(a[1], a[2], a[3], a[4]);
  if (a.size() == 2 && a[0] == "kvpress-dump") return kvpress_dump(a[1]);
  if (a.size() == 2 && a[0] == "duo-dump") return duo_dump(a[1]);
  throw h2o::UsageError(
      "usage: write-tokens MODEL TOKENIZER TEXT IDS | compare MODEL IDS "
      "LOGITS | check-export TINY_BIN TINY_F32 | kv-dump MODEL IDS GROUP OUT | kvpress-dump OUT | "
      "duo-dump OUT");
}

}  // namespace

int main(int argc, char** argv) { return h2o::run_program(argc, argv, run); }
