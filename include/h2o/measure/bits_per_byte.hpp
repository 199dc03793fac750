// bits_per_byte.hpp: how well a model predicts a text, in a unit that does not depend on its
// tokenizer, and the rule for a text the model does not know.
//
// Perplexity is per token, so it cannot compare two models whose tokenizers cut the same text
// into different pieces (the project's 4,096 pieces against stories260K's 512). Bits per byte can:
//   bits per byte = (sum over the predicted tokens of -ln p(token)) / ln 2 / bytes
//   bytes         = the UTF-8 bytes of the text those tokens stand for: every token after the first
//                   (the first, usually BOS, is never predicted), each as Tokenizer::decode_piece
//                   gives it after its predecessor. BOS and EOS stand for no bytes, and neither
//                   does the dummy space the tokenizer puts before the first word (decode_piece
//                   drops it after BOS), so the bytes are exactly those of the text as written
//                   (a story as text/stories.hpp reads it) when the whole text was read.
// It is the cost of storing the text with the model as an ideal compressor: 8 bits per byte means
// no better than writing the bytes down; gzip -9 needs 3.7 to 3.9 on each of the five hand-written
// tales that open data/handwritten_stories.txt (its first 21 parts), 3.1 on the whole file.
//
// The rule for a text beyond the model (one owner; lessons 09-11 and compare_policies follow it):
// when the full cache reads a text at more than kBeyondModelBitsPerByte, the model does not know
// text like it, and comparing caches on it means nothing (a cache that forgets may even "beat" the
// full cache by chance). The limit sits between what a model reads well and what it does not
// (data/README.md), just below what gzip needs on a short story (3.5 to 5 bits per byte; gzip
// knows nothing of language): the project's model reads its own held-out stories at 0.15 bits per
// byte, data/story.txt at 0.79, the hand-written stories at 2.03 (the five tales' 21 parts at 1.77;
// stories260K: 0.76 and 1.72 on those two) and
// a teacher's story it never saw, typed in for a check, at 2.12 (gzip: 4.6); it reads a story in
// German (data/german_story.txt) at 5.54, worse than gzip's 5.1, and the project's first model,
// trained on generated stories alone, read the hand-written stories at 6.35 and data/story.txt at
// 3.62.
//
// Dimension legend: N = tokens in the text (the first not predicted), S = N - 1 steps.
#pragma once

#include <cstddef>
#include <vector>

#include "h2o/measure/teacher_forcing.hpp"
#include "h2o/text/tokenizer.hpp"

namespace h2o {

// Above this, the full cache does not know the text (see above).
constexpr double kBeyondModelBitsPerByte = 3.0;

// The UTF-8 bytes of the text that tokens[1..N-1] stand for (the predicted tokens): tokens (N,).
std::size_t predicted_bytes(const Tokenizer& tokenizer, const std::vector<int>& tokens);

// bits per byte of `total_nll` nats over the predicted tokens of a text of `bytes` bytes; throws
// std::invalid_argument when bytes is 0 (nothing to measure).
double bits_per_byte(double total_nll, std::size_t bytes);

// The same for a teacher-forced reading (its summed token_nll).
double bits_per_byte(const TeacherForcedRun& run, std::size_t bytes);

// True when a full-cache reading at `full_bits_per_byte` is beyond the model (the rule above).
bool beyond_model(double full_bits_per_byte);
// (The warning the programs print then: report/verdict_text.hpp's beyond_model_warning.)

}  // namespace h2o
