// unseen_stories.cpp: the full cache on stories in unseen voices (unseen_stories.hpp).
#include "h2o/app/unseen_stories.hpp"

#include <filesystem>
#include <stdexcept>
#include <vector>

#include "h2o/app/default_files.hpp"
#include "h2o/base/files.hpp"
#include "h2o/measure/name_recall.hpp"
#include "h2o/text/stories.hpp"

namespace h2o {

ArgParser& add_unseen_options(ArgParser& args) {
  return args
      .add_option("unseen", "PATH", data_dir() + "/unseen_stories.txt",
                  "stories in unseen voices, full cache only (none: skip)")
      .add_option("unseen-names", "PATH", "",
                  "their names (default: unseen_names.txt, or the text's)");
}

std::optional<UnseenReading> read_unseen_option(const ArgParser& args,
                                                std::shared_ptr<const DecoderWeights> weights,
                                                const Tokenizer& tokenizer, std::size_t min_gap) {
  const std::string path = args.text("unseen");
  if (path == "none") return std::nullopt;
  const std::vector<std::string> texts =
      split_stories(read_text_file(path, "unseen stories file '" + path + "'", kMaxTextBytes));
  if (texts.empty()) throw std::runtime_error("unseen stories file '" + path + "' is empty");
  UnseenReading unseen;
  unseen.file = std::filesystem::path(path).filename().string();
  unseen.seq_len = weights->config.seq_len;
  std::vector<std::vector<int>> stories;  // (K,) x (N_i,) token ids, BOS first
  for (const std::string& story : texts) {
    stories.push_back(tokenizer.encode(story, true, false));
    if (stories.back().size() > unseen.seq_len) {  // cut to what the model can read
      stories.back().resize(unseen.seq_len);
      ++unseen.cut;
    }
    unseen.tokens += stories.back().size();
  }
  unseen.stories = stories.size();
  const std::string names_path = args.given("unseen-names") ? args.text("unseen-names")
                                 : args.given("unseen")     ? ""
                                                            : data_dir() + "/unseen_names.txt";
  const std::vector<std::string> names =
      names_path.empty() ? default_names(texts) : read_names(names_path);
  const SweepText text = sweep_text(tokenizer, stories, names_as_tokens(tokenizer, names), min_gap);
  unseen.full = read_full_cache(std::move(weights), text);
  return unseen;
}

}  // namespace h2o
