// xml_check.hpp: a small well-formedness check for the SVG pictures the project writes (tests).
// It walks the text: every tag opened is closed in order, attribute values are quoted, comments
// hold no "--", and nothing but whitespace surrounds the root element. Returns "" when the text is
// well formed, else what is wrong.
#pragma once

#include <cctype>
#include <string>
#include <vector>

namespace h2o_test {

inline std::string xml_problem(const std::string& text) {
  std::vector<std::string> open;
  std::size_t i = 0, roots = 0;
  while (i < text.size()) {
    if (text[i] != '<') {
      if (open.empty() && !std::isspace(static_cast<unsigned char>(text[i]))) {
        return "text outside the root element at byte " + std::to_string(i);
      }
      if (text[i] == '&') {
        const std::size_t semi = text.find(';', i);
        if (semi == std::string::npos || semi - i > 6)
          return "a bare '&' at byte " + std::to_string(i);
      }
      ++i;
      continue;
    }
    if (text.compare(i, 4, "<!--") == 0) {
      const std::size_t end = text.find("-->", i + 4);
      if (end == std::string::npos) return "an unclosed comment";
      if (text.substr(i + 4, end - i - 4).find("--") != std::string::npos)
        return "'--' in a comment";
      i = end + 3;
      continue;
    }
    const std::size_t end = text.find('>', i);
    if (end == std::string::npos) return "an unclosed tag at byte " + std::to_string(i);
    std::string tag = text.substr(i + 1, end - i - 1);
    i = end + 1;
    if (!tag.empty() && tag[0] == '/') {
      const std::string name = tag.substr(1);
      if (open.empty() || open.back() != name) return "</" + name + "> closes nothing open";
      open.pop_back();
      continue;
    }
    const bool self_closing = !tag.empty() && tag.back() == '/';
    if (self_closing) tag.pop_back();
    const std::size_t name_end = tag.find_first_of(" \n\t");
    const std::string name = tag.substr(0, name_end);
    if (name.empty()) return "a tag without a name";
    // Attributes: name="value" pairs, quoted.
    std::size_t quotes = 0;
    for (char c : tag) quotes += c == '"' ? 1 : 0;
    if (quotes % 2 != 0) return "<" + name + "> has an unquoted or unbalanced attribute";
    if (open.empty()) ++roots;
    if (!self_closing) open.push_back(name);
  }
  if (!open.empty()) return "<" + open.back() + "> is never closed";
  if (roots != 1) return std::to_string(roots) + " root elements";
  return "";
}

}  // namespace h2o_test
