#include "h2o/base/files.hpp"

#include <filesystem>
#include <stdexcept>

namespace h2o {

std::uint64_t open_binary_file(const std::string& path, const std::string& what, std::ifstream& in,
                               std::uint64_t max_bytes) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) throw std::runtime_error(what + " does not exist");
  if (fs::is_directory(status)) throw std::runtime_error(what + " is a directory, not a file");
  if (!fs::is_regular_file(status)) {
    throw std::runtime_error(what + " is not a regular file (a device, pipe or socket)");
  }
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) throw std::runtime_error(what + ": cannot read its size");
  if (size == 0) throw std::runtime_error(what + " is empty");
  if (size > max_bytes) {
    throw std::runtime_error(what + " is " + byte_size_text(size) + ", more than the limit of " +
                             byte_size_text(max_bytes));
  }
  in.open(path, std::ios::binary);
  if (!in) throw std::runtime_error(what + " cannot be opened for reading");
  return size;
}

bool read_exact(std::ifstream& in, void* out, std::size_t n) {
  in.read(static_cast<char*>(out), static_cast<std::streamsize>(n));
  return static_cast<std::size_t>(in.gcount()) == n;
}

std::string read_file_bytes(const std::string& path, const std::string& what,
                            std::uint64_t max_bytes) {
  std::ifstream in;
  const std::uint64_t size = open_binary_file(path, what, in, max_bytes);
  std::string bytes(static_cast<std::size_t>(size), '\0');
  if (!read_exact(in, bytes.data(), bytes.size())) {
    throw std::runtime_error(what + " changed while it was read");
  }
  return bytes;
}

std::string read_text_file(const std::string& path, const std::string& what,
                           std::uint64_t max_bytes) {
  std::string text = read_file_bytes(path, what, max_bytes);
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);
  return text;
}

std::string byte_size_text(std::uint64_t bytes) {
  if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0) {
    return std::to_string(bytes >> 30) + " GiB";
  }
  if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0) {
    return std::to_string(bytes >> 20) + " MiB";
  }
  if (bytes >= (1ull << 10) && bytes % (1ull << 10) == 0) {
    return std::to_string(bytes >> 10) + " KiB";
  }
  return std::to_string(bytes) + " bytes";
}

}  // namespace h2o
