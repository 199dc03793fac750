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
  set_tests_properties(python_checks PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED: " LABELS python)
  return()
endif()

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
# The quantised KV cache against KIVI's quantiser (its steps replayed in PyTorch).
add_test(NAME kv_quant_matches_kivi
  COMMAND ${CMAKE_COMMAND} -DPYTHON=${H2O_PYTHON} -DANCHOR=${CMAKE_CURRENT_SOURCE_DIR}/kivi_anchor.py
          -DPARITY=$<TARGET_FILE:h2o_model_parity> -DWORK=${h2o_py_work}/kivi -DMODE=kivi
          -DMODEL=${h2o_data}/model.bin -DTOKENIZER=${h2o_data}/tokenizer.bin
          -DTEXT=${h2o_data}/heldout_story.txt -P ${CMAKE_CURRENT_SOURCE_DIR}/check_python.cmake)
# PyramidKV's layer budgets and Ada-KV's joint cut against kvpress's code (replayed in PyTorch).
add_test(NAME pyramid_and_adakv_match_kvpress
  COMMAND ${CMAKE_COMMAND} -DPYTHON=${H2O_PYTHON}
          -DANCHOR=${CMAKE_CURRENT_SOURCE_DIR}/kvpress_anchor.py
          -DPARITY=$<TARGET_FILE:h2o_model_parity> -DWORK=${h2o_py_work}/kvpress -DMODE=kvpress
          -P ${CMAKE_CURRENT_SOURCE_DIR}/check_python.cmake)
# DuoAttention's retrieval heads and streaming cut against its code (replayed in PyTorch).
add_test(NAME duo_attention_matches_its_code
  COMMAND ${CMAKE_COMMAND} -DPYTHON=${H2O_PYTHON}
          -DANCHOR=${CMAKE_CURRENT_SOURCE_DIR}/duo_anchor.py
          -DPARITY=$<TARGET_FILE:h2o_model_parity> -DWORK=${h2o_py_work}/duo -DMODE=duo
          -P ${CMAKE_CURRENT_SOURCE_DIR}/check_python.cmake)
# StreamingLLM's cache in C++ (compare_policies) against its PyTorch replay (sink_positions.py,
# which also measures pos_shift): the same perplexities.
add_test(NAME sinks_positions_match_compare_policies
  COMMAND ${CMAKE_COMMAND} -DPYTHON=${H2O_PYTHON} -DSCRIPTS=${h2o_training}
          -DCOMPARE=$<TARGET_FILE:compare_policies> -DWORK=${h2o_py_work}/sinks -DMODE=sinks
          -DMODEL=${h2o_data}/model.bin -DTOKENIZER=${h2o_data}/tokenizer.bin
          -DTEXT=${h2o_data}/heldout_story.txt -P ${CMAKE_CURRENT_SOURCE_DIR}/check_python.cmake)
# The name events of name_diagnosis.py (name_mentions.py) against compare_policies' on the same
# texts: names at a paragraph's start, with marks, apostrophes, hyphens, in Han script. The count
# needs no PyTorch: the script runs without it (tests/python_checks.cmake's no_torch).
set(h2o_texts "${CMAKE_CURRENT_SOURCE_DIR}/texts")
string(JOIN "," h2o_name_texts  # story file|names file, ...
  "${h2o_data}/unseen_stories.txt|${h2o_data}/unseen_names.txt"
  "${h2o_data}/handwritten_stories.txt|${h2o_data}/handwritten_names.txt"
  "${h2o_texts}/marked_names_story.txt|${h2o_texts}/marked_names.txt"
  "${h2o_texts}/han_story.txt|${h2o_texts}/han_names.txt")
add_test(NAME name_events_match_compare_policies
  COMMAND ${CMAKE_COMMAND} -DPYTHON=${H2O_PYTHON} -DSCRIPTS=${h2o_training}
          -DCOMPARE=$<TARGET_FILE:compare_policies> -DWORK=${h2o_py_work}/names -DMODE=names
          -DMODEL=${h2o_data}/model.bin -DTOKENIZER=${h2o_data}/tokenizer.bin
          -DNO_TORCH=${CMAKE_CURRENT_BINARY_DIR}/python_inputs/no_torch "-DTEXTS=${h2o_name_texts}"
          -P ${CMAKE_CURRENT_SOURCE_DIR}/check_python.cmake)
set_tests_properties(shipped_model_matches_pytorch_logits exporter_writes_what_the_loader_reads
  kv_quant_matches_kivi pyramid_and_adakv_match_kvpress duo_attention_matches_its_code
  sinks_positions_match_compare_policies name_events_match_compare_policies
  PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED: " TIMEOUT 900 LABELS python)

# The scripts' own checks (self-test, corpus generator, bad input to every script) are in
# tests/checks/training_*.txt; the files some of them read are written here.
set(h2o_py_inputs "${CMAKE_CURRENT_BINARY_DIR}/python_inputs")
file(WRITE "${h2o_py_inputs}/odd.u16" "abc")
file(WRITE "${h2o_py_inputs}/nan.csv"
  "step,tokens,train_loss,heldout_loss,lr,seconds\n50,100,nan,,0.001,1.0\n")
file(WRITE "${h2o_py_inputs}/odd_names.txt" "Zyxwvut\n")
file(WRITE "${h2o_py_inputs}/zero.csv"
  "step,tokens,train_loss,heldout_loss,lr,seconds\n50,100,0,0,0.001,1.0\n")
file(WRITE "${h2o_py_inputs}/negative.csv"
  "step,tokens,train_loss,heldout_loss,lr,seconds\n50,100,-1,,0.001,1.0\n")

# Stand-ins for PyTorch, put first on PYTHONPATH by a check's "env:": no_torch as a machine without
# it; interrupting_torch as Ctrl-C pressed while PyTorch loads, handed back as its import does
# ("RuntimeError: KeyboardInterrupt"). Its sitecustomize.py gives Ctrl-C Python's own handler
# first, as on a terminal, even where the tests were started with Ctrl-C ignored (in the
# background).
file(WRITE "${h2o_py_inputs}/no_torch/torch/__init__.py"
  "raise ImportError('no PyTorch here: tests/python_checks.cmake')\n")
file(WRITE "${h2o_py_inputs}/interrupting_torch/sitecustomize.py"
  "import signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n")
file(WRITE "${h2o_py_inputs}/interrupting_torch/torch/__init__.py"
  "import os, signal, time\n"
  "try:\n"
  "    os.kill(os.getpid(), signal.SIGINT)\n"
  "    time.sleep(30)\n"
  "except KeyboardInterrupt:\n"
  "    raise RuntimeError('KeyboardInterrupt')\n")
# The shipped model with a NaN's four bytes after its weights: a size mismatch, to be named as
# one (not as a NaN weight). A copy of the names list, for an output that names an input.
configure_file("${h2o_data}/model.bin" "${h2o_py_inputs}/trailing_nan_model.bin" COPYONLY)
string(ASCII 255 255 192 127 h2o_nan_bytes)
file(APPEND "${h2o_py_inputs}/trailing_nan_model.bin" "${h2o_nan_bytes}")
configure_file("${h2o_data}/names.txt" "${h2o_py_inputs}/names_copy.txt" COPYONLY)
# Token ids for reference_logits.py.
file(WRITE "${h2o_py_inputs}/ids.txt" "1 2 3\n")
# A names list for the tiny synthetic model's story ("the cat and the hat ..."): "the" comes back.
file(WRITE "${h2o_py_inputs}/the_name.txt" "the\n")
