// test_support.hpp: small helpers the file-reading and output tests share. Include after "h2o_catch.hpp".
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

namespace h2o_test {

// A file of the real model folder (../shared/models/stories260K by default; see CMake's
// H2O_MODELS_DIR). It is not part of this repository, so tests that need it skip without it.
inline std::string model_file(const std::string& name) {
  return std::string(H2O_MODELS_DIR) + "/stories260K/" + name;
}

// A folder of its own for each test case (CTest runs them in parallel), removed afterwards.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag) {
    path = std::filesystem::temp_directory_path() /
           ("h2o_test_" + tag + "_" + std::to_string(::getpid()));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path / name).string(); }
};

inline std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The lines of a text, without their line ends.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The message of the Exception that action() throws; fails the test if it throws none.
template <class Exception, class Action>
inline std::string error_of(Action&& action) {
  try {
    action();
  } catch (const Exception& e) {
    return e.what();
  }
  FAIL("expected an exception");
  return "";
}

}  // namespace h2o_test
