// checkpoint.hpp: reading and writing llama2.c "legacy" checkpoints (the format run.c reads).
//
// Dimension legend: V = vocab, C = dim, F = hidden_dim, L = layers, KV = kv_dim, D = head_dim.
//
// File layout (little-endian):
//   header: 7 int32  dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len
//           (a NEGATIVE vocab_size means "the classifier is stored separately, at the end")
//   float32 tensors, each row-major [out][in], in the order of DecoderWeights:
//     token_embedding (V, C), rms_att (L, C), wq (L, C, C), wk (L, KV, C), wv (L, KV, C),
//     wo (L, C, C), rms_ffn (L, C), w1 (L, F, C), w2 (L, C, F), w3 (L, F, C), rms_final (C,),
//     two RoPE tables of seq_len * D / 2 floats each (unused: RoPE is recomputed), wcls (V, C) only
//     when vocab_size was negative.
//
// Loading checks everything a damaged or foreign file could get wrong BEFORE allocating: the header
// fields (ModelConfig::validate), then that the file holds exactly the bytes the header implies. So
// a corrupted header can never ask for gigabytes. Every problem is a one-line exception naming the
// file: std::runtime_error for I/O and size problems, std::invalid_argument for bad header values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>

#include "h2o/model/model_config.hpp"
#include "h2o/model/weights.hpp"

namespace h2o {

constexpr std::size_t kCheckpointHeaderBytes = 7 * sizeof(std::int32_t);

// Largest checkpoint file the loader opens (llama2.c's stories110M is 438 MB): a bigger file is
// refused before its header is read.
constexpr std::uint64_t kMaxCheckpointBytes = 8ull << 30;

// The header's 7 raw fields -> a validated config. `source` names the file in error messages.
ModelConfig config_from_header(const std::int32_t (&header)[7], const std::string& source);

// Reads and checks only the header and the file size (cheap: no weights are read).
ModelConfig read_checkpoint_config(const std::string& path);

// Reads a whole checkpoint into freshly allocated weights.
DecoderWeights load_checkpoint(const std::string& path);

// When a mapped checkpoint's weights are checked for NaN and infinity.
//   at_open         the whole file is scanned before open() returns, as load_checkpoint does (a
//                   vectorised scan on up to 8 threads, which also brings the file into memory).
//   by_first_token  the first token's forward pass is the check: open() scans only what that pass
//                   does not read in full (the token embedding, when the classifier is a separate
//                   matrix), and the Decoder runs its first token alone and looks at its logits
//                   (WeightView::name_non_finite_weight). Only when a logit is NaN or infinite is
//                   the file scanned, to name the tensor, with at_open's message. This saves
//                   reading a large model twice before its first token (stories110M: 438 MB, a
//                   third of the start-up time). Why the logits are enough: the first token's pass
//                   reads every weight of every matrix and gain vector once, and with finite
//                   inputs a matrix product gives a non-finite output exactly when the matrix
//                   holds a NaN or infinity (NaN * 0 and inf * 0 are NaN); and no later step makes
//                   a non-finite number finite again (RMSNorm, RoPE, a softmax over the one
//                   position there is, SwiGLU and the residual sums all pass it on). The tests
//                   plant NaN, +inf and -inf in every tensor and check that the first token names
//                   it (tests/test_checkpoint.cpp).
enum class FiniteCheck { at_open, by_first_token };

// A checkpoint used where it lies: the file is memory-mapped read-only and the weights are read
// from the mapping, never copied, after exactly the checks (and one-line errors) of
// load_checkpoint: header, file size, and every tensor's values finite (when, `check` says).
// Start-up for llama2.c's 110M model drops from about half a second to run.c's order (run.c maps
// the file and checks nothing). Use it with the Decoder constructor that takes a WeightView and an
// owner:
//   auto model = MappedCheckpoint::open(path);
//   Decoder decoder(model->view(), model, policy);
class MappedCheckpoint {
 public:
  static std::shared_ptr<const MappedCheckpoint> open(const std::string& path,
                                                      FiniteCheck check = FiniteCheck::at_open);
  ~MappedCheckpoint();
  MappedCheckpoint(const MappedCheckpoint&) = delete;
  MappedCheckpoint& operator=(const MappedCheckpoint&) = delete;

  const WeightView& view() const { return view_; }
  const ModelConfig& config() const { return view_.config; }

 private:
  MappedCheckpoint() = default;
  void* base_ = nullptr;  // the mapping: the whole file
  std::size_t bytes_ = 0;
  WeightView view_;
};

// Writes weights in the same format (RoPE tables filled with llama2.c's cos/sin values), so tests
// and tools can make small checkpoints of their own. save_checkpoint writes an OutputFile
// (base/output_file.hpp: complete or not at all) and throws std::runtime_error if it cannot;
// write_checkpoint writes to a stream the caller checks (e.g. an OutputFile's, made before the
// weights, so that a bad path fails first).
void save_checkpoint(const std::string& path, const DecoderWeights& weights);
void write_checkpoint(std::ostream& out, const DecoderWeights& weights);

}  // namespace h2o
