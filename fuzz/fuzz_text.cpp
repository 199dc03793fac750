// fuzz_text.cpp: libFuzzer harness for the text files people write by hand: the names file
// (measure/name_recall.hpp: read_names), the stories reader (base/files.hpp read_text_file, then
// text/stories.hpp split_stories) and the escaping every program shows such text through
// (base/format.hpp printable()).
//
// Input: the bytes of a file, read both as a names file and as a text of stories.
//   - read_names returns names that show safely (valid UTF-8, no control character), whose ASCII
//     bytes are letters, ' or - only, which start and end with no ' or - and hold no two of them
//     in a row (no space, newline, '\r', digit; none empty), or refuses the file with std::runtime_error whose message, as a program prints it (printable, cut), is one
//     bounded line of printable text;
//   - names_in_text finds names that are valid UTF-8 and written in the text at least twice;
//   - split_stories returns stories that are not empty, hold no blank line and no separator line,
//     do not start or end with a newline, and whose lines, in order, are exactly the text's lines
//     (each "\r\n" read as "\n") that are neither blank nor the separator;
//   - printable() of any bytes is valid UTF-8 with no control character but tab, and cut to about
//     its limit.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "h2o/base/files.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/utf8.hpp"
#include "h2o/measure/name_recall.hpp"
#include "h2o/text/stories.hpp"

namespace {

// Valid UTF-8 with no control character but tab, no DEL, no C1 control (what a terminal can show).
bool shows_safely(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t') || c == 0x7F) return false;
      ++i;
      continue;
    }
    const std::size_t length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
    if (length == 0 || c > 0xF4 || i + length > text.size()) return false;
    for (std::size_t k = 1; k < length; ++k) {
      if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return false;
    }
    if (c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) return false;  // C1
    i += length;
  }
  return true;
}

void check_names(const std::string& path) {
  try {
    for (const std::string& name : h2o::read_names(path)) {
      if (name.empty()) h2o_fuzz::broken("an empty name");
      if (!shows_safely(name)) h2o_fuzz::broken("a name that does not show safely");
      bool joiner_before = true;  // a name cannot start with ' or -
      for (char c : name) {
        const auto byte = static_cast<unsigned char>(c);
        const bool joiner = c == '\'' || c == '-';
        if (byte < 0x80 && !std::isalpha(byte) && !joiner)
          h2o_fuzz::broken("a name with an ASCII non-letter");
        if (joiner && joiner_before) h2o_fuzz::broken("a name with ' or - not between letters");
        joiner_before = joiner;
      }
      if (joiner_before) h2o_fuzz::broken("a name ending in ' or -");
    }
  } catch (const std::runtime_error& e) {
    const std::string shown = h2o::printable(e.what(), 400);
    if (!shows_safely(shown)) h2o_fuzz::broken("an error message that is not printable");
    if (shown.size() > 400 * 4 + 64) h2o_fuzz::broken("an error message that is not cut");
  }
}

// The lines of `text` split at "\n" (a final piece without "\n" is a line too).
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  for (char c : text) {
    if (c == '\n') {
      lines.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

bool blank(const std::string& line) { return line.find_first_not_of(" \t") == std::string::npos; }

bool separator(std::string line) {
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.pop_back();
  return line == h2o::kStorySeparator;
}

void check_stories(const std::string& text) {
  std::string normal;  // "\r\n" read as "\n"
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (!(text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n')) normal += text[i];
  }
  std::vector<std::string> expected;  // the text's lines that are neither blank nor a separator
  for (const std::string& line : lines_of(normal)) {
    if (!blank(line) && !separator(line)) expected.push_back(line);
  }
  std::vector<std::string> got;
  for (const std::string& story : h2o::split_stories(text)) {
    if (story.empty()) h2o_fuzz::broken("an empty story");
    if (story.front() == '\n' || story.back() == '\n') h2o_fuzz::broken("a story edged by \\n");
    for (const std::string& line : lines_of(story)) {
      if (blank(line)) h2o_fuzz::broken("a story with a blank line");
      if (separator(line)) h2o_fuzz::broken("a story with a separator line");
      got.push_back(line);
    }
  }
  if (got != expected) h2o_fuzz::broken("split_stories lost, added or reordered lines");
}

// names_in_text reads any bytes as a story: every name it finds is valid UTF-8, written in the
// text at least twice (a possessive 's taken off, a name is still there as written).
void check_names_in_text(const std::string& text) {
  for (const std::string& name : h2o::names_in_text(text)) {
    if (name.empty() || !h2o::is_valid_utf8(name)) h2o_fuzz::broken("a found name not UTF-8");
    const std::size_t first = text.find(name);
    if (first == std::string::npos || text.find(name, first + 1) == std::string::npos)
      h2o_fuzz::broken("a found name not written twice in the text");
  }
  h2o::has_letters_without_capitals(text);  // any bytes: no crash, no read beyond the text
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  h2o_fuzz::write_scratch(data, size);
  check_names(h2o_fuzz::scratch_file());
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const std::string text = h2o::read_text_file(h2o_fuzz::scratch_file(), "text", 1 << 20);
    const bool marked = bytes.compare(0, 3, "\xEF\xBB\xBF") == 0;  // a byte-order mark: dropped
    if (text != bytes.substr(marked ? 3 : 0)) h2o_fuzz::broken("read_text_file changed the bytes");
    check_stories(text);
    check_names_in_text(text);
  } catch (const std::runtime_error&) {
    if (size != 0) h2o_fuzz::broken("read_text_file refused a small regular file");
  }
  const std::size_t limit = size % 64;
  const std::string shown = h2o::printable(bytes, limit);
  if (!shows_safely(shown)) h2o_fuzz::broken("printable() let a control byte through");
  if (shown.size() > 4 * limit + 3 + 40) h2o_fuzz::broken("printable() did not cut");
  if (!shows_safely(h2o::printable(bytes)))
    h2o_fuzz::broken("printable() let a control byte through");
  return 0;
}
