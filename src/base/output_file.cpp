#include "h2o/base/output_file.hpp"

#include <fcntl.h>
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
// A program stopped by Ctrl-C (SIGINT), Ctrl-\ (SIGQUIT), `kill` (SIGTERM), a closed terminal
// (SIGHUP) or a closed pipe (SIGPIPE) runs no destructor, so the temporary files of the
// OutputFiles alive then would stay behind (a 64 MiB "model.bin.tmp-XXXXXX" from
// make_random_model; 121 MB from --shape 110m). A handler removes them first. It may call only
// async-signal-safe functions and must not allocate, so the live paths sit in fixed storage: one
// slot per OutputFile, claimed in its constructor and freed when its temporary file is gone
// (renamed or removed). A slot is read by the handler only while its state says Live, and that
// state changes only after the path is written in full.
constexpr std::size_t kMaxLiveTemporaries = 64;  // OutputFiles alive at once (more: not cleaned)
constexpr std::size_t kMaxTemporaryPath = 4096;  // bytes of a path, NUL included (PATH_MAX)
enum SlotState : int { kFree = 0, kFilling = 1, kLive = 2 };
struct TemporarySlot {
  std::atomic<int> state{kFree};
  char path[kMaxTemporaryPath];
};
static_assert(std::atomic<int>::is_always_lock_free, "the handler reads the slots' states");
TemporarySlot live_temporaries[kMaxLiveTemporaries];
constexpr int kCleanupSignals[] = {SIGHUP, SIGINT, SIGPIPE, SIGQUIT, SIGTERM};

// Removes every live temporary file, then dies of the same signal as if no handler had run
// (SA_RESETHAND has already restored the default action, and SA_NODEFER lets the raise land at
// once), so a shell or a test sees the process killed by that signal.
extern "C" void remove_temporaries_and_die(int signal_number) {
  const int saved_errno = errno;
  for (TemporarySlot& slot : live_temporaries) {
    if (slot.state.load() == kLive) ::unlink(slot.path);
  }
  errno = saved_errno;
  ::raise(signal_number);
}

// Installs the handler for each of those signals a program leaves at its default action (a signal
// it ignores, as under nohup, or handles itself stays as it is). Checked with every OutputFile (a
// few system calls), so a program that restores a default action later is covered too.
void install_cleanup_handler() {
  for (const int signal_number : kCleanupSignals) {
    struct sigaction current {};
    if (::sigaction(signal_number, nullptr, &current) != 0) continue;
    if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) continue;
    struct sigaction cleanup {};
    cleanup.sa_handler = remove_temporaries_and_die;
    sigemptyset(&cleanup.sa_mask);
    cleanup.sa_flags = SA_RESETHAND | SA_NODEFER;
    ::sigaction(signal_number, &cleanup, nullptr);
  }
}

// The slot now holding `path` for the handler, or -1 when the path is too long or every slot is
// taken (then only a signal leaves that file behind; every other way out still removes it).
int register_temporary(const std::string& path) {
  install_cleanup_handler();
  if (path.size() >= kMaxTemporaryPath) return -1;
  for (std::size_t i = 0; i < kMaxLiveTemporaries; ++i) {
    int expected = kFree;
    if (!live_temporaries[i].state.compare_exchange_strong(expected, kFilling)) continue;
    std::memcpy(live_temporaries[i].path, path.c_str(), path.size() + 1);
    live_temporaries[i].state.store(kLive);
    return static_cast<int>(i);
  }
  return -1;
}

// Called once the temporary file is renamed or removed.
void forget_temporary(int slot) {
  if (slot >= 0) live_temporaries[slot].state.store(kFree);
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
  const int fd = ::mkstemp(name.data());
  if (fd < 0) fail("cannot create a file in its folder", errno);
  temporary_ = name;
  const fs::path absolute = fs::absolute(name, ec);  // the handler's unlink needs no cwd
  signal_slot_ = register_temporary(ec ? name : absolute.string());
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

void write_output_files(const std::vector<FileToWrite>& files) {
  std::vector<std::unique_ptr<OutputFile>> outs;  // every path checked before any byte is written
  for (const FileToWrite& file : files)
    outs.push_back(std::make_unique<OutputFile>(file.path, file.what));
  for (std::size_t i = 0; i < files.size(); ++i) {
    outs[i]->stream().write(files[i].content.data(),
                            static_cast<std::streamsize>(files[i].content.size()));
  }
  for (const auto& out : outs) out->finish();  // every file whole on disk, none in place yet
  for (const auto& out : outs) out->commit();  // only renames are left
}

void check_output_path(const std::string& path, const std::string& what) {
  OutputFile probe(path, what);  // its temporary file is removed again when it goes
}

void make_output_folder(const std::string& dir, const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (dir.empty()) throw std::runtime_error(what + ": no folder given");
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    throw std::runtime_error(what + " '" + dir + "': cannot create the folder" +
                             (ec ? " (" + ec.message() + ")" : ""));
  }
  std::string probe = (fs::path(dir) / ".write-check.tmp-XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) {
    throw std::runtime_error(what + " '" + dir + "': cannot create a file in it (" +
                             std::strerror(errno) + ")");
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace h2o
