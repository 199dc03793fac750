// stories.hpp: files of several stories, as the project's corpus and held-out texts are written.
//
// Stories are separated by one empty line ("\n\n"); paragraphs inside a story by a single
// newline, so no story holds an empty line (training/make_corpus.py writes them so). Each story is
// encoded on its own, BOS first, as the model was trained.
#pragma once

#include <string>
#include <vector>

namespace h2o {

// The stories of `text`, each without its surrounding newlines; empty pieces are dropped. Windows
// line endings ("\r\n") count as "\n" (and the stories hold "\n" only).
std::vector<std::string> split_stories(const std::string& text);

}  // namespace h2o
