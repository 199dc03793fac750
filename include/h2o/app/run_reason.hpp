// run_reason.hpp: the reason the explorer page and lesson 09 give for a verdict of one policy
// against another, made from the run itself: the full cache reads the text again with its
// attention recorded, split by what the two policies' caches held at each step
// (measure/attention_split.hpp), and the words that drew most of each side, as a reader sees them
// (report/verdict_reason.hpp's sentence).
//
// Dimension legend: N = tokens of the text (BOS first).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "h2o/measure/cache_trace.hpp"
#include "h2o/model/weights.hpp"
#include "h2o/report/verdict_reason.hpp"
#include "h2o/text/tokenizer.hpp"

namespace h2o {

// (W,) the words of tokens (N,) as a reader sees them, without the spaces around them ("Noufem";
// BOS, which has no text, "<BOS>"; a word of white space "(line break)" or "(space)").
std::vector<ShownWord> shown_words(const Tokenizer& tokenizer, const std::vector<int>& tokens);

// attention_split_reason for `first` (its trace of tokens) against `second`, with the top 3
// words of each side.
std::string run_reason(std::shared_ptr<const DecoderWeights> weights, const Tokenizer& tokenizer,
                       const std::vector<int>& tokens, const std::string& first,
                       const CacheTrace& first_trace, const std::string& second,
                       const CacheTrace& second_trace);

}  // namespace h2o
