#include "h2o/report/table.hpp"

#include <algorithm>
#include <stdexcept>

#include "h2o/base/format.hpp"

namespace h2o {

Table::Table(std::vector<Column> columns, std::size_t indent)
    : columns_(std::move(columns)), indent_(indent) {
  for (Column& column : columns_) column.width = std::max(column.width, column.title.size());
}

std::string Table::row_text(const std::vector<std::string>& cells) const {
  if (cells.size() != columns_.size()) {
    throw std::invalid_argument("Table: a row of " + std::to_string(cells.size()) + " cells for " +
                                std::to_string(columns_.size()) + " columns");
  }
  std::string line(indent_, ' ');
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const Column& column = columns_[i];
    if (i > 0) line += "  ";
    line += column.align == Align::Left ? pad_right(cells[i], column.width)
                                        : pad_left(cells[i], column.width);
  }
  // Trailing spaces (a left-aligned last column) would only make the output harder to diff.
  line.erase(line.find_last_not_of(' ') + 1);
  return line;
}

void Table::print_header(std::ostream& out) const {
  std::vector<std::string> titles;
  for (const Column& column : columns_) titles.push_back(column.title);
  out << row_text(titles) << "\n";
}

void Table::print_row(std::ostream& out, const std::vector<std::string>& cells) const {
  out << row_text(cells) << "\n";
}

}  // namespace h2o
