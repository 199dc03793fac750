// reading_report.hpp: what a program that reads stories says about what it read, in the same words
// everywhere (lessons 09-11, compare_policies): how many stories, tokens and name events, which
// names the tokenizer splits, and which it could not use.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "h2o/measure/name_recall.hpp"

namespace h2o {

// The help of --names: what the list is for and what counts (measure/name_recall.hpp).
std::string names_option_help();

// "read 1 of 50 stories of heldout_stories.txt (13 paragraphs): 912 tokens, 14 name events
// (a name last seen more than 64 tokens back)", wrapped to 100 columns (later lines indented by
// two spaces), no final newline. `paragraphs` 0 leaves the paragraphs out; a program that reads
// no names passes no name_events.
std::string reading_summary(const std::string& file_name, std::size_t stories_read,
                            std::size_t stories_in_file, std::size_t paragraphs, std::size_t tokens,
                            std::optional<std::size_t> name_events, std::size_t min_gap = 0);

// Notes on the names of texts (N_i,) for this tokenizer, lines wrapped to 100 columns, each
// starting with `indent` and ending in "\n"; "" when there is nothing to say:
//   names the texts mention that the tokenizer splits into several tokens (and how they count);
//   names written in the texts that could not be used (not whole tokens);
//   that no listed name occurs at all (and, for a text in a script without capitals, that only
//   --names can name its characters).
std::string name_use_notes(const NameTokens& names, const std::vector<std::vector<int>>& texts,
                           const std::string& indent);

// For texts (which showed `name_events` long-gap name events) in a script without capitals and
// without a single event: a line, starting with `indent` and ending in "\n", saying that only
// --names can name their characters (names_in_text finds none there); "" otherwise.
std::string no_capitals_note(const std::vector<std::string>& texts, std::size_t name_events,
                             const std::string& indent);

}  // namespace h2o
