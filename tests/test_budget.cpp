// test_budget.cpp: the one check of a cache budget (budget.hpp), and budgets given as percentages.
#include "h2o_catch.hpp"
#include <limits>
#include <stdexcept>
#include <string>

#include "h2o/cache/budget.hpp"

using h2o::CacheBudget;

TEST_CASE("a budget holds heavy and recent slots and describes them", "[budget]") {
  const CacheBudget budget(2, 2);
  CHECK(budget.heavy == 2);
  CHECK(budget.recent == 2);
  CHECK(budget.total() == 4);
  CHECK(budget.describe() == "heavy 2 + recent 2 = 4 tokens");
  CHECK(CacheBudget(0, 1).total() == 1);  // a pure sliding window
  CHECK(CacheBudget(1, 0).total() == 1);  // heavy hitters only
}

TEST_CASE("a budget of no tokens cannot be made", "[budget]") {
  CHECK_THROWS_AS(CacheBudget(0, 0), std::invalid_argument);
  CHECK_THROWS_WITH(CacheBudget(0, 0), h2o_catch::Contains("heavy + recent must be at least 1"));
  const std::size_t huge = std::numeric_limits<std::size_t>::max();
  CHECK_THROWS_WITH(CacheBudget(huge, 1), h2o_catch::Contains("too large"));
  CHECK_THROWS_WITH(CacheBudget(1, huge), h2o_catch::Contains("too large"));
}

TEST_CASE("a percentage of a text becomes a token count", "[budget]") {
  CHECK(h2o::tokens_for_percent(384, 10) == 38);  // 38.4 rounds down
  CHECK(h2o::tokens_for_percent(385, 10) == 39);  // 38.5 rounds up
  CHECK(h2o::tokens_for_percent(384, 100) == 384);
  CHECK(h2o::tokens_for_percent(10, 1) == 2);  // never below 2: one heavy, one recent
  CHECK(h2o::tokens_for_percent(1000, 5) == 50);
  CHECK_THROWS_AS(h2o::tokens_for_percent(100, 0), std::invalid_argument);
  CHECK_THROWS_AS(h2o::tokens_for_percent(100, 101), std::invalid_argument);
}
