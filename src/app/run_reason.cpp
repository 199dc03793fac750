#include "h2o/app/run_reason.hpp"

#include "h2o/measure/attention_split.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/policy/policy_factory.hpp"
#include "h2o/text/token_text.hpp"

namespace h2o {

std::vector<ShownWord> shown_words(const Tokenizer& tokenizer, const std::vector<int>& tokens) {
  std::vector<ShownWord> words;
  for (const TokenSpan& word : token_words(tokenizer, tokens)) {
    const std::string whole = token_text(tokenizer, tokens, word.begin, word.end);
    std::string text = whole;
    text.erase(0, text.find_first_not_of(" \n\t"));
    text.erase(text.find_last_not_of(" \n\t") + 1);
    if (text.empty()) {  // BOS, or only white space
      text = tokens[word.begin] == Tokenizer::kBos   ? shown_word(tokenizer, tokens, word)
             : whole.find('\n') != std::string::npos ? "(line break)"
                                                     : "(space)";
    }
    words.push_back({word.begin, word.end, text});
  }
  return words;
}

std::string run_reason(std::shared_ptr<const DecoderWeights> weights, const Tokenizer& tokenizer,
                       const std::vector<int>& tokens, const std::string& first,
                       const CacheTrace& first_trace, const std::string& second,
                       const CacheTrace& second_trace) {
  Decoder reader(std::move(weights), make_policy(reference_policy().name), tokens.size());
  const AttentionSplit split = split_full_attention(reader, tokens, first_trace, second_trace);
  const std::vector<ShownWord> words = shown_words(tokenizer, tokens);
  return attention_split_reason(split, first, second, top_words(split.first_only_at, words, 3),
                                top_words(split.second_only_at, words, 3));
}

}  // namespace h2o
