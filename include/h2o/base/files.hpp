// files.hpp: opening the files programs read (checkpoints, tokenizers, texts) with one-line
// errors that name them.
//
// Every reader must refuse a missing, empty, directory, device or pipe path before reading a
// byte, and must know the file's size up front so that no length read from the file is trusted
// beyond it and no file larger than the reader's stated limit is ever read (`/dev/zero` as a text
// is an error, not an endless read).
#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

namespace h2o {

// Opens `path` for binary reading into `in` and returns its size in bytes. `what` names the file
// in error messages, e.g. "checkpoint 'x.bin'". Throws std::runtime_error if it does not exist, is
// a directory or not a regular file, cannot be opened, is empty, or holds more than max_bytes.
std::uint64_t open_binary_file(const std::string& path, const std::string& what, std::ifstream& in,
                               std::uint64_t max_bytes);

// Reads exactly n bytes; false when the file ends first.
bool read_exact(std::ifstream& in, void* out, std::size_t n);

// The whole of a file, bytes as they are, with the checks of open_binary_file.
std::string read_file_bytes(const std::string& path, const std::string& what,
                            std::uint64_t max_bytes);

// The whole of a text file (a story, a names list): its bytes as they are, but for a UTF-8
// byte-order mark at its start (U+FEFF, bytes EF BB BF, which some editors write first), which is
// no text: every reader of a text reads the same text with or without one.
std::string read_text_file(const std::string& path, const std::string& what,
                           std::uint64_t max_bytes);

// "1 MiB", "12 KiB", "100 bytes": a limit in words, for error messages and help texts.
std::string byte_size_text(std::uint64_t bytes);

}  // namespace h2o
