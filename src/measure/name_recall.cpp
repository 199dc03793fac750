#include "h2o/measure/name_recall.hpp"

#include <cctype>
#include <sstream>
#include <stdexcept>

#include "h2o/base/files.hpp"
#include "h2o/base/format.hpp"

namespace h2o {

namespace {
constexpr std::uint64_t kMaxNamesFileBytes = 1ull << 20;
}  // namespace

std::vector<std::string> read_names(const std::string& path) {
  const std::string what = "names file '" + path + "'";
  std::istringstream lines(read_text_file(path, what, kMaxNamesFileBytes));
  std::vector<std::string> names;
  std::string line;
  std::size_t number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    for (char c : line) {
      if (!std::isalpha(static_cast<unsigned char>(c))) {
        // The line is quoted escaped and cut (a bad line may be a megabyte of anything).
        throw std::runtime_error(what + ": line " + std::to_string(number) + " ('" +
                                 printable(line, 60) + "') is not a single word of letters");
      }
    }
    names.push_back(line);
  }
  if (names.empty()) throw std::runtime_error(what + " holds no names");
  return names;
}

NameTokens names_as_tokens(const Tokenizer& tokenizer, const std::vector<std::string>& names) {
  NameTokens out;
  out.name_of_token.assign(tokenizer.vocab_size(), -1);
  for (const std::string& name : names) {
    const int after_space = tokenizer.find(" " + name), line_start = tokenizer.find(name);
    if (after_space < 0 && line_start < 0) {
      ++out.split_names;
      continue;
    }
    const int index = static_cast<int>(out.names.size());
    out.names.push_back(name);
    for (int id : {after_space, line_start}) {
      if (id >= 0) out.name_of_token[static_cast<std::size_t>(id)] = index;
    }
  }
  return out;
}

std::vector<std::size_t> long_gap_name_steps(const std::vector<int>& tokens,
                                             const NameTokens& name_tokens, std::size_t min_gap) {
  std::vector<std::size_t> steps;
  std::vector<long long> last_seen(name_tokens.names.size(), -1);  // (K,) position, -1 = never
  for (std::size_t p = 0; p < tokens.size(); ++p) {
    const auto id = static_cast<std::size_t>(tokens[p]);
    const int name = id < name_tokens.name_of_token.size() ? name_tokens.name_of_token[id] : -1;
    if (name < 0) continue;
    const long long previous = last_seen[static_cast<std::size_t>(name)];
    if (p >= 1 && previous >= 0 && p - static_cast<std::size_t>(previous) > min_gap) {
      steps.push_back(p - 1);  // step p - 1 predicts position p
    }
    last_seen[static_cast<std::size_t>(name)] = static_cast<long long>(p);
  }
  return steps;
}

NameRecall name_recall(const std::vector<int>& tokens, const std::vector<int>& top1,
                       const NameTokens& name_tokens, std::size_t min_gap) {
  if (tokens.empty() || top1.size() + 1 != tokens.size()) {
    throw std::invalid_argument("name_recall: " + std::to_string(top1.size()) +
                                " predictions for a text of " + std::to_string(tokens.size()) +
                                " tokens");
  }
  NameRecall result;
  result.min_gap = min_gap;
  result.steps = long_gap_name_steps(tokens, name_tokens, min_gap);
  for (std::size_t t : result.steps) result.correct += top1[t] == tokens[t + 1] ? 1 : 0;
  return result;
}

}  // namespace h2o
