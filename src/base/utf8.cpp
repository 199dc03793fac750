#include "h2o/base/utf8.hpp"

namespace h2o {

std::size_t utf8_sequence(const std::string& text, std::size_t i, char32_t* code_point) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned lead = byte(i);
  std::size_t n = 0;
  char32_t cp = 0, min = 0;  // min: the smallest code point of that length (no overlong forms)
  if (lead < 0x80) {
    *code_point = lead;
    return 1;
  } else if ((lead & 0xE0) == 0xC0) {
    n = 2, cp = lead & 0x1F, min = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    n = 3, cp = lead & 0x0F, min = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    n = 4, cp = lead & 0x07, min = 0x10000;
  } else {
    return 0;  // a continuation byte, or 0xF8..0xFF
  }
  if (i + n > text.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  *code_point = cp;
  return n;
}

bool is_valid_utf8(const std::string& text) {
  char32_t cp = 0;
  for (std::size_t i = 0, n = 0; i < text.size(); i += n) {
    n = utf8_sequence(text, i, &cp);
    if (n == 0) return false;
  }
  return true;
}

}  // namespace h2o
