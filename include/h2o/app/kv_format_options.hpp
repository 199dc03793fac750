// kv_format_options.hpp: the command-line options that choose how KV caches store keys and values
// (kv_quantiser.hpp's KvFormat), shared by generate, compare_policies, explore and
// bench_decode:
//   --kv-bits N    32 (float32, the default), 8, 4 or 2 (KIVI's layout, kv_cache.hpp)
//   --kv-group B   tokens per key group = channels per value group (KIVI's group size, 32)
//   --kv-residual R  the newest tokens kept float32, a multiple of B (KIVI's residual window,
//                  128 in its code; 0, the default, = one group)
#pragma once

#include <cstddef>

#include "h2o/app/cli.hpp"
#include "h2o/cache/kv_quantiser.hpp"

namespace h2o {

// Adds the three options with KvFormat's defaults. Returns the parser.
ArgParser& add_kv_format_options(ArgParser& args);

// Reads them; a bad value is a UsageError naming the option.
KvFormat read_kv_format_options(const ArgParser& args);

// Once the model's head size is known: a quantised value is stored in groups of `group`
// channels (at most head_dim), which must tile its head_dim channels; a group that does not
// divide it is a UsageError naming both numbers (the cache would quietly use whole rows).
void check_kv_group(std::size_t group, std::size_t head_dim);

}  // namespace h2o
