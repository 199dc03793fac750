// query_groups.hpp: which query heads read which KV head (grouped-query attention).
//
// Dimension legend: H = query heads, G = KV heads (H is a multiple of G).
//
// With grouped-query attention the H query heads share G KV heads: KV head g is read by the
// H / G query heads g (H / G) .. (g + 1) (H / G) - 1, its query group, so query head h reads KV
// head h / (H / G). With H = G every query head has a KV head of its own. This is the one place
// the mapping is written; the decoder, the policies that score per KV head and the measures that
// follow a head's tokens all ask it.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace h2o {

class QueryGroups {
 public:
  // `who` starts the error: std::invalid_argument "who: 3 query heads are not a multiple of 2 KV
  // heads" unless H is a multiple of G >= 1.
  QueryGroups(std::size_t n_heads, std::size_t n_kv_heads, const std::string& who)
      : size_(n_kv_heads == 0 ? 0 : n_heads / n_kv_heads), n_heads_(n_heads) {
    if (n_kv_heads == 0 || n_heads == 0 || n_heads % n_kv_heads != 0) {
      throw std::invalid_argument(who + ": " + std::to_string(n_heads) +
                                  " query heads are not a multiple of " +
                                  std::to_string(n_kv_heads) + " KV heads");
    }
  }

  std::size_t size() const { return size_; }  // H / G: query heads per KV head
  std::size_t n_heads() const { return n_heads_; }
  std::size_t kv_head_of(std::size_t query_head) const { return query_head / size_; }
  // KV head g's query group: query heads first(g) .. end(g) - 1.
  std::size_t first(std::size_t g) const { return g * size_; }
  std::size_t end(std::size_t g) const { return (g + 1) * size_; }

 private:
  std::size_t size_, n_heads_;
};

}  // namespace h2o
