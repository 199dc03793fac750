// Lesson 12: evict or quantise?
//
// Beyond the blog. H2O keeps fewer tokens; KIVI (Liu et al., 2024) keeps every token in fewer
// bits (keys per channel, values per token, in groups; the newest tokens in full precision).
// For the same KV bytes, which is closer to the full cache: H2O in float32, every token in 8, 4
// or 2 bits, or H2O with more tokens in fewer bits? Every mix runs (32/8/4/2 bits x H2O budgets)
// on several stories; the bytes each holds at the end are counted exactly (codes, scales, zeros).
// The answer at 25% and 12.5% of the float32 bytes comes first, each gap with a 95% interval
// (measure/verdict.hpp: a bootstrap over the stories, or over blocks of them); then the numbers
// (perplexity, top-1 agreement with the full cache, name recall). New here: the equal-bytes
// comparison. From the library: the quantised cache (kv_cache.hpp), H2O, the runs (teacher
// forcing and name recall: measure/policy_sweep.hpp), the intervals, the picture (--pictures DIR).
//
// Dimension legend: K = stories, M = storage formats, B = budgets.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/app/default_files.hpp"
#include "h2o/app/kv_format_options.hpp"
#include "h2o/app/program.hpp"
#include "h2o/app/reading_report.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/output_file.hpp"
#include "h2o/measure/bits_per_byte.hpp"
#include "h2o/measure/policy_sweep.hpp"
#include "h2o/model/checkpoint.hpp"
#include "h2o/report/svg.hpp"
#include "h2o/report/table.hpp"
#include "h2o/text/tokenizer.hpp"

using h2o::fixed;

namespace {
struct Point {  // one storage format at one H2O budget, over every story
  unsigned bits = 32;
  int percent = 100;  // H2O budget, percent of each story's tokens (100: the full cache)
  h2o::SweepRun run;  // its readings of every story (measure/policy_sweep.hpp)
  double share = 0;   // KV bytes at each story's end, summed, over the full float32 cache's
  double perplexity() const { return run.perplexity(); }
};
std::string storage(unsigned bits) { return bits == 32 ? "fp32" : std::to_string(bits) + "-bit"; }
std::string label(unsigned bits, int percent) {
  return storage(bits) +
         (percent == 100 ? ", all tokens" : ", h2o " + std::to_string(percent) + "%");
}
std::string label(const Point& p) { return label(p.bits, p.percent); }
// The best (lowest perplexity) point within `share` of the float32 bytes (1% over allowed: a
// budget's tokens are rounded up), of one storage format (or any: bits = 0); nullptr if none.
const Point* best_within(const std::vector<Point>& points, double share, unsigned bits) {
  const Point* best = nullptr;
  for (const Point& p : points) {
    if (p.share > 1.01 * share || (bits != 0 && p.bits != bits)) continue;
    if (best == nullptr || p.perplexity() < best->perplexity()) best = &p;
  }
  return best;
}
void write_picture(const std::string& dir, const std::vector<Point>& points,
                   const std::vector<unsigned>& formats, const std::string& about) {
  h2o::LineChart chart{{"Perplexity against KV bytes: evict, quantise or both",
                        {"H2O budgets from each line's right (all tokens) to its left; " + about},
                        "12_evict_or_quantise --pictures " + dir},
                       "KV bytes at the end of a story (% of the full float32 cache's)",
                       "perplexity",
                       true,
                       false,
                       {},
                       720,
                       440};
  for (unsigned bits : formats) {
    chart.series.push_back({storage(bits) + " + H2O", {}, {}, false, true});
    for (const Point& p : points) {
      if (p.bits != bits) continue;
      chart.series.back().x.push_back(100 * p.share);
      chart.series.back().y.push_back(p.perplexity());
    }
  }
  h2o::save_svg(dir + "/evict_or_quantise.svg", h2o::line_chart_svg(chart));
}
// Step 3: the answer. At each byte target, the best point of each way to spend the bytes, each
// against the closest with measure/verdict.hpp's change and 95% interval.
void print_answer(const std::vector<Point>& points, const std::vector<unsigned>& formats,
                  const std::string& counted) {
  const h2o::SweepRun& full = points.front().run;
  std::cout << "Step 3 (the answer): which cache is closest to the full float32 cache for the "
               "same KV bytes?\n        (perplexity; the best point of each storage within "
               "the bytes, 1% over allowed)\n";
  // What the bootstrap draws: the same units for every pair (the same stories).
  const std::string units = h2o::difference_units(full, h2o::difference(full, full));
  for (double target : {0.25, 0.125}) {
    std::cout << "  at " << fixed(100 * target, 1) << "% of the bytes:\n";
    const Point* winner = best_within(points, target, 0);
    for (unsigned bits : formats) {
      const Point* p = best_within(points, target, bits);
      std::cout << "    " << h2o::pad_right(storage(bits), 7)
                << (p == nullptr ? "nothing fits\n" : "");
      if (p == nullptr) continue;
      std::cout << h2o::pad_right(label(*p), 20) << h2o::pad_left(fixed(100 * p->share, 1), 5)
                << "% bytes  perplexity " << fixed(p->perplexity(), 3);
      if (p != winner) {  // measure/verdict.hpp's change and 95% interval
        const h2o::PerplexityDifference d = h2o::difference(p->run, winner->run);
        std::cout << "  " << h2o::signed_percent(d.change) << " [" << h2o::signed_percent(d.low)
                  << ", " << h2o::signed_percent(d.high) << "]";
      }
      std::cout << (p == winner ? "  <- closest" : "") << "\n";
    }
    const Point* evict = best_within(points, target, 32);
    if (winner != nullptr && evict != nullptr && evict != winner) {
      const bool clear =
          h2o::verdict_of(h2o::difference(evict->run, winner->run)) == h2o::Verdict::Worse;
      std::cout << "    => " << label(*winner) << ": " << (clear ? "clearly" : "not clearly")
                << " closer than evicting alone in float32\n";
    }
  }
  std::cout << "  (+x% [lo, hi]: perplexity against the closest one's, with a 95% bootstrap "
               "interval over\n   "
            << units << " of the " << counted
            << "; an interval that holds 0 is no clear difference.)\n";
}

}  // namespace

int run_lesson(int argc, char** argv) {
  h2o::ArgParser args("12_evict_or_quantise",
                      "Lesson 12: evict or quantise? H2O, a quantised KV cache and both, at equal "
                      "KV bytes.");
  h2o::add_model_options(args);
  args.add_option("text", "PATH", h2o::data_dir() + "/heldout_stories.txt",
                  "stories to read, separated by lines holding only <|story|>")
      .add_option("stories", "N", "6", "read the first N stories of --text")
      .add_option("budgets", "LIST", "6,12,25,50,100", "H2O budgets, percent of each story")
      .add_option("kv-group", "B", "32", "quantised KV: tokens per key group (KIVI's 32)");
  h2o::add_names_option(args).add_option("pictures", "DIR", "",
                                         "write quality against bytes as SVG into this folder");
  args.parse(argc, argv);
  const auto n_stories = static_cast<std::size_t>(args.integer("stories", 1, 1000));
  std::vector<int> percents = h2o::parse_percent_list("budgets", args.text("budgets"));
  if (percents.back() != 100) percents.push_back(100);  // the full cache: the reference
  const auto group = static_cast<std::size_t>(args.integer("kv-group", 1, 4096));
  if (!args.text("pictures").empty()) h2o::make_output_folder(args.text("pictures"), "--pictures");
  std::cout << "Lesson 12: evict or quantise? (beyond the blog)\n\n";

  // Step 1: the model and the stories.
  const h2o::ModelFiles files = h2o::model_files_from_options(args);
  auto weights = std::make_shared<const h2o::DecoderWeights>(h2o::load_checkpoint(files.model));
  const h2o::Tokenizer tokenizer =
      h2o::Tokenizer::load(files.tokenizer, weights->config.vocab_size);
  h2o::check_kv_group(group, weights->config.head_dim());
  std::vector<std::vector<int>> stories;
  std::vector<std::string> texts;  // the stories read, for the names they show
  std::size_t total = 0;
  for (const std::string& story : h2o::read_stories_option(args)) {
    if (stories.size() == n_stories) break;
    texts.push_back(story);
    stories.push_back(tokenizer.encode_at_most(story, true, false, weights->config.seq_len));
    if (stories.back().size() < 16) {
      throw std::runtime_error(
          "story " + std::to_string(stories.size()) + " of '" + args.text("text") + "' has " +
          std::to_string(stories.back().size()) + " tokens; the lesson needs at least 16");
    }
    total += stories.back().size();
  }
  const std::string counted =
      std::to_string(stories.size()) + (stories.size() == 1 ? " story" : " stories");
  const h2o::SweepText text = h2o::sweep_text(
      tokenizer, stories, h2o::names_as_tokens(tokenizer, h2o::names_from_options(args, texts)),
      64);  // name recall: names last seen more than 64 tokens back
  std::cout << "Step 1: " << std::filesystem::path(files.model).filename().string() << " reads "
            << counted << " of " << std::filesystem::path(args.text("text")).filename().string()
            << " (" << total << " tokens).\n";

  // Step 2: every storage format at every H2O budget (measure/policy_sweep.hpp reads the
  // stories); the float32 full cache first: the reference of agreement and of bytes.
  const std::vector<unsigned> formats = {32, 8, 4, 2};
  std::vector<Point> points;
  for (unsigned bits : formats) {
    for (auto it = percents.rbegin(); it != percents.rend(); ++it) {  // all tokens first
      const bool all = *it == 100;
      const h2o::SweepPolicy policy{label(bits, *it), all ? "full" : "h2o", {}, {bits, group}};
      points.push_back({bits, *it, {}, 0});
      points.back().run =
          points.size() == 1
              ? h2o::read_full_cache(weights, text)
              : h2o::read_stories(weights, text, policy, {all ? 0 : *it, 0}, &points.front().run);
      if (!points.back().run.refused.empty()) throw std::runtime_error(points.back().run.refused);
    }
  }
  for (Point& p : points) {
    p.share = static_cast<double>(p.run.stories_kv_bytes) /
              static_cast<double>(points.front().run.stories_kv_bytes);
  }
  const h2o::SweepRun& full = points.front().run;
  std::cout << "Step 2: " << points.size() << " runs a story: KV storage 32, 8, 4 and 2 bits x H2O "
            << "budgets " << args.text("budgets") << "%;\n        the full float32 cache: "
            << "perplexity " << fixed(full.perplexity(), 3) << ", "
            << (full.name_events == 0
                    ? "no long-gap name to count"
                    : std::to_string(full.names_correct) + " of " +
                          std::to_string(full.name_events) + " long-gap names predicted")
            << ".\n\n";

  // A text the model cannot read (bits_per_byte.hpp's rule) makes every comparison noise.
  if (h2o::beyond_model(full.bits_per_byte())) {
    std::cout << h2o::beyond_model_warning(full.bits_per_byte())
              << "  Step 3 (the answer) is left out.\n";
  } else {
    print_answer(points, formats, counted);
  }

  // Step 4: the numbers behind it.
  std::cout << "\nStep 4: every point (" << counted
            << "; bytes at the end of each story, summed; top-1 = full: agreement)\n";
  h2o::Table table(
      {"storage, budget", "KV bytes", "of fp32", "perplexity", "vs full", "top-1 = full", "names"});
  for (const Point& p : points) {
    table.row(label(p), p.run.stories_kv_bytes, fixed(100 * p.share, 1) + "%",
              fixed(p.perplexity(), 3),
              fixed(100 * (p.perplexity() / full.perplexity() - 1), 2) + "%",
              fixed(100.0 * p.run.agreement(), 1) + "%",
              p.run.name_events == 0
                  ? std::string("-")  // no name to count
                  : std::to_string(p.run.names_correct) + "/" + std::to_string(p.run.name_events));
  }
  table.print(std::cout);

  // Step 5: where the bytes go, per token and KV head of this model (kv_cache.hpp's count).
  const std::size_t D = weights->config.head_dim(), value_groups = D / std::min(group, D);
  std::cout << "\nStep 5: bytes of one token in one KV head (head_dim " << D << "): fp32 " << 8 * D
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
    write_picture(args.text("pictures"), points, formats,
                  counted + ", groups of " + std::to_string(group));
    std::cout << "\nPictures written to " << args.text("pictures") << "\n";
  }
  return 0;
}

int main(int argc, char** argv) { return h2o::run_program(argc, argv, run_lesson); }
