#include "h2o/binary_file.hpp"

#include <filesystem>
#include <stdexcept>

namespace h2o {

std::uint64_t open_binary_file(const std::string& path, const std::string& what,
                               std::ifstream& in) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) throw std::runtime_error(what + " does not exist");
  if (fs::is_directory(status)) throw std::runtime_error(what + " is a directory, not a file");
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) throw std::runtime_error(what + " is not a regular file");
  in.open(path, std::ios::binary);
  if (!in) throw std::runtime_error(what + " cannot be opened for reading");
  if (size == 0) throw std::runtime_error(what + " is empty");
  return size;
}

bool read_exact(std::ifstream& in, void* out, std::size_t n) {
  in.read(static_cast<char*>(out), static_cast<std::streamsize>(n));
  return static_cast<std::size_t>(in.gcount()) == n;
}

}  // namespace h2o
