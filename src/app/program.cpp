#include "h2o/app/program.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>

#include "h2o/app/cli.hpp"
#include "h2o/base/format.hpp"
#include "h2o/base/output_file.hpp"

namespace h2o {

namespace {

// Errors quote what the user typed or what a file holds: shown through printable() (a newline,
// an escape sequence or invalid UTF-8 inside cannot break the one-line promise or the terminal)
// and cut to a length that fits a few lines of a terminal.
constexpr std::size_t kMaxErrorBytes = 400;

void report(const std::string& program, const std::string& message) {
  std::cerr << program << ": error: " << printable(message, kMaxErrorBytes) << "\n";
}

// The exception being handled, as one line of stderr (none for --help); its exit code.
int report_current_exception(const std::string& program) {
  try {
    throw;
  } catch (const HelpShown&) {
    return 0;
  } catch (const UsageError& e) {
    report(program, e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    report(program, "out of memory");
    return 1;
  } catch (const std::exception& e) {
    report(program, e.what());
    return 1;
  } catch (...) {
    report(program, "unknown failure");
    return 1;
  }
}

// Whether everything written to stdout reached it (a full disk, a closed pipe or `> /dev/full`
// fail only when the buffer is written out); errno says why when it did not (left by the write
// that failed, or by this last flush).
bool standard_output_written() {
  std::cout.flush();
  const bool stream_ok = static_cast<bool>(std::cout);
  return std::fflush(stdout) == 0 && std::ferror(stdout) == 0 && stream_ok;
}

char** g_arguments = nullptr;  // run_program's argv, for restart_program

}  // namespace

std::string program_name(const char* argv0) {
  const std::string path = argv0 != nullptr && *argv0 != '\0' ? argv0 : "program";
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

int run_program(int argc, char** argv, ProgramBody body) {
  const std::string program = program_name(argc > 0 ? argv[0] : nullptr);
  g_arguments = argc > 0 ? argv : nullptr;
  int code = 0;
  bool reported = false;
  try {
    code = body(argc, argv);
  } catch (...) {
    code = report_current_exception(program);
    reported = code != 0;
  }
  if (!standard_output_written()) {
    // Output that could not be written is an error, not a silent success; after another error
    // the first line already says what went wrong.
    const int error = errno;
    if (!reported) {
      report(program, std::string("cannot write the output to stdout") +
                          (error != 0 ? std::string(" (") + std::strerror(error) + ")" : ""));
    }
    if (code == 0) code = 1;
  }
  if (code != 0) remove_created_folders();  // a failed run leaves no empty --pictures folder
  std::cerr.flush();
  return code;
}

void restart_program(const std::vector<std::pair<std::string, std::string>>& settings) {
  if (g_arguments == nullptr) return;
  for (const auto& [name, value] : settings) ::setenv(name.c_str(), value.c_str(), 1);
  std::cout.flush();
  std::cerr.flush();
  ::execv("/proc/self/exe", g_arguments);
  for (const auto& setting : settings) ::unsetenv(setting.first.c_str());  // it did not start
}

}  // namespace h2o
