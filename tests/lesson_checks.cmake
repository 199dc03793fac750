# Every lesson runs under CTest; its key lines must appear in its output (literal text).
# Lessons 01-04 (foundation). Lessons 01-06 take no options: they answer --help and refuse
# anything else (the loop at the end checks both). Lesson 04's one flag, --step (the classroom
# step mode), is checked in step_mode_checks.cmake.
h2o_check_program(NAME lesson_01_blog_choice TARGET 01_heavy_and_recent
  EXPECT "heavy_size = 2, recent_size = 2" "recent [because, it]" "heavy [The, cat]"
         "kept cache [The, cat, because, it]" "evicted [sat]"
         "library h2o::plan_keep (used from now on) agrees: yes")
# Step 5 of lesson 01 runs the library's plan_keep itself (issue 9: the lesson's own idea is
# written once, inline, in steps 1-4), so it prints no separate "library agrees" line. The budget
# lesson 01 once took as --heavy 1 --recent 3 is a unit test now (test_selection.cpp), and so are
# the refusals of bad budgets (lesson 07, which keeps --heavy and --recent, checks them below).
h2o_check_program(NAME lesson_01_handbook_example TARGET 01_heavy_and_recent
  EXPECT "recent positions [3, 4], heavy positions [0, 2]" "kept positions [0, 2, 3, 4]"
         "evicted positions [1]")
h2o_check_program(NAME lesson_01_tie_and_special_budgets TARGET 01_heavy_and_recent
  EXPECT "a tie - on equal scores the older token stays, heavy 2 + recent 2 = 4 tokens"
         "heavy positions [0, 1]" "kept positions [0, 1, 3, 4], evicted positions [2]"
         "heavy 0 is a sliding window (the blog's scores), heavy 0 + recent 3 = 3 tokens"
         "kept positions [2, 3, 4], evicted positions [0, 1]"
         "recent 0 keeps top scores only (the blog's scores), heavy 3 + recent 0 = 3 tokens"
         "kept positions [0, 1, 2], evicted positions [3, 4]")
h2o_check_program(NAME lesson_01_takes_no_options TARGET 01_heavy_and_recent ARGS --heavy 1
  EXIT nonzero STREAM stderr EXPECT "01_heavy_and_recent: error: unknown option --heavy")
# Lesson 02's "total score = start + steps" balance is a unit test now (test_selection.cpp,
# "accumulate_attention adds one unit of score per step").
h2o_check_program(NAME lesson_02_blog_sum TARGET 02_score_accumulation
  EXPECT "new scores [1.20, 1.20, 0.50]" "library h2o::accumulate_attention (used from now on) agrees: yes")
h2o_check_program(NAME lesson_02_heavy_hitter_emerges TARGET 02_score_accumulation
  EXPECT "cat           1.20         1.92         3.12" "largest score: cat (3.12)"
         "heavy [cat], kept cache [cat, was, tired]")
h2o_check_program(NAME lesson_03_rows_move_together TARGET 03_evict_rows
  EXPECT "keep_indices [0, 1, 3, 4]"
         "every row's key and value still belong to its position: yes"
         "KV numbers: 20 before, 16 after"
         "library h2o::ToyKVCache::keep gives the same rows: yes")
# "Forgetting the values is caught" left lesson 03 with attention_output, which lesson 05 teaches:
# test_attention.cpp checks that message ("attention refuses mismatched shapes").
h2o_check_program(NAME lesson_03_misaligned_rows TARGET 03_evict_rows
  EXPECT "0.51  <- the value of position 4" "0.22  <- the value of position 3"
         "rows with a wrong value: 2 of 4"
         "forgetting the scores is caught: plan_keep: 4 positions but 5 scores")
# Lesson 04's replay of its runs through h2o::H2OPolicy moved to the unit tests (issue 9: a
# library cross-check no lesson teaches): test_toy_cache.cpp, "the library h2o policy makes the
# toy cache's online decisions", checks it over 200 seeded runs.
h2o_check_program(NAME lesson_03_stray_argument TARGET 03_evict_rows ARGS extra
  EXIT nonzero STREAM stderr EXPECT "unexpected argument 'extra'")
h2o_check_program(NAME lesson_04_blog_sentence TARGET 04_online_tokens
  EXPECT "score          1.78     1.58     0.91     0.51     0.22"
         "evict [sat] -> cache [The, cat, because, it]"
         "evict [because] -> cache [The, cat, it, was]" "evict [it] -> cache [The, cat, was, tired]"
         "full cache: 7 tokens and 28 KV numbers" "H2O cache: 4 tokens and 16 KV numbers")
# Other seeds and lengths of the handbook's demo (lesson 04 once took --seed 7 --tokens 200) are a
# unit test now: test_toy_cache.cpp, "the handbook demonstration keeps the boosted positions".
h2o_check_program(NAME lesson_04_handbook_demo TARGET 04_online_tokens
  EXPECT "after 50 tokens: positions [0, 1, 2, 3, 4, 5, 6, 10, 42, 43, 44, 45, 46, 47, 48, 49]"
         "positions 5 and 10 survive with the two largest scores: yes"
         "the other heavy slots hold positions [0, 1, 2, 3, 4, 6], none of them boosted")

# Lessons 05-08 (attention, KV cache, H2O tensor cache, full vs H2O)
h2o_check_program(NAME lesson_05_blog_weights TARGET 05_attention_qkv
  EXPECT "attention = softmax(scores): The: 0.20, cat: 0.50, sat: 0.30" "sum = 1.00"
         "xt::linalg::dot(query, xt::transpose(keys))")
h2o_check_program(NAME lesson_06_cache_equals_recompute TARGET 06_kv_cache
  EXPECT "16 with the cache (2 per token), 72 without" "4.5x less projection work")
h2o_check_program(NAME lesson_07_modes_and_library_agree TARGET 07_h2o_tensor_cache
  EXPECT "per-head mode: each head is step 2's cache run on its own"
         "positions: yes); 3 of 3 heads still hold their own favourite token"
         "11  (4, 4)     [0, 1, 10, 11]     [2.28, 7.20, 0.29, 0.04]")
# (The library cross-check "LayerKVCache + H2OPolicy kept the same positions" left lesson 07 for
# the unit tests, which compare H2OPolicy with plan_keep at every step; lesson 07 now writes the
# scoring out on a LayerKVCache itself.)
h2o_check_program(NAME lesson_07_bad_budget TARGET 07_h2o_tensor_cache ARGS --heavy 0 --recent 0
  EXIT nonzero STREAM stderr EXPECT "--heavy 0 --recent 0: heavy + recent must be at least 1")
h2o_check_program(NAME lesson_07_negative_budget TARGET 07_h2o_tensor_cache ARGS --heavy -1
  EXIT nonzero STREAM stderr EXPECT "07_h2o_tensor_cache: error: --heavy must be between 0 and 1000000, got -1")
h2o_check_program(NAME lesson_07_help TARGET 07_h2o_tensor_cache ARGS --help
  EXPECT "--heavy N" "--recent N" "--tokens N" "--seed N")
h2o_check_program(NAME lesson_08_blog_numbers TARGET 08_full_vs_h2o
  EXPECT "Full cache: 7 tokens and 28 KV numbers" "H2O cache: 4 tokens and 16 KV numbers"
         "first eviction at position 8; logits identical through that position: yes"
         "the weights are random" "LessonH2O and h2o::H2OPolicy gave the same logits at 32 of 32 steps"
         "the logits of full and LessonH2O at positions 6-11 of 0-31"
         "    8    468               9              8          0.000000  yes"
         "KV bytes at the end: full 40960, H2O 10240 (25.0% of full)")
h2o_check_program(NAME lesson_08_big_budget_equals_full TARGET 08_full_vs_h2o
  ARGS --heavy 20 --recent 20 --tokens 32
  EXPECT "H2O never had to evict; logits identical at every step: yes"
         "the top token agreed on 32 of 32 steps"
         "LessonH2O and h2o::H2OPolicy gave the same logits at 32 of 32 steps")
h2o_check_program(NAME lesson_08_unknown_flag TARGET 08_full_vs_h2o ARGS --budget 3
  EXIT nonzero STREAM stderr EXPECT "unknown option --budget")
h2o_check_program(NAME lesson_08_help TARGET 08_full_vs_h2o ARGS --help EXPECT "usage: 08_full_vs_h2o")

# Lessons 09-11 (real model): the project's own model in data/ by default, so they always run.
h2o_check_program(NAME lesson_09_bad_budgets TARGET 09_real_model ARGS --budgets 0,20
  EXIT nonzero STREAM stderr EXPECT "--budgets expects percentages from 1 to 100")
h2o_check_program(NAME lesson_09_real_model TARGET 09_real_model
  EXPECT "Step 1: loaded model.bin" "the text in heldout_story.txt is 912 tokens long"
         "times the next token is a character's name last seen more than 64 tokens back"
         "H2O 10% (45+46)" "window 10% (91)" "H2O 50% (228+228)" "window 50% (456)"
         "name recall" "Step 5: the heavy hitters kept at the end by the smallest H2O cache" "(H2O, heavy 45 + recent 46 = 91 tokens"
         "old tokens; names:" "The answer (details in steps 1-5 below)"
         "Against a plain window of the same size, H2O has the lower perplexity at"
         "long-gap names against the window's" "Name recall rests on only 9 name events")
# The whole story, every paragraph; a text the model does not know (the hand-written stories):
# one warning, the measurements, and no verdict; names of several tokens are listed.
h2o_check_program(NAME lesson_09_reads_whole_story TARGET 09_real_model
  EXPECT "read 1 story of heldout_story.txt (13 paragraphs): 912 tokens, 9 name events"
         "perplexity 1.552, 0.146 bits per byte" "bits/byte"
  FORBID "Warning")
h2o_check_program(NAME lesson_09_text_beyond_the_model TARGET 09_real_model
  ARGS --text "${PROJECT_SOURCE_DIR}/data/handwritten_stories.txt"
       --names "${PROJECT_SOURCE_DIR}/data/handwritten_names.txt"
  EXPECT "read 1 of 21 stories of handwritten_stories.txt (4 paragraphs): 230 tokens, 1 name event"
         "Warning: the model does not know text like this: even the full cache reads it at 5.72 bits"
         "no verdict is drawn"
         "Names the tokenizer splits (recalled only when every token is predicted): Lily (3 tokens),"
         "Step 4: H2O"
  FORBID "Against a plain window" "better" "tokens kept")
h2o_check_program(NAME lesson_11_text_beyond_the_model TARGET 11_how_much_cache
  ARGS --text "${PROJECT_SOURCE_DIR}/data/handwritten_stories.txt" --budgets 10,50 --prompts 50
  EXPECT "Warning: the model does not know text like this" "Steps 3 and 4 (the verdicts) are left out."
         "bits per byte (full 5.723)" "Step 6: prompt-time or token by token?"
  FORBID "The claim" "The paper's" "Step 3:" "Step 4:" "agrees more with the full cache")
# stories260K (external, for comparison): its own tokenizer splits the project's names, so there
# are no name positions to count, and its shorter seq_len needs the shorter story.
set(h2o_stories260k_args --model "${H2O_MODELS_DIR}/stories260K/stories260K.bin"
    --tokenizer "${H2O_MODELS_DIR}/stories260K/tok512.bin" --text "${PROJECT_SOURCE_DIR}/data/story.txt")
h2o_check_program(NAME lesson_09_stories260k TARGET 09_real_model ARGS ${h2o_stories260k_args}
  REQUIRES "${H2O_MODELS_DIR}/stories260K/stories260K.bin"
  EXPECT "Step 1: loaded stories260K.bin" "the text in story.txt is 383 tokens long"
         "0 times the next token is a character's name" "full cache" "3.029" "H2O 10% (19+19)"
         "window 10% (38)" "H2O 50% (96+96)" "window 50% (192)" "The answer (details in steps 1-5"
         "This text has no long-gap names for this tokenizer: only perplexity counts.")

# Every lesson prints the same bytes on every run, within 100 columns.
foreach(lesson 01_heavy_and_recent 02_score_accumulation 03_evict_rows 04_online_tokens
               05_attention_qkv 06_kv_cache 07_h2o_tensor_cache 08_full_vs_h2o 09_real_model
               10_sparse_attention 11_how_much_cache)
  h2o_check_stable_output(NAME lesson_${lesson}_stable_and_narrow TARGET ${lesson})
  h2o_check_program(NAME lesson_${lesson}_help TARGET ${lesson} ARGS --help
    EXPECT "usage: ${lesson} [options]" "--help")
  h2o_check_program(NAME lesson_${lesson}_rejects_unknown_option TARGET ${lesson} ARGS --no-such-option
    EXIT nonzero STREAM stderr EXPECT "${lesson}: error: unknown option --no-such-option")
endforeach()

# What lessons 05-11 compute, beyond their headline numbers.
h2o_check_program(NAME lesson_05_output_and_favourite TARGET 05_attention_qkv
  EXPECT "Q . K = [0.3000, 1.6000, 0.9000], / sqrt(2) = [0.2121, 1.1314, 0.6364]"
         "output = xt::linalg::dot(attention, values) = [0.3503, 0.6497]"
         "the loop written out gives the same numbers as xt::linalg::dot"
         "sum = 1.00; cat's key fits Q best"
         "h2o::attend, used from now on, gives [0.3503, 0.6497]: the same numbers as xt::linalg::dot"
  FORBID "NOT the same")
h2o_check_program(NAME lesson_06_cached_equals_recomputed TARGET 06_kv_cache
  EXPECT "largest |cached output - recomputed output| over all tokens: " FORBID "MISMATCH")
# Lesson 06 over 64 tokens (it once took --tokens 64 --seed 3) is a unit test now:
# test_toy_cache.cpp, "a cache built with append_row attends like recomputing".
h2o_check_program(NAME lesson_07_shared_mode_loses_favourites TARGET 07_h2o_tensor_cache
  EXPECT "favourite old tokens: positions [1, 3, 5]" "shared mode:   1 of 3 heads do: one list serves every head")
h2o_check_program(NAME lesson_09_explicit_missing_model_is_an_error TARGET 09_real_model
  ARGS --model ${CMAKE_CURRENT_BINARY_DIR}/no-such-model.bin
  EXIT nonzero STREAM stderr EXPECT "no-such-model.bin' does not exist")
h2o_check_program(NAME lesson_09_full_budget_evicts_nothing TARGET 09_real_model ARGS --budgets 100
  EXPECT "none: that budget holds the whole text" "same: nothing was evicted")

# Lesson 10: the three measures on the shipped model, and its two pictures.
h2o_check_program(NAME lesson_10_measures TARGET 10_sparse_attention
  EXPECT "Step 1: model.bin (dim 128, hidden 384, 4 layers, 8 heads, 4 KV heads, vocab 1792"
         "reads 912 tokens of heldout_story.txt with the full cache:"
         "4 layers x 8 heads x 912 steps of attention."
         "layer  weights < 1% of row max  top 1% hold  top 5%  top 10%  power-law slope   R^2"
         "of the weights are below 1% of their row's largest (the paper: over 95%)"
         "t=114 -> 228  t=228 -> 456  t=456 -> 912" "Step 5: the heaviest hitters of layer"
         "<BOS>[0]=" "The answer (details in steps 1-5 below)" "of the leaders at t still lead at 2t")
h2o_check_program(NAME lesson_10_stories260k TARGET 10_sparse_attention ARGS ${h2o_stories260k_args}
  REQUIRES "${H2O_MODELS_DIR}/stories260K/stories260K.bin"
  EXPECT "Step 1: stories260K.bin (dim 64, hidden 172, 5 layers, 8 heads, 4 KV heads"
         "5 layers x 8 heads x 383 steps of attention." "The answer (details in steps 1-5 below)")
h2o_check_program(NAME lesson_10_missing_text TARGET 10_sparse_attention
  ARGS --text ${CMAKE_CURRENT_BINARY_DIR}/no-such-story.txt EXIT nonzero STREAM stderr
  EXPECT "10_sparse_attention: error: " "no-such-story.txt' does not exist")
foreach(picture attention_heatmap rank_score)
  set(folder ${CMAKE_CURRENT_BINARY_DIR}/lesson_10_${picture})
  h2o_check_picture(NAME lesson_10_picture_${picture} TARGET 10_sparse_attention
    ARGS --pictures ${folder} SVG ${folder}/${picture}.svg
    EXPECT "<title>" "<desc>Made by: 10_sparse_attention --pictures")
endforeach()

# Lesson 11: the verdicts first (budget needed, the paper's claim, the variants), then the numbers,
# then prompt-time compression. Every evicting policy of the factory runs, plus the variants.
h2o_check_program(NAME lesson_11_sweep_and_verdicts TARGET 11_how_much_cache
  EXPECT "Step 1: model.bin reads 912 tokens of heldout_story.txt"
         "Step 3: the smallest budget (percent of the 912 tokens) from which on perplexity stays"
         "  h2o           10%" "  window        20%" "  tova          30%"
         "  tova-per-head 100%    why: whatever it evicts, later tokens needed; at 50% still"
         "The paper's \"20% is enough\": H2O needs 10%, the window 20%."
         "Step 4: which score, which protected tokens?" "  h2o-norm  " "  h2o+start4  "
         "the paper's \"averaging did worse\"" "=> a KV head scored alone keeps only what its own"
         "Step 5: the numbers (KL and top-1 agreement: --csv)"
         "policy            2%     5%    10%    20%    30%    50%   100%"
         "name recall, % (full 100.0%; 9 names, one is 11.1 points)"
         "Step 6: prompt-time or token by token? At a budget of 10% = 91 tokens"
         "(prompt, policy) pairs," "Step 2: the full cache: perplexity 1.552 (0.146 bits per byte)"
         "bits per byte (full 0.146)"
  FORBID "KL from the full cache" "Warning")
# At 100% nothing is evicted: every policy is the full cache (perplexity, agreement 100%).
h2o_check_program(NAME lesson_11_full_budget_is_the_full_cache TARGET 11_how_much_cache
  ARGS --budgets 100 --prompt-budget 100 --prompts 50
  EXPECT "  tova          100%" "(no budget below 100% to compare)" "agrees more with the full cache in 0 of "
         "token by token in 0 (the rest tie)." "100.0 | 100.0"
  FORBID "none of these" "why:")
# A prompt of the whole text leaves two predictions: said, not passed off as a measurement.
h2o_check_program(NAME lesson_11_short_continuation_noted TARGET 11_how_much_cache
  ARGS --budgets 50 --prompts 50,100
  EXPECT "(100%) leaves only 2 predictions to judge; its row says little."
  FORBID "(50%) leaves only")
h2o_check_program(NAME lesson_11_csv TARGET 11_how_much_cache
  ARGS --budgets 10,20 --csv ${CMAKE_CURRENT_BINARY_DIR}/lesson_11.csv
  EXPECT "written to ${CMAKE_CURRENT_BINARY_DIR}/lesson_11.csv")
h2o_check_program(NAME lesson_11_stories260k TARGET 11_how_much_cache ARGS ${h2o_stories260k_args}
  --budgets 10,20,50
  REQUIRES "${H2O_MODELS_DIR}/stories260K/stories260K.bin"
  EXPECT "Step 1: stories260K.bin reads 383 tokens of story.txt" "Step 6: prompt-time")
h2o_check_refusals(TARGET 11_how_much_cache PREFIX lesson_11_ CASES
    "bad_prompts@--prompts,0@--prompts expects percentages from 1 to 100"
    "bad_prompt_budget@--prompt-budget,0@--prompt-budget must be between 1 and 100, got 0"
    "bad_name_gap@--name-gap,0@--name-gap must be between 1 and 100000, got 0")
foreach(picture budget_perplexity budget_kl budget_agreement budget_name_recall)
  set(folder ${CMAKE_CURRENT_BINARY_DIR}/lesson_11_${picture})
  h2o_check_picture(NAME lesson_11_picture_${picture} TARGET 11_how_much_cache
    ARGS --budgets 10,50 --pictures ${folder} SVG ${folder}/${picture}.svg
    EXPECT "<title>" ">h2o<" ">h2o-norm<" ">window<" "cache budget (% of the text's tokens)")
endforeach()

# The pictures the README shows (docs/pictures/) are what the programs draw today.
add_test(NAME pictures_up_to_date
  COMMAND ${CMAKE_COMMAND} -DSCRIPT=${PROJECT_SOURCE_DIR}/scripts/make-pictures.sh
          -DBUILD_DIR=${CMAKE_BINARY_DIR} -DOUT=${CMAKE_CURRENT_BINARY_DIR}/pictures_now
          -DCOMMITTED=${PROJECT_SOURCE_DIR}/docs/pictures
          -P ${CMAKE_CURRENT_SOURCE_DIR}/check_pictures.cmake)
