#include "h2o/attention/attention.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "h2o/attention/linear.hpp"

namespace h2o {

void softmax_inplace(float* x, std::size_t n) {
  if (n == 0) return;
  const float max_value = *std::max_element(x, x + n);
  float sum = 0.0f;
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max_value);
    sum += x[i];
  }
  for (std::size_t i = 0; i < n; ++i) x[i] /= sum;
}

Vector softmax(const Vector& scores) {
  Vector out = scores;
  softmax_inplace(out.data(), out.size());
  return out;
}

void attend_into(const float* query, const float* keys, const float* values, std::size_t n_tokens,
                 std::size_t head_dim, float* weights_out, float* output_out) {
  matvec(weights_out, keys, query, n_tokens, head_dim);  // (T,) = K (T, D) @ q (D,)
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  for (std::size_t t = 0; t < n_tokens; ++t) weights_out[t] *= scale;
  softmax_inplace(weights_out, n_tokens);
  matvec_transposed(output_out, values, weights_out, n_tokens, head_dim);  // (D,) = w @ V
}

namespace {
void check_rows(const Matrix& rows, std::size_t expected_cols, const char* what) {
  if (rows.shape()[1] != expected_cols) {
    throw std::invalid_argument(std::string(what) + " rows have " +
                                std::to_string(rows.shape()[1]) + " numbers, expected " +
                                std::to_string(expected_cols));
  }
}
}  // namespace

Vector attention_weights(const Vector& query, const Matrix& keys) {
  check_rows(keys, query.size(), "key");
  Vector weights = xt::zeros<float>({keys.shape()[0]});
  Vector unused_output = xt::zeros<float>({query.size()});
  // Values = keys here only to reuse the kernel; the output is discarded.
  attend_into(query.data(), keys.data(), keys.data(), keys.shape()[0], query.size(), weights.data(),
              unused_output.data());
  return weights;
}

Vector attention_output(const Vector& weights, const Matrix& values) {
  if (values.shape()[0] != weights.size()) {
    throw std::invalid_argument("attention has " + std::to_string(weights.size()) +
                                " weights but there are " + std::to_string(values.shape()[0]) +
                                " value rows");
  }
  Vector output = xt::zeros<float>({values.shape()[1]});
  matvec_transposed(output.data(), values.data(), weights.data(), values.shape()[0],
                    values.shape()[1]);
  return output;
}

AttentionResult attend(const Vector& query, const Matrix& keys, const Matrix& values) {
  check_rows(keys, query.size(), "key");
  if (values.shape()[0] != keys.shape()[0]) {
    throw std::invalid_argument("the cache has " + std::to_string(keys.shape()[0]) + " keys but " +
                                std::to_string(values.shape()[0]) + " values");
  }
  AttentionResult result{xt::zeros<float>({keys.shape()[0]}),
                         xt::zeros<float>({values.shape()[1]})};
  attend_into(query.data(), keys.data(), values.data(), keys.shape()[0], query.size(),
              result.weights.data(), result.output.data());
  return result;
}

namespace {
// rows (T rows of D numbers each) -> one contiguous (T, D) block, checking every row's length.
std::vector<float> flatten(const std::vector<std::vector<float>>& rows, std::size_t cols,
                           const char* what) {
  std::vector<float> flat;
  flat.reserve(rows.size() * cols);
  for (const auto& row : rows) {
    if (row.size() != cols) {
      throw std::invalid_argument(std::string(what) + " rows have " + std::to_string(row.size()) +
                                  " numbers, expected " + std::to_string(cols));
    }
    flat.insert(flat.end(), row.begin(), row.end());
  }
  return flat;
}
}  // namespace

std::vector<float> softmax(const std::vector<float>& scores) {
  std::vector<float> out = scores;
  softmax_inplace(out.data(), out.size());
  return out;
}

std::vector<float> attention_weights(const std::vector<float>& query,
                                     const std::vector<std::vector<float>>& keys) {
  const std::vector<float> flat_keys = flatten(keys, query.size(), "key");  // (T, D)
  std::vector<float> weights(keys.size()), unused_output(query.size());
  attend_into(query.data(), flat_keys.data(), flat_keys.data(), keys.size(), query.size(),
              weights.data(), unused_output.data());
  return weights;
}

std::vector<float> attention_output(const std::vector<float>& weights,
                                    const std::vector<std::vector<float>>& values) {
  if (values.size() != weights.size()) {
    throw std::invalid_argument("attention has " + std::to_string(weights.size()) +
                                " weights but there are " + std::to_string(values.size()) +
                                " value rows");
  }
  const std::size_t cols = values.empty() ? 0 : values.front().size();
  const std::vector<float> flat_values = flatten(values, cols, "value");  // (T, D)
  std::vector<float> output(cols);
  matvec_transposed(output.data(), flat_values.data(), weights.data(), values.size(), cols);
  return output;
}

}  // namespace h2o
