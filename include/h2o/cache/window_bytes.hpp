// window_bytes.hpp: the key/value bytes a sliding window's cache holds, and the window that holds a
// given number of bytes. In float32 a token costs the same bytes wherever it sits; quantised
// (kv_cache.hpp, KIVI's layout) a key group's scales and zeros are shared by the group's live
// tokens, so a policy that keeps scattered old tokens (H2O's heavy hitters, each alone in its
// group) pays more bytes per token than a window, whose tokens fill their groups. To weigh such a
// policy against the window at equal bytes, the window gets as many tokens as fit the bytes the
// policy held (window_tokens_for_bytes).
//
// Dimension legend: G = KV heads, D = head_dim, n = tokens read.
#pragma once

#include <cstddef>

#include "h2o/cache/kv_quantiser.hpp"

namespace h2o {

// The bytes (LayerKVCache::live_kv_bytes) of one layer's cache of G heads of size D in `format`
// after reading n tokens while keeping only the newest `window` (the window's cache, whatever the
// model's numbers: bytes depend on which positions are held, not on their values). Counted on a
// real cache of zero rows. Throws std::invalid_argument when window is 0 or the format is invalid.
std::size_t window_layer_kv_bytes(std::size_t n_kv_heads, std::size_t head_dim,
                                  const KvFormat& format, std::size_t n, std::size_t window);

// The window (1..n tokens) whose layer bytes after n tokens are nearest `layer_bytes` (the smaller
// window on a tie): the window's budget at the bytes another cache held.
std::size_t window_tokens_for_bytes(std::size_t n_kv_heads, std::size_t head_dim,
                                    const KvFormat& format, std::size_t n, std::size_t layer_bytes);

}  // namespace h2o
