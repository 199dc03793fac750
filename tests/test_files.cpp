// test_files.cpp: opening the files programs read (files.hpp), and the --text option that reads a
// text with them (default_files.hpp).
//
// Every reader must refuse, with one line naming the file, anything that is not a regular file of
// a sensible size, before reading a byte: a device (/dev/zero would be read forever), a pipe
// (opening one blocks until someone writes), a folder, a missing or empty file, or a file over
// the reader's limit.
#include <sys/stat.h>
#include <unistd.h>

#include "h2o_catch.hpp"
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/app/default_files.hpp"
#include "h2o/base/files.hpp"
#include "test_support.hpp"

using namespace h2o;
using h2o_catch::Contains;
using h2o_test::error_of;
using h2o_test::TempDir;
using h2o_test::write_bytes;

namespace {

// The one-line error read_text_file gives for `path`.
std::string text_error(const std::string& path, std::uint64_t limit = 1000) {
  const std::string message = error_of<std::runtime_error>(
      [&] { read_text_file(path, "text file '" + path + "'", limit); });
  CHECK(message.find('\n') == std::string::npos);
  CHECK_THAT(message, Contains("text file '" + path + "'"));
  return message;
}

// argv for ArgParser::parse: the program name, then the arguments.
std::vector<const char*> argv_of(const std::vector<std::string>& args) {
  std::vector<const char*> argv = {"test"};
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  return argv;
}

}  // namespace

TEST_CASE("read_text_file returns a regular file's bytes exactly") {
  TempDir dir("files_ok");
  const std::vector<char> bytes = {'a', '\0', '\n', '\xFF', 'b'};
  write_bytes(dir.file("t.txt"), bytes);
  CHECK(read_text_file(dir.file("t.txt"), "t", 5) == std::string(bytes.begin(), bytes.end()));
  // Exactly the limit is allowed; one byte more is not.
  CHECK_THAT(text_error(dir.file("t.txt"), 4),
             Contains("is 5 bytes, more than the limit of 4 bytes"));
}

TEST_CASE("read_text_file refuses devices, pipes, folders, missing and empty files") {
  TempDir dir("files_bad");
  CHECK_THAT(text_error("/dev/zero"), Contains("is not a regular file (a device, pipe or socket)"));
  CHECK_THAT(text_error("/dev/null"), Contains("is not a regular file"));
  CHECK_THAT(text_error(dir.path.string()), Contains("is a directory, not a file"));
  CHECK_THAT(text_error(dir.file("missing.txt")), Contains("does not exist"));
  write_bytes(dir.file("empty.txt"), {});
  CHECK_THAT(text_error(dir.file("empty.txt")), Contains("is empty"));
  // A named pipe: opening it would wait for a writer forever, so it must be refused unopened.
  REQUIRE(::mkfifo(dir.file("pipe").c_str(), 0600) == 0);
  CHECK_THAT(text_error(dir.file("pipe")), Contains("is not a regular file"));
  // A symbolic link to a regular file is that file; one to a device is that device.
  std::filesystem::create_symlink("/dev/zero", dir.file("zero_link"));
  CHECK_THAT(text_error(dir.file("zero_link")), Contains("is not a regular file"));
}

TEST_CASE("byte_size_text names limits in the largest whole unit") {
  CHECK(byte_size_text(0) == "0 bytes");
  CHECK(byte_size_text(1000) == "1000 bytes");
  CHECK(byte_size_text(1024) == "1 KiB");
  CHECK(byte_size_text(1ull << 20) == "1 MiB");
  CHECK(byte_size_text((1ull << 20) + 1) == "1048577 bytes");
  CHECK(byte_size_text(64ull << 20) == "64 MiB");
  CHECK(byte_size_text(8ull << 30) == "8 GiB");
}

TEST_CASE("the text option reads at most kMaxTextBytes from a regular file") {
  TempDir dir("files_text_option");
  const auto read_with = [&](const std::string& path) {
    ArgParser args("test", "test");
    add_text_option(args);
    const std::vector<std::string> words = {"--text", path};
    const std::vector<const char*> argv = argv_of(words);
    REQUIRE(args.parse(static_cast<int>(argv.size()), argv.data()));
    return read_text_option(args);
  };
  write_bytes(dir.file("limit.txt"), std::vector<char>(kMaxTextBytes, 'a'));
  CHECK(read_with(dir.file("limit.txt")).size() == kMaxTextBytes);
  write_bytes(dir.file("over.txt"), std::vector<char>(kMaxTextBytes + 1, 'a'));
  CHECK_THROWS_WITH(read_with(dir.file("over.txt")),
                    Contains("over.txt' is 1048577 bytes, more than the limit of 1 MiB"));
  CHECK_THROWS_WITH(read_with("/dev/zero"),
                    Contains("text file '/dev/zero' is not a regular file"));
  CHECK_THROWS_WITH(read_with(dir.path.string()), Contains("is a directory"));
}
