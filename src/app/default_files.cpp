#include "h2o/app/default_files.hpp"

#include <algorithm>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "h2o/app/reading_report.hpp"
#include "h2o/base/files.hpp"
#include "h2o/measure/name_recall.hpp"
#include "h2o/model/checkpoint.hpp"
#include "h2o/text/stories.hpp"
#include "h2o/text/tokenizer.hpp"

namespace h2o {

std::string data_dir() { return H2O_DATA_DIR; }

ModelFiles default_model_files() {
  return {data_dir() + "/model.bin", data_dir() + "/tokenizer.bin"};
}

std::string default_text_file() { return data_dir() + "/heldout_story.txt"; }

std::vector<std::string> default_names_files() {
  std::vector<std::string> files;
  for (const std::filesystem::directory_entry& entry :
       std::filesystem::directory_iterator(data_dir())) {
    const std::string name = entry.path().filename().string();
    const bool names_list = name.find("names") != std::string::npos && name.size() > 4 &&
                            name.compare(name.size() - 4, 4, ".txt") == 0;
    if (names_list && entry.is_regular_file()) files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) throw std::runtime_error("no names lists (*names*.txt) in " + data_dir());
  return files;
}

std::vector<std::string> default_names(const std::vector<std::string>& texts) {
  std::vector<std::string> names;
  std::set<std::string> seen;
  const auto add = [&](const std::vector<std::string>& more) {
    for (const std::string& name : more) {
      if (seen.insert(name).second) names.push_back(name);
    }
  };
  for (const std::string& file : default_names_files()) add(read_names(file));
  for (const std::string& text : texts) add(names_in_text(text));
  return names;
}

ArgParser& add_names_option(ArgParser& args) {
  return args.add_option("names", "PATH", "the project's lists and the text's own names",
                         names_option_help());
}

std::vector<std::string> names_from_options(const ArgParser& args,
                                            const std::vector<std::string>& texts) {
  return args.given("names") ? read_names(args.text("names")) : default_names(texts);
}

void add_model_options(ArgParser& args) {
  const ModelFiles defaults = default_model_files();
  // The help states each file's size limit: the loaders refuse larger files (and non-files).
  args.add_option(
      "model", "PATH", defaults.model,
      "llama2.c checkpoint (legacy format, at most " + byte_size_text(kMaxCheckpointBytes) + ")");
  args.add_option("tokenizer", "PATH", defaults.tokenizer,
                  "llama2.c tokenizer for that model (at most " +
                      byte_size_text(Tokenizer::kMaxFileBytes) + ")");
}

ModelFiles model_files_from_options(const ArgParser& args) {
  return {args.text("model"), args.text("tokenizer")};
}

void add_text_option(ArgParser& args) {
  args.add_option("text", "PATH", default_text_file(),
                  "text: blank lines part paragraphs, <|story|> lines stories (at most " +
                      byte_size_text(kMaxTextBytes) + ")");
}

std::string read_text_option(const ArgParser& args) {
  const std::string path = args.text("text");
  return read_text_file(path, "text file '" + path + "'", kMaxTextBytes);
}

std::vector<std::string> read_stories_option(const ArgParser& args) {
  std::vector<std::string> stories = split_stories(read_text_option(args));
  if (stories.empty()) throw std::runtime_error("text file '" + args.text("text") + "' is empty");
  return stories;
}

ArgParser& add_stories_options(ArgParser& args, const std::string& count) {
  return args
      .add_option("text", "PATH", data_dir() + "/heldout_stories.txt",
                  "stories to read, separated by lines holding only <|story|>")
      .add_option("stories", "N", count, "read the first N stories of --text");
}

TokenisedStories read_stories_options(const ArgParser& args, const Tokenizer& tokenizer,
                                      std::size_t min_tokens, std::size_t max_tokens) {
  const auto n_stories = static_cast<std::size_t>(args.integer("stories", 1, 1000));
  return encode_stories(tokenizer, read_stories_option(args), n_stories, max_tokens, min_tokens,
                        args.text("text"), "the lesson");
}

StoryTokens read_story(const ArgParser& args, const Tokenizer& tokenizer, std::size_t min_tokens,
                       std::size_t max_tokens) {
  const std::vector<std::string> stories = read_stories_option(args);
  const std::string where = std::string(stories.size() > 1 ? "the first story" : "the story") +
                            " in '" + args.text("text") + "' has ";
  StoryTokens story;
  story.text = stories.front();
  story.stories_in_file = stories.size();
  story.paragraphs = paragraph_count(stories.front());
  std::vector<int>& tokens = story.tokens;
  try {
    tokens = tokenizer.encode_at_most(stories.front(), true, false, max_tokens);
  } catch (const TooManyTokens& e) {
    throw std::runtime_error(where + e.count_text() + "; the model reads at most " +
                             std::to_string(max_tokens));
  }
  if (tokens.size() < min_tokens) {
    throw std::runtime_error(where + std::to_string(tokens.size()) + " tokens; it needs at least " +
                             std::to_string(min_tokens));
  }
  return story;
}

}  // namespace h2o
