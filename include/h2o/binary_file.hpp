// binary_file.hpp: opening a model or tokenizer file with one-line errors that name it.
//
// Both loaders must refuse a missing, empty, directory or unreadable file before reading a byte,
// and must know the file's size up front so no length read from the file is trusted beyond it.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

namespace h2o {

// Opens `path` for binary reading into `in` and returns its size in bytes. `what` names the file
// in error messages, e.g. "checkpoint 'x.bin'". Throws std::runtime_error if it does not exist, is
// a directory or not a regular file, cannot be opened, or is empty.
std::uint64_t open_binary_file(const std::string& path, const std::string& what, std::ifstream& in);

// Reads exactly n bytes; false when the file ends first.
bool read_exact(std::ifstream& in, void* out, std::size_t n);

}  // namespace h2o
