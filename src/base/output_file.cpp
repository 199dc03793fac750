#include "h2o/base/output_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <streambuf>
#include <vector>

namespace h2o {

namespace {

// ---------------------------------------------------------------- temporary files at a signal
// A program stopped by a signal runs no destructor, so the temporary files of the OutputFiles
// alive then would stay behind (a 64 MiB "model.bin.tmp-XXXXXX" from make_random_model; 121 MB
// from --shape 110m), and so would the folders make_output_folder made for them. A handler
// removes them first. It may call only async-signal-safe functions and must not allocate, so the
// live paths sit in fixed storage: one slot per OutputFile, claimed in its constructor and freed
// when its temporary file is gone (renamed or removed), and one per folder created. A slot is
// read by the handler only while its state says Live, and that state changes only after the path
// is written in full.
constexpr std::size_t kMaxLiveTemporaries = 64;  // OutputFiles alive at once (more: not cleaned)
constexpr std::size_t kMaxCreatedFolders = 16;   // folders created (more: not removed)
constexpr std::size_t kMaxTemporaryPath = 4096;  // bytes of a path, NUL included (PATH_MAX)
enum SlotState : int { kFree = 0, kFilling = 1, kLive = 2 };
struct TemporarySlot {
  std::atomic<int> state{kFree};
  char path[kMaxTemporaryPath];
};
static_assert(std::atomic<int>::is_always_lock_free, "the handler reads the slots' states");
TemporarySlot live_temporaries[kMaxLiveTemporaries];
TemporarySlot created_folders[kMaxCreatedFolders];  // in the order they were made, parents first

// Every signal that ends a program by default and that a program can catch: the terminal's
// (SIGINT, SIGQUIT, SIGHUP), `kill` and `timeout` (SIGTERM, or any other), a closed pipe, the
// limits of ulimit (SIGXCPU, SIGXFSZ), timers (SIGALRM, SIGVTALRM, SIGPROF), abort() and the
// signals a user sends (SIGUSR1, SIGUSR2, the real-time signals). Not the faults (SIGSEGV,
// SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS), which belong to debuggers and sanitizers.
constexpr int kCleanupSignals[] = {
    SIGHUP,    SIGINT,  SIGQUIT, SIGABRT, SIGUSR1,   SIGUSR2, SIGPIPE,
    SIGALRM,   SIGTERM, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF, SIGIO,
#ifdef SIGPWR
    SIGPWR,
#endif
#ifdef SIGSTKFLT
    SIGSTKFLT,
#endif
};

// kCleanupSignals and the real-time signals, as a set.
sigset_t cleanup_signal_set() {
  sigset_t set;
  sigemptyset(&set);
  for (const int signal_number : kCleanupSignals) sigaddset(&set, signal_number);
#ifdef SIGRTMIN
  for (int signal_number = SIGRTMIN; signal_number <= SIGRTMAX; ++signal_number)
    sigaddset(&set, signal_number);
#endif
  return set;
}

// Removes every live temporary file and every folder created (while empty: rmdir removes no
// other), then dies of the same signal as if no handler had run, so that a shell or a test sees
// the process killed by that signal. It runs with every cleanup signal blocked (the sa_mask
// below): a second signal, the same or another, waits until the files are gone. Then the signal's
// default action is restored, the signal raised again (it waits, blocked) and unblocked: the
// program ends at once, of that signal.
// The mask holds in the thread that runs the handler only: a signal to another thread of the
// program meanwhile runs the handler there too, and waits (the first ends the program).
std::atomic<bool> cleaning_up{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the handler sets cleaning_up");

extern "C" void remove_temporaries_and_die(int signal_number) {
  if (cleaning_up.exchange(true)) {
    for (;;) ::pause();
  }
  const int saved_errno = errno;
  for (TemporarySlot& slot : live_temporaries) {
    if (slot.state.load() == kLive) ::unlink(slot.path);
  }
  for (std::size_t i = kMaxCreatedFolders; i-- > 0;) {  // the deepest first
    if (created_folders[i].state.load() == kLive) ::rmdir(created_folders[i].path);
  }
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  ::sigaction(signal_number, &default_action, nullptr);
  ::raise(signal_number);
  sigset_t just_this;
  sigemptyset(&just_this);
  sigaddset(&just_this, signal_number);
  ::sigprocmask(SIG_UNBLOCK, &just_this, nullptr);  // the raised signal lands: the program ends
  cleaning_up.store(false);                         // (only if it did not: a tracer kept it)
  errno = saved_errno;
}

// Installs the handler for each of those signals a program leaves at its default action (a signal
// it ignores, as under nohup, or handles itself stays as it is). Checked with every OutputFile (a
// few system calls), so a program that restores a default action later is covered too.
void install_cleanup_handler() {
  const sigset_t all = cleanup_signal_set();
  for (int signal_number = 1; signal_number < NSIG; ++signal_number) {
    if (sigismember(&all, signal_number) != 1) continue;
    struct sigaction current {};
    if (::sigaction(signal_number, nullptr, &current) != 0) continue;
    if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) continue;
    struct sigaction cleanup {};
    cleanup.sa_handler = remove_temporaries_and_die;
    cleanup.sa_mask = all;  // no other cleanup signal interrupts the handler
    cleanup.sa_flags = 0;   // and not this one again either (no SA_NODEFER)
    ::sigaction(signal_number, &cleanup, nullptr);
  }
}

// While one lives, this thread takes no cleanup signal: for the moment between making a file or
// folder and noting it in its slot, when the handler could not find it yet.
class CleanupSignalsHeld {
 public:
  CleanupSignalsHeld() {
    const sigset_t all = cleanup_signal_set();
    ::pthread_sigmask(SIG_BLOCK, &all, &before_);
  }
  ~CleanupSignalsHeld() { ::pthread_sigmask(SIG_SETMASK, &before_, nullptr); }
  CleanupSignalsHeld(const CleanupSignalsHeld&) = delete;
  CleanupSignalsHeld& operator=(const CleanupSignalsHeld&) = delete;

 private:
  sigset_t before_;
};

// Writes `path` into a free slot of `slots` for the handler; -1 when the path is too long or
// every slot is taken (then only a signal leaves that file behind; every other way out still
// removes it).
template <std::size_t kSlots>
int claim_slot(TemporarySlot (&slots)[kSlots], const std::string& path) {
  install_cleanup_handler();
  if (path.size() >= kMaxTemporaryPath) return -1;
  for (std::size_t i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!slots[i].state.compare_exchange_strong(expected, kFilling)) continue;
    std::memcpy(slots[i].path, path.c_str(), path.size() + 1);
    slots[i].state.store(kLive);
    return static_cast<int>(i);
  }
  return -1;
}

int register_temporary(const std::string& path) { return claim_slot(live_temporaries, path); }

// Called once the temporary file is renamed or removed.
void forget_temporary(int slot) {
  if (slot >= 0) live_temporaries[slot].state.store(kFree);
}

// `path` made absolute (the handler's unlink and rmdir need no working folder).
std::string absolute_path(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  return ec ? path : absolute.string();
}

}  // namespace

// A stream buffer over a file descriptor that remembers the first write error (errno), so that
// commit() can say why; std::ofstream only says "failed".
class OutputFile::Buffer final : public std::streambuf {
 public:
  explicit Buffer(int fd) : fd_(fd), bytes_(1 << 16) {
    setp(bytes_.data(), bytes_.data() + bytes_.size());
  }
  ~Buffer() override { close(); }
  int error() const { return error_; }
  bool is_open() const { return fd_ >= 0; }
  // Writes what is buffered and closes the file; false (with error()) when either fails.
  bool close() {
    if (fd_ < 0) return error_ == 0;
    const bool flushed = sync() == 0;
    const int result = ::close(fd_);
    fd_ = -1;
    if (result != 0 && error_ == 0) error_ = errno;
    return flushed && error_ == 0;
  }

 protected:
  int_type overflow(int_type ch) override {
    if (sync() != 0) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  int sync() override {
    const bool ok = write_all(pbase(), static_cast<std::size_t>(pptr() - pbase()));
    setp(bytes_.data(), bytes_.data() + bytes_.size());
    return ok ? 0 : -1;
  }
  std::streamsize xsputn(const char* data, std::streamsize count) override {
    // Large blocks (a checkpoint's tensors) go straight to the file, past the buffer.
    if (count < static_cast<std::streamsize>(bytes_.size()))
      return std::streambuf::xsputn(data, count);
    if (sync() != 0 || !write_all(data, static_cast<std::size_t>(count))) return 0;
    return count;
  }

 private:
  bool write_all(const char* data, std::size_t count) {
    if (error_ != 0 || fd_ < 0) return false;
    while (count > 0) {
      const ssize_t written = ::write(fd_, data, count);
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) {
        error_ = written < 0 ? errno : EIO;
        return false;
      }
      data += written;
      count -= static_cast<std::size_t>(written);
    }
    return true;
  }
  int fd_;
  int error_ = 0;
  std::vector<char> bytes_;
};

OutputFile::OutputFile(const std::string& path, const std::string& what)
    : path_(path), what_(what) {
  namespace fs = std::filesystem;
  if (path.empty()) throw std::runtime_error(what + ": no file name given");
  fs::path target = path;
  std::error_code ec;
  const fs::file_status status = fs::status(target, ec);
  if (fs::exists(status)) {
    if (fs::is_directory(status))
      throw std::runtime_error(what + " '" + path + "' is a folder, not a file");
    if (!fs::is_regular_file(status)) {
      throw std::runtime_error(what + " '" + path +
                               "' is not a regular file (a device, pipe or socket); give a file");
    }
    // A link is followed: the file it names is replaced, the link stays.
    if (fs::is_symlink(fs::symlink_status(target, ec))) target = fs::canonical(target, ec);
    if (ec) throw std::runtime_error(what + " '" + path + "': cannot follow the link");
  }
  target_ = target.string();
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(folder, ec)) {
    throw std::runtime_error(what + " '" + path + "': the folder '" + folder.string() +
                             "' does not exist");
  }
  std::string name = (folder / (target.filename().string() + ".tmp-XXXXXX")).string();
  int fd = -1;
  {
    const CleanupSignalsHeld held;  // a signal now would find no slot for the new file
    fd = ::mkstemp(name.data());
    if (fd >= 0) signal_slot_ = register_temporary(absolute_path(name));
  }
  if (fd < 0) fail("cannot create a file in its folder", errno);
  temporary_ = name;
  // mkstemp makes the file private (0600); an output file gets the usual permissions.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  buffer_ = std::make_unique<Buffer>(fd);
  stream_ = std::make_unique<std::ostream>(buffer_.get());
}

OutputFile::~OutputFile() {
  if (committed_ || temporary_.empty()) return;
  if (buffer_) buffer_->close();
  ::unlink(temporary_.c_str());
  forget_temporary(signal_slot_);
}

std::ostream& OutputFile::stream() {
  if (committed_) throw std::logic_error("OutputFile: written after commit()");
  return *stream_;
}

void OutputFile::finish() {
  if (committed_ || finished_) return;
  stream_->flush();
  const bool closed = buffer_->close();
  if (!closed || !*stream_) fail("cannot write it", buffer_->error() != 0 ? buffer_->error() : EIO);
  finished_ = true;
}

void OutputFile::commit() {
  if (committed_) return;
  finish();
  if (std::rename(temporary_.c_str(), target_.c_str()) != 0) {
    fail("cannot put it in place", errno);
  }
  committed_ = true;
  forget_temporary(signal_slot_);
}

void OutputFile::fail(const std::string& doing, int error) {
  if (buffer_) buffer_->close();
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
  temporary_.clear();
  forget_temporary(signal_slot_);
  signal_slot_ = -1;
  throw std::runtime_error(what_ + " '" + path_ + "': " + doing + " (" + std::strerror(error) +
                           ")");
}

void write_output_file(const std::string& path, const std::string& what,
                       const std::string& content) {
  OutputFile out(path, what);
  out.stream().write(content.data(), static_cast<std::streamsize>(content.size()));
  out.commit();
}

void OutputFile::commit_together(const std::vector<OutputFile*>& files) {
  for (OutputFile* file : files) file->finish();  // every file whole on disk, none in place yet
  for (OutputFile* file : files) file->commit();  // only renames are left
}

void write_output_files(const std::vector<FileToWrite>& files) {
  for (std::size_t i = 0; i < files.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (same_file(files[i].path, files[j].path)) {
        throw std::runtime_error(files[i].what + " '" + files[i].path + "' is the same file as " +
                                 files[j].what + " '" + files[j].path + "'");
      }
    }
  }
  std::vector<std::unique_ptr<OutputFile>> outs;  // every path checked before any byte is written
  std::vector<OutputFile*> together;
  for (const FileToWrite& file : files) {
    outs.push_back(std::make_unique<OutputFile>(file.path, file.what));
    together.push_back(outs.back().get());
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    outs[i]->stream().write(files[i].content.data(),
                            static_cast<std::streamsize>(files[i].content.size()));
  }
  OutputFile::commit_together(together);
}

void check_output_path(const std::string& path, const std::string& what) {
  OutputFile probe(path, what);  // its temporary file is removed again when it goes
}

void make_output_folder(const std::string& dir, const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (dir.empty()) throw std::runtime_error(what + ": no folder given");
  // The folders to make, parents first: from the first that does not exist down to `dir`, each
  // noted for the signal handler and remove_created_folders as soon as it is made.
  fs::path target = fs::absolute(dir, ec);
  if (!target.has_filename()) target = target.parent_path();  // "pictures/": the folder itself
  std::vector<fs::path> missing;
  for (fs::path folder = target; !ec && folder.has_relative_path(); folder = folder.parent_path()) {
    std::error_code missing_ec;
    if (fs::exists(fs::symlink_status(folder, missing_ec))) break;
    missing.insert(missing.begin(), folder);
  }
  for (const fs::path& folder : missing) {
    const CleanupSignalsHeld held;  // a signal now would find no slot for the new folder
    if (!fs::create_directory(folder, ec) || ec) break;
    claim_slot(created_folders, folder.string());
  }
  std::error_code is_ec;
  if (!fs::is_directory(dir, is_ec)) {
    if (fs::exists(fs::status(dir, is_ec)))
      throw std::runtime_error(what + " '" + dir + "' is a file, not a folder");
    throw std::runtime_error(what + " '" + dir + "': cannot create the folder" +
                             (ec ? " (" + ec.message() + ")" : ""));
  }
  std::string probe = (fs::path(dir) / ".write-check.tmp-XXXXXX").string();
  int fd = -1;
  int error = 0;
  {
    const CleanupSignalsHeld held;  // the probe is made and gone before any signal lands
    fd = ::mkstemp(probe.data());
    error = errno;
    if (fd >= 0) {
      ::close(fd);
      ::unlink(probe.c_str());
    }
  }
  if (fd < 0) {
    throw std::runtime_error(what + " '" + dir + "': cannot create a file in it (" +
                             std::strerror(error) + ")");
  }
}

void remove_created_folders() {
  for (std::size_t i = kMaxCreatedFolders; i-- > 0;) {  // the deepest first
    TemporarySlot& slot = created_folders[i];
    if (slot.state.load() != kLive) continue;
    ::rmdir(slot.path);  // fails, and so keeps it, when a file is in it
    slot.state.store(kFree);
  }
}

bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  struct stat sa {};
  struct stat sb {};
  const bool a_exists = ::stat(a.c_str(), &sa) == 0, b_exists = ::stat(b.c_str(), &sb) == 0;
  if (a_exists || b_exists) {
    return a_exists && b_exists && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  }
  // Neither exists: the same path once absolute and normal, the links in its folders followed
  // (as far as they can be: a folder that cannot be read is compared as written).
  const auto normal = [](const std::string& path) {
    std::error_code ec;
    fs::path absolute = fs::absolute(path, ec);
    if (ec) absolute = path;
    const fs::path resolved = fs::weakly_canonical(absolute, ec);
    return (ec ? absolute : resolved).lexically_normal();
  };
  return normal(a) == normal(b);
}

std::string files_clash(const std::vector<NamedPath>& outputs,
                        const std::vector<NamedPath>& inputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].path.empty()) continue;
    for (std::size_t j = 0; j < i; ++j) {
      if (!outputs[j].path.empty() && same_file(outputs[i].path, outputs[j].path)) {
        return outputs[i].option + " names the same file as " + outputs[j].option + " ('" +
               outputs[i].path + "'): each output needs a file of its own";
      }
    }
    for (const NamedPath& input : inputs) {
      std::error_code ec;
      if (input.path.empty() || !std::filesystem::exists(input.path, ec)) continue;
      if (same_file(outputs[i].path, input.path)) {
        return outputs[i].option + " names the file " + input.option + " reads ('" +
               outputs[i].path + "'): an output must not replace an input";
      }
    }
  }
  return "";
}

}  // namespace h2o
