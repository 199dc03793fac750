#include "h2o/report/step_view.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <numeric>
#include <stdexcept>

#include "h2o/base/format.hpp"
#include "h2o/cache/selection.hpp"

namespace h2o {

namespace {

constexpr std::size_t kWidth = 100;  // lesson output fits 100 columns

// ANSI styles of the three roles (and the reset after each styled piece).
const char* const kHeavyStyle = "\x1b[1;30;43m";  // bold, black on yellow
const char* const kRecentStyle = "\x1b[30;46m";    // black on cyan
const char* const kEvictedStyle = "\x1b[9;31m";    // struck out, red
const char* const kReset = "\x1b[0m";

struct Piece {
  std::string text;
  const char* style;  // nullptr: plain
};

// Lays pieces out in lines of at most kWidth visible columns (escape codes take none), later
// lines indented; a piece wider than a line stays whole.
std::vector<std::string> lay_out(const std::vector<Piece>& pieces, bool color,
                                 const std::string& indent) {
  std::vector<std::string> lines(1);
  std::size_t width = 0;
  for (const Piece& piece : pieces) {
    if (width > indent.size() && width + 1 + piece.text.size() > kWidth) {
      lines.push_back(indent);
      width = indent.size();
    } else if (width > 0) {
      lines.back() += ' ';
      ++width;
    }
    if (color && piece.style != nullptr) {
      lines.back() += piece.style + piece.text + kReset;
    } else {
      lines.back() += piece.text;
    }
    width += piece.text.size();
  }
  return lines;
}

}  // namespace

bool stdout_wants_color() {
  const char* no_color = std::getenv("NO_COLOR");
  return isatty(STDOUT_FILENO) == 1 && (no_color == nullptr || no_color[0] == '\0');
}

StepView::StepView(bool on)
    : StepView(on, std::cin, std::cout, on && stdout_wants_color(),
               on && isatty(STDOUT_FILENO) == 1) {}

StepView::StepView(bool on, std::istream& in, std::ostream& out, bool color, bool clear_screen)
    : on_(on), in_(in), out_(out), color_(color), clear_screen_(clear_screen) {}

CacheRow cache_row(const std::string& label, const std::vector<Position>& positions,
                   const Vector& scores) {
  return {label, {}, positions, std::vector<float>(scores.begin(), scores.end())};
}

std::vector<CacheRow> cache_rows(const std::string& label, const LayerKVCache& cache) {
  std::vector<CacheRow> rows;
  for (std::size_t g = 0; g < cache.n_kv_heads(); ++g) {
    const std::vector<Position> positions(cache.positions(g), cache.positions(g) + cache.size(g));
    const std::vector<float> scores(cache.scores(g), cache.scores(g) + cache.size(g));
    rows.push_back({label + " head " + std::to_string(g), {}, positions, scores});
  }
  return rows;
}

void StepView::show(const std::string& heading, const std::vector<CacheRow>& frame,
                    const CacheBudget& budget) {
  if (!on_) return;
  std::vector<std::string> lines;
  for (const CacheRow& row : frame) {
    for (const std::string& line : row_lines(row, budget)) lines.push_back(line);
  }
  // The heading, then what the roles mean, in words (styled as the tokens are).
  out_ << "\n" << heading << "\n";
  const std::vector<Piece> legend = {{"  heavy", kHeavyStyle}, {"= kept for its score,", nullptr},
                                     {"recent", kRecentStyle}, {"= among the newest,", nullptr},
                                     {"evicted", kEvictedStyle}, {"= left at this token", nullptr}};
  out_ << lay_out(legend, color_, "  ").front() << "\n";
  for (const std::string& line : lines) out_ << line << "\n";
  wait_for_enter();
}

std::vector<std::string> StepView::row_lines(const CacheRow& row, const CacheBudget& budget) {
  const std::vector<Position>& positions = row.positions;
  const std::vector<float>& scores = row.scores;
  if (!row.words.empty() && row.words.size() != positions.size()) {
    throw std::invalid_argument("StepView: row '" + row.label + "' has " +
                                std::to_string(row.words.size()) + " words for " +
                                std::to_string(positions.size()) + " positions");
  }
  const auto word = [&](std::size_t i) { return row.words.empty() ? "" : row.words[i]; };
  // Roles by the selection rule itself; then every token in position order.
  const KeepPlan plan = plan_keep(positions, scores, budget);
  std::vector<std::size_t> order(positions.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return positions[a] < positions[b]; });
  const auto name = [](const std::string& word, Position p) {
    return word.empty() ? "#" + std::to_string(p) : word + "@" + std::to_string(p);
  };
  const auto token = [&](std::size_t i) {
    return name(word(i), positions[i]) + " " + fixed(scores[i], 2);
  };
  std::vector<Piece> heavy = {{"heavy:", nullptr}}, recent = {{"| recent:", nullptr}};
  std::vector<Piece> evicted = {{"| evicted:", nullptr}};
  std::vector<Shown> now;
  const auto in = [](const std::vector<std::size_t>& list, std::size_t i) {
    return std::find(list.begin(), list.end(), i) != list.end();
  };
  for (std::size_t i : order) {
    if (in(plan.recent, i)) {
      recent.push_back({token(i), kRecentStyle});
    } else if (in(plan.heavy, i)) {
      heavy.push_back({token(i), kHeavyStyle});
    } else {  // a row over its budget: the rule evicts this one
      evicted.push_back({token(i), kEvictedStyle});
      continue;
    }
    now.push_back({word(i), positions[i]});
  }
  // Whatever the row's previous frame held and this one does not left at this token.
  for (const Shown& old : before_[row.label]) {
    const bool kept = std::any_of(now.begin(), now.end(),
                                  [&](const Shown& s) { return s.position == old.position; });
    if (!kept) evicted.push_back({name(old.word, old.position), kEvictedStyle});
  }
  if (heavy.size() == 1) heavy.push_back({"-", nullptr});
  if (recent.size() == 1) recent.push_back({"-", nullptr});
  if (evicted.size() == 1) evicted.push_back({"-", nullptr});
  before_[row.label] = now;

  std::vector<Piece> pieces = {{"  " + pad_right(row.label, 12), nullptr}};
  for (const auto* group : {&heavy, &recent, &evicted}) {
    pieces.insert(pieces.end(), group->begin(), group->end());
  }
  return lay_out(pieces, color_, std::string(15, ' '));
}

void StepView::wait_for_enter() {
  out_ << "  [Enter] next token, q [Enter] stop stepping " << std::flush;
  std::string answer;
  if (!std::getline(in_, answer) || answer == "q" || answer == "Q") {
    on_ = false;  // no more frames and no more waiting: the lesson runs to its end
    out_ << "\n";
    return;
  }
  if (clear_screen_) out_ << "\x1b[H\x1b[2J" << std::flush;
}

}  // namespace h2o
