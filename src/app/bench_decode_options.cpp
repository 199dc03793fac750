#include "h2o/app/bench_decode_options.hpp"

#include <cerrno>
#include <cstdlib>

namespace h2o {

ArgParser bench_decode_arguments() {
  ArgParser args("bench_decode",
                 "Decode speed and KV-cache memory: full cache versus H2O, on a random decoder\n"
                 "shaped like stories260K, for several sequence lengths.");
  args.add_option("lengths", "N,N,...", "128,256,512,1024,2048,4096",
                  "lengths to decode (1.." + std::to_string(kMaxBenchLength) + " each)");
  add_budget_options(args, 64, 64);
  args.add_option("repeats", "N", "3", "timed runs per policy and length; the median is shown");
  args.add_option("seed", "N", "1", "seed of the random weights and tokens");
  return args;
}

BenchDecodeOptions bench_decode_options(const ArgParser& args) {
  BenchDecodeOptions options;
  options.lengths = parse_lengths(args.text("lengths"));
  options.budget = budget_from_options(args, kMaxBenchLength);
  options.repeats = static_cast<std::size_t>(args.integer("repeats", 1, 100));
  options.seed = static_cast<std::uint64_t>(args.integer("seed", 0, 1LL << 62));
  return options;
}

std::vector<std::size_t> parse_lengths(const std::string& text) {
  std::vector<std::size_t> lengths;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    errno = 0;
    char* end = nullptr;
    const long long n = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || errno == ERANGE) {
      throw UsageError("--lengths expects whole numbers separated by commas, got '" + text + "'");
    }
    if (n < 1 || n > kMaxBenchLength) {
      throw UsageError("--lengths: each length must be between 1 and " +
                       std::to_string(kMaxBenchLength) + ", got " + item);
    }
    lengths.push_back(static_cast<std::size_t>(n));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return lengths;
}

}  // namespace h2o
