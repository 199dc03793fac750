#include "h2o/app/cli.hpp"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

#include "h2o/app/program.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/output_file.hpp"

namespace h2o {

namespace {
// "0", "0.5", "1000": the shortest form, where std::to_string(double) would print "0.000000".
std::string short_number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}
}  // namespace

ArgParser::ArgParser(std::string program, std::string summary)
    : program_(std::move(program)), summary_(std::move(summary)) {
  add_flag("help", "show this help and exit");
}

ArgParser& ArgParser::add_option(const std::string& name, const std::string& value_name,
                                 const std::string& default_value, const std::string& help) {
  order_.push_back(name);
  options_[name] = Option{value_name, default_value, help, false};
  return *this;
}

ArgParser& ArgParser::add_output(const std::string& name, const std::string& value_name,
                                 const std::string& default_value, const std::string& help) {
  add_option(name, value_name, default_value, help);
  options_[name].is_output = true;
  return *this;
}

ArgParser& ArgParser::add_flag(const std::string& name, const std::string& help) {
  order_.push_back(name);
  options_[name] = Option{"", "", help, true};
  return *this;
}

void ArgParser::parse(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0 || arg.size() == 2) {
      throw UsageError("unexpected argument '" + arg + "' (see --help)");
    }
    std::string name = arg.substr(2), value;
    bool has_inline_value = false;
    if (const auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_inline_value = true;
    }
    const auto it = options_.find(name);
    if (it == options_.end()) throw UsageError("unknown option --" + name + " (see --help)");
    if (it->second.is_flag) {
      if (has_inline_value) throw UsageError("--" + name + " takes no value");
      values_[name] = "1";
      continue;
    }
    if (!has_inline_value) {
      if (i + 1 >= argc) throw UsageError("--" + name + " needs a value");
      value = argv[++i];
      // "--prompt --steps 3" is a forgotten value, not a prompt; --name=--text still works.
      if (value.rfind("--", 0) == 0 && options_.count(value.substr(2, value.find('=') - 2)) > 0) {
        throw UsageError("--" + name + " needs a value (got the option " + value + "; write --" +
                         name + "=VALUE for a value that starts with --)");
      }
    }
    values_[name] = value;
  }
  if (flag("help")) {
    std::cout << help();
    throw HelpShown{};
  }
  // An option that names a file or a folder, given an empty name (--csv "" or --csv=), names
  // nothing: refused, rather than read as "not given" and run without the file.
  for (const auto& [name, value] : values_) {
    const std::string& kind = options_.at(name).value_name;
    if (!value.empty()) continue;
    if (kind == "PATH") throw UsageError("--" + name + " needs a file path");
    if (kind == "DIR" || kind == "FOLDER") throw UsageError("--" + name + " needs a folder");
  }
  // The outputs, each on a path of its own and none on an input (given or by default), in the
  // order of the help.
  std::vector<NamedPath> outputs, inputs;
  for (const std::string& name : order_) {
    const Option& option = options_.at(name);
    if (option.is_output) {
      outputs.push_back({"--" + name, text(name)});
    } else if (option.value_name == "PATH") {
      inputs.push_back({"--" + name, text(name)});
    }
  }
  if (const std::string clash = files_clash(outputs, inputs); !clash.empty())
    throw UsageError(clash);
}

bool ArgParser::given(const std::string& name) const { return values_.count(name) > 0; }

bool ArgParser::flag(const std::string& name) const { return given(name); }

std::string ArgParser::text(const std::string& name) const {
  if (const auto it = values_.find(name); it != values_.end()) return it->second;
  const auto opt = options_.find(name);
  if (opt == options_.end())
    throw std::logic_error("ArgParser: option --" + name + " was never added");
  return opt->second.default_value;
}

namespace {
// `text` without the spaces and tabs around it: " 5" and "5 " are both 5, as people type them.
std::string without_outer_spaces(const std::string& text) {
  const std::size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}
}  // namespace

bool parse_whole_number(const std::string& text, long long* value) {
  const std::string digits = without_outer_spaces(text);
  if (digits.empty() || std::isspace(static_cast<unsigned char>(digits[0]))) return false;
  errno = 0;
  char* end = nullptr;
  *value = std::strtoll(digits.c_str(), &end, 10);
  return *end == '\0' && errno != ERANGE;
}

bool parse_real_number(const std::string& text, double* value) {
  const std::string digits = without_outer_spaces(text);
  if (digits.empty() || std::isspace(static_cast<unsigned char>(digits[0]))) return false;
  errno = 0;
  char* end = nullptr;
  *value = std::strtod(digits.c_str(), &end);
  // ERANGE from a number too small for a double (4.9e-324 and below) is not an error: the value
  // is the nearest double, 0 or a subnormal. Too large (HUGE_VAL) is.
  return *end == '\0' && std::isfinite(*value);
}

long long ArgParser::integer(const std::string& name, long long min, long long max) const {
  const std::string value = text(name);
  long long number = 0;
  if (!parse_whole_number(value, &number)) {
    throw UsageError("--" + name + " expects a whole number, got '" + value + "'");
  }
  if (number < min || number > max) {
    // The number as read ("-0" is 0), not as typed.
    throw UsageError("--" + name + " must be between " + std::to_string(min) + " and " +
                     std::to_string(max) + ", got " + std::to_string(number));
  }
  return number;
}

double ArgParser::real(const std::string& name, double min, double max) const {
  const std::string value = text(name);
  double number = 0;
  if (!parse_real_number(value, &number)) {
    throw UsageError("--" + name + " expects a number, got '" + value + "'");
  }
  if (number < min || number > max) {
    throw UsageError("--" + name + " must be between " + short_number(min) + " and " +
                     short_number(max) + ", got " + short_number(number + 0.0));  // -0 is 0
  }
  return number;
}

namespace {
// Help fits an 80-column terminal. A longer line is broken at spaces, its later lines indented to
// where its text begins: after the line's own indent and, in a list of keys ("  h2o      Heavy
// ..." or an option's "  --heavy N    H2O ..."), after the key and the spaces that follow it.
constexpr std::size_t kHelpWidth = 80;
constexpr std::size_t kHelpColumn = 26;  // where an option's description starts

std::string wrapped_help_line(const std::string& line) {
  if (line.size() <= kHelpWidth) return line;
  std::size_t start = line.find_first_not_of(' ');
  if (start == std::string::npos) return line;
  const std::size_t gap = line.find("  ", start);
  if (gap != std::string::npos && gap < kHelpWidth / 2) {
    const std::size_t text = line.find_first_not_of(' ', gap);
    if (text != std::string::npos) start = text;
  }
  return wrap_words(line, kHelpWidth, std::string(start, ' '));
}

// `text` wrapped: its lines that start at the left margin, one after another, are one paragraph
// and wrapped as one (so a text written for 100 columns reads as prose at 80); an indented line
// (a list's entry) is wrapped on its own.
std::string wrapped_help(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t from = 0;
  while (true) {
    const std::size_t end = text.find('\n', from);
    std::string line = text.substr(from, end == std::string::npos ? end : end - from);
    const bool continues = !lines.empty() && !lines.back().empty() && !line.empty() &&
                           lines.back()[0] != ' ' && line[0] != ' ' && lines.back().back() != ':';
    if (continues) {
      lines.back() += " " + line;
    } else {
      lines.push_back(line);
    }
    if (end == std::string::npos) break;
    from = end + 1;
  }
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    out += (i > 0 ? "\n" : "") + wrapped_help_line(lines[i]);
  }
  return out;
}
}  // namespace

std::string ArgParser::help() const {
  std::string out =
      "usage: " + program_ + " [options]\n\n" + wrapped_help(summary_) + "\n\noptions:\n";
  std::vector<std::string> names = order_;
  // --help last, as people expect.
  names.erase(names.begin());
  names.push_back("help");
  const std::string column(kHelpColumn, ' ');
  for (const auto& name : names) {
    const Option& opt = options_.at(name);
    std::string left = "  --" + name + (opt.is_flag ? "" : " " + opt.value_name);
    if (left.size() < kHelpColumn) {
      left += std::string(kHelpColumn - left.size(), ' ');
    } else {
      out += left + "\n";
      left = column;
    }
    std::string line = wrapped_help_line(left + opt.help);
    if (!opt.is_flag && !opt.default_value.empty()) {
      // The default after the description when it fits on its last line, else on lines of its
      // own.
      const std::string default_text = "(default: " + opt.default_value + ")";
      const std::size_t newline = line.rfind('\n');
      const std::size_t last_line_width =
          newline == std::string::npos ? line.size() : line.size() - newline - 1;
      line += last_line_width + 1 + default_text.size() <= kHelpWidth
                  ? " " + default_text
                  : "\n" + wrapped_help_line(column + default_text);
    }
    out += line + "\n";
  }
  return out;
}

ArgParser& add_budget_options(ArgParser& args, long long default_heavy, long long default_recent,
                              const std::string& unit) {
  args.add_option("heavy", "N", std::to_string(default_heavy), "H2O heavy-hitter " + unit);
  return args.add_option("recent", "N", std::to_string(default_recent),
                         "H2O recent-window " + unit);
}

CacheBudget budget_from_options(const ArgParser& args, long long max_each) {
  const auto heavy = static_cast<std::size_t>(args.integer("heavy", 0, max_each));
  const auto recent = static_cast<std::size_t>(args.integer("recent", 0, max_each));
  try {
    return CacheBudget(heavy, recent);
  } catch (const std::invalid_argument& e) {
    throw UsageError("--heavy " + std::to_string(heavy) + " --recent " + std::to_string(recent) +
                     ": " + e.what());
  }
}

std::vector<int> parse_percent_list(const std::string& option, const std::string& text,
                                    std::size_t max_count) {
  std::set<int> percents;
  std::stringstream list(text);
  std::string item;
  while (std::getline(list, item, ',')) {
    long long value = 0;
    if (!parse_whole_number(item, &value) || value < 1 || value > 100) {
      throw UsageError("--" + option +
                       " expects percentages from 1 to 100 separated by commas, got '" + text +
                       "'");
    }
    percents.insert(static_cast<int>(value));
  }
  if (percents.empty() || percents.size() > max_count) {
    throw UsageError("--" + option + " needs 1 to " + std::to_string(max_count) + " percentages");
  }
  return {percents.begin(), percents.end()};
}

void start_lesson(int argc, const char* const* argv, const std::string& summary) {
  ArgParser(program_name(argc > 0 ? argv[0] : nullptr), summary).parse(argc, argv);
}

std::string command_line(int argc, const char* const* argv) {
  std::string out = argc > 0 ? std::filesystem::path(argv[0]).filename().string() : "";
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    out += word.find(' ') == std::string::npos ? " " + word : " '" + word + "'";
  }
  return out;
}

}  // namespace h2o
