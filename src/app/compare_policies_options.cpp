#include "h2o/app/compare_policies_options.hpp"

#include <set>
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
  std::set<std::string> wanted;
  if (text == "all") {
    for (const PolicyKind& kind : policy_kinds()) wanted.insert(kind.name);
  } else {
    std::stringstream list(text);
    std::string item;
    while (std::getline(list, item, ',')) {
      if (item.empty()) throw UsageError("--" + option + " has an empty name in '" + text + "'");
      if (item.find(':') != std::string::npos && is_policy_name(item)) {
        // A budget spread over another scored policy runs in generate, not in a comparison.
        throw UsageError("--" + option + ": " + item + " is not one of the compared policies (" +
                         policy_names() + "); generate --cache " + item + " runs it");
      }
      if (!is_policy_name(item)) {
        throw UsageError("--" + option + ": unknown cache policy '" + item +
                         "' (expected all, or names from: " + policy_names() + ")");
      }
      wanted.insert(item);
    }
    if (wanted.empty()) throw UsageError("--" + option + " needs at least one policy name");
  }
  std::vector<std::string> names;
  for (const PolicyKind& kind : policy_kinds()) {
    if (wanted.count(kind.name) > 0) names.push_back(kind.name);
  }
  return names;
}

}  // namespace h2o
