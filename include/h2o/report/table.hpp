// table.hpp: plain-text tables, one call per row, for lessons and tools.
//
// A lesson's table should cost one line to define and one line per row, so that printing never
// outweighs the idea being taught:
//   h2o::Table table({{"word", 9, h2o::Align::Left}, {"old score", 10}, {"new score", 10}});
//   table.print_header(std::cout);
//   table.print_row(std::cout, {"cat", h2o::fixed(0.7), h2o::fixed(1.2)});
// Every row starts with the table's indent; a cell wider than its column is printed whole (the
// row then runs wider rather than losing digits). Deterministic: no locale, no tabs.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace h2o {

enum class Align { Left, Right };

struct Column {
  std::string title;
  std::size_t width = 0;  // at least the title's width; 0 = the title's width
  Align align = Align::Right;
};

class Table {
 public:
  explicit Table(std::vector<Column> columns, std::size_t indent = 2);

  void print_header(std::ostream& out) const;
  // cells (columns,): one per column. Throws std::invalid_argument on a different count.
  void print_row(std::ostream& out, const std::vector<std::string>& cells) const;

  // The row as text, without a newline (for callers that add to it).
  std::string row_text(const std::vector<std::string>& cells) const;

 private:
  std::vector<Column> columns_;
  std::size_t indent_;
};

}  // namespace h2o
