// budget.hpp: how many tokens a cache may keep: `heavy` slots for high scores + `recent` slots
// for the newest tokens. Every policy that evicts is sized with one of these.
//
// This is the ONE place where a budget is checked: a CacheBudget cannot exist with
// heavy + recent = 0 (a cache of 0 tokens cannot attend), so policies, lessons and tools that
// hold one never check it again. Counts are unsigned; a negative number typed by a user is refused
// earlier, by the command-line parser, with the option's name.
//
// What each policy does with the two numbers is its own business (policy_factory.hpp lists it):
// H2O keeps heavy hitters + a recent window; a sliding window keeps the last heavy + recent.
//
// Dimension legend: n = tokens in a text.
#pragma once

#include <cstddef>
#include <string>

namespace h2o {

class CacheBudget {
 public:
  // Throws std::invalid_argument when heavy + recent is 0 (or overflows).
  CacheBudget(std::size_t heavy, std::size_t recent);

  std::size_t heavy = 0;   // slots kept for their accumulated score (H2O's heavy hitters)
  std::size_t recent = 0;  // slots kept for the newest tokens
  std::size_t total() const { return heavy + recent; }
  std::string describe() const;  // "heavy 2 + recent 2 = 4 tokens"
};

// A budget given as a share of a text: `percent` of n tokens, rounded to the nearest token and
// at least 2, so that a heavy + recent split has one token on each side.
std::size_t tokens_for_percent(std::size_t n, int percent);

}  // namespace h2o
