#include "h2o/base/format.hpp"

#include <cstdio>

#include "h2o/base/utf8.hpp"

namespace h2o {

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  std::string text(buffer);
  // A tiny negative number rounds to "-0.00"; print it as "0.00".
  if (text[0] == '-' && text.find_first_not_of("-0.") == std::string::npos) text.erase(0, 1);
  return text;
}

std::string scientific(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*e", decimals, value);
  return buffer;
}

namespace {
template <class Range, class Format>
std::string join(const Range& items, Format format_item) {
  std::string out = "[";
  bool first = true;
  for (const auto& item : items) {
    if (!first) out += ", ";
    out += format_item(item);
    first = false;
  }
  return out + "]";
}
}  // namespace

std::string format_list(const std::vector<float>& values, int decimals) {
  return join(values, [&](float v) { return fixed(v, decimals); });
}

std::string format_list(const Vector& values, int decimals) {
  return join(values, [&](float v) { return fixed(v, decimals); });
}

std::string format_list(const std::vector<Position>& values) {
  return join(values, [](Position p) { return std::to_string(p); });
}

std::string format_list(const std::vector<std::size_t>& values) {
  return join(values, [](std::size_t v) { return std::to_string(v); });
}

std::string format_rows(const Matrix& rows, int decimals) {
  std::vector<std::string> row_texts;
  for (std::size_t r = 0; r < rows.shape()[0]; ++r) {
    std::vector<float> row(&rows(r, 0), &rows(r, 0) + rows.shape()[1]);
    row_texts.push_back(format_list(row, decimals));
  }
  return join(row_texts, [](const std::string& text) { return text; });
}

std::string format_pairs(const std::vector<std::string>& names, const Vector& values,
                         int decimals) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < values.size(); ++i) {
    out += (i > 0 ? ", " : "") + names[i] + ": " + fixed(values(i), decimals);
  }
  return out;
}

std::string format_list(const std::vector<std::string>& words) {
  return join(words, [](const std::string& w) { return w; });
}

std::string pad_right(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

std::string pad_left(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : std::string(width - text.size(), ' ') + text;
}

std::string rule(std::size_t width, char ch) { return std::string(width, ch); }

namespace {
// Length of the valid UTF-8 sequence starting at text[i] (2 to 4), or 0 when there is none or it
// is a C1 control character (U+0080..U+009F), which moves the cursor on some terminals.
std::size_t printable_sequence(const std::string& text, std::size_t i) {
  char32_t cp = 0;
  const std::size_t length = utf8_sequence(text, i, &cp);
  return cp >= 0x80 && cp <= 0x9F ? 0 : length;
}
}  // namespace

std::string printable(const std::string& text, std::size_t max_bytes) {
  const char* const hex = "0123456789abcdef";
  std::string out;
  std::size_t i = 0;
  while (i < text.size() && i < max_bytes) {
    const auto ch = static_cast<unsigned char>(text[i]);
    if (ch == '\n') {
      out += "\\n";
    } else if (ch == '\r') {
      out += "\\r";
    } else if (ch == '\t' || (ch >= 0x20 && ch < 0x7F)) {
      out += static_cast<char>(ch);
    } else if (const std::size_t length = ch >= 0x80 ? printable_sequence(text, i) : 0;
               length > 0) {
      out.append(text, i, length);
      i += length;
      continue;
    } else {
      out += "\\x";
      out += hex[ch >> 4];
      out += hex[ch & 15];
    }
    ++i;
  }
  if (i < text.size()) out += "... (" + std::to_string(text.size() - i) + " more bytes)";
  return out;
}

std::string wrap_words(std::string text, std::size_t width, const std::string& indent) {
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

std::string escape_markup(const std::string& text, bool escape_apostrophe) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += escape_apostrophe ? "&#39;" : "'";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

}  // namespace h2o
