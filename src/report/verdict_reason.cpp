#include "h2o/report/verdict_reason.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include "h2o/base/format.hpp"

namespace h2o {

std::vector<WordShare> top_words(const std::vector<double>& share_at,
                                 const std::vector<ShownWord>& words, std::size_t count) {
  std::vector<WordShare> summed;          // in order of first mention
  std::map<std::string, std::size_t> at;  // text -> index in summed
  for (const ShownWord& word : words) {
    if (word.begin > word.end || word.end > share_at.size()) {
      throw std::invalid_argument("top_words: a word at positions " + std::to_string(word.begin) +
                                  "-" + std::to_string(word.end) + " of a text of " +
                                  std::to_string(share_at.size()));
    }
    double share = 0.0;
    for (std::size_t p = word.begin; p < word.end; ++p) share += share_at[p];
    const auto found = at.emplace(word.text, summed.size());
    if (found.second) summed.push_back({word.text, 0.0});
    summed[found.first->second].share += share;
  }
  summed.erase(std::remove_if(summed.begin(), summed.end(),
                              [](const WordShare& w) { return !(w.share > 0.0); }),
               summed.end());
  std::stable_sort(summed.begin(), summed.end(),
                   [](const WordShare& a, const WordShare& b) { return a.share > b.share; });
  if (summed.size() > count) summed.resize(count);
  return summed;
}

namespace {

// "4.1% ... to tokens h2o held and window had evicted, most to "Noufem" (1.2 points), ..."
std::string side(double share, const std::string& kept_by, const std::string& lost_by,
                 const std::vector<WordShare>& words, bool first) {
  std::string text = fixed(100.0 * share, 1) + "%" +
                     (first ? " of its attention (a mean over every layer and query head)" : "") +
                     " to tokens " + kept_by + " held and " + lost_by + " had evicted";
  for (std::size_t i = 0; i < words.size(); ++i) {
    text += (i == 0 ? ", most to \"" : ", \"") + words[i].text + "\" (" +
            fixed(100.0 * words[i].share, 1) + (i == 0 ? " points)" : ")");
  }
  return text;
}

}  // namespace

std::string attention_split_reason(const AttentionSplit& split, const std::string& first,
                                   const std::string& second,
                                   const std::vector<WordShare>& first_words,
                                   const std::vector<WordShare>& second_words) {
  // The sides compare as printed (one decimal of a percent), so that the words match the numbers.
  const std::string a = fixed(100.0 * split.first_only, 1), b = fixed(100.0 * split.second_only, 1);
  const std::string lean = a == b ? "so neither held more of what the full cache attended to"
                           : split.first_only > split.second_only
                               ? "so " + first + " held more of what the full cache attended to"
                               : "so " + second + " held more of what the full cache attended to";
  return "over its " + std::to_string(split.steps) + " steps the full cache gave " +
         side(split.first_only, first, second, first_words, true) + "; and " +
         side(split.second_only, second, first, second_words, false) + "; " + lean;
}

std::string full_cache_count(std::size_t recalled, std::size_t events) {
  if (events == 0) return "the text has no long-gap names";
  return "the full cache recalls " + std::to_string(recalled) + " of " + std::to_string(events) +
         " long-gap names";
}

std::string full_cache_names(std::size_t recalled, std::size_t events, std::size_t gap) {
  if (events == 0) {
    return "the text has no long-gap names (last seen more than " + std::to_string(gap) +
           " tokens back): compare perplexity only";
  }
  const std::string counted = full_cache_count(recalled, events);
  if (recalled > 0) return counted;
  return counted +
         ": this model does not use the story's names here, so what policies "
         "recall of them says nothing of their caches; compare perplexity only";
}

}  // namespace h2o
