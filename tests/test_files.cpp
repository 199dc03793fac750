// test_files.cpp: opening the files programs read (files.hpp), the --text option that reads a
// text with them (default_files.hpp), and writing output files (output_file.hpp).
//
// Every reader must refuse, with one line naming the file, anything that is not a regular file of
// a sensible size, before reading a byte: a device (/dev/zero would be read forever), a pipe
// (opening one blocks until someone writes), a folder, a missing or empty file, or a file over
// the reader's limit.
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/app/default_files.hpp"
#include "h2o/base/files.hpp"
#include "h2o/base/output_file.hpp"
#include "h2o/text/stories.hpp"
#include "h2o_catch.hpp"
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
  // A UTF-8 byte-order mark at the start is no text (an editor wrote it); anywhere else it stays.
  write_bytes(dir.file("bom.txt"), {'\xEF', '\xBB', '\xBF', 'T', 'o', 'm', '\xEF', '\xBB', '\xBF'});
  CHECK(read_text_file(dir.file("bom.txt"), "t", 100) == "Tom\xEF\xBB\xBF");
  CHECK(read_file_bytes(dir.file("bom.txt"), "t", 100).size() == 9);  // bytes as they are
  write_bytes(dir.file("only_bom.txt"), {'\xEF', '\xBB', '\xBF'});
  CHECK(read_text_file(dir.file("only_bom.txt"), "t", 100).empty());
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
    args.parse(static_cast<int>(argv.size()), argv.data());
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

// ------------------------------------------------------------------------------- output files
// Writing (output_file.hpp): a file appears complete or not at all, an existing file survives a
// failed run, and every failure is one line naming the file and the reason.

namespace {
// The files in `dir`, by name (so a temporary file left behind would show).
std::vector<std::string> names_in(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string output_error(const std::string& path) {
  const std::string message =
      error_of<std::runtime_error>([&] { OutputFile out(path, "the test file"); });
  CHECK(message.find('\n') == std::string::npos);
  CHECK_THAT(message, Contains("the test file '" + path + "'"));
  return message;
}
}  // namespace

TEST_CASE("an output file appears only when it is complete") {
  TempDir dir("output_complete");
  const std::string path = dir.file("out.csv");
  write_bytes(path, {'o', 'l', 'd'});
  {
    OutputFile out(path, "the CSV file");
    out.stream() << "new,contents\n";
    CHECK(h2o_test::read_bytes(path) == std::vector<char>{'o', 'l', 'd'});  // not yet replaced
    CHECK(names_in(dir.path).size() == 2);                                  // out.csv + temporary
    out.commit();
  }
  const std::vector<char> bytes = h2o_test::read_bytes(path);
  CHECK(std::string(bytes.begin(), bytes.end()) == "new,contents\n");
  CHECK(names_in(dir.path) == std::vector<std::string>{"out.csv"});
  write_output_file(dir.file("whole.txt"), "the text",
                    std::string(200000, 'x'));  // past the buffer
  CHECK(h2o_test::read_bytes(dir.file("whole.txt")).size() == 200000);
}

TEST_CASE("an existing file survives a run that fails before commit") {
  TempDir dir("output_survives");
  const std::string path = dir.file("model.bin");
  write_bytes(path, {'k', 'e', 'e', 'p'});
  try {
    OutputFile out(path, "checkpoint");
    out.stream() << "half of a checkpoint";
    throw std::runtime_error("the run failed");
  } catch (const std::runtime_error&) {
  }
  CHECK(h2o_test::read_bytes(path) == std::vector<char>{'k', 'e', 'e', 'p'});
  CHECK(names_in(dir.path) == std::vector<std::string>{"model.bin"});
}

TEST_CASE("a write error (a file too large for the limit) is reported and loses nothing") {
  TempDir dir("output_full");
  const std::string path = dir.file("big.svg");
  write_bytes(path, {'o', 'l', 'd'});
  // RLIMIT_FSIZE makes a write past 4 KiB fail with EFBIG, as a full disk fails with ENOSPC.
  struct rlimit old_limit;
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old_limit) == 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old_limit;
  small.rlim_cur = 4096;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  const std::string message = error_of<std::runtime_error>(
      [&] { write_output_file(path, "the picture", std::string(100000, 'x')); });
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  CHECK(message == "the picture '" + path + "': cannot write it (File too large)");
  CHECK(h2o_test::read_bytes(path) == std::vector<char>{'o', 'l', 'd'});
  CHECK(names_in(dir.path) == std::vector<std::string>{"big.svg"});
}

TEST_CASE("files that belong together are all written or none") {
  TempDir dir("output_all_or_none");
  write_bytes(dir.file("b.svg"), {'o', 'l', 'd'});
  // The third path cannot be written (its folder does not exist): nothing new appears, and the
  // old b.svg is left as it was.
  CHECK_THAT(error_of<std::runtime_error>([&] {
               write_output_files({{dir.file("a.svg"), "the chart", "A"},
                                   {dir.file("b.svg"), "the chart", "B"},
                                   {dir.file("gone/c.svg"), "the chart", "C"}});
             }),
             Contains("the chart '") && Contains("gone"));
  CHECK(names_in(dir.path) == std::vector<std::string>{"b.svg"});
  CHECK(h2o_test::read_bytes(dir.file("b.svg")) == std::vector<char>{'o', 'l', 'd'});
  write_output_files(
      {{dir.file("a.svg"), "the chart", "A"}, {dir.file("b.svg"), "the chart", "B"}});
  CHECK(names_in(dir.path) == std::vector<std::string>{"a.svg", "b.svg"});
  CHECK(h2o_test::read_bytes(dir.file("b.svg")) == std::vector<char>{'B'});
}

TEST_CASE("output paths are checked when the file is made: folders, devices, missing folders") {
  TempDir dir("output_paths");
  CHECK_THAT(output_error(dir.path.string()), Contains("is a folder, not a file"));
  CHECK_THAT(output_error("/dev/full"), Contains("is not a regular file"));
  CHECK_THAT(output_error("/dev/null"), Contains("is not a regular file"));
  CHECK_THAT(output_error(dir.file("missing/out.svg")),
             Contains("the folder '" + dir.file("missing") + "' does not exist"));
  CHECK_THROWS_WITH(OutputFile("", "the test file"), "the test file: no file name given");
  // A folder nobody may write in: /sys refuses even root; a folder without write permission
  // refuses everyone else.
  CHECK_THAT(output_error("/sys/h2o_test.svg"), Contains("cannot create a file in its folder"));
  const std::filesystem::path locked = dir.path / "locked";
  std::filesystem::create_directory(locked);
  ::chmod(locked.c_str(), 0555);
  if (::geteuid() != 0) {
    CHECK_THAT(output_error((locked / "x.csv").string()),
               Contains("cannot create a file in its folder (Permission denied)"));
  }
  ::chmod(locked.c_str(), 0755);
  CHECK_NOTHROW(check_output_path(dir.file("fine.csv"), "the CSV file"));
  CHECK(names_in(dir.path) == std::vector<std::string>{"locked"});  // the probe left nothing
  CHECK_NOTHROW(make_output_folder(dir.file("new/deeper"), "--pictures"));
  CHECK(std::filesystem::is_directory(dir.file("new/deeper")));
  CHECK_THROWS_WITH(make_output_folder("/sys/h2o_test_pictures", "--pictures"),
                    Contains("--pictures '/sys/h2o_test_pictures'"));
}

namespace {
// The signals that end a program by default and that it can catch (base/output_file.cpp's
// kCleanupSignals), and a real-time one: each must leave no temporary file behind.
std::vector<int> catchable_signals() {
  std::vector<int> signals = {SIGHUP,  SIGINT,  SIGQUIT, SIGABRT, SIGUSR1,   SIGUSR2, SIGPIPE,
                              SIGALRM, SIGTERM, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO};
#ifdef SIGRTMIN
  signals.push_back(SIGRTMIN + 2);
#endif
  return signals;
}

// In a forked child: the start of a program (every signal at its default action, as Catch2 put
// its own handlers on some), no core file from the signals whose default writes one, and a limit
// on its life should the test break.
void start_child_as_a_program() {
  for (int each = 1; each < NSIG; ++each) {
    if (each != SIGKILL && each != SIGSTOP) std::signal(each, SIG_DFL);
  }
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  const struct rlimit no_core = {0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  ::alarm(30);  // never outlives a broken test (SIGALRM would then show in the status)
}

// Makes a child process that makes `files` OutputFiles beside an existing model.bin (the last in
// a folder make_output_folder made, `folder`, when given), writes to all, then works on (with no
// system call); returns once they all exist. The pipe makes a signal sent then land exactly while
// the files are open.
pid_t child_writing(const TempDir& dir, int files, const std::string& folder) {
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(ready[0]);
    start_child_as_a_program();
    try {
      std::vector<std::unique_ptr<OutputFile>> outs;
      outs.push_back(std::make_unique<OutputFile>(dir.file("model.bin"), "checkpoint"));
      for (int i = 1; i < files; ++i) {
        std::string path = dir.file("out" + std::to_string(i) + ".bin");
        if (!folder.empty() && i + 1 == files) {
          make_output_folder(dir.file(folder), "--pictures");
          path = dir.file(folder + "/picture.svg");
        }
        outs.push_back(std::make_unique<OutputFile>(path, "the file"));
      }
      outs[0]->stream() << std::string(200000, 'm') << std::flush;  // past the buffer: on disk
      for (auto& out : outs) out->stream() << "tok" << std::flush;
      if (::write(ready[1], "r", 1) != 1) ::_exit(3);
      for (volatile unsigned busy = 0;; busy = busy + 1) {  // at work, as a program is
      }
    } catch (...) {
      ::_exit(4);
    }
  }
  ::close(ready[1]);
  char byte = 0;
  CHECK(::read(ready[0], &byte, 1) == 1);
  ::close(ready[0]);
  return child;
}

int wait_for(pid_t child) {
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  return status;
}

// Sends `first`, and `second` while the handler `first` started is at work: the child is traced
// (ptrace), stopped at the handler's first system call (its first unlink: the child's own work
// makes none), sent `second` there, and let go. Returns its wait status, and in `controlled`
// whether it could be traced (where ptrace is not allowed, the two are sent back to back).
int status_after_two_signals(pid_t child, int first, int second, bool* controlled) {
#ifdef PTRACE_SEIZE
  *controlled = ::ptrace(PTRACE_SEIZE, child, nullptr, nullptr) == 0;
#else
  *controlled = false;  // (macOS: no PTRACE_SEIZE)
#endif
  ::kill(child, first);
  if (!*controlled) {
    ::kill(child, second);
    return wait_for(child);
  }
#ifdef PTRACE_SEIZE
  int status = wait_for(child);  // stopped as `first` is about to be delivered
  CHECK((WIFSTOPPED(status) && WSTOPSIG(status) == first));
  ::ptrace(PTRACE_SYSCALL, child, nullptr, reinterpret_cast<void*>(static_cast<long>(first)));
  status = wait_for(child);  // in the handler, at its first system call
  ::kill(child, second);
  ::ptrace(PTRACE_CONT, child, nullptr, nullptr);
  for (;;) {
    status = wait_for(child);
    if (WIFEXITED(status) || WIFSIGNALED(status)) return status;
    // Stopped as a signal is about to be delivered: deliver it (a trap is ptrace's own).
    const long signal_number =
        WIFSTOPPED(status) && WSTOPSIG(status) != SIGTRAP ? WSTOPSIG(status) : 0;
    ::ptrace(PTRACE_CONT, child, nullptr, reinterpret_cast<void*>(signal_number));
  }
#else
  return wait_for(child);  // not reached: never controlled
#endif
}
}  // namespace

TEST_CASE("a program killed by any catchable signal while writing leaves no temporary file") {
  for (const int signal_number : catchable_signals()) {
    INFO("signal " << signal_number << " (" << ::strsignal(signal_number) << ")");
    TempDir dir("output_signal");
    write_bytes(dir.file("model.bin"), {'k', 'e', 'e', 'p'});
    const pid_t child = child_writing(dir, 2, "new");
    CHECK(names_in(dir.path).size() == 3);  // model.bin, its temporary file, the new folder
    ::kill(child, signal_number);
    const int status = wait_for(child);
    // It dies of that signal, as if no handler had run, and leaves only what was there before:
    // no temporary file, and not the folder it made.
    CHECK(WIFSIGNALED(status));
    if (WIFSIGNALED(status)) CHECK(WTERMSIG(status) == signal_number);
    CHECK(names_in(dir.path) == std::vector<std::string>{"model.bin"});
    CHECK(h2o_test::read_bytes(dir.file("model.bin")) == std::vector<char>{'k', 'e', 'e', 'p'});
  }
}

TEST_CASE("a second signal while the first is handled, as a second Ctrl-C, leaves no file") {
  // The second signal lands while the handler removes the first's files (see above), each pair
  // 5 times: the same signal twice (Ctrl-C twice, `timeout` sending TERM twice) and two others.
  const std::vector<std::vector<int>> pairs = {
      {SIGINT, SIGINT}, {SIGTERM, SIGTERM}, {SIGINT, SIGTERM}, {SIGHUP, SIGUSR1}};
  bool controlled = true;
  for (const std::vector<int>& pair : pairs) {
    for (int i = 0; i < 5; ++i) {
      INFO("signals " << pair[0] << " then " << pair[1] << ", run " << i);
      TempDir dir("output_two_signals");
      const pid_t child = child_writing(dir, 8, "");
      const int status = status_after_two_signals(child, pair[0], pair[1], &controlled);
      // It dies of the first: the second waits until the files are gone, then the program is.
      CHECK(WIFSIGNALED(status));
      if (WIFSIGNALED(status) && controlled) CHECK(WTERMSIG(status) == pair[0]);
      CHECK(names_in(dir.path).empty());  // every file was a temporary one
    }
  }
  if (!controlled) WARN("ptrace is not allowed here: the signals were sent back to back");
}

// ------------------------------------------------------------------------ one path, one file
// No two outputs of a program on one path, no output on a file it reads (output_file.hpp's
// same_file and files_clash, which ArgParser applies to every program's options).

TEST_CASE("same_file: one file by any name, existing or not yet") {
  TempDir dir("same_file");
  write_bytes(dir.file("a.txt"), {'a'});
  write_bytes(dir.file("b.txt"), {'a'});  // the same bytes, another file
  std::filesystem::create_symlink("a.txt", dir.file("link.txt"));
  std::filesystem::create_hard_link(dir.file("a.txt"), dir.file("hard.txt"));
  std::filesystem::create_directory(dir.file("sub"));
  std::filesystem::create_directory_symlink(dir.path, dir.file("sub/up"));
  CHECK(same_file(dir.file("a.txt"), dir.file("a.txt")));
  CHECK(same_file(dir.file("a.txt"), dir.file("link.txt")));
  CHECK(same_file(dir.file("a.txt"), dir.file("hard.txt")));
  CHECK(same_file(dir.file("a.txt"), dir.file("sub/../a.txt")));
  CHECK(same_file(dir.file("a.txt"), dir.file("sub/up/a.txt")));
  CHECK_FALSE(same_file(dir.file("a.txt"), dir.file("b.txt")));
  // Not yet written: the same path once made absolute and normal, links in its folders followed.
  CHECK(same_file(dir.file("new.svg"), dir.file("./sub/../new.svg")));
  CHECK(same_file(dir.file("new.svg"), dir.file("sub/up/new.svg")));
  CHECK_FALSE(same_file(dir.file("new.svg"), dir.file("new.html")));
  CHECK_FALSE(same_file(dir.file("new.svg"), dir.file("a.txt")));  // one exists, one does not
  const std::filesystem::path here = std::filesystem::current_path();
  std::filesystem::current_path(dir.path);
  CHECK(same_file("x.html", dir.file("x.html")));
  CHECK(same_file("a.txt", "./hard.txt"));
  std::filesystem::current_path(here);
}

TEST_CASE("a program's outputs: none on another's path, none on an input, before any work") {
  TempDir dir("output_clash");
  write_bytes(dir.file("story.txt"), {'T', 'o', 'm', '.'});
  const auto parsed = [&](const std::vector<std::string>& words) {
    ArgParser args("test", "outputs");
    args.add_option("text", "PATH", dir.file("story.txt"), "the text read")
        .add_option("names", "PATH", "the project's lists", "names (a default that is no file)")
        .add_output("out", "PATH", dir.file("page.html"), "the page")
        .add_output("kept", "PATH", "", "the kept positions")
        .add_output("pictures", "DIR", "", "a folder of pictures");
    const std::vector<const char*> argv = argv_of(words);
    args.parse(static_cast<int>(argv.size()), argv.data());
  };
  const auto refusal = [&](const std::vector<std::string>& words) {
    return error_of<UsageError>([&] { parsed(words); });
  };
  CHECK(refusal({"--kept", dir.file("page.html")}) ==
        "--kept names the same file as --out ('" + dir.file("page.html") +
            "'): each output needs a file of its own");
  CHECK(refusal({"--out", dir.file("x"), "--kept", dir.file("sub/../x")}) ==
        "--kept names the same file as --out ('" + dir.file("sub/../x") +
            "'): each output needs a file of its own");
  CHECK(refusal({"--out", dir.file("story.txt")}) == "--out names the file --text reads ('" +
                                                         dir.file("story.txt") +
                                                         "'): an output must not replace an input");
  // The input given, the output by default.
  write_bytes(dir.file("page.html"), {'<'});
  CHECK_THAT(refusal({"--text", dir.file("page.html")}), Contains("--out names the file --text"));
  CHECK_THAT(refusal({"--pictures", dir.file("story.txt")}),
             Contains("--pictures names the file --text reads"));
  CHECK_THAT(refusal({"--kept", dir.file("k"), "--pictures", dir.file("./k")}),
             Contains("--pictures names the same file as --kept"));
  // Different files are fine, and so is an input that is no file (the default names).
  CHECK_NOTHROW(parsed({"--kept", dir.file("kept.txt"), "--pictures", dir.file("pictures")}));
  CHECK_NOTHROW(parsed({"--out", "the project's lists"}));
  CHECK(files_clash({{"--a", ""}, {"--b", ""}}, {{"--text", ""}}).empty());  // empty: not given
}

TEST_CASE("write_output_files refuses two files on one path, and writes neither") {
  TempDir dir("output_same_twice");
  CHECK(error_of<std::runtime_error>([&] {
          write_output_files(
              {{dir.file("a.svg"), "the CSV file", "A"}, {dir.file("./a.svg"), "the chart", "B"}});
        }) == "the chart '" + dir.file("./a.svg") + "' is the same file as the CSV file '" +
                  dir.file("a.svg") + "'");
  CHECK(names_in(dir.path).empty());
}

TEST_CASE("files committed together: when the second cannot be written, the first stays old") {
  TempDir dir("output_together");
  write_bytes(dir.file("model.bin"), {'o', 'l', 'd'});
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // a limit of 4 KiB on every file, as a full disk: the tokenizer does not fit
    start_child_as_a_program();
    std::signal(SIGXFSZ, SIG_IGN);
    const struct rlimit small = {4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &small);
    try {
      OutputFile model(dir.file("model.bin"), "checkpoint");
      OutputFile tokenizer(dir.file("tok.bin"), "tokenizer");
      model.stream() << "new";
      tokenizer.stream() << std::string(100000, 't');
      OutputFile::commit_together({&model, &tokenizer});
      ::_exit(0);
    } catch (const std::runtime_error&) {
      ::_exit(5);
    }
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 5);
  CHECK(names_in(dir.path) == std::vector<std::string>{"model.bin"});
  CHECK(h2o_test::read_bytes(dir.file("model.bin")) == std::vector<char>{'o', 'l', 'd'});
}

TEST_CASE("a failed run takes away the folders it made for its outputs, while they are empty") {
  TempDir dir("output_folders");
  std::filesystem::create_directory(dir.file("there"));
  make_output_folder(dir.file("there/new/deeper/"), "--pictures");
  make_output_folder(dir.file("kept/pictures"), "--pictures");
  make_output_folder(dir.file("there"), "--pictures");  // made by no one here: it stays
  write_bytes(dir.file("kept/pictures/a.svg"), {'<'});  // a file written: it and its folders stay
  CHECK(std::filesystem::is_directory(dir.file("there/new/deeper")));
  remove_created_folders();
  CHECK(names_in(dir.path) == std::vector<std::string>{"kept", "there"});
  CHECK(names_in(dir.file("there")).empty());
  CHECK(names_in(dir.file("kept/pictures")) == std::vector<std::string>{"a.svg"});
  write_bytes(dir.file("file"), {'x'});
  CHECK_THROWS_WITH(make_output_folder(dir.file("file"), "--pictures"),
                    "--pictures '" + dir.file("file") + "' is a file, not a folder");
}

// ------------------------------------------------------------------------ numbers and stories

TEST_CASE("numbers on the command line: spaces on either side, tiny reals, one rule everywhere") {
  ArgParser args("test", "numbers");
  args.add_option("n", "N", "1", "a whole number").add_option("t", "T", "1", "a real");
  const auto parsed = [&](const std::vector<std::string>& words) {
    ArgParser copy = args;
    const std::vector<const char*> argv = argv_of(words);
    copy.parse(static_cast<int>(argv.size()), argv.data());
    return copy;
  };
  CHECK(parsed({"--n", " 5"}).integer("n", 0, 10) == 5);
  CHECK(parsed({"--n", "5 "}).integer("n", 0, 10) == 5);  // refused before, while " 5" was not
  CHECK_THROWS_WITH(parsed({"--n", "5x"}).integer("n", 0, 10),
                    "--n expects a whole number, got '5x'");
  CHECK_THROWS_WITH(parsed({"--n", " "}).integer("n", 0, 10),
                    "--n expects a whole number, got ' '");
  // The smallest double is a number (it was refused as "expects a number"); too large is not.
  CHECK(parsed({"--t", "4.9e-324"}).real("t", 0, 10) > 0.0);
  CHECK(parsed({"--t", "1e-400"}).real("t", 0, 10) == 0.0);
  CHECK(parsed({"--t", " 0.5 "}).real("t", 0, 10) == 0.5);
  CHECK_THROWS_WITH(parsed({"--t", "1e999"}).real("t", 0, 10), "--t expects a number, got '1e999'");
  CHECK_THROWS_WITH(parsed({"--t", "nan"}).real("t", 0, 10), "--t expects a number, got 'nan'");
  CHECK(parse_percent_list("budgets", "10, 20 ,5") == std::vector<int>{5, 10, 20});
}

TEST_CASE("help fits 80 columns: prose rewrapped, lists and options with hanging indents") {
  const std::string summary =
      "Reads a story written for a wide terminal and says what a cache keeps of it, in a\n"
      "sentence that goes on past eighty columns.\n"
      "\n"
      "kinds:\n"
      "  h2o      Heavy-Hitter Oracle: keep the recent window plus the highest-scoring tokens\n"
      "  short    fits";
  ArgParser args("test", summary);
  args.add_option("budget", "N", "/a/long/path/to/a/default/file/for/this/option.bin",
                  "tokens each layer keeps: its recent window plus heavy hitters, never more than "
                  "the model's positions");
  args.add_flag("a-flag-whose-name-is-far-too-long-for-its-column", "a flag");
  const std::string help = args.help();
  std::vector<std::string> lines;
  std::istringstream in(help);
  for (std::string line; std::getline(in, line);) {
    CHECK(line.size() <= 80);
    lines.push_back(line);
  }
  const auto has_line = [&](const std::string& wanted) {
    return std::find(lines.begin(), lines.end(), wanted) != lines.end();
  };
  // The summary's two prose lines are one paragraph, rewrapped.
  CHECK(
      has_line("Reads a story written for a wide terminal and says what a cache keeps of it, in"));
  CHECK(has_line("a sentence that goes on past eighty columns."));
  // A list entry continues under its text, not under its key.
  CHECK(
      has_line("  h2o      Heavy-Hitter Oracle: keep the recent window plus the highest-scoring"));
  CHECK(has_line("           tokens"));
  CHECK(has_line("  short    fits"));
  // An option's description continues at column 26; a default too long goes on lines of its own.
  CHECK(
      has_line("  --budget N              tokens each layer keeps: its recent window plus heavy"));
  CHECK(has_line("                          hitters, never more than the model's positions"));
  CHECK(has_line("                          (default:"));
  CHECK(has_line("                          /a/long/path/to/a/default/file/for/this/option.bin)"));
  // A name longer than the column puts its description on the next line.
  CHECK(has_line("  --a-flag-whose-name-is-far-too-long-for-its-column"));
  CHECK(has_line("                          a flag"));
}

TEST_CASE("stories with Windows line endings split as with Unix ones") {
  const std::vector<std::string> unix_stories =
      split_stories("The cat sat.\nIt was red.\n<|story|>\nA dog.\n");
  CHECK(unix_stories == std::vector<std::string>{"The cat sat.\nIt was red.", "A dog."});
  CHECK(split_stories("The cat sat.\r\nIt was red.\r\n<|story|>\r\nA dog.\r\n") == unix_stories);
  CHECK(split_stories("a\rb") == std::vector<std::string>{"a\rb"});  // a lone \r is text
}

TEST_CASE("blank lines separate paragraphs of one story, the separator line separates stories") {
  // Paragraphs written with blank lines read as the model was trained: one "\n" between them.
  const std::string written = "\n\nOne day.\n\n  \n\tHe ran.\nShe sat.\n\n";
  CHECK(split_stories(written) == std::vector<std::string>{"One day.\n\tHe ran.\nShe sat."});
  CHECK(split_stories("One day.\nHe ran.") == split_stories("One day.\n\nHe ran.\n"));
  CHECK(paragraph_count(split_stories(written).front()) == 3);
  // The separator may carry trailing spaces; empty stories are dropped; text around it stays.
  CHECK(split_stories("<|story|>\nA.\n\n<|story|> \t\n\n<|story|>\nB.\n<|story|>x\n") ==
        std::vector<std::string>{"A.", "B.\n<|story|>x"});
  CHECK(split_stories("\n \n<|story|>\n").empty());
}

TEST_CASE("an output file named through a link replaces the file the link names") {
  TempDir dir("output_link");
  write_bytes(dir.file("real.csv"), {'o', 'l', 'd'});
  std::filesystem::create_symlink("real.csv", dir.file("link.csv"));
  write_output_file(dir.file("link.csv"), "the CSV file", "new");
  CHECK(std::filesystem::is_symlink(dir.file("link.csv")));
  CHECK(h2o_test::read_bytes(dir.file("real.csv")) == std::vector<char>{'n', 'e', 'w'});
}
