// Lesson 12: evict or quantise?
//
// Beyond the blog. H2O keeps fewer tokens; KIVI (Liu et al., 2024) keeps every token in fewer
// bits (keys per channel, values per token, in groups; the newest tokens in full precision).
// For the same KV bytes, which is closer to the full cache: H2O in float32, every token in 8, 4
// or 2 bits, or H2O with more tokens in fewer bits? Every mix runs (32/8/4/2 bits x H2O budgets)
// on several stories; the bytes each holds at the end are counted exactly (codes, scales, zeros).
// The answer at 25% and 12.5% of the float32 bytes comes first, with bootstrap intervals over
// the stories; then the numbers (perplexity, top-1 agreement with the full cache, name recall).
// New here: the equal-bytes comparison and its bootstrap. From the library: the quantised cache
// (kv_cache.hpp), H2O, teacher forcing, name recall, the picture (--pictures DIR).
//
// Dimension legend: K = stories, M = storage formats, B = budgets.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/app/default_files.hpp"
#include "h2o/app/reading_report.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/output_file.hpp"
#include "h2o/base/random.hpp"
#include "h2o/cache/budget.hpp"
#include "h2o/measure/name_recall.hpp"
#include "h2o/measure/teacher_forcing.hpp"
#include "h2o/model/checkpoint.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/policy/policy_factory.hpp"
#include "h2o/report/svg.hpp"
#include "h2o/report/table.hpp"
#include "h2o/text/tokenizer.hpp"

using h2o::fixed;

namespace {
struct Point {  // one storage format at one H2O budget, over every story
  unsigned bits = 32;
  int percent = 100;                      // H2O budget, percent of each story's tokens
  std::vector<double> nll;                // (K,) summed -log p of each story
  std::vector<std::size_t> steps;         // (K,) predictions of each story
  std::size_t agree = 0, all_steps = 0;   // top-1 equal to the full cache's, of all predictions
  std::size_t names = 0, recalled = 0;    // long-gap names counted, predicted
  double bytes = 0;                       // KV bytes at the end of every story, summed
  double share = 0, perplexity = 0;       // bytes / the full float32 cache's; exp(mean nll)
};
std::string label(const Point& p) {
  return (p.bits == 32 ? std::string("fp32") : std::to_string(p.bits) + "-bit") +
         (p.percent == 100 ? ", all tokens" : ", h2o " + std::to_string(p.percent) + "%");
}
// Reads one story with p.bits storage and H2O at p.percent (100: the full cache), adding to p.
void read_story_into(Point& p, const std::shared_ptr<const h2o::DecoderWeights>& weights,
                     const std::vector<int>& story, std::size_t group,
                     const h2o::NameTokens& names, std::vector<h2o::TeacherForcedRun>& reference) {
  const std::size_t n = story.size(), budget = h2o::tokens_for_percent(n, p.percent);
  h2o::Decoder decoder(weights,
                       p.percent == 100
                           ? h2o::make_policy("full", {})
                           : h2o::make_policy("h2o", h2o::settings_for_budget("h2o", budget)),
                       n, h2o::KvFormat{p.bits, group});
  const std::size_t k = p.nll.size();
  const bool is_reference = reference.size() == k;  // the first point: float32, full cache
  h2o::TeacherForcedRun run = h2o::read_with_teacher_forcing(
      decoder, story, {false, is_reference ? nullptr : &reference[k], {}, 0});
  const h2o::NameRecall recall = h2o::name_recall(story, run.top1, names, 64);
  p.nll.push_back(run.mean_nll() * static_cast<double>(run.steps()));
  p.steps.push_back(run.steps());
  p.agree += is_reference ? run.steps() : run.agreements;
  p.all_steps += run.steps();
  p.names += recall.steps.size();
  p.recalled += recall.correct;
  p.bytes += static_cast<double>(decoder.live_kv_bytes());
  if (is_reference) reference.push_back(std::move(run));
}
double pooled_perplexity(const Point& p, const std::vector<std::size_t>& stories) {
  double nll = 0, steps = 0;
  for (std::size_t k : stories) nll += p.nll[k], steps += static_cast<double>(p.steps[k]);
  return std::exp(nll / steps);
}
// The interval of Step 3: perplexity(a) - perplexity(b) over the stories drawn with
// replacement, 2000 times (seeded); the 2.5% and 97.5% points: a 95% bootstrap interval.
std::pair<double, double> bootstrap_difference(const Point& a, const Point& b) {
  h2o::Rng rng(12);
  std::vector<double> diffs;
  std::vector<std::size_t> draw(a.nll.size());
  for (int r = 0; r < 2000; ++r) {
    for (auto& k : draw) k = rng.below(static_cast<std::uint32_t>(draw.size()));
    diffs.push_back(pooled_perplexity(a, draw) - pooled_perplexity(b, draw));
  }
  std::sort(diffs.begin(), diffs.end());
  return {diffs[50], diffs[1949]};
}
// The best (lowest perplexity) point within `share` of the float32 bytes (1% over allowed: a
// budget's tokens are rounded up), of one storage format (or any: bits = 0); nullptr if none.
const Point* best_within(const std::vector<Point>& points, double share, unsigned bits) {
  const Point* best = nullptr;
  for (const Point& p : points) {
    if (p.share > 1.01 * share || (bits != 0 && p.bits != bits)) continue;
    if (best == nullptr || p.perplexity < best->perplexity) best = &p;
  }
  return best;
}
void write_picture(const std::string& dir, const std::vector<Point>& points,
                   const std::vector<unsigned>& formats, const std::string& about);
}  // namespace

int main(int argc, char** argv) try {
  h2o::ArgParser args("12_evict_or_quantise",
                      "Lesson 12: evict or quantise? H2O, a quantised KV cache and both, at equal "
                      "KV bytes.");
  h2o::add_model_options(args);
  args.add_option("text", "PATH", h2o::data_dir() + "/heldout_stories.txt",
                  "stories to read, separated by lines holding only <|story|>")
      .add_option("stories", "N", "6", "read the first N stories of --text")
      .add_option("budgets", "LIST", "6,12,25,50,100", "H2O budgets, percent of each story")
      .add_option("kv-group", "B", "32", "quantised KV: tokens per key group (KIVI's 32)")
      .add_option("names", "PATH", h2o::default_names_file(), h2o::names_option_help())
      .add_option("pictures", "DIR", "", "write quality against bytes as SVG into this folder");
  if (!args.parse(argc, argv)) return 0;
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
  std::vector<std::vector<int>> stories;
  std::size_t total = 0;
  for (const std::string& story : h2o::read_stories_option(args)) {
    if (stories.size() == n_stories) break;
    stories.push_back(tokenizer.encode_at_most(story, true, false, weights->config.seq_len));
    if (stories.back().size() < 16) throw std::runtime_error("a story of --text is too short");
    total += stories.back().size();
  }
  const h2o::NameTokens names =
      h2o::names_as_tokens(tokenizer, h2o::read_names(args.text("names")));
  std::cout << "Step 1: " << std::filesystem::path(files.model).filename().string() << " reads "
            << stories.size() << " stories of "
            << std::filesystem::path(args.text("text")).filename().string() << " (" << total
            << " tokens).\n";

  // Step 2: every storage format at every H2O budget, story by story; the float32 full cache
  // first: the reference of agreement and of bytes.
  const std::vector<unsigned> formats = {32, 8, 4, 2};
  std::vector<Point> points;
  std::vector<h2o::TeacherForcedRun> reference;  // (K,) the float32 full cache
  for (unsigned bits : formats) {
    for (auto it = percents.rbegin(); it != percents.rend(); ++it) {
      points.push_back({bits, *it, {}, {}, 0, 0, 0, 0, 0, 0, 0});  // fp32 at 100% first
      for (const auto& story : stories) {
        read_story_into(points.back(), weights, story, group, names, reference);
      }
    }
  }
  std::vector<std::size_t> every_story(stories.size());
  for (std::size_t k = 0; k < every_story.size(); ++k) every_story[k] = k;
  for (Point& p : points) {
    p.share = p.bytes / points.front().bytes;
    p.perplexity = pooled_perplexity(p, every_story);
  }
  const Point& full = points.front();
  std::cout << "Step 2: " << points.size() << " runs a story: KV storage 32, 8, 4 and 2 bits x H2O "
            << "budgets " << args.text("budgets") << "%;\n        the full float32 cache: "
            << "perplexity " << fixed(full.perplexity, 3) << ", " << full.recalled << " of "
            << full.names << " long-gap names predicted.\n\n";

  // Step 3: the answer. At each byte target, the best point of each way to spend the bytes.
  std::cout << "Step 3 (the answer): which cache is closest to the full float32 cache for the "
               "same KV bytes?\n        (perplexity; the best point of each storage within "
               "the bytes, 1% over allowed)\n";
  for (double target : {0.25, 0.125}) {
    std::cout << "  at " << fixed(100 * target, 1) << "% of the bytes:\n";
    const Point* winner = best_within(points, target, 0);
    for (unsigned bits : formats) {
      const Point* p = best_within(points, target, bits);
      std::cout << "    " << h2o::pad_right(bits == 32 ? "fp32" : std::to_string(bits) + "-bit", 7)
                << (p == nullptr ? "nothing fits\n" : "");
      if (p == nullptr) continue;
      std::cout << h2o::pad_right(label(*p), 20) << h2o::pad_left(fixed(100 * p->share, 1), 5)
                << "% bytes  perplexity " << fixed(p->perplexity, 3);
      if (p != winner) {
        const auto ci = bootstrap_difference(*p, *winner);
        std::cout << "  +" << fixed(p->perplexity - winner->perplexity, 3) << " ["
                  << fixed(ci.first, 3) << ", " << fixed(ci.second, 3) << "]";
      }
      std::cout << (p == winner ? "  <- closest" : "") << "\n";
    }
    const Point* evict = best_within(points, target, 32);
    if (winner != nullptr && evict != nullptr && evict != winner) {
      const bool clear = bootstrap_difference(*evict, *winner).first > 0;
      std::cout << "    => " << label(*winner) << ": " << (clear ? "clearly" : "not clearly")
                << " closer than evicting alone in float32\n";
    }
  }
  std::cout << "  (+x [lo, hi]: perplexity minus the closest one's, with a 95% bootstrap interval"
               " over the\n   "
            << stories.size() << " stories; an interval that holds 0 is no clear difference.)\n";

  // Step 4: the numbers behind it.
  std::cout << "\nStep 4: every point (" << stories.size()
            << " stories; bytes at the end of each story, summed; top-1 = full: agreement)\n";
  h2o::Table table({"storage, budget", "KV bytes", "of fp32", "perplexity", "vs full",
                    "top-1 = full", "names"});
  for (const Point& p : points) {
    table.row(label(p), static_cast<std::size_t>(p.bytes), fixed(100 * p.share, 1) + "%",
              fixed(p.perplexity, 3), fixed(100 * (p.perplexity / full.perplexity - 1), 2) + "%",
              fixed(100.0 * static_cast<double>(p.agree) / static_cast<double>(p.all_steps), 1) +
                  "%",
              std::to_string(p.recalled) + "/" + std::to_string(p.names));
  }
  table.print(std::cout);

  // Step 5: where the bytes go, per token and KV head of this model (kv_cache.hpp's count).
  const std::size_t D = weights->config.head_dim(), value_groups = D / std::min(group, D);
  std::cout << "\nStep 5: bytes of one token in one KV head (head_dim " << D << "): fp32 "
            << 8 * D << "; quantised: codes +\n  value scale and zero (" << 8 * value_groups
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
                  std::to_string(stories.size()) + " stories, groups of " + std::to_string(group));
    std::cout << "\nPictures written to " << args.text("pictures") << "\n";
  }
  return 0;
} catch (...) {
  return h2o::exit_with_error(argv[0]);
}

namespace {
void write_picture(const std::string& dir, const std::vector<Point>& points,
                   const std::vector<unsigned>& formats, const std::string& about) {
  h2o::LineChart chart{{"Perplexity against KV bytes: evict, quantise or both",
                        {"H2O budgets from each line's right (all tokens) to its left; " + about},
                        "12_evict_or_quantise --pictures " + dir},
                       "KV bytes at the end of a story (% of the full float32 cache's)",
                       "perplexity", true, false, {}, 720, 440};
  for (unsigned bits : formats) {
    chart.series.push_back({(bits == 32 ? "fp32" : std::to_string(bits) + "-bit") + " + H2O",
                            {}, {}, false, true});
    for (const Point& p : points) {
      if (p.bits != bits) continue;
      chart.series.back().x.push_back(100 * p.share);
      chart.series.back().y.push_back(p.perplexity);
    }
  }
  h2o::save_svg(dir + "/evict_or_quantise.svg", h2o::line_chart_svg(chart));
}
}  // namespace
