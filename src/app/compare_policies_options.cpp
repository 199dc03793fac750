#include "h2o/app/compare_policies_options.hpp"

#include <algorithm>
#include <map>
#include <sstream>
#include <stdexcept>

#include "h2o/app/default_files.hpp"
#include "h2o/app/kv_format_options.hpp"
#include "h2o/app/policy_options.hpp"
#include "h2o/app/read_twice_options.hpp"
#include "h2o/app/reading_report.hpp"
#include "h2o/base/format.hpp"
#include "h2o/policy/policy_factory.hpp"

namespace h2o {

ArgParser compare_policies_arguments() {
  ArgParser args(
      "compare_policies",
      "Compares KV-cache policies on a real model reading one text: a table of perplexity and\n"
      "agreement per budget, and a picture of which tokens each policy keeps.\n\n" +
          policy_list_help());
  add_model_options(args);
  add_text_option(args);
  args.add_option("budgets", "LIST", "10,20,50", "cache budgets, in percent of the text's tokens");
  args.add_option("policies", "LIST", "all", "policies to compare: all, or names from the list");
  args.add_output("svg", "PATH", "", "write the picture (SVG) to this file");
  args.add_option("picture-budget", "PERCENT", "",
                  "the budget the picture shows (default: the smallest of --budgets)");
  add_names_option(args);
  args.add_option("name-gap", "N", "64", "name recall counts names last seen > N tokens back");
  add_read_twice_options(args, "each story's");
  add_heavy_share_option(args);
  add_scoring_options(args);
  add_kv_format_options(args);
  return args;
}

ComparePoliciesOptions compare_policies_options(const ArgParser& args) {
  ComparePoliciesOptions options;
  options.percents = parse_percent_list("budgets", args.text("budgets"));
  options.policies = parse_policy_list("policies", args.text("policies"));
  options.picture_percent = args.given("picture-budget")
                                ? static_cast<int>(args.integer("picture-budget", 1, 100))
                                : options.percents.front();
  options.svg_path = args.text("svg");
  options.text_path = args.text("text");
  options.names_path = args.given("names") ? args.text("names") : "";
  options.name_gap = static_cast<std::size_t>(args.integer("name-gap", 1, 100000));
  read_scoring_options(args, options.scoring);
  read_heavy_share_option(args, options.scoring);
  options.kv_format = read_kv_format_options(args);
  options.read_twice = read_twice_options(args);
  if (options.read_twice.asked()) {
    const std::string mode = args.given("twice") ? "--twice" : "--secret";
    for (const char* other : {"svg", "picture-budget", "names", "name-gap"}) {
      if (args.given(other)) {
        throw UsageError(mode + " measures the second reading only: --" + other +
                         " belongs to the default run");
      }
    }
  }
  return options;
}

std::vector<std::string> parse_policy_list(const std::string& option, const std::string& text) {
  // Each name as the factory spells its kind ("adakv:h2o" is "adakv"), with its row's place in
  // the table: a budget spread over another scorer ("adakv:knorm") comes after its row's own.
  std::map<std::string, std::size_t> wanted;
  const auto row_index = [](const std::string& name) {
    const std::string row = name.substr(0, name.find(':'));
    const std::vector<PolicyKind>& kinds = policy_kinds();
    for (std::size_t i = 0; i < kinds.size(); ++i) {
      if (kinds[i].name == row) return i;
    }
    return kinds.size();
  };
  if (text == "all") {
    for (const PolicyKind& kind : policy_kinds()) wanted.emplace(kind.name, row_index(kind.name));
  } else {
    std::stringstream list(text);
    std::string item;
    while (std::getline(list, item, ',')) {
      if (item.empty()) throw UsageError("--" + option + " has an empty name in '" + text + "'");
      if (item.find(':') != std::string::npos && !is_policy_name(item)) {
        // What is wrong with "adakv:window" or "window:h2o" is more than its being unknown.
        throw UsageError("--" + option + ": " + unknown_policy_message(item));
      }
      if (!is_policy_name(item)) {
        throw UsageError("--" + option + ": unknown cache policy '" + item +
                         "' (expected all, or names from: " + policy_names() + ")");
      }
      const std::string& name = policy_kind(item).name;
      wanted.emplace(name, row_index(name));
    }
    if (wanted.empty()) throw UsageError("--" + option + " needs at least one policy name");
  }
  std::vector<std::string> names;
  for (const auto& [name, index] : wanted) names.push_back(name);
  std::stable_sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    const std::size_t ia = wanted.at(a), ib = wanted.at(b);
    if (ia != ib) return ia < ib;
    return a.find(':') == std::string::npos && b.find(':') != std::string::npos;
  });
  return names;
}

}  // namespace h2o
