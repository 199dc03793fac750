#include "h2o/base/rows.hpp"

#include <algorithm>
#include "h2o/base/xtensor.hpp"

namespace h2o {

Matrix take(const Matrix& rows, const std::vector<std::size_t>& indices) {
  const std::size_t n = rows.shape()[0], cols = rows.shape()[1];
  Matrix out = xt::zeros<float>({indices.size(), cols});  // (K, D)
  for (std::size_t r = 0; r < indices.size(); ++r) {
    if (indices[r] >= n) {
      throw std::out_of_range("take: row " + std::to_string(indices[r]) + " of " +
                              std::to_string(n));
    }
    std::copy_n(&rows(indices[r], 0), cols, &out(r, 0));
  }
  return out;
}

Vector take(const Vector& values, const std::vector<std::size_t>& indices) {
  Vector out = xt::zeros<float>({indices.size()});  // (K,)
  for (std::size_t i = 0; i < indices.size(); ++i) {
    if (indices[i] >= values.size()) {
      throw std::out_of_range("take: index " + std::to_string(indices[i]) + " of " +
                              std::to_string(values.size()));
    }
    out(i) = values(indices[i]);
  }
  return out;
}

Matrix append_row(const Matrix& rows, const Vector& row) {
  const std::size_t n = rows.shape()[0], cols = rows.shape()[1];
  if (row.size() != cols) {
    throw std::invalid_argument("append_row: a row of " + std::to_string(row.size()) +
                                " numbers for rows of " + std::to_string(cols));
  }
  Matrix out = xt::zeros<float>({n + 1, cols});  // (T + 1, D)
  std::copy(rows.begin(), rows.end(), out.begin());
  std::copy(row.begin(), row.end(), &out(n, 0));
  return out;
}

Vector append(const Vector& values, float value) {
  Vector out = xt::zeros<float>({values.size() + 1});  // (T + 1,)
  std::copy(values.begin(), values.end(), out.begin());
  out(values.size()) = value;
  return out;
}

}  // namespace h2o
