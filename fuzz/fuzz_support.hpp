// fuzz_support.hpp: what the libFuzzer harnesses share: a scratch file to hand bytes to loaders
// that read paths, and a hard stop for a broken promise.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace h2o_fuzz {

// A file of this process's own (harnesses may run in parallel), rewritten for every input. In
// memory (/dev/shm) where there is one: on disk, writing it costs more than the loading fuzzed.
// Its folder is removed at exit (kept on the heap, so it outlives every static destructor).
inline const std::string& scratch_file() {
  static const std::string* const folder = [] {
    std::error_code ec;
    const bool shm =
        std::filesystem::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0;
    std::filesystem::path path =
        shm ? std::filesystem::path("/dev/shm") : std::filesystem::temp_directory_path();
    path /= "h2o_fuzz_" + std::to_string(::getpid());
    std::filesystem::create_directories(path);
    return new std::string(path.string());
  }();
  static const std::string* const file = [] {
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(*folder, ignored);
    });
    return new std::string(*folder + "/input.bin");
  }();
  return *file;
}

inline void write_scratch(const std::uint8_t* data, std::size_t size) {
  std::ofstream out(scratch_file(), std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) {
    std::fprintf(stderr, "fuzz: cannot write %s\n", scratch_file().c_str());
    std::abort();
  }
}

// A property the library promises does not hold: print it and stop, so libFuzzer saves the input.
[[noreturn]] inline void broken(const std::string& what) {
  std::fprintf(stderr, "fuzz: broken promise: %s\n", what.c_str());
  std::abort();
}

}  // namespace h2o_fuzz
