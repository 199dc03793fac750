#include "h2o/model/checkpoint.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <thread>
#include <vector>

#include "h2o/base/files.hpp"
#include "h2o/base/output_file.hpp"
#include "h2o/base/vector_math.hpp"

namespace h2o {

namespace {

const char* const kFieldNames[7] = {"dim",        "hidden_dim", "n_layers", "n_heads",
                                    "n_kv_heads", "vocab_size", "seq_len"};

// llama2.c's newer exports (export.py --version 1 or 2) start with this magic number instead.
constexpr std::int32_t kVersionedExportMagic = 0x616b3432;  // the bytes "24ka"

std::string checkpoint_named(const std::string& path) { return "checkpoint '" + path + "'"; }

bool host_is_little_endian() {
  const std::uint32_t one = 1;
  unsigned char first_byte = 0;
  std::memcpy(&first_byte, &one, 1);
  return first_byte == 1;
}

// One tensor of the file: where its floats live and what to call it in errors.
template <class FloatPointer>
struct TensorSlot {
  const char* name;
  FloatPointer data;
  std::size_t count;
};

// Every stored tensor before the RoPE tables, in file order (one table for reading and writing,
// so the two can never disagree). W is DecoderWeights or const DecoderWeights.
template <class W>
auto tensors_before_rope(W& w) -> std::vector<TensorSlot<decltype(w.wq.data())>> {
  return {{"token_embedding", w.token_embedding.data(), w.token_embedding.size()},
          {"rms_att", w.rms_att.data(), w.rms_att.size()},
          {"wq", w.wq.data(), w.wq.size()},
          {"wk", w.wk.data(), w.wk.size()},
          {"wv", w.wv.data(), w.wv.size()},
          {"wo", w.wo.data(), w.wo.size()},
          {"rms_ffn", w.rms_ffn.data(), w.rms_ffn.size()},
          {"w1", w.w1.data(), w.w1.size()},
          {"w2", w.w2.data(), w.w2.size()},
          {"w3", w.w3.data(), w.w3.size()},
          {"rms_final", w.rms_final.data(), w.rms_final.size()}};
}

// Floats in the two unused RoPE tables: seq_len * D / 2 each.
std::uint64_t rope_table_floats(const ModelConfig& c) {
  return static_cast<std::uint64_t>(c.seq_len) * (c.head_dim() / 2);
}

std::uint64_t expected_file_bytes(const ModelConfig& c) {
  return kCheckpointHeaderBytes + c.checkpoint_float_count() * sizeof(float);
}

// Reads and checks the header and the file's size; leaves `in` just after the header.
ModelConfig read_header(const std::string& path, std::ifstream& in) {
  if (!host_is_little_endian()) {
    throw std::runtime_error("llama2.c checkpoints are little-endian; this machine is not");
  }
  const std::uint64_t size = open_binary_file(path, checkpoint_named(path), in, kMaxCheckpointBytes);
  if (size < kCheckpointHeaderBytes) {
    throw std::runtime_error(checkpoint_named(path) + " is truncated: the header needs " +
                             std::to_string(kCheckpointHeaderBytes) + " bytes, the file has " +
                             std::to_string(size));
  }
  std::int32_t header[7];
  if (!in.read(reinterpret_cast<char*>(header), sizeof(header))) {
    throw std::runtime_error(checkpoint_named(path) + ": could not read the header");
  }
  const ModelConfig config = config_from_header(header, path);

  // Only now is it safe to trust the shape: compare the bytes it implies with the file's.
  const std::uint64_t expected = expected_file_bytes(config);
  if (size < expected) {
    throw std::runtime_error(checkpoint_named(path) + " is truncated: its header (" + config.describe() +
                             ") implies " + std::to_string(expected) + " bytes, the file has " +
                             std::to_string(size));
  }
  if (size > expected) {
    throw std::runtime_error(checkpoint_named(path) + " has " + std::to_string(size - expected) +
                             " trailing bytes: its header (" + config.describe() + ") implies " +
                             std::to_string(expected) + " bytes, the file has " +
                             std::to_string(size));
  }
  return config;
}

// A NaN or infinity would silently poison every later logit; refuse it here instead.
void check_finite(const std::string& path, const char* name, const float* data, std::size_t count) {
  const std::size_t i = first_non_finite(data, count);
  if (i < count) {
    throw std::runtime_error(checkpoint_named(path) + ": tensor " + name + " holds a non-finite value (" +
                             std::to_string(data[i]) + ") at index " + std::to_string(i));
  }
}

// check_finite for every tensor of a mapped checkpoint, the scan shared by up to
// kMaxCheckThreads threads (the whole 438 MB of stories110M is otherwise a quarter of the start-up
// time). Each thread scans an equal share of all the floats; only when a share holds a non-finite
// value are the tensors checked again one by one, in file order, for the error message.
constexpr unsigned kMaxCheckThreads = 8;
constexpr std::size_t kMinFloatsPerCheckThread = std::size_t{1} << 22;  // 16 MiB

void check_finite_in_parallel(const std::string& path,
                              const std::vector<TensorSlot<const float*>>& tensors) {
  std::size_t total = 0;
  for (const auto& t : tensors) total += t.count;
  const std::size_t cores = std::max(1u, std::min(kMaxCheckThreads,
                                                  std::thread::hardware_concurrency()));
  const std::size_t threads = std::max<std::size_t>(
      1, std::min(cores, total / kMinFloatsPerCheckThread));
  // Share k covers floats [total * k / threads, total * (k + 1) / threads) of the file order.
  auto share_is_finite = [&](std::size_t k) {
    const std::size_t first = total * k / threads, last = total * (k + 1) / threads;
    std::size_t start = 0;  // index of tensor t's first float in the file order
    for (const auto& t : tensors) {
      const std::size_t from = std::max(first, start), to = std::min(last, start + t.count);
      if (from < to && first_non_finite(t.data + (from - start), to - from) < to - from) {
        return false;
      }
      start += t.count;
    }
    return true;
  };
  std::vector<char> finite(threads, 1);
  std::vector<std::thread> helpers;
  for (std::size_t k = 1; k < threads; ++k) {
    helpers.emplace_back([&, k] { finite[k] = share_is_finite(k) ? 1 : 0; });
  }
  finite[0] = share_is_finite(0) ? 1 : 0;
  for (std::thread& helper : helpers) helper.join();
  if (std::find(finite.begin(), finite.end(), 0) == finite.end()) return;
  for (const auto& t : tensors) check_finite(path, t.name, t.data, t.count);  // throws
}

void read_floats(std::ifstream& in, const std::string& path, const TensorSlot<float*>& slot) {
  const auto bytes = static_cast<std::streamsize>(slot.count * sizeof(float));
  if (!in.read(reinterpret_cast<char*>(slot.data), bytes)) {
    throw std::runtime_error(checkpoint_named(path) + ": could not read tensor " + slot.name);
  }
  check_finite(path, slot.name, slot.data, slot.count);
}

void write_floats(std::ostream& out, const float* data, std::size_t count) {
  out.write(reinterpret_cast<const char*>(data),
            static_cast<std::streamsize>(count * sizeof(float)));
}

}  // namespace

ModelConfig config_from_header(const std::int32_t (&header)[7], const std::string& source) {
  if (header[0] == kVersionedExportMagic) {
    throw std::invalid_argument(checkpoint_named(source) +
                                " is a versioned llama2.c export (magic \"ak42\", version " +
                                std::to_string(header[1]) +
                                "); only the legacy format is supported (export.py --version 0)");
  }
  for (int i = 0; i < 7; ++i) {
    // vocab_size may be negative (untied classifier), but never zero.
    const bool ok = i == 5 ? header[i] != 0 : header[i] > 0;
    if (!ok) {
      throw std::invalid_argument(checkpoint_named(source) + ": bad header: " + kFieldNames[i] + " is " +
                                  std::to_string(header[i]) + ", it must be " +
                                  (i == 5 ? "non-zero" : "positive"));
    }
  }
  ModelConfig config;
  config.dim = static_cast<std::size_t>(header[0]);
  config.hidden_dim = static_cast<std::size_t>(header[1]);
  config.n_layers = static_cast<std::size_t>(header[2]);
  config.n_heads = static_cast<std::size_t>(header[3]);
  config.n_kv_heads = static_cast<std::size_t>(header[4]);
  // int64 so that the absolute value of INT32_MIN does not overflow.
  config.vocab_size = static_cast<std::size_t>(std::llabs(static_cast<long long>(header[5])));
  config.seq_len = static_cast<std::size_t>(header[6]);
  config.shared_classifier = header[5] > 0;
  try {
    config.validate();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(checkpoint_named(source) + ": bad header: " + e.what());
  }
  return config;
}

ModelConfig read_checkpoint_config(const std::string& path) {
  std::ifstream in;
  return read_header(path, in);
}

DecoderWeights load_checkpoint(const std::string& path) {
  std::ifstream in;
  const ModelConfig config = read_header(path, in);
  DecoderWeights weights = allocate_weights(config);  // size already matches the file exactly
  for (const auto& slot : tensors_before_rope(weights)) read_floats(in, path, slot);
  // The RoPE tables are recomputed on the fly (rope.hpp), so they are skipped.
  in.seekg(static_cast<std::streamoff>(2 * rope_table_floats(config) * sizeof(float)),
           std::ios::cur);
  if (!config.shared_classifier) {
    read_floats(in, path, TensorSlot<float*>{"wcls", weights.wcls.data(), weights.wcls.size()});
  }
  if (!in) throw std::runtime_error(checkpoint_named(path) + ": read error");
  return weights;
}

std::shared_ptr<const MappedCheckpoint> MappedCheckpoint::open(const std::string& path,
                                                              FiniteCheck check) {
  std::shared_ptr<MappedCheckpoint> mapped(new MappedCheckpoint());
  ModelConfig config;
  {
    std::ifstream in;
    config = read_header(path, in);  // every check of the header and the file's size
  }
  const std::size_t bytes = static_cast<std::size_t>(expected_file_bytes(config));
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(checkpoint_named(path) + " cannot be opened for reading");
  struct stat status {};
  if (::fstat(fd, &status) != 0 || static_cast<std::uint64_t>(status.st_size) != bytes) {
    ::close(fd);
    throw std::runtime_error(checkpoint_named(path) + " changed while it was read");
  }
  // No MAP_POPULATE: the finite check below (or the first token's pass, with by_first_token)
  // touches every page anyway, so the pages are mapped in as they are first read, on as many
  // threads as read them, instead of by one call up front.
  void* base = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (base == MAP_FAILED) {
    throw std::runtime_error(checkpoint_named(path) + " cannot be memory-mapped: " + std::strerror(errno));
  }
  mapped->base_ = base;
  mapped->bytes_ = bytes;

  // The tensors in file order, as tensors_before_rope lists them for load_checkpoint.
  const ModelConfig& c = config;
  const std::size_t V = c.vocab_size, C = c.dim, F = c.hidden_dim, L = c.n_layers, KV = c.kv_dim();
  const float* next =
      reinterpret_cast<const float*>(static_cast<const char*>(base) + kCheckpointHeaderBytes);
  std::vector<TensorSlot<const float*>> tensors;  // every tensor used, for the finite check
  auto take = [&](const char* name, std::size_t count) {
    const float* data = next;
    tensors.push_back({name, data, count});
    next += count;
    return data;
  };
  WeightView& v = mapped->view_;
  v.config = c;
  v.token_embedding = take("token_embedding", V * C);
  v.rms_att_all = take("rms_att", L * C);
  v.wq_all = take("wq", L * C * C);
  v.wk_all = take("wk", L * KV * C);
  v.wv_all = take("wv", L * KV * C);
  v.wo_all = take("wo", L * C * C);
  v.rms_ffn_all = take("rms_ffn", L * C);
  v.w1_all = take("w1", L * F * C);
  v.w2_all = take("w2", L * C * F);
  v.w3_all = take("w3", L * F * C);
  v.rms_final = take("rms_final", C);
  next += 2 * rope_table_floats(c);  // the unused RoPE tables (rope.hpp recomputes them)
  v.classifier = c.shared_classifier ? v.token_embedding : take("wcls", V * C);
  if (check == FiniteCheck::at_open) {
    check_finite_in_parallel(path, tensors);
  } else {
    // The first token reads one row of the embedding; the tied classifier reads every row, a
    // separate one does not, so then the embedding is scanned now (checkpoint.hpp: FiniteCheck).
    if (!c.shared_classifier) check_finite_in_parallel(path, {tensors.front()});
    v.name_non_finite_weight = [path, tensors] { check_finite_in_parallel(path, tensors); };
  }
  return mapped;
}

MappedCheckpoint::~MappedCheckpoint() {
  if (base_ != nullptr) ::munmap(base_, bytes_);
}

void save_checkpoint(const std::string& path, const DecoderWeights& weights) {
  OutputFile out(path, "checkpoint");
  write_checkpoint(out.stream(), weights);
  out.commit();
}

void write_checkpoint(std::ostream& out, const DecoderWeights& weights) {
  const ModelConfig& c = weights.config;
  c.validate();
  if (!host_is_little_endian()) {
    throw std::runtime_error("llama2.c checkpoints are little-endian; this machine is not");
  }

  const auto vocab = static_cast<std::int32_t>(c.vocab_size);
  const std::int32_t header[7] = {
      static_cast<std::int32_t>(c.dim),        static_cast<std::int32_t>(c.hidden_dim),
      static_cast<std::int32_t>(c.n_layers),   static_cast<std::int32_t>(c.n_heads),
      static_cast<std::int32_t>(c.n_kv_heads), c.shared_classifier ? vocab : -vocab,
      static_cast<std::int32_t>(c.seq_len)};
  out.write(reinterpret_cast<const char*>(header), sizeof(header));

  for (const auto& slot : tensors_before_rope(weights)) write_floats(out, slot.data, slot.count);

  // llama2.c's export writes cos, then sin, of pos * 10000^(-2j / D): (seq_len, D / 2) each.
  const std::size_t D = c.head_dim(), half = D / 2;
  std::vector<float> cos_table(c.seq_len * half), sin_table(c.seq_len * half);
  for (std::size_t pos = 0; pos < c.seq_len; ++pos) {
    for (std::size_t j = 0; j < half; ++j) {
      const double freq =
          1.0 / std::pow(10000.0, static_cast<double>(2 * j) / static_cast<double>(D));
      cos_table[pos * half + j] = static_cast<float>(std::cos(static_cast<double>(pos) * freq));
      sin_table[pos * half + j] = static_cast<float>(std::sin(static_cast<double>(pos) * freq));
    }
  }
  write_floats(out, cos_table.data(), cos_table.size());
  write_floats(out, sin_table.data(), sin_table.size());
  if (!c.shared_classifier) write_floats(out, weights.wcls.data(), weights.wcls.size());
}

}  // namespace h2o
