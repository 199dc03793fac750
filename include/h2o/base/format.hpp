// format.hpp: small text helpers so every program prints numbers the same way on every run.
//
// Dimension legend: N = length of a printed list or vector (any length).
#pragma once

#include <string>
#include <vector>

#include "h2o/base/tensor.hpp"

namespace h2o {

// "1.23" with a fixed number of decimals; -0.00 is printed as 0.00 so output never flickers in
// sign.
std::string fixed(double value, int decimals = 2);

// "3.0e-08": for tiny differences, where fixed() would only print zeros.
std::string scientific(double value, int decimals = 1);

// "[1.20, 1.20, 0.50]"
std::string format_list(const std::vector<float>& values, int decimals = 2);
std::string format_list(const Vector& values, int decimals = 2);
// "[0, 2, 3, 4]"
std::string format_list(const std::vector<Position>& values);
std::string format_list(const std::vector<std::size_t>& values);
// "[[0.1, 0.2], [1.0, 0.6]]": a matrix, row by row
std::string format_rows(const Matrix& rows, int decimals = 2);
// "The: 0.20, cat: 0.50, sat: 0.30": names (N,) beside values (N,)
std::string format_pairs(const std::vector<std::string>& names, const Vector& values,
                         int decimals = 2);
// "[The, cat, sat]"
std::string format_list(const std::vector<std::string>& words);

// Left- or right-align text in a column of the given width (longer text is kept whole).
std::string pad_right(const std::string& text, std::size_t width);
std::string pad_left(const std::string& text, std::size_t width);

// A line of `width` copies of `ch`, for section rules in lesson output.
std::string rule(std::size_t width = 72, char ch = '-');

// Text from a file or a command line made safe to show on a terminal, in an error message or in
// a picture: the one owner of that rule. Valid UTF-8 and tabs are kept; a newline becomes "\n",
// a carriage return "\r", a backslash stays a backslash, and every other control character (ESC,
// NUL, DEL, ...) and every byte that is not part of valid UTF-8 becomes "\xHH", so nothing in the
// text can move the cursor, change colours or break a line. Longer than `max_bytes` of input:
// cut there (at a character boundary) and ended with "... (N more bytes)".
std::string printable(const std::string& text, std::size_t max_bytes = std::string::npos);

// Text safe inside HTML or XML markup and attribute values: & < > " (and, with
// `escape_apostrophe`, ') written as character references; every other byte kept. The one owner
// of that rule: the SVG pictures (xml_escape) and the explorer page (html_escape) call it.
std::string escape_markup(const std::string& text, bool escape_apostrophe = false);

// Breaks `text` at spaces so no line is wider than `width` columns; later lines start with
// `indent`. Spaces inside a line (column alignment) are kept as they are; a single word longer
// than a line is kept whole.
std::string wrap_words(std::string text, std::size_t width, const std::string& indent);

}  // namespace h2o
