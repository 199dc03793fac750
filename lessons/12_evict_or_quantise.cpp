// Lesson 12: evict or quantise?
//
// Beyond the blog. H2O keeps fewer tokens; KIVI (Liu et al., 2024) keeps every token in fewer
// bits (keys per channel, values per token, in groups; the newest tokens in full precision).
// Step 1 writes KIVI's rounding out on one small key group (zero, scale, codes, the numbers read
// back, the error within half a step) and checks the library's quantiser gives the same bits.
// Then: for the same KV bytes, which is closer to the full cache: H2O in float32, every token in
// 8, 4 or 2 bits, or H2O with more tokens in fewer bits? Every mix runs (32/8/4/2 bits x H2O
// budgets) on several stories; the bytes each holds at the end are counted exactly (codes,
// scales, zeros). The answer at 25% and 12.5% of the float32 bytes comes first, each gap with a
// 95% interval (measure/verdict.hpp); then the numbers (perplexity, top-1 agreement with the full
// cache, name recall). New here: the rounding and the equal-bytes comparison. From the library:
// the quantised cache (kv_cache.hpp), H2O, the runs (measure/policy_sweep.hpp), the answer's
// lines and picture (report/equal_bytes.hpp, --pictures DIR).
//
// Dimension legend: K = stories, M = storage formats, B = budgets.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/app/default_files.hpp"
#include "h2o/app/model_and_stories.hpp"
#include "h2o/app/kv_format_options.hpp"
#include "h2o/app/program.hpp"
#include "h2o/app/reading_report.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/output_file.hpp"
#include "h2o/cache/kv_quantiser.hpp"
#include "h2o/measure/bits_per_byte.hpp"
#include "h2o/measure/policy_sweep.hpp"
#include "h2o/report/equal_bytes.hpp"
#include "h2o/report/table.hpp"
#include "h2o/report/verdict_text.hpp"
#include "h2o/text/stories.hpp"

using h2o::fixed;

namespace {
// Step 1: KIVI's rounding of one group x (n,) to `bits` bits, written out (kv_quantiser.hpp says
// the same in its header), printed as rows of numbers. Returns whether the library's functions
// give the same zero, scale, codes and read-back numbers, bit for bit.
bool round_by_hand(const std::vector<float>& x, unsigned bits) {
  float lo = x[0], hi = x[0];
  for (float v : x) lo = std::min(lo, v), hi = std::max(hi, v);
  const auto max_code = static_cast<float>((1u << bits) - 1u);  // 15 at 4 bits, 3 at 2
  const float zero = lo, scale = (hi - lo) / max_code;          // one step between codes
  const h2o::QuantStep step = h2o::quant_step_of(x.data(), x.size(), 1, bits);  // the library's
  std::vector<std::uint8_t> packed(h2o::packed_bytes(x.size(), bits));
  bool same = step.zero == zero && step.scale == scale;
  float worst = 0.0f;
  std::string codes, back, errors;
  for (std::size_t i = 0; i < x.size(); ++i) {
    // Subtract the zero, divide by the step, clamp to the codes, round to the nearest code.
    const float code = std::nearbyint(std::min(std::max((x[i] - zero) / scale, 0.0f), max_code));
    const float read = code * scale + zero;  // what attention reads back
    worst = std::max(worst, std::abs(x[i] - read));
    codes += h2o::pad_left(std::to_string(static_cast<int>(code)), 7);
    back += h2o::pad_left(fixed(read, 3), 7);
    errors += h2o::pad_left(fixed(std::abs(x[i] - read), 3), 7);
    h2o::put_code(packed.data(), i, bits, h2o::quantise_number(x[i], step, bits));
    const std::uint8_t stored = h2o::get_code(packed.data(), i, bits);
    same = same && stored == code && h2o::dequantise_number(stored, step) == read;
  }
  std::cout << "  " << bits << "-bit: zero = min = " << fixed(zero, 3) << ", scale = (max - min) / "
            << max_code << " = " << fixed(scale, 4) << "; " << x.size() << " codes packed in "
            << packed.size() << " bytes\n    code      " << codes << "\n    read back " << back
            << "\n    |error|   " << errors << "\n    largest error " << fixed(worst, 4)
            << (worst <= scale / 2 ? " <= " : " > ") << "half a step " << fixed(scale / 2, 4)
            << "\n";
  return same;
}
}  // namespace

int run_lesson(int argc, char** argv) {
  h2o::ArgParser args("12_evict_or_quantise",
                      "Lesson 12: evict or quantise? H2O, a quantised KV cache and both, at equal "
                      "KV bytes.");
  h2o::add_model_options(args);
  h2o::add_stories_options(args, "6")
      .add_option("budgets", "LIST", "6,12,25,50,100", "H2O budgets, percent of each story")
      .add_option("kv-group", "B", "32", "quantised KV: tokens per key group (KIVI's 32)");
  h2o::add_names_option(args).add_output("pictures", "DIR", "",
                                         "write quality against bytes as SVG into this folder");
  args.parse(argc, argv);
  std::vector<int> percents = h2o::parse_percent_list("budgets", args.text("budgets"));
  if (percents.back() != 100) percents.push_back(100);  // the full cache: the reference
  const auto group = static_cast<std::size_t>(args.integer("kv-group", 1, 4096));
  if (!args.text("pictures").empty()) h2o::make_output_folder(args.text("pictures"), "--pictures");
  std::cout << "Lesson 12: evict or quantise? (beyond the blog)\n\n";

  // Step 1: KIVI's rounding by hand. Keys are quantised per channel over a group of tokens: here
  // one channel of 8 tokens (made-up numbers, one of them an outlier), to 4 and then 2 bits.
  const std::vector<float> channel = {0.82f, -0.35f, 1.47f, 0.10f, -1.12f, 0.64f, 2.05f, -0.58f};
  std::string row;
  for (float v : channel) row += h2o::pad_left(fixed(v, 3), 7);
  std::cout << "Step 1: KIVI's rounding by hand: one key channel over a group of 8 tokens\n"
            << "    x         " << row << "\n";
  bool same = true;
  for (unsigned bits : {4u, 2u}) same = round_by_hand(channel, bits) && same;
  std::cout << "  cache/kv_quantiser.hpp (quant_step_of, quantise_number, put_code, get_code,\n"
            << "  dequantise_number) gives the same zero, scale, codes and numbers, bit for bit: "
            << (same ? "yes" : "NO") << "\n\n";

  // Step 2: the model and the stories.
  const h2o::ModelAndStories loaded = h2o::load_model_and_stories(args);  // names > 64 back
  const h2o::ModelFiles& files = loaded.files;
  const auto& weights = loaded.weights;  // (shared by every run's decoder)
  const h2o::TokenisedStories& read = loaded.read;
  const h2o::SweepText& text = loaded.text;
  h2o::check_kv_group(group, weights->config.head_dim());
  const std::size_t total = read.total;
  const std::string counted = read.counted();
  std::cout << "Step 2: " << std::filesystem::path(files.model).filename().string() << " reads "
            << counted << " of " << std::filesystem::path(args.text("text")).filename().string()
            << " (" << total << " tokens).\n";

  // Step 3: every storage format at every H2O budget (measure/policy_sweep.hpp reads the
  // stories); the float32 full cache first: the reference of agreement and of bytes.
  const std::vector<unsigned> formats = {32, 8, 4, 2};
  std::vector<h2o::BytesPoint> points;
  for (unsigned bits : formats) {
    for (auto it = percents.rbegin(); it != percents.rend(); ++it) {  // all tokens first
      const bool all = *it == 100;
      const h2o::SweepPolicy policy{
          h2o::point_label(bits, *it), all ? "full" : "h2o", {}, {bits, group}};
      points.push_back({bits, *it, {}, 0});
      points.back().run =
          points.size() == 1
              ? h2o::read_full_cache(weights, text)
              : h2o::read_stories(weights, text, policy, {all ? 0 : *it, 0}, &points.front().run);
      if (!points.back().run.refused.empty()) throw std::runtime_error(points.back().run.refused);
    }
  }
  // KIVI's residual window: the newest R tokens float32 (KIVI's code: R = 128), every token kept.
  const std::size_t window = (128 + group - 1) / group * group;  // a multiple of the group
  for (unsigned bits : {4u, 2u}) {
    const h2o::SweepPolicy policy{
        h2o::point_label(bits, 100, window), "full", {}, {bits, group, window}};
    points.push_back({bits, 100,
                      h2o::read_stories(weights, text, policy, {0, 0}, &points.front().run), 0,
                      window});
  }
  for (h2o::BytesPoint& p : points) {
    p.share = static_cast<double>(p.run.stories_kv_bytes) /
              static_cast<double>(points.front().run.stories_kv_bytes);
  }
  const h2o::SweepRun& full = points.front().run;
  std::cout << "Step 3: " << points.size() - 2
            << " runs a story: KV storage 32, 8, 4 and 2 bits x H2O "
            << "budgets " << args.text("budgets") << "%;\n        the full float32 cache: "
            << "perplexity " << fixed(full.perplexity(), 3) << ", "
            << (full.name_events == 0
                    ? "no long-gap name to count"
                    : std::to_string(full.names_correct) + " of " +
                          std::to_string(full.name_events) + " long-gap names predicted")
            << ";\n        2 more, every token in 4 and 2 bits, R " << window << ": the newest "
            << window << " in fp32 (KIVI's residual window).\n"
            << (args.given("names") ? "" : h2o::no_capitals_note(read.texts, full.name_events,
                                                                  "        "))
            << "\n";

  // A text the model cannot read (bits_per_byte.hpp's rule) makes every comparison noise.
  if (h2o::beyond_model(full.bits_per_byte())) {
    std::cout << h2o::beyond_model_warning(full.bits_per_byte())
              << "  Step 4 (the answer) is left out.\n";
  } else {
    h2o::print_equal_bytes_answer(std::cout, "Step 4 (the answer)", points, formats, counted);
  }

  // Step 5: the numbers behind it.
  std::cout << "\nStep 5: every point (" << counted
            << "; bytes at the end of each story, summed; top-1 = full: agreement)\n";
  h2o::Table table(
      {"storage, budget", "KV bytes", "of fp32", "perplexity", "vs full", "top-1 = full", "names"});
  for (const h2o::BytesPoint& p : points) {
    table.row(h2o::point_label(p), p.run.stories_kv_bytes, fixed(100 * p.share, 1) + "%",
              fixed(p.perplexity(), 3),
              fixed(100 * (p.perplexity() / full.perplexity() - 1), 2) + "%",
              fixed(100.0 * p.run.agreement(), 1) + "%",
              p.run.name_events == 0
                  ? std::string("-")  // no name to count
                  : std::to_string(p.run.names_correct) + "/" + std::to_string(p.run.name_events));
  }
  table.print(std::cout);

  // Step 6: where the bytes go, per token and KV head of this model (kv_cache.hpp's count).
  const std::size_t D = weights->config.head_dim(), value_groups = D / std::min(group, D);
  std::cout << "\nStep 6: bytes of one token in one KV head (head_dim " << D << "): fp32 " << 8 * D
            << "; quantised: codes +\n  value scale and zero (" << 8 * value_groups
            << ") + a share of its key group's " << 8 * D << " (" << fixed(8.0 * D / group, 1)
            << " while all " << group << " tokens live):\n ";
  for (unsigned bits : {8u, 4u, 2u}) {
    std::cout << " " << bits << "-bit " << 2 * h2o::packed_bytes(D, bits) + 8 * value_groups
              << " + " << fixed(8.0 * D / group, 1) << (bits == 2 ? ".\n" : ";");
  }
  std::cout << "  Each token H2O evicts leaves its group's scales and zeros to fewer tokens; "
               "the newest group\n  stays fp32 until it fills.\n";
  if (!args.text("pictures").empty()) {
    h2o::write_equal_bytes_picture(args.text("pictures"), points, formats,
                                   counted + ", groups of " + std::to_string(group));
    std::cout << "\nPictures written to " << args.text("pictures") << "\n";
  }
  return 0;
}

int main(int argc, char** argv) { return h2o::run_program(argc, argv, run_lesson); }
