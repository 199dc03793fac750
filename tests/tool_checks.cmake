# Bad input and --help for the tools in tools/.

# bench_decode: help, a tiny real run, and one-line errors for bad flags and values.
h2o_check_program(NAME bench_decode_help TARGET bench_decode ARGS --help
  EXPECT "usage: bench_decode" "--lengths N,N,..." "--heavy N" "--recent N" "--repeats N" "--seed N")
h2o_check_program(NAME bench_decode_tiny_run TARGET bench_decode
  ARGS --lengths 8,16 --heavy 2 --recent 2 --repeats 1
  EXPECT "heavy 2 + recent 2 = 4 tokens per layer and KV head" "tokens per second" "live KV-cache bytes"
         "full cache x")
h2o_check_program(NAME bench_decode_unknown_flag TARGET bench_decode ARGS --fast
  EXIT nonzero STREAM stderr EXPECT "bench_decode: error: unknown option --fast")
h2o_check_program(NAME bench_decode_bad_lengths TARGET bench_decode ARGS --lengths 128,abc
  EXIT nonzero STREAM stderr EXPECT "--lengths expects whole numbers separated by commas")
h2o_check_program(NAME bench_decode_empty_length TARGET bench_decode ARGS --lengths 128,,256
  EXIT nonzero STREAM stderr EXPECT "--lengths expects whole numbers")
h2o_check_program(NAME bench_decode_zero_length TARGET bench_decode ARGS --lengths 0
  EXIT nonzero STREAM stderr EXPECT "each length must be between 1 and 16384, got 0")
h2o_check_program(NAME bench_decode_huge_length TARGET bench_decode ARGS --lengths 99999999999
  EXIT nonzero STREAM stderr EXPECT "each length must be between 1 and 16384")
h2o_check_program(NAME bench_decode_zero_budget TARGET bench_decode ARGS --heavy 0 --recent 0
  EXIT nonzero STREAM stderr EXPECT "--heavy 0 --recent 0: heavy + recent must be at least 1")
h2o_check_program(NAME bench_decode_negative_heavy TARGET bench_decode ARGS --heavy -3
  EXIT nonzero STREAM stderr EXPECT "--heavy must be between 0 and 16384, got -3")
h2o_check_program(NAME bench_decode_bad_repeats TARGET bench_decode ARGS --repeats two
  EXIT nonzero STREAM stderr EXPECT "--repeats expects a whole number, got 'two'")
h2o_check_program(NAME bench_decode_missing_value TARGET bench_decode ARGS --seed
  EXIT nonzero STREAM stderr EXPECT "--seed needs a value")

# bench_decode's other sections and options.
h2o_check_program(NAME bench_decode_help_sections TARGET bench_decode ARGS --help
  EXPECT "--sections LIST" "--shape NAME" "--budgets N,N,..." "--prompt N,N,..." "--threads N")
h2o_check_program(NAME bench_decode_tiny_sections TARGET bench_decode
  ARGS --sections eviction,prompt --budgets 8,16 --prompt 20,70 --repeats 1
  EXPECT "H2O / attention" "batched/single" "      8" "     70")
h2o_check_program(NAME bench_decode_two_threads TARGET bench_decode
  ARGS --sections prompt --prompt 10 --repeats 1 --threads 2 EXPECT "matrix products: 2 threads")
# One core's read bandwidth, and the decode kernel: picked for the CPU, or forced by
# H2O_MATVEC_KERNEL (an unknown name stops any program with a one-line error).
h2o_check_program(NAME bench_decode_bandwidth TARGET bench_decode
  ARGS --sections bandwidth --repeats 1
  EXPECT "decode kernel " "read bandwidth, one core, one stream over 256 MiB: " " GB/s (median of 5")
h2o_check_program(NAME bench_decode_forced_kernel TARGET bench_decode ENV H2O_MATVEC_KERNEL=baseline
  ARGS --sections eviction --budgets 8 --repeats 1 EXPECT "decode kernel baseline")
h2o_check_program(NAME generate_unknown_kernel TARGET generate ENV H2O_MATVEC_KERNEL=avx3
  ARGS --steps 2 EXIT nonzero STREAM stderr
  EXPECT "error: H2O_MATVEC_KERNEL: unknown kernel 'avx3' (choose reference, baseline, avx2 or avx512)")
h2o_check_refusals(TARGET bench_decode PREFIX bench_decode_ CASES
    "bad_section@--sections,lengths#speed@--sections: unknown section 'speed'"
    "empty_section@--sections@--sections needs a value"
    "bad_shape@--shape,7b@--shape: unknown model shape '7b' (expected 260k, 15m or 110m)"
    "zero_threads@--threads,0@--threads must be between 1 and 64, got 0"
    "tiny_budget@--budgets,1@--budgets: each budget must be at least 2"
    "bad_prompt@--prompt,0@--prompt: each prompt length must be between 1 and 16384, got 0")

# make_random_model: help, a tiny real run, one-line errors.
h2o_check_program(NAME make_random_model_help TARGET make_random_model ARGS --help
  EXPECT "usage: make_random_model" "--shape NAME" "--seq-len N" "--out FOLDER" "--seed N")
h2o_check_program(NAME make_random_model_260k TARGET make_random_model
  ARGS --shape 260k --seq-len 64 --out "${CMAKE_CURRENT_BINARY_DIR}/random_260k"
  EXPECT "model.bin (dim 64, hidden 172, 5 layers, 8 heads, 4 KV heads, vocab 512, seq_len 64)"
         "tok.bin")
h2o_check_program(NAME make_random_model_generates TARGET generate
  ARGS --model "${CMAKE_CURRENT_BINARY_DIR}/random_260k/model.bin"
       --tokenizer "${CMAKE_CURRENT_BINARY_DIR}/random_260k/tok.bin" --temperature 0 --steps 64
       --prompt "the cat sat" --threads 2
  STREAM stderr EXPECT "positions run: 64" "prompt: " "decode: ")
set_tests_properties(make_random_model_generates PROPERTIES DEPENDS make_random_model_260k)
h2o_check_program(NAME make_random_model_bad_shape TARGET make_random_model
  ARGS --shape 7b --out x EXIT nonzero STREAM stderr
  EXPECT "make_random_model: error: --shape: unknown model shape '7b'")
h2o_check_program(NAME make_random_model_no_out TARGET make_random_model
  ARGS --shape 15m EXIT nonzero STREAM stderr
  EXPECT "make_random_model: error: --out FOLDER is required")
h2o_check_program(NAME make_random_model_unwritable TARGET make_random_model
  ARGS --shape 260k --out /proc/h2o_no_such_folder EXIT nonzero STREAM stderr
  EXPECT "make_random_model: error: the output folder '/proc/h2o_no_such_folder': cannot create the folder")

# scripts/bench_vs_llama2c.sh: help and one-line errors (a real run takes minutes: not a test).
set(h2o_bench_script "${PROJECT_SOURCE_DIR}/scripts/bench_vs_llama2c.sh")
h2o_check_script(NAME bench_vs_llama2c_help SCRIPT "${h2o_bench_script}" ARGS --help
  EXPECT "usage: scripts/bench_vs_llama2c.sh" "--runc FILE" "--shapes LIST" "--repeats N"
         "--work DIR" "--no-build")
foreach(bad
    "unknown@--fast@unknown option --fast"
    "repeats@--repeats,zero@--repeats must be a whole number from 1 to 50, got 'zero'"
    "shape@--shapes,260k#7b@--shapes: unknown shape '7b'"
    "runc@--runc,/no/such/run.c@--runc '/no/such/run.c' is not a file"
    "missing@--work@--work needs a value")
  h2o_split_case("${bad}" name flags message)
  h2o_check_script(NAME bench_vs_llama2c_bad_${name} SCRIPT "${h2o_bench_script}" ARGS ${flags}
    EXIT nonzero STREAM stderr EXPECT "bench_vs_llama2c: error: ${message}")
endforeach()

# generate --threads: refused outside 1..64.
h2o_check_program(NAME generate_zero_threads TARGET generate ARGS --threads 0
  EXIT nonzero STREAM stderr EXPECT "generate: error: --threads must be between 1 and 64, got 0")

# ---------------------------------------------------------------------------------------------
# generate: byte-for-byte parity with llama2.c run.c on stories260K (skipped where the model folder
# is absent), then help, reports and one-line errors on synthetic files written by
# h2o_make_test_inputs (tests/make_test_inputs.cpp), which need no download.
set(h2o_stories "${H2O_MODELS_DIR}/stories260K")
set(h2o_real_model --model "${h2o_stories}/stories260K.bin" --tokenizer "${h2o_stories}/tok512.bin")

# h2o_compare_generate(NAME name EXPECTED file ARGS ...): stdout must equal the file exactly.
function(h2o_compare_generate)
  cmake_parse_arguments(G "" "NAME;EXPECTED" "ARGS" ${ARGN})
  string(REPLACE ";" "@@" joined_args "${G_ARGS}")
  add_test(NAME ${G_NAME}
    COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:generate> "-DARGS=${joined_args}"
            "-DEXPECTED_FILE=${G_EXPECTED}"
            "-DOUTPUT_FILE=${CMAKE_CURRENT_BINARY_DIR}/${G_NAME}.out"
            -P ${CMAKE_CURRENT_SOURCE_DIR}/compare_output.cmake)
  set_tests_properties(${G_NAME} PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED: ")
endfunction()

# run.c -t 0 -n 200 / -n 256 from BOS: the full cache, and H2O budgets that cover every step.
h2o_compare_generate(NAME generate_greedy_n200_full
  EXPECTED "${h2o_stories}/expected_greedy_n200.txt"
  ARGS ${h2o_real_model} --temperature 0 --steps 200)
h2o_compare_generate(NAME generate_greedy_n256_full
  EXPECTED "${h2o_stories}/expected_greedy_n256.txt"
  ARGS ${h2o_real_model} --temperature 0 --steps 256)
h2o_compare_generate(NAME generate_greedy_n200_h2o
  EXPECTED "${h2o_stories}/expected_greedy_n200.txt"
  ARGS ${h2o_real_model} --temperature 0 --steps 200 --cache h2o --heavy 100 --recent 100)
h2o_compare_generate(NAME generate_greedy_n256_h2o
  EXPECTED "${h2o_stories}/expected_greedy_n256.txt"
  ARGS ${h2o_real_model} --temperature 0 --steps 256 --cache h2o --heavy 128 --recent 128)
h2o_compare_generate(NAME generate_greedy_n256_h2o_shared
  EXPECTED "${h2o_stories}/expected_greedy_n256.txt"
  ARGS ${h2o_real_model} --temperature 0 --steps 256 --cache h2o --heavy 6 --recent 250
       --scoring shared)
# A temperature so small that logits / temperature overflows (1e-38 is accepted by --temperature)
# samples the most likely token every time: run.c's greedy text again, not NaN and '<unk>'.
h2o_compare_generate(NAME generate_tiny_temperature_is_greedy
  EXPECTED "${h2o_stories}/expected_greedy_n200.txt"
  ARGS ${h2o_real_model} --temperature 1e-38 --steps 200)
h2o_compare_generate(NAME generate_tiny_temperature_is_greedy_top_p_1
  EXPECTED "${h2o_stories}/expected_greedy_n200.txt"
  ARGS ${h2o_real_model} --temperature 1e-38 --top-p 1 --steps 200)
h2o_check_program(NAME generate_real_model_h2o_report TARGET generate
  ARGS ${h2o_real_model} --temperature 0 --steps 200 --cache h2o --heavy 32 --recent 32
  STREAM stderr REQUIRES "${h2o_stories}/stories260K.bin"
  EXPECT "model: dim 64, hidden 172, 5 layers, 8 heads, 4 KV heads, vocab 512, seq_len 512"
         "cache: H2O, heavy 32 + recent 32 = 64 tokens, per-head scores" "achieved tok/s: "
         "KV cache in use: 81920 bytes (64 tokens per KV head, 5 layers)"
         "evicted tokens per KV head, layer by layer: [136, 136, 136, 136, 136]"
         "evicted tokens in all: 2720 (5 layers x 4 KV heads)")
# generate says when the model ends its story (samples BOS) before --steps, and says nothing when
# --steps is what stopped it.
h2o_check_program(NAME generate_says_model_ended_story TARGET generate
  ARGS ${h2o_real_model} --steps 512 --seed 1
  STREAM stderr REQUIRES "${h2o_stories}/stories260K.bin"
  EXPECT "note: the model ended the story (it chose BOS, the start of a new one) after 339 positions, before --steps 512"
         "positions run: 339")
h2o_check_program(NAME generate_steps_end_without_note TARGET generate
  ARGS ${h2o_real_model} --steps 200 --seed 1
  STREAM stderr REQUIRES "${h2o_stories}/stories260K.bin"
  EXPECT "positions run: 200" FORBID "the model ended the story")

# The synthetic inputs: written once, before any check that reads them.
set(h2o_inputs "${CMAKE_CURRENT_BINARY_DIR}/generate_inputs")
add_test(NAME generate_make_test_inputs COMMAND h2o_make_test_inputs "${h2o_inputs}")
set_tests_properties(generate_make_test_inputs PROPERTIES FIXTURES_SETUP generate_inputs)
set(h2o_tiny --model "${h2o_inputs}/tiny_model.bin" --tokenizer "${h2o_inputs}/tiny_tok.bin")

# Lesson 10 on a model whose attention overflows: one error, no "-nan%" and no verdict.
h2o_check_program(NAME lesson_10_overflowing_attention TARGET 10_sparse_attention
  ARGS --model "${h2o_inputs}/overflow_model.bin" --tokenizer "${h2o_inputs}/tiny_tok.bin"
       --text "${h2o_inputs}/short.txt"
  EXIT nonzero STREAM stderr EXPECT "is not a number (its scores overflow)" FORBID "nan%")
set_tests_properties(lesson_10_overflowing_attention PROPERTIES FIXTURES_REQUIRED generate_inputs)

# h2o_check_generate(NAME name ...h2o_check_program arguments...): a check that reads those files.
function(h2o_check_generate)
  cmake_parse_arguments(G "" "NAME" "" ${ARGN})
  h2o_check_program(NAME ${G_NAME} TARGET generate ${G_UNPARSED_ARGUMENTS})
  set_tests_properties(${G_NAME} PROPERTIES FIXTURES_REQUIRED generate_inputs)
endfunction()

h2o_check_program(NAME generate_help TARGET generate ARGS --help
  EXPECT "usage: generate" "--model PATH" "--tokenizer PATH" "--prompt TEXT" "--steps N"
         "--temperature T" "--top-p P" "--seed N" "--cache NAME" "full, h2o" "--heavy N"
         "--recent N" "--scoring MODE" "--help" "--sinks N" "--evict-seed N"
         "  window  sliding window" "  sinks   StreamingLLM" "  knorm   key norm" "  snapkv  SnapKV"
         "score it as their papers do (--scoring paper): h2o per-head, tova"
         "  random  keep heavy + recent" "  tova    TOVA" "--h2o-score RULE" "--start-area N"
         "--compress-prompt")
h2o_check_generate(NAME generate_tiny_full_report
  ARGS ${h2o_tiny} --temperature 0 --steps 48 STREAM stderr
  EXPECT "cache: full cache (keeps every token)" "positions run: 48"
         "KV cache in use: 6144 bytes (48 tokens per KV head, 2 layers), 6144 bytes reserved")
h2o_check_generate(NAME generate_tiny_h2o_evicts
  ARGS ${h2o_tiny} --temperature 0 --steps 48 --cache h2o --heavy 8 --recent 8 STREAM stderr
  EXPECT "positions run: 48" "KV cache in use: 2048 bytes (16 tokens per KV head, 2 layers)"
         "evicted tokens per KV head, layer by layer: [32, 32]"
         "evicted tokens in all: 128 (2 layers x 2 KV heads)")
h2o_check_generate(NAME generate_tiny_sampling_with_prompt
  ARGS ${h2o_tiny} --prompt "the cat and the hat" --steps 40 --seed 3 --cache h2o --heavy 4
       --recent 4 --scoring shared
  EXPECT "the cat and the hat")
# H2O's options and prompt-time compression: the budget holds after the prompt's one cut.
h2o_check_generate(NAME generate_tiny_h2o_options_compressed_prompt
  ARGS ${h2o_tiny} --prompt "the cat and the hat sat on the mat" --steps 40 --temperature 0
       --cache h2o --heavy 6 --recent 2 --h2o-score normalised-sum --start-area 2
       --compress-prompt STREAM stderr
  EXPECT "cache: H2O, heavy 6 + recent 2 = 8 tokens, per-head scores, normalised by steps in the cache, the first 2 of the heavy slots protected"
         "positions run: 40" "evicted tokens per KV head, layer by layer: [32, 32]")
h2o_check_generate(NAME generate_steps_capped_at_seq_len
  ARGS ${h2o_tiny} --temperature 0 --steps 100 STREAM stderr
  EXPECT "note: --steps 100 capped at the model's seq_len 64" "positions run: 64")

# Bad checkpoints.
foreach(bad
    "nope.bin@does not exist"
    "empty.bin@is empty"
    "short_header.bin@is truncated: the header needs 28 bytes, the file has 10"
    "zero_dim.bin@bad header: dim is 0, it must be positive"
    "negative_layers.bin@bad header: n_layers is -2, it must be positive"
    "heads_not_dividing_dim.bin@model n_heads 3 does not divide dim 16"
    "kv_heads_not_dividing_heads.bin@model n_kv_heads 3 does not divide n_heads 4"
    "absurd_dim.bin@model dim 1073741824 is absurdly large"
    "huge_shape.bin@bytes, the file has 28"
    "truncated_weights.bin@is truncated: its header"
    "trailing_bytes.bin@has 8 trailing bytes")
  string(REPLACE "@" ";" parts "${bad}")
  list(GET parts 0 file)
  list(GET parts 1 text)
  string(REPLACE ".bin" "" short "${file}")
  h2o_check_generate(NAME generate_bad_model_${short}
    ARGS --model "${h2o_inputs}/${file}" --tokenizer "${h2o_inputs}/tiny_tok.bin"
    EXIT nonzero STREAM stderr EXPECT "generate: error: checkpoint '" "${file}" "${text}")
endforeach()

# Bad tokenizers, or one made for another vocabulary than the model's 300 tokens.
foreach(bad
    "tok_280_entries.bin@holds only 280 entries but the model's vocabulary has 300 tokens"
    "tok_320_entries.bin@holds 320 entries but the model's vocabulary has 300 tokens"
    "tok_truncated.bin@is truncated inside entry 299 of 300"
    "tok_empty.bin@is empty"
    "tok_negative_length.bin@entry 0 has a negative length (-1)")
  string(REPLACE "@" ";" parts "${bad}")
  list(GET parts 0 file)
  list(GET parts 1 text)
  string(REPLACE ".bin" "" short "${file}")
  h2o_check_generate(NAME generate_bad_${short}
    ARGS --model "${h2o_inputs}/tiny_model.bin" --tokenizer "${h2o_inputs}/${file}"
    EXIT nonzero STREAM stderr EXPECT "generate: error: tokenizer '" "${file}" "${text}")
endforeach()

# Files that are not regular files, or larger than the stated limits (8 GiB, 64 MiB): refused
# from what the file system says, before a byte is read (a pipe would block, /dev/zero never end).
foreach(bad
    "model@/dev/zero@checkpoint '/dev/zero' is not a regular file"
    "model@${h2o_inputs}/a_pipe@a_pipe' is not a regular file"
    "model@${h2o_inputs}/a_folder@a_folder' is a directory, not a file"
    "model@${h2o_inputs}/over_limit_model.bin@is 8589934593 bytes, more than the limit of 8 GiB"
    "tokenizer@/dev/zero@tokenizer '/dev/zero' is not a regular file"
    "tokenizer@${h2o_inputs}/a_pipe@a_pipe' is not a regular file"
    "tokenizer@${h2o_inputs}/over_limit_tok.bin@is 67108865 bytes, more than the limit of 64 MiB")
  string(REPLACE "@" ";" parts "${bad}")
  list(GET parts 0 which)
  list(GET parts 1 path)
  list(GET parts 2 text)
  get_filename_component(short "${path}" NAME_WE)
  set(files ${h2o_tiny})
  list(FIND files "--${which}" where)
  math(EXPR where "${where} + 1")
  list(REMOVE_AT files ${where})
  list(INSERT files ${where} "${path}")
  h2o_check_generate(NAME generate_${which}_file_${short}
    ARGS ${files} TIMEOUT 30 EXIT nonzero STREAM stderr EXPECT "generate: error: " "${text}")
endforeach()

# Prompts longer than the tiny model's seq_len of 64: refused before encoding when the byte count
# alone proves it (400 bytes and the dummy space in pieces of at most 6 bytes: at least 67 tokens),
# after encoding otherwise (100 letters, one token each).
string(REPEAT "qz" 200 h2o_long_prompt)
string(REPEAT "q" 100 h2o_longish_prompt)
h2o_check_generate(NAME generate_prompt_too_long_bytes
  ARGS ${h2o_tiny} --prompt "${h2o_long_prompt}" EXIT nonzero STREAM stderr
  EXPECT "the prompt is too long: at least 67 tokens (BOS included), the model's seq_len is 64")
h2o_check_generate(NAME generate_prompt_too_long_tokens
  ARGS ${h2o_tiny} --prompt "${h2o_longish_prompt}" EXIT nonzero STREAM stderr
  EXPECT "the prompt is too long: 102 tokens (BOS included), the model's seq_len is 64")

# Bad flags and values (flags separated by commas here): refused before any file is read.
h2o_check_refusals(TARGET generate PREFIX generate_ CASES
    "unknown_flag@--bogus@unknown option --bogus"
    "positional@story.txt@unexpected argument 'story.txt'"
    "missing_value@--prompt@--prompt needs a value"
    "zero_budget@--cache,h2o,--heavy,0,--recent,0@--cache h2o: heavy + recent must be at least 1"
    "negative_heavy@--heavy,-1@--heavy must be between 0 and 1048576, got -1"
    "negative_recent@--recent,-5@--recent must be between 0 and 1048576, got -5"
    "negative_temperature@--temperature,-1@--temperature must be between 0 and 1000, got -1"
    "bad_temperature@--temperature,hot@--temperature expects a number, got 'hot'"
    "top_p_above_one@--top-p,1.5@--top-p must be between 0 and 1, got 1.5"
    "top_p_negative@--top-p,-0.1@--top-p must be between 0 and 1, got -0.1"
    "unknown_cache@--cache,lru@unknown cache policy 'lru' (expected one of: full, h2o, "
    "unknown_scoring@--scoring,mean@unknown scoring mode 'mean' (expected per-head, shared or paper)"
    "negative_steps@--steps,-5@--steps must be between 0 and 1048576, got -5"
    "bad_steps@--steps,ten@--steps expects a whole number, got 'ten'"
    "bad_seed@--seed,-1@--seed must be between 0 and"
    "unknown_h2o_score@--h2o-score,mean@unknown H2O score 'mean' (expected sum or normalised-sum)"
    "negative_start_area@--start-area,-1@--start-area must be between 0 and 1048576, got -1"
    "start_area_over_heavy@--cache,h2o,--heavy,4,--start-area,5@--cache h2o: H2O: a start area of 5 tokens does not fit in the heavy budget of 4"
    "flag_with_value@--compress-prompt=yes@--compress-prompt takes no value")

# ---------------------------------------------------------------------------------------------
# generate with the policies beside H2O (TOVA scoring per head: its paper's shared scores end this
# greedy text early, and the default is checked by compare_policies_real_model).
h2o_check_stable_output(NAME generate_help_stable_and_narrow TARGET generate ARGS --help)

# On stories260K: 200 positions with 64 tokens per KV head (sinks: 4 + 60) evict 136 per layer.
foreach(run
    "window@--heavy,32,--recent,32@cache: sliding window, last 64 tokens"
    "sinks@--sinks,4,--recent,60@cache: attention sinks 4 + recent 60 = 64 tokens (StreamingLLM)"
    "random@--heavy,32,--recent,32,--evict-seed,5@cache: random eviction, 64 tokens, the last 32 protected, seed 5"
    "tova@--heavy,32,--recent,32,--scoring,per-head@cache: TOVA, 64 tokens, lowest current attention evicted, per-head scores")
  string(REPLACE "@" ";" parts "${run}")
  list(GET parts 0 name)
  list(GET parts 1 flags)
  list(GET parts 2 text)
  string(REPLACE "," ";" flags "${flags}")
  h2o_check_program(NAME generate_real_model_${name}_report TARGET generate
    ARGS ${h2o_real_model} --temperature 0 --steps 200 --cache ${name} ${flags}
    STREAM stderr REQUIRES "${h2o_stories}/stories260K.bin"
    EXPECT "${text}" "KV cache in use: 81920 bytes (64 tokens per KV head, 5 layers)"
           "evicted tokens per KV head, layer by layer: [136, 136, 136, 136, 136]"
           "evicted tokens in all: 2720 (5 layers x 4 KV heads)")
endforeach()

# A budget covering all 256 positions never evicts: run.c's greedy text, byte for byte.
h2o_compare_generate(NAME generate_greedy_n256_window
  EXPECTED "${h2o_stories}/expected_greedy_n256.txt"
  ARGS ${h2o_real_model} --temperature 0 --steps 256 --cache window --heavy 0 --recent 256)
h2o_compare_generate(NAME generate_greedy_n256_sinks
  EXPECTED "${h2o_stories}/expected_greedy_n256.txt"
  ARGS ${h2o_real_model} --temperature 0 --steps 256 --cache sinks --sinks 4 --recent 252)
h2o_compare_generate(NAME generate_greedy_n256_random
  EXPECTED "${h2o_stories}/expected_greedy_n256.txt"
  ARGS ${h2o_real_model} --temperature 0 --steps 256 --cache random --heavy 200 --recent 56)
h2o_compare_generate(NAME generate_greedy_n256_tova
  EXPECTED "${h2o_stories}/expected_greedy_n256.txt"
  ARGS ${h2o_real_model} --temperature 0 --steps 256 --cache tova --heavy 128 --recent 128)

# On the synthetic model (no download): each policy evicts down to 16 tokens (sinks: 8 + 8), and
# random eviction with sampling prints the same text on every run.
foreach(run "window@--heavy,8" "sinks@--sinks,8" "random@--heavy,8" "tova@--heavy,8,--scoring,shared")
  string(REPLACE "@" ";" parts "${run}")
  list(GET parts 0 name)
  list(GET parts 1 flags)
  string(REPLACE "," ";" flags "${flags}")
  h2o_check_generate(NAME generate_tiny_${name}_evicts
    ARGS ${h2o_tiny} --temperature 0 --steps 48 --cache ${name} ${flags} --recent 8 STREAM stderr
    EXPECT "positions run: 48" "KV cache in use: 2048 bytes (16 tokens per KV head, 2 layers)"
           "evicted tokens per KV head, layer by layer: [32, 32]"
           "evicted tokens in all: 128 (2 layers x 2 KV heads)")
endforeach()
h2o_check_stable_output(NAME generate_tiny_random_stable TARGET generate
  ARGS ${h2o_tiny} --steps 48 --seed 3 --cache random --heavy 4 --recent 2 --evict-seed 11)
set_tests_properties(generate_tiny_random_stable PROPERTIES FIXTURES_REQUIRED generate_inputs)

# Bad budgets for them: refused before any file is read.
h2o_check_refusals(TARGET generate PREFIX generate_ CASES
    "zero_window_budget@--cache,window,--heavy,0,--recent,0@--cache window: heavy + recent must be at least 1"
    "zero_random_budget@--cache,random,--heavy,0,--recent,0@--cache random: heavy + recent must be at least 1"
    "zero_tova_budget@--cache,tova,--heavy,0,--recent,0@--cache tova: heavy + recent must be at least 1"
    "sinks_without_recent@--cache,sinks,--heavy,9,--recent,0@--cache sinks: attention sinks: recent must be at least 1"
    "unknown_cache_zero_budget@--cache,lru,--heavy,0,--recent,0@unknown cache policy 'lru'"
    "negative_sinks@--cache,sinks,--sinks,-1@--sinks must be between 0 and 1048576, got -1"
    "bad_sinks@--sinks,four@--sinks expects a whole number, got 'four'"
    "negative_evict_seed@--cache,random,--evict-seed,-2@--evict-seed must be between 0 and"
    "bad_evict_seed@--evict-seed,x@--evict-seed expects a whole number, got 'x'"
    "tova_unknown_scoring@--cache,tova,--scoring,max@unknown scoring mode 'max' (expected per-head, shared or paper)")

# ---------------------------------------------------------------------------------------------
# compare_policies: every policy of the factory on stories260K reading data/story.txt (the real
# runs are skipped where the model folder is absent), its SVG picture, and one-line errors.
h2o_check_program(NAME compare_policies_help TARGET compare_policies ARGS --help
  EXPECT "usage: compare_policies" "--model PATH" "--tokenizer PATH" "--text PATH" "--budgets LIST"
         "--policies LIST" "--svg PATH" "--picture-budget PERCENT" "--help" "cache policies (--cache):"
         "  full    keep every token")
h2o_check_program(NAME compare_policies_explicit_missing_model TARGET compare_policies
  ARGS --model ${CMAKE_CURRENT_BINARY_DIR}/no-such-model.bin
  EXIT nonzero STREAM stderr EXPECT "compare_policies: error: checkpoint '" "' does not exist")
h2o_check_stable_output(NAME compare_policies_stable_and_narrow TARGET compare_policies
  ARGS --budgets 1,2,3,5,10,20,50,100)

# Bad flags and values (flags separated by commas here, "#" = a comma inside a value): refused
# before any file is read.
h2o_check_refusals(TARGET compare_policies PREFIX compare_policies_ CASES
    "unknown_flag@--bogus@unknown option --bogus"
    "positional@story.txt@unexpected argument 'story.txt'"
    "missing_value@--budgets@--budgets needs a value"
    "zero_budget@--budgets,0@--budgets expects percentages from 1 to 100 separated by commas, got '0'"
    "big_budget@--budgets,101@--budgets expects percentages from 1 to 100"
    "word_budget@--budgets,ten@--budgets expects percentages from 1 to 100"
    "empty_budget@--budgets,10##20@--budgets expects percentages from 1 to 100"
    "many_budgets@--budgets,1#2#3#4#5#6#7#8#9@--budgets needs 1 to 8 percentages"
    "unknown_policy@--policies,full#lru@--policies: unknown cache policy 'lru' (expected all, or names from: full, h2o"
    "empty_policy@--policies,full##h2o@--policies has an empty name in 'full,,h2o'"
    "zero_picture_budget@--picture-budget,0@--picture-budget must be between 1 and 100, got 0"
    "big_picture_budget@--picture-budget,101@--picture-budget must be between 1 and 100, got 101"
    "word_picture_budget@--picture-budget,small@--picture-budget expects a whole number, got 'small'"
    "empty_svg@--svg=@--svg needs a file path"
    "unknown_scoring@--scoring,max@unknown scoring mode 'max' (expected per-head, shared or paper)"
    "unknown_h2o_score@--h2o-score,mean@unknown H2O score 'mean' (expected sum or normalised-sum)"
    "negative_start_area@--start-area,-1@--start-area must be between 0 and 1048576, got -1")

# On the synthetic model (no download): a short text runs; a text that is not a regular file, is
# over the 1 MiB limit, or holds far more tokens than the model's 64 positions is refused with one
# line, at once (the long text from its byte count alone, before encoding).
set(h2o_tiny_compare ${h2o_tiny} --budgets 20,50)
# The synthetic model is random: it does not know the text (bits per byte far above the limit of
# measure/bits_per_byte.hpp), so the table is shown with one warning and no best policy.
h2o_check_program(NAME compare_policies_tiny_model TARGET compare_policies
  ARGS ${h2o_tiny_compare} --text "${h2o_inputs}/short.txt"
  EXPECT "read 1 story of short.txt: 39 tokens, 0 name events"
         "No name of the names list occurs in the text: name recall has nothing to count."
         "text: story 1: 39 tokens (BOS included); 38 predictions per run" "20% = 8" "50% = 20"
         "Warning: the model does not know text like this: even the full cache reads it at "
         "no verdict is drawn"
  FORBID "<- best" "At each budget:")
set_tests_properties(compare_policies_tiny_model PROPERTIES FIXTURES_REQUIRED generate_inputs)
foreach(bad
    "dev_zero@/dev/zero@text file '/dev/zero' is not a regular file (a device, pipe or socket)"
    "pipe@${h2o_inputs}/a_pipe@a_pipe' is not a regular file"
    "folder@${h2o_inputs}/a_folder@a_folder' is a directory, not a file"
    "empty@${h2o_inputs}/empty.txt@empty.txt' is empty"
    "too_big@${h2o_inputs}/too_big.txt@too_big.txt' is 1048577 bytes, more than the limit of 1 MiB"
    "too_many_tokens@${h2o_inputs}/long.txt@has at least 50001 tokens; the model reads at most 64")
  string(REPLACE "@" ";" parts "${bad}")
  list(GET parts 0 short)
  list(GET parts 1 path)
  list(GET parts 2 text)
  h2o_check_program(NAME compare_policies_text_${short} TARGET compare_policies
    ARGS ${h2o_tiny_compare} --text "${path}" TIMEOUT 10
    EXIT nonzero STREAM stderr EXPECT "compare_policies: error: " "${text}")
  set_tests_properties(compare_policies_text_${short} PROPERTIES FIXTURES_REQUIRED generate_inputs)
endforeach()
h2o_check_program(NAME compare_policies_model_dev_zero TARGET compare_policies
  ARGS --model /dev/zero --tokenizer "${h2o_inputs}/tiny_tok.bin" TIMEOUT 10
  EXIT nonzero STREAM stderr
  EXPECT "compare_policies: error: checkpoint '/dev/zero' is not a regular file")

# The real runs, on the shipped model reading the 912-token held-out story. At 10% every policy
# holds 91 tokens per KV head (sinks: 4 + 87); a window keeps exactly the last 91 positions
# (820-910), sinks the first 4 and the last 87 (824-910).
h2o_check_program(NAME compare_policies_real_model TARGET compare_policies
  EXPECT " policies on model.bin reading heldout_story.txt"
         "text: story 1: 912 tokens (BOS included); 911 predictions per run (teacher forcing)"
         "10% = 91    h2o      H2O, heavy 45 + recent 46 = 91 tokens, per-head scores"
         "tova     TOVA, 91 tokens, lowest current attention evicted, shared scores"
         "read 1 story of heldout_story.txt: 912 tokens, 9 name events (a name last seen more than 64"
         "20% = 182" "50% = 456"
         "budget     policy  kept  perplexity  bits/byte  vs full  top-1 = full   names  KV bytes"
         "name recall" "reference  full     911       1.552      0.146" "h2o       91" "window    91" "sinks     91"
         "random    91" "tova      91" "knorm     91" "snapkv    91" "  <- best" "At each budget:" "91 tokens:  best "
         "Kept after the last step at 10% = 91 tokens" "          820-910" "          0-3 824-910"
  FORBID "[holds" "refused" "Warning")
# Several stories, each whole; on texts the model does not know, the table and a warning but no
# best policy. Names of several tokens count, and are listed.
h2o_check_program(NAME compare_policies_text_beyond_the_model TARGET compare_policies
  ARGS --text "${PROJECT_SOURCE_DIR}/data/handwritten_stories.txt"
       --names "${PROJECT_SOURCE_DIR}/data/handwritten_names.txt" --budgets 20
  EXPECT "read 21 stories of handwritten_stories.txt: 5935 tokens, 26 name events"
         "Names the tokenizer splits (recalled only when every token is predicted): Anna (4 tokens)"
         "reference  full     229  289852.849      6.346"
         "Warning: the model does not know text like this: even the full cache reads it at 6.35"
  FORBID "<- best" "At each budget:")
h2o_check_program(NAME compare_policies_whole_text_budget TARGET compare_policies ARGS --budgets 100
  EXPECT "100% = 912" "nothing was evicted: every policy equals the full cache exactly"
  FORBID "NOT exactly")
h2o_check_program(NAME compare_policies_picture_budget_outside_table TARGET compare_policies
  ARGS --budgets 20 --policies window,full --picture-budget 5
  EXPECT "compare_policies: 2 policies" "20% = 182   window   sliding window, last 182 tokens"
         "Kept after the last step at 5% = 46 tokens" "          865-910"
  FORBID "h2o" "10% =")
h2o_check_program(NAME compare_policies_missing_text TARGET compare_policies
  ARGS --text ${CMAKE_CURRENT_BINARY_DIR}/no-such-text.txt
  EXIT nonzero STREAM stderr EXPECT "compare_policies: error: text file '" "no-such-text.txt' does not exist")
h2o_check_program(NAME compare_policies_unwritable_svg TARGET compare_policies
  ARGS --svg ${CMAKE_CURRENT_BINARY_DIR}/no-such-folder/picture.svg
  EXIT nonzero STREAM stderr EXPECT "compare_policies: error: the picture '" "no-such-folder' does not exist")
# stories260K (external, for comparison) on the project's shorter story.
set(h2o_stories260k "${H2O_MODELS_DIR}/stories260K/stories260K.bin")
h2o_check_program(NAME compare_policies_stories260k TARGET compare_policies
  ARGS --model "${h2o_stories260k}" --tokenizer "${H2O_MODELS_DIR}/stories260K/tok512.bin"
       --text "${PROJECT_SOURCE_DIR}/data/story.txt"
  REQUIRES "${h2o_stories260k}"
  EXPECT "text: story 1: 383 tokens (BOS included); 382 predictions per run (teacher forcing)"
         "10% = 38    h2o      H2O, heavy 19 + recent 19 = 38 tokens, per-head scores"
         "reference  full     382       3.029" "Kept after the last step at 10% = 38 tokens"
         "          344-381" "          0-3 348-381"
  FORBID "[holds" "refused")
# --scoring reaches the policies that score, as generate's does: TOVA's paper scores shared, so
# per-head is the option here (and the default, the paper's, is shown by compare_policies_real_model).
h2o_check_program(NAME compare_policies_tova_per_head TARGET compare_policies
  ARGS --policies tova,window --budgets 10 --scoring per-head
  EXPECT "tova     TOVA, 91 tokens, lowest current attention evicted, per-head scores"
         "window   sliding window, last 91 tokens")
# --h2o-score and --start-area reach H2O (generate's options, one owner: app/policy_options); a
# start area larger than a budget's heavy half is cut to it (the factory's rule), not refused.
h2o_check_program(NAME compare_policies_h2o_options TARGET compare_policies
  ARGS --policies h2o --budgets 1,10 --h2o-score normalised-sum --start-area 20
  EXPECT "heavy 4 + recent 5 = 9 tokens, per-head scores, normalised by steps in"
         "the cache, the first 4 of the heavy slots protected"
         "heavy 45 + recent 46 = 91 tokens, per-head scores, normalised by steps"
         "in the cache, the first 20 of the heavy slots protected"
  FORBID "error")
h2o_check_picture(NAME compare_policies_svg_picture TARGET compare_policies
  ARGS --budgets 10 --svg ${CMAKE_CURRENT_BINARY_DIR}/compare_policies.svg
  SVG ${CMAKE_CURRENT_BINARY_DIR}/compare_policies.svg
  EXPECT ">full<" ">h2o<" ">window<" "decoding step" "original position" "budget 91 tokens")

# explore: the explorer page. Help, a run on the hand-written story, one-line errors for bad
# options, texts and output paths, and the page in a real browser (check_explorer_page.cmake,
# skipped without chromium: bash scripts/install-deps.sh --only chromium).
h2o_check_program(NAME explore_help TARGET explore ARGS --help
  EXPECT "usage: explore" "--model PATH" "--text PATH" "--policies LIST" "--budget B" "--out PATH"
         "--kept PATH" "at most 2048 tokens")
h2o_check_program(NAME explore_story TARGET explore
  ARGS --text "${PROJECT_SOURCE_DIR}/data/story.txt" --policies h2o,sinks --budget 32
       --out "${CMAKE_CURRENT_BINARY_DIR}/explore_story.html"
  EXPECT "explore: model.bin reading story.txt, 241 tokens; budget 32 tokens per layer and KV head"
         "  h2o     agreement with the full cache " "  sinks   agreement with the full cache "
         "208 evictions per layer and KV head" "page written to ")
h2o_check_refusals(TARGET explore PREFIX explore_ CASES
    "unknown_flag@--bogus@unknown option --bogus"
    "unknown_policy@--policies,h2o#lru@--policies: unknown cache policy 'lru'"
    "all_policies@--policies,all@--policies takes one or two names, not all"
    "three_policies@--policies,h2o#window#tova@--policies takes one or two names (shown side by side), got 3"
    "word_budget@--budget,ten@--budget expects a share such as 10% or a number of tokens such as 91, got 'ten'"
    "zero_percent@--budget,0%@--budget must be between 1% and 100%, got 0%"
    "big_percent@--budget,150%@--budget must be between 1% and 100%, got 150%"
    "one_token@--budget,1@--budget must be at least 2 tokens, got 1"
    "empty_out@--out=@--out needs a file path"
    "out_folder@--out,${CMAKE_CURRENT_BINARY_DIR}@the page '${CMAKE_CURRENT_BINARY_DIR}' is a folder, not a file"
    "out_no_folder@--out,${CMAKE_CURRENT_BINARY_DIR}/no/page.html@the page '${CMAKE_CURRENT_BINARY_DIR}/no/page.html': the folder '${CMAKE_CURRENT_BINARY_DIR}/no' does not exist"
    "kept_folder@--kept,${CMAKE_CURRENT_BINARY_DIR}@the kept positions '${CMAKE_CURRENT_BINARY_DIR}' is a folder, not a file"
    "missing_text@--text,${CMAKE_CURRENT_BINARY_DIR}/no-such-text.txt@text file '${CMAKE_CURRENT_BINARY_DIR}/no-such-text.txt' does not exist"
    "dev_zero_text@--text,/dev/zero@text file '/dev/zero' is not a regular file"
    "folder_text@--text,${CMAKE_CURRENT_BINARY_DIR}@text file '${CMAKE_CURRENT_BINARY_DIR}' is a directory, not a file"
    "too_big_page@--policies,full#window,--budget,100%@the page would hold about "
    "unknown_scoring@--scoring,max@unknown scoring mode 'max' (expected per-head, shared or paper)")
h2o_check_program(NAME explore_tiny_model_long_text TARGET explore
  ARGS ${h2o_tiny} --text "${h2o_inputs}/long.txt" --out "${CMAKE_CURRENT_BINARY_DIR}/explore_tiny.html"
  EXIT nonzero STREAM stderr EXPECT "explore: error: the story in '" "; the model reads at most 64")
set_tests_properties(explore_tiny_model_long_text PROPERTIES FIXTURES_REQUIRED generate_inputs)
add_test(NAME explore_page_in_browser
  COMMAND ${CMAKE_COMMAND} -DEXPLORE=$<TARGET_FILE:explore>
          -DBROWSER=${PROJECT_SOURCE_DIR}/scripts/headless-chromium.sh
          -DTEXT=${PROJECT_SOURCE_DIR}/data/story.txt -DWORK=${CMAKE_CURRENT_BINARY_DIR}/explore_page
          -DSCREENSHOT=${CMAKE_BINARY_DIR}/explorer.png
          -P ${CMAKE_CURRENT_SOURCE_DIR}/check_explorer_page.cmake)
set_tests_properties(explore_page_in_browser PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED: "
                     TIMEOUT 900)
