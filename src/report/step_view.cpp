#include "h2o/report/step_view.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <numeric>
#include <stdexcept>

#include "h2o/base/format.hpp"
#include "h2o/cache/selection.hpp"
#include "h2o/report/line_wrap.hpp"

namespace h2o {

namespace {

constexpr std::size_t kLessonWidth = 100;    // lesson output fits 100 columns
constexpr std::size_t kNarrowestWidth = 80;  // narrower terminals get 80 (and break lines)
constexpr std::size_t kPromptWidth = 50;     // the prompt's 47 columns, and a little

// ANSI styles of the three roles (and the reset after each styled piece).
const char* const kHeavyStyle = "\x1b[1;30;43m";  // bold, black on yellow
const char* const kRecentStyle = "\x1b[30;46m";   // black on cyan
const char* const kEvictedStyle = "\x1b[9;31m";   // struck out, red
const char* const kReset = "\x1b[0m";

struct Piece {
  std::string text;
  const char* style;  // nullptr: plain
};

// Lays pieces out in lines of at most `columns` visible columns (escape codes take none), later
// lines indented; a piece wider than a line stays whole.
std::vector<std::string> lay_out(const std::vector<Piece>& pieces, bool color,
                                 const std::string& indent, std::size_t columns) {
  std::vector<std::string> lines(1);
  std::size_t width = 0;
  for (const Piece& piece : pieces) {
    const std::size_t piece_width = visible_width(piece.text);
    if (width > indent.size() && width + 1 + piece_width > columns) {
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
    width += piece_width;
  }
  return lines;
}

// A plain text as pieces, one per word (for a heading to break between words).
std::vector<Piece> words_of(const std::string& text) {
  std::vector<Piece> pieces;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(' ', start), text.size());
    if (end > start) pieces.push_back({text.substr(start, end - start), nullptr});
    start = end + 1;
  }
  return pieces;
}

}  // namespace

bool stdout_wants_color() {
  const char* no_color = std::getenv("NO_COLOR");
  return isatty(STDOUT_FILENO) == 1 && (no_color == nullptr || no_color[0] == '\0');
}

std::size_t stdout_columns() {
  if (isatty(STDOUT_FILENO) != 1) return kLessonWidth;
  std::size_t columns = 0;
  winsize size{};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
    columns = size.ws_col;
  } else if (const char* variable = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const long value = std::strtol(variable, &end, 10);
    columns = end != variable && *end == '\0' && value > 0 && value < 10000
                  ? static_cast<std::size_t>(value)
                  : kLessonWidth;
  } else {
    columns = kLessonWidth;
  }
  return std::max(columns, kNarrowestWidth);
}

// While it lives, std::cout writes through a WrappingBuffer to what it wrote to before.
struct StepView::Terminal {
  std::streambuf* saved;
  WrappingBuffer wrap;
  explicit Terminal(std::size_t columns) : saved(std::cout.rdbuf()), wrap(saved, columns) {
    std::cout.rdbuf(&wrap);
  }
  ~Terminal() {
    std::cout.flush();
    std::cout.rdbuf(saved);
  }
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;
};

StepView::StepView(bool on)
    : StepView(on, std::cin, std::cout, on && stdout_wants_color(),
               on && isatty(STDOUT_FILENO) == 1, on ? stdout_columns() : kLessonWidth) {
  if (on && isatty(STDOUT_FILENO) == 1) terminal_ = std::make_shared<Terminal>(width_);
}

StepView::StepView(bool on, std::istream& in, std::ostream& out, bool color, bool clear_screen,
                   std::size_t width)
    : on_(on), in_(in), out_(out), color_(color), clear_screen_(clear_screen), width_(width) {
  if (width < kPromptWidth) {  // narrower, not even the prompt would fit
    throw std::invalid_argument("StepView: a width of " + std::to_string(width) +
                                " columns is below " + std::to_string(kPromptWidth));
  }
}

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
  if (terminal_) {  // the window may have been resized since the last frame
    width_ = stdout_columns();
    terminal_->wrap.set_width(width_);
  }
  std::vector<std::string> lines;
  for (const CacheRow& row : frame) {
    for (const std::string& line : row_lines(row, budget)) lines.push_back(line);
  }
  // The heading, then what the roles mean, in words (styled as the tokens are).
  out_ << "\n";
  for (const std::string& line : lay_out(words_of(heading), false, "  ", width_)) {
    out_ << line << "\n";
  }
  std::vector<Piece> legend;
  for (const Piece& role :
       {Piece{"  heavy", kHeavyStyle}, Piece{"= kept for its score,", nullptr},
        Piece{"recent", kRecentStyle}, Piece{"= among the newest,", nullptr},
        Piece{"evicted", kEvictedStyle}, Piece{"= left at this token", nullptr}}) {
    // The roles' names whole and styled; the words that explain them may break between lines.
    const std::vector<Piece> words = role.style ? std::vector<Piece>{role} : words_of(role.text);
    legend.insert(legend.end(), words.begin(), words.end());
  }
  for (const std::string& line : lay_out(legend, color_, "  ", width_)) out_ << line << "\n";
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
  // Whatever the row's previous frame held and this one does not left at this token (a token
  // still in an over-budget row is named above, by the rule).
  for (const Shown& old : before_[row.label]) {
    const bool in_row =
        std::find(positions.begin(), positions.end(), old.position) != positions.end();
    if (!in_row) evicted.push_back({name(old.word, old.position), kEvictedStyle});
  }
  if (heavy.size() == 1) heavy.push_back({"-", nullptr});
  if (recent.size() == 1) recent.push_back({"-", nullptr});
  if (evicted.size() == 1) evicted.push_back({"-", nullptr});
  before_[row.label] = now;

  std::vector<Piece> pieces = {{"  " + pad_right(row.label, 12), nullptr}};
  for (const auto* group : {&heavy, &recent, &evicted}) {
    pieces.insert(pieces.end(), group->begin(), group->end());
  }
  return lay_out(pieces, color_, std::string(15, ' '), width_);
}

void StepView::wait_for_enter() {
  out_ << "  [Enter] next token, q [Enter] stop stepping " << std::flush;
  std::string answer;
  const bool read = static_cast<bool>(std::getline(in_, answer));
  if (terminal_) terminal_->wrap.line_restarted();  // Enter's echo began a new line
  if (!read || answer == "q" || answer == "Q") {
    on_ = false;  // no more frames and no more waiting: the lesson runs to its end
    out_ << "\n";
    return;
  }
  if (clear_screen_) out_ << "\x1b[H\x1b[2J" << std::flush;
}

}  // namespace h2o
