// fuzz_options.cpp: libFuzzer harness for the command-line parser (cli.hpp) with the option table
// of every tool (app/generate_options.hpp, app/compare_policies_options.hpp,
// app/bench_decode_options.hpp, app/explore_options.hpp): the same functions the programs call,
// so anything a user can type into a tool reaches the same code here.
//
// Input: command-line arguments separated by NUL bytes (at most 64 of them). Each tool's parser
// reads them and then checks every value. The only acceptable failure is a UsageError (the
// programs print it as one line and exit 2); any other exception, a crash or a sanitizer report
// is a finding. --help output goes nowhere.
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <streambuf>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "h2o/app/bench_decode_options.hpp"
#include "h2o/app/compare_policies_options.hpp"
#include "h2o/app/explore_options.hpp"
#include "h2o/app/generate_options.hpp"

namespace {

// Parses `args` with a tool's table and checks its values, as the tool's main() does.
template <class MakeParser, class ReadOptions>
void run_tool(const std::vector<const char*>& argv, MakeParser make_parser, ReadOptions read) {
  h2o::ArgParser parser = make_parser();
  try {
    parser.parse(static_cast<int>(argv.size()), argv.data());
    read(parser);
  } catch (const h2o::HelpShown&) {
    return;  // --help: the help was printed
  } catch (const h2o::UsageError& e) {
    const std::string message = e.what();
    if (message.empty()) h2o_fuzz::broken("a UsageError without a message");
  }
}

struct NullBuffer : std::streambuf {
  int overflow(int c) override { return c; }
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  static NullBuffer null_buffer;
  std::cout.rdbuf(&null_buffer);  // --help prints to stdout
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<std::string> words(1);
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      if (words.size() == 64) break;
      words.emplace_back();
    } else {
      words.back().push_back(static_cast<char>(data[i]));
    }
  }
  std::vector<const char*> argv = {"fuzz"};
  for (const std::string& word : words) argv.push_back(word.c_str());

  run_tool(argv, h2o::generate_arguments, h2o::generate_options);
  run_tool(argv, h2o::compare_policies_arguments, h2o::compare_policies_options);
  run_tool(argv, h2o::bench_decode_arguments, h2o::bench_decode_options);
  run_tool(argv, h2o::explore_arguments, h2o::explore_options);
  return 0;
}
