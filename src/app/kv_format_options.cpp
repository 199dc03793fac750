#include "h2o/app/kv_format_options.hpp"

#include <climits>
#include <string>

namespace h2o {

ArgParser& add_kv_format_options(ArgParser& args) {
  const KvFormat defaults;
  return args
      .add_option("kv-bits", "N", std::to_string(defaults.bits),
                  "KV storage: 32 (float), or 8, 4, 2 bits (KIVI's layout)")
      .add_option("kv-group", "B", std::to_string(defaults.group),
                  "quantised KV: tokens per key group, channels per value group")
      .add_option("kv-residual", "R", std::to_string(defaults.residual),
                  "quantised KV: newest R tokens in fp32, a multiple of B (KIVI: 128; 0: B)");
}

KvFormat read_kv_format_options(const ArgParser& args) {
  KvFormat format;
  // One wording for every bad number (3, 16, 33, -0): the list of the four there are.
  const long long bits = args.integer("kv-bits", LLONG_MIN, LLONG_MAX);
  if (bits != 32 && bits != 8 && bits != 4 && bits != 2) {
    throw UsageError("--kv-bits must be 32, 8, 4 or 2, got " + std::to_string(bits));
  }
  format.bits = static_cast<unsigned>(bits);
  // The group and the residual window shape a quantised cache only: given with float32 they would
  // change nothing, and a user who typed them expects them to.
  for (const char* option : {"kv-group", "kv-residual"}) {
    if (format.bits == 32 && args.given(option)) {
      throw UsageError(std::string("--") + option +
                       " shapes a quantised cache only: give --kv-bits 8, 4 or 2 with it");
    }
  }
  format.group = static_cast<std::size_t>(args.integer("kv-group", 1, 4096));
  format.residual = static_cast<std::size_t>(args.integer("kv-residual", 0, 1 << 20));
  if (format.residual % format.group != 0) {
    throw UsageError("--kv-residual " + std::to_string(format.residual) +
                     " must be a multiple of --kv-group " + std::to_string(format.group));
  }
  return format;
}

void check_kv_group(std::size_t group, std::size_t head_dim) {
  if (group < head_dim && head_dim % group != 0) {
    const std::string d = std::to_string(head_dim);
    const std::string rule = "a value's channels are quantised in groups that must tile it";
    throw UsageError("--kv-group " + std::to_string(group) + " does not divide the head size " + d +
                     ": " + rule + " (a divisor of " + d + ", or " + d + " or more)");
  }
}

}  // namespace h2o
