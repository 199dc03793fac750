#include "h2o/app/reading_report.hpp"

#include <algorithm>

#include "h2o/base/format.hpp"

namespace h2o {

namespace {
// "1 token", "2 tokens", "2 stories".
std::string plural(std::size_t count, const std::string& word) {
  if (count == 1) return "1 " + word;
  if (word.back() == 'y')
    return std::to_string(count) + " " + word.substr(0, word.size() - 1) + "ies";
  return std::to_string(count) + " " + word + "s";
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// Said wherever a text in a script without capitals shows no name: names_in_text cannot find its
// characters, so a count of none would otherwise read as a story without any.
const char* const kNoCapitalsNote =
    "The text's script has no capitals to find names by: list its characters' names with --names.";
}  // namespace

std::string names_option_help() {
  // Short enough for one line of --help (the full rule: measure/name_recall.hpp, README).
  return "names, one a line; a name split into tokens counts when all are predicted";
}

std::string reading_summary(const std::string& file_name, std::size_t stories_read,
                            std::size_t stories_in_file, std::size_t paragraphs, std::size_t tokens,
                            std::optional<std::size_t> name_events, std::size_t min_gap) {
  std::string out =
      "read " + (stories_read == stories_in_file
                     ? plural(stories_read, "story")
                     : std::to_string(stories_read) + " of " + plural(stories_in_file, "story"));
  out += " of " + file_name;
  if (paragraphs > 0) out += " (" + plural(paragraphs, "paragraph") + ")";
  out += ": " + plural(tokens, "token");
  if (name_events) {
    out += ", " + plural(*name_events, "name event") + " (a name last seen more than " +
           std::to_string(min_gap) + " tokens back)";
  }
  return wrap_words(out, 100, "  ");
}

std::string name_use_notes(const NameTokens& names, const std::vector<std::vector<int>>& texts,
                           const std::string& indent) {
  std::vector<bool> mentioned(names.names.size(), false);  // (K,)
  std::vector<std::string> unusable;
  for (const std::vector<int>& tokens : texts) {
    const NameMentions found = find_name_mentions(tokens, names);
    for (const NameMention& mention : found.mentions) mentioned[mention.name] = true;
    for (const std::string& name : found.unusable) {
      if (std::find(unusable.begin(), unusable.end(), name) == unusable.end()) {
        unusable.push_back(name);
      }
    }
  }
  std::vector<std::string> split;
  for (std::size_t k = 0; k < names.names.size(); ++k) {
    if (mentioned[k] && names.tokens_per_name[k] > 1) {
      split.push_back(names.names[k] + " (" + std::to_string(names.tokens_per_name[k]) +
                      " tokens)");
    }
  }
  std::string out;
  auto note = [&](const std::string& text) {
    out += wrap_words(indent + text, 100, indent) + "\n";
  };
  if (!split.empty()) {
    note("Names the tokenizer splits (recalled only when every token is predicted): " +
         joined(split));
  }
  if (!unusable.empty()) {
    note("Names in the text it could not use (a token also holds text around them): " +
         joined(unusable));
  }
  if (std::none_of(mentioned.begin(), mentioned.end(), [](bool m) { return m; })) {
    // A script without capitals shows no names by names_in_text's rule: say so, rather than
    // leave the reader thinking the story has no characters.
    bool uncased = false;
    for (const std::vector<int>& tokens : texts) {
      std::string text;
      for (const int token : tokens) {
        const auto id = static_cast<std::size_t>(token);
        if (id < names.token_text.size()) text += names.token_text[id];
      }
      uncased = uncased || has_letters_without_capitals(text);
    }
    note("No name of the names list occurs in the text: name recall has nothing to count." +
         std::string(uncased ? std::string(" ") + kNoCapitalsNote : ""));
  }
  return out;
}

std::string no_capitals_note(const std::vector<std::string>& texts, std::size_t name_events,
                             const std::string& indent) {
  if (name_events > 0) return "";
  for (const std::string& text : texts) {
    if (has_letters_without_capitals(text)) {
      return wrap_words(indent + kNoCapitalsNote, 100, indent) + "\n";
    }
  }
  return "";
}

}  // namespace h2o
