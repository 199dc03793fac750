#include "h2o/measure/bits_per_byte.hpp"

#include <cmath>
#include <stdexcept>

namespace h2o {

std::size_t predicted_bytes(const Tokenizer& tokenizer, const std::vector<int>& tokens) {
  std::size_t bytes = 0;
  for (std::size_t p = 1; p < tokens.size(); ++p) {
    if (tokens[p] == Tokenizer::kBos || tokens[p] == Tokenizer::kEos) continue;  // no text
    bytes += tokenizer.decode_piece(tokens[p - 1], tokens[p]).size();
  }
  return bytes;
}

double bits_per_byte(double total_nll, std::size_t bytes) {
  if (bytes == 0) throw std::invalid_argument("bits per byte of a text of no bytes");
  return total_nll / std::log(2.0) / static_cast<double>(bytes);
}

double bits_per_byte(const TeacherForcedRun& run, std::size_t bytes) {
  double total = 0.0;
  for (double nll : run.token_nll) total += nll;
  return bits_per_byte(total, bytes);
}

bool beyond_model(double full_bits_per_byte) {
  return !(full_bits_per_byte <= kBeyondModelBitsPerByte);  // NaN is beyond too
}

}  // namespace h2o
