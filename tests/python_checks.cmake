# The training pipeline (training/, Python): its own self-test, bad input to every script, and the
# checks that the C++ library reads what PyTorch trained (logits within 1e-4, exporter bit for
# bit). Building, the lessons and these C++ tests never need PyTorch: without python3-torch the
# scripts that need it print "SKIPPED: ..." and CTest reports a skip. The command-line checks need
# only python3 (installed by scripts/install-deps.sh).
#
# Debian's python3 first: it is the one python3-torch installs into.
find_program(H2O_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
find_program(H2O_PYTHON NAMES python3)
set(h2o_training "${PROJECT_SOURCE_DIR}/training")
set(h2o_data "${PROJECT_SOURCE_DIR}/data")

if(NOT H2O_PYTHON)
  add_test(NAME python_checks COMMAND ${CMAKE_COMMAND} -E echo "SKIPPED: python3 not found")
  set_tests_properties(python_checks PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED: ")
  return()
endif()

# h2o_check_python(NAME name SCRIPT file.py ARGS ... h2o_check_program's EXIT/STREAM/EXPECT...)
function(h2o_check_python)
  cmake_parse_arguments(Q "" "SCRIPT" "ARGS" ${ARGN})
  h2o_check_program(${Q_UNPARSED_ARGUMENTS} COMMAND ${H2O_PYTHON}
                    ARGS ${h2o_training}/${Q_SCRIPT} ${Q_ARGS})
endfunction()

# PyTorch against C++: the shipped model's logits on the lesson story, and the exporter's floats.
set(h2o_py_work "${CMAKE_CURRENT_BINARY_DIR}/python_checks")
add_test(NAME shipped_model_matches_pytorch_logits
  COMMAND ${CMAKE_COMMAND} -DPYTHON=${H2O_PYTHON} -DSCRIPTS=${h2o_training}
          -DPARITY=$<TARGET_FILE:h2o_model_parity> -DWORK=${h2o_py_work}/logits -DMODE=logits
          -DMODEL=${h2o_data}/model.bin -DTOKENIZER=${h2o_data}/tokenizer.bin
          -DTEXT=${h2o_data}/heldout_story.txt -P ${CMAKE_CURRENT_SOURCE_DIR}/check_python.cmake)
add_test(NAME exporter_writes_what_the_loader_reads
  COMMAND ${CMAKE_COMMAND} -DPYTHON=${H2O_PYTHON} -DSCRIPTS=${h2o_training}
          -DPARITY=$<TARGET_FILE:h2o_model_parity> -DWORK=${h2o_py_work}/export -DMODE=export
          -P ${CMAKE_CURRENT_SOURCE_DIR}/check_python.cmake)
set_tests_properties(shipped_model_matches_pytorch_logits exporter_writes_what_the_loader_reads
  PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED: " TIMEOUT 900)

# The pipeline's self-test: a few optimisation steps lower the loss, the encoder round-trips.
h2o_check_python(NAME training_selftest SCRIPT selftest.py EXPECT "selftest: all checks passed")

# The corpus generator is deterministic: the same seed gives the same stories, with their names.
h2o_check_python(NAME corpus_generator_writes_stories SCRIPT make_corpus.py
  ARGS --stories 2 --seed 5 --out - EXPECT "Once upon a time" "Rio")

# Bad input to every script: one line on stderr, exit code 2, before any long work. The checks
# listed here reach their input check only after importing PyTorch: skipped without it.
set(h2o_checks_needing_torch export_check_bad_folder)
set(h2o_py_inputs "${CMAKE_CURRENT_BINARY_DIR}/python_inputs")
file(WRITE "${h2o_py_inputs}/odd.u16" "abc")
file(WRITE "${h2o_py_inputs}/nan.csv"
  "step,tokens,train_loss,heldout_loss,lr,seconds\n50,100,nan,,0.001,1.0\n")
file(WRITE "${h2o_py_inputs}/odd_names.txt" "Zyxwvut\n")
set(h2o_train_args "--train,/dev/null,--heldout,/dev/null,--tokenizer,${h2o_data}/tokenizer.bin,--out,m.bin,--csv,l.csv,--svg,l.svg")
foreach(bad
    "corpus_bad_count@make_corpus.py@--stories,-3,--out,x.txt@--stories must be 1..10000000, got -3"
    "corpus_bad_seed@make_corpus.py@--seed,abc,--out,x.txt@argument --seed: invalid int value: 'abc'"
    "corpus_unwritable@make_corpus.py@--stories,2,--out,/nonexistent/x.txt@cannot write '/nonexistent/x.txt'"
    "corpus_no_names@make_corpus.py@--names,/nonexistent/names.txt,--out,-@cannot read names file '/nonexistent/names.txt'"
    "corpus_device_names@make_corpus.py@--names,/dev/zero,--out,-@names file '/dev/zero' is not a regular file"
    "tokenizer_device_corpus@train_tokenizer.py@--corpus,/dev/zero,--out,t.bin@corpus file '/dev/zero' is not a regular file"
    "tokenizer_tiny_vocab@train_tokenizer.py@--corpus,${h2o_data}/heldout_story.txt,--vocab-size,10,--out,t.bin@--vocab-size must be 300..65535, got 10"
    "pretokenize_bad_tokenizer@pretokenize.py@--tokenizer,/dev/zero,--corpus,${h2o_data}/heldout_story.txt,--out,p.u16@tokenizer file '/dev/zero' is not a regular file"
    "train_missing_arguments@train.py@--bogus@the following arguments are required"
    "train_device_data@train.py@--train,/dev/zero,--heldout,/dev/zero,--tokenizer,${h2o_data}/tokenizer.bin,--out,m.bin,--csv,l.csv,--svg,l.svg@tokens file '/dev/zero' is not a regular file"
    "evaluate_device_model@evaluate.py@--model,/dev/zero,--tokenizer,${h2o_data}/tokenizer.bin,--stories,${h2o_data}/heldout_story.txt@model file '/dev/zero' is not a regular file"
    "reference_logits_missing_ids@reference_logits.py@--model,${h2o_data}/model.bin,--tokens,/nonexistent/ids.txt,--out,l.f32@cannot read ids file '/nonexistent/ids.txt'"
    "export_check_bad_folder@export_check.py@--out,/nonexistent/dir@'/nonexistent/dir' is not a writable folder"
    "plot_loss_device_csv@plot_loss.py@--csv,/dev/zero,--out,x.svg@csv file '/dev/zero' is not a regular file"
    # Every option of train.py is checked before a file is read or PyTorch imported.
    "train_short_seq_len@train.py@${h2o_train_args},--seq-len,16@a phase of 1024 tokens is longer than --seq-len 16"
    "train_zero_heads@train.py@${h2o_train_args},--heads,0@--heads must be 1..128, got 0"
    "train_nan_lr@train.py@${h2o_train_args},--lr,nan@--lr is nan, not a finite number"
    "train_inf_lr@train.py@${h2o_train_args},--lr,inf@--lr is inf, not a finite number"
    "train_negative_seed@train.py@${h2o_train_args},--seed,-1@--seed must be 0..2147483647, got -1"
    "train_odd_head_size@train.py@${h2o_train_args},--dim,100@--dim 100 must be --heads 8 times an even head size"
    "train_kv_heads@train.py@${h2o_train_args},--kv-heads,3@--heads 8 must be a multiple of --kv-heads 3"
    "train_same_outputs@train.py@${h2o_train_args},--csv,m.bin@--out, --csv and --svg must be three different files"
    "train_odd_tokens@train.py@${h2o_train_args},--train,${h2o_py_inputs}/odd.u16@has an odd number of bytes (3)"
    "train_unwritable@train.py@${h2o_train_args},--out,/sys/h2o_model.bin@cannot write '/sys/h2o_model.bin'"
    "train_bad_type@train.py@${h2o_train_args},--layers,four@argument --layers: invalid int value: 'four'"
    # A diverged run's loss curve is refused; so is a names list the tokenizer cannot keep whole.
    "plot_loss_nan_csv@plot_loss.py@--csv,${h2o_py_inputs}/nan.csv,--out,x.svg@a loss that is not a finite number"
    "tokenizer_names_not_tokens@train_tokenizer.py@--corpus,${h2o_data}/heldout_stories.txt,--vocab-size,400,--names,${h2o_py_inputs}/odd_names.txt,--out,${h2o_py_inputs}/t.bin@names that are not one token: Zyxwvut")
  string(REPLACE "@" ";" parts "${bad}")
  list(GET parts 0 short)
  list(GET parts 1 script)
  list(GET parts 2 flags)
  list(GET parts 3 text)
  string(REPLACE "," ";" flags "${flags}")
  set(requires_torch)
  if(short IN_LIST h2o_checks_needing_torch)
    set(requires_torch REQUIRES_IMPORT torch)
  endif()
  h2o_check_python(NAME training_${short} ${requires_torch} SCRIPT ${script} ARGS ${flags}
    EXIT nonzero STREAM stderr EXPECT "${text}")
endforeach()
