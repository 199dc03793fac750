// output_file.hpp: writing the files programs make (pictures, CSV tables, checkpoints, tokenizers)
// so that nothing is lost silently.
//
// The one owner of the rule every output file follows:
//   - its path is checked when the OutputFile is made, before the work that fills it: the folder
//     must exist and take a new file, and the path must not be a folder, a device or a pipe;
//   - the bytes go to a temporary file beside it ("NAME.tmp-XXXXXX", in the same folder, so the
//     final rename cannot cross file systems) and replace the file at `path` only in commit(),
//     when every byte was written and the file closed without error;
//   - any failure (a full disk, a read-only folder, a close that reports a late error) is a
//     std::runtime_error of one line naming the file and the reason, and the temporary file is
//     removed; an existing file at `path` is left exactly as it was;
//   - a program stopped by a signal it can catch and does not handle itself (Ctrl-C, Ctrl-\,
//     `kill`, a closed terminal or pipe, SIGUSR1, SIGALRM, SIGXCPU, ...: kCleanupSignals) removes
//     the temporary files of its live OutputFiles, and the folders make_output_folder created,
//     before it dies of that signal: a handler installed with the first OutputFile or folder, for
//     each of those signals still at its default action, which runs with all of them blocked, so a
//     second Ctrl-C or a `timeout` that signals twice cannot cut it short;
//   - a program that ends by an error removes them too: run_program (app/program.hpp) catches
//     every exception inside main, so each OutputFile's destructor runs, and then removes the
//     folders it created (remove_created_folders) if they are still empty;
//   - no two outputs of a program share a path, and no output replaces a file the program reads:
//     ArgParser (app/cli.hpp) checks its options' paths with files_clash before any work, and
//     write_output_files refuses two files on one path.
//
//   h2o::OutputFile out("/tmp/x.csv", "the CSV file");   // checks the path now
//   ... the long computation ...
//   out.stream() << csv;
//   out.commit();                                        // now /tmp/x.csv is complete
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace h2o {

class OutputFile {
 public:
  // `what` names the file in error messages, e.g. "the picture" -> "the picture 'a.svg': ...".
  OutputFile(const std::string& path, const std::string& what);
  ~OutputFile();  // removes the temporary file unless commit() succeeded
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream();
  // Flushes and closes the temporary file, checking both (the file is whole, but not yet in
  // place); a failure throws as commit() does.
  void finish();
  // finish(), then renames the temporary file to the path.
  void commit();
  // Files that belong together (a checkpoint and its tokenizer): every one finished before any is
  // put in place, so a failure leaves every old file as it was.
  static void commit_together(const std::vector<OutputFile*>& files);
  const std::string& path() const { return path_; }

 private:
  class Buffer;
  [[noreturn]] void fail(const std::string& doing, int error);
  std::string path_, what_, temporary_;
  std::string target_;  // the file replaced: path_, or the file a link at path_ names
  std::unique_ptr<Buffer> buffer_;
  std::unique_ptr<std::ostream> stream_;
  bool committed_ = false;
  bool finished_ = false;
  int signal_slot_ = -1;  // where the signal handler finds temporary_ (-1: nowhere)
};

// The whole of `content` as the file at `path`, by the rules above.
void write_output_file(const std::string& path, const std::string& what,
                       const std::string& content);

// Several files that belong together (a lesson's pictures): all of them or none. Every path is
// checked first, every file then written whole to its temporary file, and only when all are
// written are they renamed into place (renames within a folder do not fail for want of space).
// On any failure nothing new is left behind and the error names the file; a signal removes the
// temporary files as it does every OutputFile's. Two files on one path (same_file) are refused
// before any is made.
struct FileToWrite {
  std::string path, what, content;
};
void write_output_files(const std::vector<FileToWrite>& files);

// The checks an OutputFile makes, without keeping a temporary file: for output written only at
// the end by code that makes its own OutputFile then. Throws the same one-line errors.
void check_output_path(const std::string& path, const std::string& what);

// Creates the folder `dir` (and its parents) if needed and checks that files can be written in
// it; a one-line std::runtime_error otherwise. The folders it creates are remembered: a signal,
// or remove_created_folders(), takes them away again while they are empty.
void make_output_folder(const std::string& dir, const std::string& what);

// Removes the folders make_output_folder created that are still empty, the deepest first, and
// forgets them all: for a program that failed (run_program calls it), so that a failed run leaves
// no empty folder behind. A folder holding a file stays.
void remove_created_folders();

// Whether two paths name one file: the same file on disk (the same device and inode, so a link,
// a hard link, "a" and "./a" are one), or, where no such file exists yet, the same absolute path
// once "." and ".." are gone and the links in its folders are followed.
bool same_file(const std::string& a, const std::string& b);

// A path a program was given, with the option that named it ("--out").
struct NamedPath {
  std::string option, path;
};
// The rule every program's paths follow, in words when they break it (empty when they do not):
// two outputs on one path ("--kept names the same file as --out ('x.html'): ..."), or an output on
// an existing input ("--svg names the file --text reads ('s.txt'): ..."). Empty paths are skipped;
// an input that does not exist cannot be replaced, so it clashes with nothing.
std::string files_clash(const std::vector<NamedPath>& outputs,
                        const std::vector<NamedPath>& inputs);

}  // namespace h2o
