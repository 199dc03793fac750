#include "h2o/report/table.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "h2o/base/format.hpp"

namespace h2o {

namespace {
// "0.20", "-1.5%", "+0.5%", "38", "3.0e-08": a number, possibly signed or a percentage.
bool looks_numeric(const std::string& cell) {
  if (cell.empty() || cell == "-") return true;  // blanks do not decide a column's alignment
  std::size_t i = (cell[0] == '+' || cell[0] == '-') ? 1 : 0;
  if (i >= cell.size() || !std::isdigit(static_cast<unsigned char>(cell[i]))) return false;
  for (; i < cell.size(); ++i) {
    const char c = cell[i];
    const bool part = std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'e' ||
                      c == '-' || c == '+' || (c == '%' && i + 1 == cell.size()) ||
                      (c == 'x' && i + 1 == cell.size());
    if (!part) return false;
  }
  return true;
}
}  // namespace

Table::Table(std::vector<std::string> titles, std::size_t indent)
    : titles_(std::move(titles)), indent_(indent) {}

void Table::add(std::vector<std::string> cells) {
  if (cells.size() != titles_.size()) {
    throw std::invalid_argument("Table: a row of " + std::to_string(cells.size()) + " cells for " +
                                std::to_string(titles_.size()) + " columns");
  }
  rows_.push_back(std::move(cells));
}

std::string Table::text() const {
  const std::size_t n = titles_.size();
  std::vector<std::size_t> width(n);
  std::vector<bool> right(n, true);
  for (std::size_t c = 0; c < n; ++c) {
    width[c] = titles_[c].size();
    for (const auto& row : rows_) {
      width[c] = std::max(width[c], row[c].size());
      right[c] = right[c] && looks_numeric(row[c]);
    }
    if (rows_.empty()) right[c] = false;
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out(indent_, ' ');
    for (std::size_t c = 0; c < n; ++c) {
      if (c > 0) out += "  ";
      out += right[c] ? pad_left(cells[c], width[c]) : pad_right(cells[c], width[c]);
    }
    out.erase(out.find_last_not_of(' ') + 1);  // no trailing spaces
    return out + "\n";
  };
  std::string out = line(titles_);
  for (const auto& row : rows_) out += line(row);
  return out;
}

void Table::print(std::ostream& out) const { out << text(); }

std::string Table::csv() const {
  auto cell = [](const std::string& text) {
    if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
    std::string quoted = "\"";
    for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
  };
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t c = 0; c < cells.size(); ++c) out += (c > 0 ? "," : "") + cell(cells[c]);
    return out + "\n";
  };
  std::string out = line(titles_);
  for (const auto& row : rows_) out += line(row);
  return out;
}

}  // namespace h2o
