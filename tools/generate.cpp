// generate.cpp: writes a story with a real llama2.c model, keeping its KV cache full, with H2O, or
// with another eviction policy (window, sinks, random, tova; see policy_factory.hpp).
//
// It is llama2.c's run.c generation loop on top of this project's decoder, so the two print the
// same bytes: with --temperature 0 and no prompt, stories260K reproduces run.c's output exactly,
// with the full cache and with any H2O budget large enough never to evict.
//
//   bin/generate                                       data/model.bin, 256 steps, temperature 1.0
//   bin/generate --temperature 0 --steps 200           greedy (= run.c -t 0 -n 200)
//   bin/generate --cache h2o --heavy 32 --recent 32    the same, keeping 64 tokens per KV head
//   bin/generate --cache sinks --sinks 4 --recent 60   StreamingLLM: 4 sinks + the last 60
//   bin/generate --cache h2o --heavy 16 --recent 16 --compress-prompt --prompt "..."
//                                                      read the prompt whole, then cut to 32
//
// --model and --tokenizer default to the files default_files.hpp names (the one place that knows
// where the programs' default model lives).
//
// "--steps N" counts positions as run.c's "-n N" does: the decoder runs N positions, BOS at
// position 0 included, and prints the token sampled after each, so up to N tokens are printed
// (fewer if BOS is sampled, which ends the text). 0 means the model's seq_len, the upper limit.
//
// stdout: the text only, then one newline. stderr: the model and cache in use, run.c's
// "achieved tok/s" line, the KV-cache bytes in use and, for any evicting cache, how many tokens
// were evicted.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "h2o/app/cli.hpp"
#include "h2o/app/generate_options.hpp"
#include "h2o/app/kv_format_options.hpp"
#include "h2o/app/program.hpp"
#include "h2o/app/threads_option.hpp"
#include "h2o/attention/linear.hpp"
#include "h2o/base/format.hpp"
#include "h2o/model/checkpoint.hpp"
#include "h2o/model/decoder.hpp"
#include "h2o/text/sampler.hpp"
#include "h2o/text/tokenizer.hpp"

namespace {

// run.c's safe_printf: a piece that is one raw byte (from a <0xHH> token) is printed only when it
// is a printable ASCII character or whitespace, so control bytes never reach the terminal. As in
// run.c (which runs in the "C" locale) that also skips the single bytes of a UTF-8 character the
// vocabulary lacks; characters the vocabulary holds, like "é", are whole pieces and print.
void print_piece(const std::string& piece) {
  if (piece.empty()) return;
  if (piece.size() == 1) {
    const auto byte = static_cast<unsigned char>(piece[0]);
    const bool printable = byte >= 0x20 && byte <= 0x7E;
    const bool whitespace = byte == ' ' || (byte >= '\t' && byte <= '\r');
    if (!printable && !whitespace) return;
  }
  std::cout << piece << std::flush;
}

int generate(int argc, char** argv) {
  // Step 1: read and check every option before touching any file (app/generate_options.hpp).
  h2o::ArgParser args = h2o::generate_arguments();
  args.parse(argc, argv);
  h2o::GenerateOptions options = h2o::generate_options(args);

  h2o::use_threads_option("generate", options.threads);

  // Step 2: load the model and its tokenizer (each checked completely before use).
  const h2o::ModelFiles& files = options.files;
  // The checkpoint is used in place (memory-mapped, not copied), and the first token's forward
  // pass checks its weights for NaN and infinity as it reads them (checkpoint.hpp: FiniteCheck):
  // a start as fast as run.c's, which checks nothing.
  const auto model = h2o::MappedCheckpoint::open(files.model, h2o::FiniteCheck::by_first_token);
  const h2o::ModelConfig& config = model->config();
  const h2o::Tokenizer tokenizer = h2o::Tokenizer::load(files.tokenizer, config.vocab_size);

  // Step 3: encode the prompt. One that cannot fit in seq_len positions is refused, before any
  // encoding work when its length in bytes alone proves it.
  const std::string& prompt = options.prompt;
  std::vector<int> prompt_tokens;
  try {
    prompt_tokens =
        tokenizer.encode_at_most(prompt, /*add_bos=*/true, /*add_eos=*/false, config.seq_len);
  } catch (const h2o::TooManyTokens& e) {
    throw h2o::UsageError("the prompt is too long: " + e.count_text() +
                          " (BOS included), the model's seq_len is " +
                          std::to_string(config.seq_len));
  }

  // Step 4: how many positions to run: run.c's rule, 0 or more than seq_len means seq_len.
  std::size_t steps = options.steps;
  if (steps == 0 || steps > config.seq_len) {
    if (options.steps_given && steps > config.seq_len) {
      std::cerr << "note: --steps " << steps << " capped at the model's seq_len " << config.seq_len
                << "\n";
    }
    steps = config.seq_len;
  }
  if (prompt_tokens.size() > steps) {
    std::cerr << "note: the prompt has " << prompt_tokens.size() << " tokens, more than --steps "
              << steps << "; only the first " << steps << " are run\n";
  }

  // Step 5: the decoder, sized for exactly `steps` positions, and the sampler.
  if (options.kv_format.quantised())
    h2o::check_kv_group(options.kv_format.group, config.head_dim());
  h2o::Decoder decoder(model->view(), model, std::move(options.policy), steps, options.kv_format);
  h2o::Sampler sampler(config.vocab_size, options.temperature, options.top_p, options.seed);

  // Step 6: run.c's loop. The prompt is forced: its tokens are printed as they are, and run
  // through the decoder in batches (forward_batch, the same logits as one token at a time, much
  // faster; with --compress-prompt, read_prompt_compressed: nothing evicted until the prompt's
  // end, then one cut to the budget); then each next token is sampled from the logits of the last
  // one, until BOS or `steps` positions. As in run.c, a forced BOS inside the prompt ends the text
  // before it.
  using Clock = std::chrono::steady_clock;
  const Clock::time_point run_start = Clock::now();
  std::size_t forced = std::min(prompt_tokens.size(), steps);  // positions fed from the prompt
  for (std::size_t i = 1; i < forced; ++i) {
    if (prompt_tokens[i] == h2o::Tokenizer::kBos) forced = i;
  }
  const std::vector<int> forced_tokens(prompt_tokens.begin(),
                                       prompt_tokens.begin() + static_cast<long>(forced));
  const h2o::Vector* logits = options.compress_prompt
                                  ? &decoder.read_prompt_compressed(forced_tokens)
                                  : &decoder.forward_batch(forced_tokens);
  // Said only now that the first token has checked the weights: a damaged file gets its one-line
  // error alone.
  std::cerr << "model: " << config.describe() << "\n";
  std::cerr << "cache: " << decoder.policy().describe() << "\n";
  for (std::size_t i = 1; i < forced; ++i) {
    print_piece(tokenizer.decode_piece(prompt_tokens[i - 1], prompt_tokens[i]));
  }
  const Clock::time_point prompt_end = Clock::now();
  std::size_t pos = forced;  // positions run so far; the next token goes to position pos
  int token = prompt_tokens[forced - 1];
  bool model_ended = false;  // the model sampled BOS: its story is over before `steps`
  while (true) {
    const bool sampled = pos >= prompt_tokens.size();
    const int next = sampled ? sampler.sample(*logits) : prompt_tokens[pos];
    if (next == h2o::Tokenizer::kBos) {  // the model (or the prompt) says the text is over
      model_ended = sampled;
      break;
    }
    print_piece(tokenizer.decode_piece(token, next));
    token = next;
    if (pos >= steps) break;
    logits = &decoder.forward(token);
    ++pos;
  }
  std::cout << "\n" << std::flush;
  const Clock::time_point run_end = Clock::now();

  // Step 7: measurements, to stderr so that stdout stays the text alone. "achieved tok/s" is
  // run.c's figure: without a prompt, the positions after the first over the time they took (the
  // first is slower: cold caches); with a prompt, which runs in batches, all positions over the
  // whole time.
  auto seconds = [](Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  };
  const Clock::time_point timed_from = forced == 1 ? prompt_end : run_start;
  const std::size_t timed_positions = forced == 1 ? pos - 1 : pos;
  if (timed_positions > 0 && seconds(timed_from, run_end) > 0.0) {
    std::fprintf(stderr, "achieved tok/s: %f\n",
                 static_cast<double>(timed_positions) / seconds(timed_from, run_end));
  }
  if (forced > 1 && seconds(run_start, prompt_end) > 0.0) {
    std::fprintf(stderr, "prompt: %zu tokens in batches, %f tok/s\n", forced,
                 static_cast<double>(forced) / seconds(run_start, prompt_end));
  }
  if (pos > forced && seconds(prompt_end, run_end) > 0.0) {
    std::fprintf(stderr, "decode: %zu tokens, %f tok/s\n", pos - forced,
                 static_cast<double>(pos - forced) / seconds(prompt_end, run_end));
  }
  if (model_ended) {
    // Said, so that a text shorter than asked for is not taken for a cut or a failure.
    std::cerr << "note: the model ended the story (it chose BOS, the start of a new one) after "
              << pos << " positions, before --steps " << steps << "\n";
  }
  std::cerr << "positions run: " << decoder.position() << "\n";
  if (options.threads.threads > 1) std::cerr << h2o::token_threads_summary(options.threads) << "\n";
  // Tokens per layer and KV head on average: budgets may differ by layer (pyramid) or head (adakv).
  std::size_t held = 0;
  for (std::size_t l = 0; l < config.n_layers; ++l) held += decoder.cache(l).total_size();
  std::cerr << "KV cache in use: " << decoder.live_kv_bytes() << " bytes ("
            << held / (config.n_layers * config.n_kv_heads) << " tokens per KV head, "
            << config.n_layers << " layers), " << decoder.reserved_kv_bytes() << " bytes reserved"
            << (options.kv_format.quantised()
                    ? " (" + h2o::describe_kv_format(options.kv_format) + ")"
                    : std::string())
            << "\n";
  if (decoder.policy().kind().evicts) {
    std::vector<std::size_t> evicted;
    std::size_t total = 0;
    for (std::size_t l = 0; l < config.n_layers; ++l) {
      // Per KV head on average (rounded down): Ada-KV's heads of a layer hold different numbers.
      const std::size_t layer_evicted =
          static_cast<std::size_t>(decoder.position()) * config.n_kv_heads -
          decoder.cache(l).total_size();
      evicted.push_back(layer_evicted / config.n_kv_heads);
      total += layer_evicted;
    }
    std::cerr << "evicted tokens per KV head, layer by layer: " << h2o::format_list(evicted)
              << "\n";
    std::cerr << "evicted tokens in all: " << total << " (" << config.n_layers << " layers x "
              << config.n_kv_heads << " KV heads)\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return h2o::run_program(argc, argv, generate); }
