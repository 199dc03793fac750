#include "h2o/measure/second_reading.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "h2o/base/random.hpp"

namespace h2o {

TwoReadings read_twice(const std::vector<int>& story, std::size_t n) {
  if (n < 2) {
    throw std::invalid_argument("a passage read twice needs at least 2 tokens, got " +
                                std::to_string(n));
  }
  if (story.empty() || story.size() - 1 < n) {
    throw std::invalid_argument(
        "the text has " + std::to_string(story.empty() ? 0 : story.size() - 1) +
        " tokens after BOS, fewer than the " + std::to_string(n) + " to read twice");
  }
  TwoReadings text;
  text.passage = n;
  text.second = 1 + n;
  text.tokens.assign(story.begin(), story.begin() + static_cast<long>(n + 1));  // BOS + passage
  text.tokens.insert(text.tokens.end(), story.begin() + 1,
                     story.begin() + static_cast<long>(n + 1));
  return text;
}

TwoReadings plant_secret(const std::vector<int>& story, const std::vector<int>& passage,
                         std::size_t at) {
  if (passage.size() < 2) {
    throw std::invalid_argument("a secret passage needs at least 2 tokens, got " +
                                std::to_string(passage.size()));
  }
  if (story.empty() || story.front() != Tokenizer::kBos) {
    throw std::invalid_argument("plant_secret: the story must start with BOS");
  }
  if (at > story.size() - 1) {
    throw std::invalid_argument("the story has " + std::to_string(story.size() - 1) +
                                " tokens after BOS, fewer than the " + std::to_string(at) +
                                " to plant the secret after");
  }
  const auto split = story.begin() + 1 + static_cast<long>(at);
  TwoReadings text;
  text.passage = passage.size();
  text.first = 1 + at;
  text.tokens.assign(story.begin(), split);  // BOS and the story's first `at` tokens
  text.tokens.insert(text.tokens.end(), passage.begin(), passage.end());
  text.tokens.insert(text.tokens.end(), split, story.end());
  text.second = text.tokens.size();
  text.tokens.insert(text.tokens.end(), passage.begin(), passage.end());
  return text;
}

std::vector<int> secret_pieces(const Tokenizer& tokenizer) {
  std::vector<int> pieces;
  const int first = Tokenizer::kFirstByteToken + 256;  // after <unk>, BOS, EOS and the bytes
  for (int id = first; id < static_cast<int>(tokenizer.vocab_size()); ++id) {
    const std::string& piece = tokenizer.piece(id);
    if (!piece.empty() && piece.find_first_of("\r\n") == std::string::npos) pieces.push_back(id);
  }
  return pieces;
}

std::vector<int> secret_passage(const std::vector<int>& pieces, std::size_t n, std::uint64_t seed) {
  if (n > pieces.size()) {
    throw std::invalid_argument("a secret of " + std::to_string(n) +
                                " distinct pieces, but the vocabulary has only " +
                                std::to_string(pieces.size()) + " pieces to draw from");
  }
  std::vector<int> shuffled = pieces;
  Rng rng(seed);
  for (std::size_t i = 0; i < n; ++i) {  // the first n steps of a Fisher-Yates shuffle
    const std::size_t j = i + rng.below(static_cast<std::uint32_t>(shuffled.size() - i));
    std::swap(shuffled[i], shuffled[j]);
  }
  shuffled.resize(n);
  return shuffled;
}

std::size_t ReadingHits::first_correct() const {
  return static_cast<std::size_t>(std::accumulate(first.begin(), first.end(), 0.0));
}
std::size_t ReadingHits::second_correct() const {
  return static_cast<std::size_t>(std::accumulate(second.begin(), second.end(), 0.0));
}

ReadingHits reading_hits(const TwoReadings& text, const std::vector<int>& top1) {
  if (text.tokens.size() < 2 || top1.size() != text.tokens.size() - 1) {
    throw std::invalid_argument("reading_hits: " + std::to_string(top1.size()) +
                                " predictions for a text of " + std::to_string(text.tokens.size()) +
                                " tokens");
  }
  // Piece k (k = 1..F-1, 0-based) of a reading starting at position p is predicted at step
  // p + k - 1, from the piece before it.
  const auto hits = [&](std::size_t start) {
    std::vector<double> hit;  // (F - 1,)
    for (std::size_t k = 1; k < text.passage; ++k) {
      const std::size_t step = start + k - 1;
      hit.push_back(top1[step] == text.tokens[step + 1] ? 1.0 : 0.0);
    }
    return hit;
  };
  return {hits(text.first), hits(text.second)};
}

SecondReading second_reading(const SweepRun& run, const std::vector<TwoReadings>& texts) {
  SecondReading reading;
  reading.label = run.label;
  reading.policy = run.policy;
  reading.percent = run.budget.percent;
  reading.tokens = run.tokens;
  reading.kept = run.kept;
  reading.refused = run.refused;
  reading.texts = texts.size();
  if (!run.refused.empty()) return reading;
  if (run.readings.size() != texts.size()) {
    throw std::invalid_argument("second_reading: the run '" + run.label + "' read " +
                                std::to_string(run.readings.size()) + " texts, not " +
                                std::to_string(texts.size()));
  }
  std::vector<std::vector<double>> first, second;  // (texts,) x (F_i - 1,)
  for (std::size_t i = 0; i < texts.size(); ++i) {
    ReadingHits hits = reading_hits(texts[i], run.readings[i].top1);
    reading.predictions += texts[i].predictions();
    reading.first_correct += hits.first_correct();
    reading.second_correct += hits.second_correct();
    first.push_back(std::move(hits.first));
    second.push_back(std::move(hits.second));
  }
  reading.first = bootstrap_mean(units_of(first));
  reading.second = bootstrap_mean(units_of(second));
  return reading;
}

bool copies(const SecondReading& reading) {
  return reading.refused.empty() && reading.predictions > 0 &&
         reading.second.low - reading.first.mean >= kCopyMargin - 1e-12;
}

}  // namespace h2o
