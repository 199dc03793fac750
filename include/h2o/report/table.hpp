// table.hpp: plain-text tables, one line of code per row, for lessons and tools.
//
// A lesson's table should cost one line to define, one line per row and one line to print, so
// that printing never outweighs the idea being taught:
//   h2o::Table table({"token", "old score", "new score"});
//   table.add({"cat", h2o::fixed(0.7), h2o::fixed(1.2)});
//   table.print(std::cout);
// Columns size themselves to their widest cell (or title). A column whose cells are all numbers
// ("0.20", "-1.5%", "38", "") is right-aligned so the digits line up; any other column is
// left-aligned. Columns are separated by two spaces, every line starts with the indent, and no
// line ends in spaces. Deterministic: no locale, no tabs.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

namespace h2o {

class Table {
 public:
  explicit Table(std::vector<std::string> titles, std::size_t indent = 2);

  // cells (columns,): one per column. Throws std::invalid_argument on a different count.
  void add(std::vector<std::string> cells);
  // The same with cells of any printable kind: text as it is, whole numbers in decimal. Format a
  // real number yourself (h2o::fixed), so its decimals are chosen, not guessed.
  template <class... Cells>
  void row(const Cells&... cells) {
    add({cell_text(cells)...});
  }

  void print(std::ostream& out) const;
  std::string text() const;  // what print() writes
  // The same rows as CSV (RFC 4180: a cell with a comma, quote or newline is quoted), titles first.
  std::string csv() const;

  std::size_t rows() const { return rows_.size(); }

 private:
  static std::string cell_text(const std::string& text) { return text; }
  static std::string cell_text(const char* text) { return text; }
  template <class Number>
  static std::string cell_text(const Number& number) {
    static_assert(std::is_integral<Number>::value, "format real numbers with h2o::fixed first");
    return std::to_string(number);
  }

  std::vector<std::string> titles_;
  std::vector<std::vector<std::string>> rows_;
  std::size_t indent_;
};

}  // namespace h2o
