// utf8.hpp: reading UTF-8 one character at a time, strictly, for every place that shows text
// (the terminal's printable(), the explorer page's JSON, through printable() the text layer's
// token_text()).
//
// Valid UTF-8 here is Unicode's: no overlong forms, no UTF-16 surrogates (U+D800..U+DFFF), nothing
// above U+10FFFF. Any byte that does not start a valid sequence is the caller's to replace.
#pragma once

#include <cstddef>
#include <string>

namespace h2o {

// Length (1..4) of the valid UTF-8 sequence starting at text[i], with its code point in
// *code_point; 0 when the bytes there are not valid UTF-8 (*code_point is then untouched).
// Requires i < text.size().
std::size_t utf8_sequence(const std::string& text, std::size_t i, char32_t* code_point);

// True when all of `text` is valid UTF-8.
bool is_valid_utf8(const std::string& text);

}  // namespace h2o
