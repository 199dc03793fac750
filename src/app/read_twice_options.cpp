#include "h2o/app/read_twice_options.hpp"

#include <stdexcept>

namespace h2o {

std::string ReadTwiceOptions::option() const {
  if (twice > 0) return "--twice " + std::to_string(twice);
  return "--secret " + std::to_string(secret) +
         (secret_at > 0 ? " --secret-at " + std::to_string(secret_at) : "");
}

std::string ReadTwiceOptions::placement(const std::string& stories) const {
  return secret_at == 0 ? "before " + stories
                        : "after the first " + std::to_string(secret_at) + " tokens of " + stories;
}

void add_read_twice_options(ArgParser& args, const std::string& stories) {
  args.add_option("twice", "N", "",
                  "read " + stories +
                      " first N tokens twice in a row; show how much of the second reading each "
                      "policy predicts, beside the first");
  args.add_option("secret", "N", "",
                  "as --twice, with N random pieces (a secret) before each story and again "
                  "after it");
  args.add_option("secret-at", "P", "0",
                  "with --secret: plant the secret's first copy after the story's first P tokens, "
                  "away from the attention sinks right after BOS");
}

ReadTwiceOptions read_twice_options(const ArgParser& args) {
  ReadTwiceOptions options;
  const long long most = 1 << 20;
  if (args.given("twice")) options.twice = static_cast<std::size_t>(args.integer("twice", 2, most));
  if (args.given("secret")) {
    options.secret = static_cast<std::size_t>(args.integer("secret", 2, most));
  }
  if (args.given("twice") && args.given("secret")) {
    throw UsageError("--twice and --secret are two different readings: give one of them");
  }
  if (args.given("secret-at")) {
    if (!args.given("secret")) throw UsageError("--secret-at places --secret's secret: give both");
    options.secret_at = static_cast<std::size_t>(args.integer("secret-at", 0, most));
  }
  return options;
}

std::vector<TwoReadings> two_readings(const ReadTwiceOptions& options,
                                      const std::vector<std::string>& stories,
                                      const Tokenizer& tokenizer, std::size_t positions,
                                      const std::string& text_name) {
  const bool twice = options.twice > 0;
  const std::size_t n = twice ? options.twice : options.secret;
  const std::string option = options.option();
  // BOS, the two readings and (--secret) at least one token of the story between them.
  const std::size_t least = 2 * n + (twice ? 1 : 2);
  if (least > positions) {
    throw std::runtime_error(option + ": the two readings take at least " + std::to_string(least) +
                             " positions (BOS included); the model reads at most " +
                             std::to_string(positions));
  }
  const std::vector<int> pieces = twice ? std::vector<int>() : secret_pieces(tokenizer);
  if (!twice && n > pieces.size()) {
    throw std::runtime_error(option + ": the vocabulary has only " + std::to_string(pieces.size()) +
                             " pieces to draw a secret of distinct pieces from");
  }
  std::vector<TwoReadings> readings;
  for (std::size_t i = 0; i < stories.size(); ++i) {
    const std::string story_name = "story " + std::to_string(i + 1) + " of '" + text_name + "'";
    if (twice) {
      // Only the first n tokens are read: the story may be longer than the model reads.
      const std::vector<int> tokens = tokenizer.encode(stories[i], true, false);
      if (tokens.size() - 1 < n) {
        throw std::runtime_error(option + ": " + story_name + " has only " +
                                 std::to_string(tokens.size() - 1) +
                                 " tokens (BOS not counted) to read twice");
      }
      readings.push_back(read_twice(tokens, n));
      continue;
    }
    std::vector<int> tokens;
    try {
      tokens = tokenizer.encode_at_most(stories[i], true, false, positions - 2 * n);
    } catch (const TooManyTokens& e) {
      throw std::runtime_error(option + ": " + story_name + " has " + e.count_text() +
                               " (BOS included): with the secret written twice, more than "
                               "the model's " +
                               std::to_string(positions) + " positions");
    }
    // Planted inside the story, at least one of its tokens stays between the readings.
    if (options.secret_at > 0 && options.secret_at >= tokens.size() - 1) {
      throw std::runtime_error(option + ": " + story_name + " has only " +
                               std::to_string(tokens.size() - 1) +
                               " tokens (BOS not counted): the secret must be planted before its "
                               "last one");
    }
    readings.push_back(
        plant_secret(tokens, secret_passage(pieces, n, kSecretSeed + i), options.secret_at));
  }
  return readings;
}

}  // namespace h2o
