#include "h2o/app/kv_format_options.hpp"

#include <string>

namespace h2o {

ArgParser& add_kv_format_options(ArgParser& args) {
  const KvFormat defaults;
  return args
      .add_option("kv-bits", "N", std::to_string(defaults.bits),
                  "KV storage: 32 (float), or 8, 4, 2 bits (KIVI's layout)")
      .add_option("kv-group", "B", std::to_string(defaults.group),
                  "quantised KV: tokens per key group, channels per value group");
}

KvFormat read_kv_format_options(const ArgParser& args) {
  KvFormat format;
  const long long bits = args.integer("kv-bits", 2, 32);
  if (bits != 32 && bits != 8 && bits != 4 && bits != 2) {
    throw UsageError("--kv-bits must be 32, 8, 4 or 2 (got " + std::to_string(bits) + ")");
  }
  format.bits = static_cast<unsigned>(bits);
  format.group = static_cast<std::size_t>(args.integer("kv-group", 1, 4096));
  return format;
}

}  // namespace h2o
