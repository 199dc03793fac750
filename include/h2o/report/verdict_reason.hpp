// verdict_reason.hpp: why one policy read a text better or worse than another, in one sentence
// made from that very run: how much of the full cache's attention fell on tokens the first policy
// held and the second had evicted, and the reverse (measure/attention_split.hpp), and the words
// that drew most of each. The explorer page gives it as the reason for its verdict. And what every
// names comparison rests on: how many long-gap names the full cache itself recalls.
//
// Dimension legend: N = tokens of the text, W = words.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "h2o/measure/attention_split.hpp"

namespace h2o {

// A word of the text: its tokens' positions [begin, end) and its text as shown ("Noufem").
struct ShownWord {
  std::size_t begin = 0, end = 0;
  std::string text;
};

// One word's part of a split's share (summed over every mention of the same text).
struct WordShare {
  std::string text;
  double share = 0.0;  // 0..1, a part of AttentionSplit::first_only or second_only
};

// The `count` words with the largest summed share of `share_at` (N,), largest first (ties: the
// word mentioned first), words with no share left out; the words' mentions (W,) cover positions
// of share_at. Throws std::invalid_argument when a word reaches past share_at.
std::vector<WordShare> top_words(const std::vector<double>& share_at,
                                 const std::vector<ShownWord>& words, std::size_t count);

// The sentence, e.g. "over its 900 steps the full cache gave 4.1% of its attention (a mean over
// every layer and query head) to tokens h2o held and window had evicted, most to "Noufem" (1.2
// points), "." (0.8), "Rue" (0.3), and 6.3% to tokens window held and h2o had evicted, most to
// "the" (1.5 points), ...; so window held more of what the full cache attended to". first_words
// and second_words: top_words of the split's two sides.
std::string attention_split_reason(const AttentionSplit& split, const std::string& first,
                                   const std::string& second,
                                   const std::vector<WordShare>& first_words,
                                   const std::vector<WordShare>& second_words);

// What the full cache recalls of a text's `events` long-gap names (name_recall.hpp), said before
// policies are weighed on them:
//   "the full cache recalls 5 of 10 long-gap names"
//   "the full cache recalls 0 of 22 long-gap names: this model does not use the story's names
//    here, so what policies recall of them says nothing of their caches; compare perplexity
//    only"
//   "the text has no long-gap names (last seen more than 64 tokens back): compare perplexity only"
std::string full_cache_names(std::size_t recalled, std::size_t events, std::size_t gap);
// The count alone, for a text the model does not know, where no comparison is drawn at all:
// "the full cache recalls 0 of 3 long-gap names", "the text has no long-gap names".
std::string full_cache_count(std::size_t recalled, std::size_t events);
// Whether a names comparison between policies means anything: the full cache recalls some.
inline bool names_comparable(std::size_t full_recalled, std::size_t events) {
  return events > 0 && full_recalled > 0;
}

}  // namespace h2o
