#include "h2o/cache/window_bytes.hpp"

#include <stdexcept>
#include <vector>

#include "h2o/cache/kv_cache.hpp"

namespace h2o {

std::size_t window_layer_kv_bytes(std::size_t n_kv_heads, std::size_t head_dim,
                                  const KvFormat& format, std::size_t n, std::size_t window) {
  if (window == 0) throw std::invalid_argument("window_layer_kv_bytes: a window of 0 tokens");
  check_kv_format(format);
  LayerKVCache cache(n_kv_heads, head_dim, window + 1, format, n);
  const std::vector<float> zeros(n_kv_heads * head_dim, 0.0f);  // (G * D,) keys, then values
  std::vector<std::size_t> oldest(n_kv_heads);                  // (G,) slot of the oldest position
  for (std::size_t p = 0; p < n; ++p) {
    cache.append(zeros.data(), zeros.data(), static_cast<Position>(p));
    if (cache.size(0) <= window) continue;
    for (std::size_t g = 0; g < n_kv_heads; ++g) {
      const Position* positions = cache.positions(g);
      std::size_t slot = 0;
      for (std::size_t s = 1; s < cache.size(g); ++s) {
        if (positions[s] < positions[slot]) slot = s;
      }
      oldest[g] = slot;
    }
    cache.remove_one_per_head(oldest.data());
  }
  return cache.live_kv_bytes();
}

std::size_t window_tokens_for_bytes(std::size_t n_kv_heads, std::size_t head_dim,
                                    const KvFormat& format, std::size_t n,
                                    std::size_t layer_bytes) {
  if (n == 0) throw std::invalid_argument("window_tokens_for_bytes: a text of 0 tokens");
  // Bytes grow with the window (a larger window holds a superset of positions): the smallest
  // window holding at least layer_bytes, then the nearer of it and the one before.
  std::size_t low = 1, high = n;
  while (low < high) {
    const std::size_t mid = (low + high) / 2;
    if (window_layer_kv_bytes(n_kv_heads, head_dim, format, n, mid) < layer_bytes) {
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  if (low == 1) return 1;
  const std::size_t above = window_layer_kv_bytes(n_kv_heads, head_dim, format, n, low);
  const std::size_t below = window_layer_kv_bytes(n_kv_heads, head_dim, format, n, low - 1);
  const std::size_t over = above > layer_bytes ? above - layer_bytes : layer_bytes - above;
  return layer_bytes - below <= over ? low - 1 : low;
}

}  // namespace h2o
