// compare_policies.cpp: every KV-cache policy the factory knows, side by side on a real model.
//
// It reads one text with stories260K (teacher forcing, as lesson 09 does) once with the full cache
// and then with every other policy at several budgets, and shows what each policy does:
//   a TABLE   perplexity, change versus the full cache, how often the most likely next token is the
//             full cache's, the KV bytes held at the end; the best policy at each budget is marked;
//   a PICTURE (--svg PATH) one panel per policy at one budget: x = decoding step, y = original
//             position, a cell is filled while that position is still in the cache of layer 0,
//             KV head 0. A recent window is a diagonal band, H2O's heavy hitters are horizontal
//             lines, attention sinks are lines along the bottom. stdout gets a text version: the
//             positions each policy still holds after the last step.
//
// The policies come from policy_factory.hpp (policy_kinds()), so a policy added there appears here
// without any change. Budgets are percentages of the text's length, turned into a token count per
// layer and KV head; a policy built from heavy + recent gets heavy = recent = half the budget (as
// in lesson 09), and every policy's own description of its settings is printed beside the numbers.
//
//   bin/compare_policies                                  stories260K on data/story.txt, 10/20/50%
//   bin/compare_policies --budgets 5,10 --policies full,h2o --svg /tmp/policies.svg
//
// Dimension legend: N = tokens in the text (BOS included), S = N - 1 decoding steps (each step
// reads one token and predicts the next), V = vocabulary size.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "h2o/checkpoint.hpp"
#include "h2o/cli.hpp"
#include "h2o/decoder.hpp"
#include "h2o/format.hpp"
#include "h2o/policy_factory.hpp"
#include "h2o/tokenizer.hpp"

using h2o::fixed;
using h2o::pad_left;
using h2o::pad_right;
using h2o::Position;

namespace {

// ------------------------------------------------------------------------------------------------
// Options

// "all" or names from the factory, e.g. "full,h2o". Returned in the factory's order (so tables and
// pictures list policies the same way every time), repeats dropped.
std::vector<std::string> parse_policies(const std::string& text) {
  const std::vector<h2o::PolicyKind>& kinds = h2o::policy_kinds();
  std::set<std::string> wanted;
  if (text == "all") {
    for (const h2o::PolicyKind& kind : kinds) wanted.insert(kind.name);
  } else {
    std::stringstream list(text);
    std::string item;
    while (std::getline(list, item, ',')) {
      if (item.empty()) throw h2o::UsageError("--policies has an empty name in '" + text + "'");
      const bool known = std::any_of(kinds.begin(), kinds.end(),
                                     [&](const h2o::PolicyKind& k) { return k.name == item; });
      if (!known) {
        throw h2o::UsageError("--policies: unknown cache policy '" + item +
                              "' (expected all, or names from: " + h2o::policy_names() + ")");
      }
      wanted.insert(item);
    }
    if (wanted.empty()) throw h2o::UsageError("--policies needs at least one policy name");
  }
  std::vector<std::string> names;
  for (const h2o::PolicyKind& kind : kinds) {
    if (wanted.count(kind.name) > 0) names.push_back(kind.name);
  }
  return names;
}

// The budget in tokens per layer and KV head for a percentage of the text (at least 2, so that a
// heavy + recent split has one token on each side). Rounded to the nearest token, as lesson 09.
std::size_t budget_tokens(std::size_t text_tokens, int percent) {
  return std::max<std::size_t>(2, (text_tokens * static_cast<std::size_t>(percent) + 50) / 100);
}

// What a policy receives for a budget: heavy = recent = half of it (the odd token goes to the
// recent window), every other setting at the factory's default. The one exception keeps the
// comparison at equal cache size: "sinks" keeps sinks + recent and ignores heavy, so its sinks (4
// by default, fewer when half the budget is smaller) come out of the heavy half and the recent
// window gets the rest. read_text() checks that every policy then holds exactly the budget.
h2o::PolicySettings settings_for(const std::string& policy_name, std::size_t budget) {
  h2o::PolicySettings settings;
  settings.budget.heavy = budget / 2;
  settings.budget.recent = budget - budget / 2;
  if (policy_name == "sinks") {
    settings.sinks = std::min(settings.sinks, settings.budget.heavy);
    settings.budget.recent = budget - settings.sinks;
  }
  return settings;
}

// ------------------------------------------------------------------------------------------------
// One run over the text

struct Run {
  std::string policy;             // the factory's name
  std::string description;        // the policy's describe(): how it spends the budget
  std::string refused;            // non-empty when the factory refused these settings
  std::size_t budget = 0;         // tokens per layer and KV head (0 = the full-cache reference)
  double perplexity = 0.0;        // exp(mean -log p(next token)) over the S predictions
  std::size_t agreements = 0;     // steps whose most likely token equals the full cache's
  std::size_t kept = 0;           // tokens in layer 0, per KV head, after the last step
  std::size_t evicted = 0;        // tokens evicted from layer 0, per KV head
  std::size_t live_kv_bytes = 0;  // keys + values of all layers at the end
  std::vector<int> top_tokens;    // (S,) most likely next token per step
  std::vector<std::vector<Position>> kept_per_step;  // (S, kept) layer 0, KV head 0; if recorded
};

std::size_t argmax(const h2o::Vector& v) {
  return static_cast<std::size_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

// Teacher forcing: feeds the text's tokens one by one and scores how well each step's logits
// predict the token that follows. With `record`, keeps the positions layer 0 / KV head 0 still
// holds after every step (for the picture).
Run read_text(std::shared_ptr<const h2o::DecoderWeights> weights, const std::vector<int>& tokens,
              const std::string& policy_name, std::size_t budget, const Run* full, bool record) {
  Run run;
  run.policy = policy_name;
  run.budget = budget;
  std::unique_ptr<h2o::CachePolicy> policy;
  try {
    policy = h2o::make_policy(policy_name, settings_for(policy_name, budget));
  } catch (const std::invalid_argument& e) {
    run.refused = e.what();  // e.g. a policy that needs more tokens than this budget gives
    return run;
  }
  run.description = policy->describe();
  // A policy holding more or fewer tokens than the budget is no equal comparison: flag it.
  const std::size_t holds = policy->max_tokens(tokens.size());
  if (budget > 0 && holds != std::min(budget, tokens.size())) {
    run.description +=
        " [holds " + std::to_string(holds) + " tokens, not " + std::to_string(budget) + "]";
  }
  h2o::Decoder decoder(std::move(weights), std::move(policy), tokens.size());

  double total_negative_log_likelihood = 0.0;
  for (std::size_t t = 0; t + 1 < tokens.size(); ++t) {
    const h2o::Vector& logits = decoder.forward(tokens[t]);  // (V,)
    const double max_logit = *std::max_element(logits.begin(), logits.end());
    double sum_exp = 0.0;
    for (float z : logits) sum_exp += std::exp(static_cast<double>(z) - max_logit);
    total_negative_log_likelihood -=
        static_cast<double>(logits(tokens[t + 1])) - max_logit - std::log(sum_exp);
    run.top_tokens.push_back(static_cast<int>(argmax(logits)));
    if (full != nullptr) run.agreements += full->top_tokens[t] == run.top_tokens.back();
    if (record) run.kept_per_step.push_back(decoder.cache(0).sorted_positions(0));
  }
  run.perplexity = std::exp(total_negative_log_likelihood / static_cast<double>(tokens.size() - 1));
  if (full == nullptr) run.agreements = run.top_tokens.size();
  run.kept = decoder.cache(0).size();
  run.evicted = decoder.evicted_tokens(0);
  run.live_kv_bytes = decoder.live_kv_bytes();
  return run;
}

// ------------------------------------------------------------------------------------------------
// Text output

// "+4.2%" (change of a perplexity versus the full cache's).
std::string change_text(double perplexity, double full_perplexity) {
  const double change = 100.0 * (perplexity / full_perplexity - 1.0);
  const std::string text = fixed(change, 1);
  return (text[0] == '-' ? "" : "+") + text + "%";
}

// Breaks `text` at spaces so no line is wider than `width` columns; later lines start with
// `indent`. Spaces inside a line (column alignment) are kept as they are.
std::string wrap(std::string text, std::size_t width, const std::string& indent) {
  std::string out;
  while (text.size() > width) {
    const std::size_t space = text.rfind(' ', width);
    if (space == std::string::npos || space <= indent.size()) break;  // one long word: keep it
    out += text.substr(0, space) + "\n";
    const std::size_t rest = text.find_first_not_of(' ', space);
    text = indent + (rest == std::string::npos ? "" : text.substr(rest));
  }
  return out + text;
}

// Sorted positions as ranges: "0-2 5 17 345-382".
std::string ranges(const std::vector<Position>& sorted) {
  std::string out;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    out += (out.empty() ? "" : " ") + std::to_string(sorted[i]);
    if (j > i) out += "-" + std::to_string(sorted[j]);
    i = j + 1;
  }
  return out.empty() ? "(none)" : out;
}

// One character per `per_char` positions: '#' all of them kept, '+' some, '.' none.
std::string strip(const std::vector<Position>& sorted, std::size_t steps, std::size_t per_char) {
  std::vector<std::size_t> kept_in_bucket((steps + per_char - 1) / per_char, 0);
  for (Position p : sorted) ++kept_in_bucket[static_cast<std::size_t>(p) / per_char];
  std::string out;
  for (std::size_t b = 0; b < kept_in_bucket.size(); ++b) {
    const std::size_t size = std::min(per_char, steps - b * per_char);
    out += kept_in_bucket[b] == size ? '#' : kept_in_bucket[b] > 0 ? '+' : '.';
  }
  return out;
}

// ------------------------------------------------------------------------------------------------
// The picture (SVG: plain text that any browser shows)

std::string xml_escape(const std::string& text) {
  std::string out;
  for (char ch : text) {
    if (ch == '&')
      out += "&amp;";
    else if (ch == '<')
      out += "&lt;";
    else if (ch == '>')
      out += "&gt;";
    else if (ch == '"')
      out += "&quot;";
    else
      out += ch;
  }
  return out;
}

// A round tick spacing (1, 2 or 5 times a power of ten) giving about four ticks over `range`.
std::size_t tick_spacing(std::size_t range) {
  std::size_t spacing = 1;
  for (;;) {
    for (std::size_t factor : {1, 2, 5}) {
      if (spacing * factor * 4 >= range) return spacing * factor;
    }
    spacing *= 10;
  }
}

constexpr double kPlot = 260.0;  // side of one panel's plot, in pixels
constexpr double kPanelLeft = 58.0, kPanelRight = 18.0, kPanelTop = 52.0, kPanelBottom = 46.0;
constexpr double kPanelWidth = kPanelLeft + kPlot + kPanelRight;
constexpr double kPanelHeight = kPanelTop + kPlot + kPanelBottom;
constexpr double kHeader = 108.0;  // title, two subtitle lines and legend above the panels
const char* const kKeptColour = "#1f5fa8";
const char* const kEvictedColour = "#dedede";

// One panel. Inside the plot, coordinates are cells: step t covers x in [t, t + 1], position p
// covers y in [S - 1 - p, S - p] (position 0 at the bottom), then scaled to kPlot pixels.
void write_panel(std::ostream& svg, const Run& run, const Run& full, std::size_t steps, double x0,
                 double y0) {
  const double px = x0 + kPanelLeft, py = y0 + kPanelTop;
  const double cell = kPlot / static_cast<double>(steps);
  const std::string S = std::to_string(steps);

  std::string subtitle = "perplexity " + fixed(run.perplexity, 3);
  if (run.budget > 0) subtitle += " (" + change_text(run.perplexity, full.perplexity) + ")";
  subtitle += ", " + std::to_string(run.kept) + " kept at the end";
  svg << "<text x=\"" << fixed(px, 1) << "\" y=\"" << fixed(y0 + 20, 1)
      << "\" font-size=\"15\" font-weight=\"bold\">" << xml_escape(run.policy) << "</text>\n"
      << "<text x=\"" << fixed(px, 1) << "\" y=\"" << fixed(y0 + 38, 1)
      << "\" font-size=\"11\" fill=\"#333\">" << xml_escape(subtitle) << "</text>\n";

  svg << "<rect x=\"" << fixed(px, 1) << "\" y=\"" << fixed(py, 1) << "\" width=\"" << kPlot
      << "\" height=\"" << kPlot << "\" fill=\"#fff\"/>\n";
  svg << "<g transform=\"translate(" << fixed(px, 1) << " " << fixed(py, 1) << ") scale("
      << fixed(cell, 6) << ")\">\n";
  // Every position that has arrived (p <= t): a staircase under the diagonal, in grey.
  svg << "<path fill=\"" << kEvictedColour << "\" d=\"M0 " << S;
  for (std::size_t t = 0; t < steps; ++t) svg << "v-1h1";
  svg << "V" << S << "Z\"/>\n";
  // Still cached: one rectangle per unbroken run of steps a position spends in the cache.
  std::vector<std::size_t> since(steps, 0);  // (S,) first step of the current run, per position
  std::vector<bool> inside(steps, false);    // (S,)
  // A thin outline in the same colour hides the hairline seams anti-aliasing draws between
  // neighbouring rectangles; it widens a row by a tenth of a cell on each side.
  svg << "<g fill=\"" << kKeptColour << "\" stroke=\"" << kKeptColour
      << "\" stroke-width=\"0.2\">\n";
  auto close_run = [&](std::size_t p, std::size_t end_step) {
    svg << "<rect x=\"" << since[p] << "\" y=\"" << steps - 1 - p << "\" width=\""
        << end_step - since[p] << "\" height=\"1\"/>\n";
    inside[p] = false;
  };
  for (std::size_t t = 0; t <= steps; ++t) {
    std::vector<bool> now(steps, false);
    if (t < steps) {
      for (Position p : run.kept_per_step[t]) now[static_cast<std::size_t>(p)] = true;
    }
    for (std::size_t p = 0; p < steps; ++p) {
      if (now[p] && !inside[p]) {
        since[p] = t;
        inside[p] = true;
      } else if (!now[p] && inside[p]) {
        close_run(p, t);
      }
    }
  }
  svg << "</g>\n</g>\n";
  svg << "<rect x=\"" << fixed(px, 1) << "\" y=\"" << fixed(py, 1) << "\" width=\"" << kPlot
      << "\" height=\"" << kPlot << "\" fill=\"none\" stroke=\"#444\"/>\n";

  // Ticks and axis labels, at cell centres.
  const std::size_t spacing = tick_spacing(steps);
  svg << "<g font-size=\"10\" fill=\"#333\" stroke=\"#444\">\n";
  for (std::size_t v = 0; v < steps; v += spacing) {
    const double x = px + (static_cast<double>(v) + 0.5) * cell;
    const double y = py + (static_cast<double>(steps - 1 - v) + 0.5) * cell;
    svg << "<line x1=\"" << fixed(x, 1) << "\" y1=\"" << fixed(py + kPlot, 1) << "\" x2=\""
        << fixed(x, 1) << "\" y2=\"" << fixed(py + kPlot + 4, 1) << "\"/>\n"
        << "<text stroke=\"none\" text-anchor=\"middle\" x=\"" << fixed(x, 1) << "\" y=\""
        << fixed(py + kPlot + 15, 1) << "\">" << v << "</text>\n"
        << "<line x1=\"" << fixed(px - 4, 1) << "\" y1=\"" << fixed(y, 1) << "\" x2=\""
        << fixed(px, 1) << "\" y2=\"" << fixed(y, 1) << "\"/>\n"
        << "<text stroke=\"none\" text-anchor=\"end\" x=\"" << fixed(px - 6, 1) << "\" y=\""
        << fixed(y + 3.5, 1) << "\">" << v << "</text>\n";
  }
  svg << "</g>\n";
  const double mid_x = px + kPlot / 2, mid_y = py + kPlot / 2;
  svg << "<text font-size=\"11\" text-anchor=\"middle\" x=\"" << fixed(mid_x, 1) << "\" y=\""
      << fixed(py + kPlot + 32, 1) << "\">decoding step</text>\n"
      << "<text font-size=\"11\" text-anchor=\"middle\" transform=\"translate(" << fixed(px - 40, 1)
      << " " << fixed(mid_y, 1) << ") rotate(-90)\">original position</text>\n";
}

// The whole picture: a title, `subtitle` (two lines), a legend, then the panels, three a row.
void write_svg(std::ofstream& svg, const std::string& path, const std::vector<const Run*>& panels,
               const Run& full, std::size_t steps, const std::string (&subtitle)[2]) {
  const std::size_t columns = std::clamp<std::size_t>(panels.size(), 1, 3);
  const std::size_t rows = (panels.size() + columns - 1) / columns;
  const double width = std::max(640.0, 20.0 + static_cast<double>(columns) * kPanelWidth);
  const double height = kHeader + static_cast<double>(rows) * kPanelHeight + 10.0;

  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << fixed(width, 0) << "\" height=\""
      << fixed(height, 0) << "\" viewBox=\"0 0 " << fixed(width, 0) << " " << fixed(height, 0)
      << "\" font-family=\"sans-serif\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"#fafafa\"/>\n"
      << "<text x=\"20\" y=\"28\" font-size=\"18\" font-weight=\"bold\">Which positions each "
         "policy keeps in the KV cache</text>\n"
      << "<text x=\"20\" y=\"50\" font-size=\"12\" fill=\"#333\">" << xml_escape(subtitle[0])
      << "</text>\n"
      << "<text x=\"20\" y=\"66\" font-size=\"12\" fill=\"#333\">" << xml_escape(subtitle[1])
      << "</text>\n";
  // Legend.
  svg << "<rect x=\"20\" y=\"80\" width=\"14\" height=\"14\" fill=\"" << kKeptColour << "\"/>\n"
      << "<text x=\"40\" y=\"92\" font-size=\"12\">still in the cache after that step</text>\n"
      << "<rect x=\"250\" y=\"80\" width=\"14\" height=\"14\" fill=\"" << kEvictedColour << "\"/>\n"
      << "<text x=\"270\" y=\"92\" font-size=\"12\">read, then evicted</text>\n"
      << "<rect x=\"400\" y=\"80\" width=\"14\" height=\"14\" fill=\"#fff\" stroke=\"#444\"/>\n"
      << "<text x=\"420\" y=\"92\" font-size=\"12\">not read yet</text>\n";
  for (std::size_t i = 0; i < panels.size(); ++i) {
    const double x0 = 10.0 + static_cast<double>(i % columns) * kPanelWidth;
    const double y0 = kHeader + static_cast<double>(i / columns) * kPanelHeight;
    write_panel(svg, *panels[i], full, steps, x0, y0);
  }
  svg << "</svg>\n";
  if (!svg.flush()) throw std::runtime_error("cannot write the picture to '" + path + "'");
}

// ------------------------------------------------------------------------------------------------

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open text file '" + path + "'");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

int compare_policies(int argc, char** argv) {
  // Step 1: options, all checked before any file is read.
  const char* models_env = std::getenv("H2O_MODELS_DIR");
  const std::string model_dir =
      std::string(models_env != nullptr ? models_env : H2O_MODELS_DIR) + "/stories260K";
  h2o::ArgParser args(
      "compare_policies",
      "Compares KV-cache policies on a real model reading one text: a table of perplexity and\n"
      "agreement per budget, and a picture of which tokens each policy keeps.\n" +
          wrap("Policies: " + h2o::policy_names() + ".", 100, "  "));
  args.add_option("model", "PATH", model_dir + "/stories260K.bin", "llama2.c checkpoint");
  args.add_option("tokenizer", "PATH", model_dir + "/tok512.bin", "llama2.c tokenizer for it");
  args.add_option("text", "PATH", std::string(H2O_DATA_DIR) + "/story.txt", "the text to read");
  args.add_option("budgets", "LIST", "10,20,50", "cache budgets, in percent of the text's tokens");
  args.add_option("policies", "LIST", "all", "policies to compare: all, or names from the list");
  args.add_option("svg", "PATH", "", "write the picture (SVG) to this file");
  args.add_option("picture-budget", "PERCENT", "",
                  "the budget the picture shows (default: the smallest of --budgets)");
  if (!args.parse(argc, argv)) return 0;
  const std::vector<int> percents = h2o::parse_percent_list("budgets", args.text("budgets"));
  const std::vector<std::string> policies = parse_policies(args.text("policies"));
  const int picture_percent = args.given("picture-budget")
                                  ? static_cast<int>(args.integer("picture-budget", 1, 100))
                                  : percents.front();
  const std::string svg_path = args.text("svg");
  if (args.given("svg") && svg_path.empty()) throw h2o::UsageError("--svg needs a file path");
  const std::string model_path = args.text("model"), tokenizer_path = args.text("tokenizer");
  const std::string text_path = args.text("text");

  // Step 2: the model. Missing at its default place: say where to get it and stop normally; a
  // path typed on the command line must exist, so a typo is an error.
  const bool default_paths = !args.given("model") && !args.given("tokenizer");
  if (default_paths && (!std::ifstream(model_path) || !std::ifstream(tokenizer_path))) {
    std::cout << "compare_policies: the real model is not in its default place:\n";
    for (const std::string& path : {model_path, tokenizer_path}) {
      if (!std::ifstream(path)) std::cout << "  missing: " << path << "\n";
    }
    std::cout << "\nIt needs karpathy's stories260K (MIT licence): stories260K.bin and tok512.bin\n"
              << "from the Hugging Face repository karpathy/tinyllamas, folder stories260K.\n"
              << "Download both, then run:\n"
              << "  build/bin/compare_policies --model PATH/stories260K.bin "
                 "--tokenizer PATH/tok512.bin\n"
              << "or set H2O_MODELS_DIR to the folder that holds stories260K/.\n";
    return 0;
  }
  auto weights = std::make_shared<const h2o::DecoderWeights>(h2o::load_checkpoint(model_path));
  const h2o::ModelConfig& config = weights->config;
  const h2o::Tokenizer tokenizer = h2o::Tokenizer::load(tokenizer_path, config.vocab_size);

  // Step 3: the text, as token ids (BOS first, as the model was trained).
  const std::vector<int> tokens = tokenizer.encode(read_text_file(text_path), true, false);
  if (tokens.size() < 3)
    throw std::runtime_error("the text in '" + text_path + "' is too short to measure");
  if (tokens.size() > config.seq_len) {
    throw std::runtime_error("the text in '" + text_path + "' has " +
                             std::to_string(tokens.size()) + " tokens; the model reads at most " +
                             std::to_string(config.seq_len));
  }
  const std::size_t n = tokens.size(), steps = n - 1;
  const std::size_t picture_budget = budget_tokens(n, picture_percent);

  // The picture's file is opened now, so that a path that cannot be written fails before the runs.
  std::ofstream svg;
  if (!svg_path.empty()) {
    svg.open(svg_path, std::ios::binary);
    if (!svg) throw std::runtime_error("cannot write the picture to '" + svg_path + "'");
  }

  // Step 4: the runs. The full cache is the reference for "vs full" and agreement; it is run
  // once, whatever the budget. Runs at the picture's budget record what layer 0 keeps.
  const bool picture_in_table =
      std::find(percents.begin(), percents.end(), picture_percent) != percents.end();
  const Run full = read_text(weights, tokens, "full", 0, nullptr, true);
  std::map<int, std::vector<Run>> by_percent;  // budget percent -> runs, factory order
  for (int percent : percents) {
    for (const std::string& name : policies) {
      if (name == "full") continue;
      by_percent[percent].push_back(read_text(weights, tokens, name, budget_tokens(n, percent),
                                              &full, percent == picture_percent));
    }
  }
  std::vector<Run> picture_only;  // when --picture-budget is not one of --budgets
  if (!picture_in_table) {
    for (const std::string& name : policies) {
      if (name != "full")
        picture_only.push_back(read_text(weights, tokens, name, picture_budget, &full, true));
    }
  }
  const std::vector<Run>& picture_runs =
      picture_in_table ? by_percent[picture_percent] : picture_only;

  // Step 5: what was run, and how each policy spends each budget.
  std::cout << "compare_policies: " << policies.size()
            << (policies.size() == 1 ? " policy on " : " policies on ")
            << std::filesystem::path(model_path).filename().string() << " reading "
            << std::filesystem::path(text_path).filename().string() << "\n"
            << "model: " << config.describe() << "\n"
            << "text: " << n << " tokens (BOS included), " << steps
            << " predictions per run (teacher forcing)\n\n";
  std::cout << "Budgets, in tokens per layer and KV head. Each policy gets heavy = recent = half "
               "of the\nbudget (sinks takes its "
            << h2o::PolicySettings{}.sinks
            << " sinks out of the heavy half) and the factory's defaults otherwise, so\n"
               "every cache holds the same number of tokens. In each policy's own words:\n";
  for (int percent : percents) {
    const std::string head = pad_right(
        "  " + std::to_string(percent) + "% = " + std::to_string(budget_tokens(n, percent)), 14);
    std::string indent(head.size(), ' ');
    bool first = true;
    for (const Run& run : by_percent[percent]) {
      const std::string line = (first ? head : indent) + pad_right(run.policy, 9) +
                               (run.refused.empty() ? run.description : "refused: " + run.refused);
      std::cout << wrap(line, 100, indent + std::string(9, ' ')) << "\n";
      first = false;
    }
    if (first) std::cout << head << "(only the full cache was asked for)\n";
  }

  // Step 6: the table. Within a budget the rows go from lowest perplexity (best) to highest.
  std::cout << "\nResults: perplexity (lower = better), its change versus the full cache, how "
               "often the most\nlikely next token equals the full cache's, and the KV bytes "
               "held at the end (all layers).\n"
               "'kept' = tokens layer 0 holds per KV head after the last step.\n\n";
  std::cout << "  budget        policy   kept  perplexity  vs full  top-1 = full  KV bytes\n";
  auto print_row = [&](const std::string& budget_text, const Run& run, bool best) {
    std::cout << "  " << pad_right(budget_text, 14) << pad_right(run.policy, 8);
    if (!run.refused.empty()) {
      std::cout << "  refused (see above)\n";
      return;
    }
    const double agreement =
        100.0 * static_cast<double>(run.agreements) / static_cast<double>(steps);
    std::cout << pad_left(std::to_string(run.kept), 5) << pad_left(fixed(run.perplexity, 3), 12)
              << pad_left(run.budget == 0 ? "-" : change_text(run.perplexity, full.perplexity), 9)
              << pad_left(fixed(agreement, 1) + "%", 14)
              << pad_left(std::to_string(run.live_kv_bytes), 10) << (best ? "  <- best" : "")
              << "\n";
  };
  print_row("reference", full, false);
  std::vector<std::string> verdicts;
  for (int percent : percents) {
    std::vector<const Run*> rows;
    for (const Run& run : by_percent[percent]) rows.push_back(&run);
    std::stable_sort(rows.begin(), rows.end(), [](const Run* a, const Run* b) {
      if (a->refused.empty() != b->refused.empty()) return a->refused.empty();
      return a->refused.empty() && a->perplexity < b->perplexity;
    });
    if (rows.empty()) continue;
    const std::size_t budget = budget_tokens(n, percent);
    const double best = rows.front()->perplexity;
    const bool any_measured = rows.front()->refused.empty();
    bool first = true;
    for (const Run* run : rows) {
      const std::string budget_text =
          first ? std::to_string(percent) + "% = " + std::to_string(budget) : "";
      print_row(budget_text, *run, any_measured && run->refused.empty() && run->perplexity == best);
      first = false;
    }
    // One line per budget, chosen from the numbers.
    const std::string at = "  " + pad_right(std::to_string(budget) + " tokens:", 12);
    const bool none_evicted = std::all_of(rows.begin(), rows.end(), [](const Run* r) {
      return r->refused.empty() && r->evicted == 0;
    });
    if (!any_measured) {
      verdicts.push_back(at + "every policy refused this budget");
    } else if (none_evicted) {
      verdicts.push_back(
          at + "nothing was evicted: every policy equals the full cache" +
          (std::all_of(rows.begin(), rows.end(),
                       [&](const Run* r) { return r->perplexity == full.perplexity; })
               ? " exactly"
               : " (NOT exactly: check the policies)"));
    } else {
      std::string line = at + "best " + rows.front()->policy + " (" +
                         change_text(best, full.perplexity) + " vs full)";
      const Run* worst = rows.front();
      for (const Run* r : rows) {
        if (r->refused.empty()) worst = r;
      }
      if (worst != rows.front()) {
        line += ", worst " + worst->policy + " (" +
                change_text(worst->perplexity, full.perplexity) + ")";
      }
      verdicts.push_back(line);
    }
  }
  if (!verdicts.empty()) {
    std::cout << "\nAt each budget:\n";
    for (const std::string& line : verdicts) std::cout << line << "\n";
  }

  // Step 7: the text picture: which positions each policy still holds after the last step.
  std::vector<const Run*> panels;
  for (const std::string& name : policies) {
    if (name == "full") {
      panels.push_back(&full);
      continue;
    }
    for (const Run& run : picture_runs) {
      if (run.policy == name && run.refused.empty()) panels.push_back(&run);
    }
  }
  const std::size_t per_char = (steps + 79) / 80;
  std::cout << "\nKept after the last step at " << picture_percent << "% = " << picture_budget
            << " tokens (layer 0, KV head 0; positions 0-" << steps - 1 << " left to right,\n"
            << "one character = " << per_char << (per_char == 1 ? " position" : " positions")
            << ": '#' all kept, '+' some, '.' none):\n";
  for (const Run* run : panels) {
    const std::vector<Position>& last = run->kept_per_step.back();
    std::cout << "  " << pad_right(run->policy, 8) << strip(last, steps, per_char) << "\n";
    if (run->budget > 0) {
      std::cout << wrap(std::string(10, ' ') + ranges(last), 100, std::string(10, ' ')) << "\n";
    }
  }

  // Step 8: the picture itself.
  if (!svg_path.empty()) {
    const std::string subtitle[2] = {
        "budget " + std::to_string(picture_budget) + " tokens per layer and KV head (" +
            std::to_string(picture_percent) + "% of the text's " + std::to_string(n) +
            " tokens); " + std::filesystem::path(model_path).stem().string() + " reading " +
            std::filesystem::path(text_path).filename().string(),
        "layer 0, KV head 0; one cell = one decoding step x one original position"};
    write_svg(svg, svg_path, panels, full, steps, subtitle);
    std::cout << "\nPicture (" << panels.size() << " panels) written to " << svg_path << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return h2o::run_program("compare_policies", [&] { return compare_policies(argc, argv); });
}
