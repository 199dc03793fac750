# Runs the project's PyTorch scripts (training/) against the C++ library. Used by CTest
# (python_checks.cmake):
#   cmake -DPYTHON=path -DSCRIPTS=training/ -DPARITY=h2o_model_parity -DWORK=dir -DMODE=...
#         [-DMODEL= -DTOKENIZER= -DTEXT=] -P check_python.cmake
# MODE logits: the C++ decoder's logits on TEXT against training/reference_logits.py's.
# MODE export: training/export_check.py's tiny checkpoint read back by the C++ loader.
# MODE sinks: compare_policies' perplexities of the sinks cache on TEXT (-DCOMPARE=path) against
#   training/sink_positions.py's, keys at original positions: two programs, the same numbers.
# MODE names: for each "story file|names file" of TEXTS (comma-separated), the name events
#   compare_policies counts (-DCOMPARE=path) against training/name_diagnosis.py's, run without
#   PyTorch (-DNO_TORCH=a folder shadowing it: the count needs none): the same numbers.
# MODE kvpress: PyramidKV's budgets and Ada-KV's cut on seeded cases against kvpress's code
#   replayed in PyTorch (tests/kvpress_anchor.py, -DANCHOR=path).
# MODE duo: DuoAttention's head split and streaming cut on seeded cases against its code
#   replayed (tests/duo_anchor.py, -DANCHOR=path).
# MODE kivi: layer 0's keys and values of MODEL reading TEXT, as the 8/4/2-bit caches read them
#   back, against KIVI's quantiser replayed in PyTorch (tests/kivi_anchor.py, -DANCHOR=path).
# Without python3-torch the Python side prints "SKIPPED: ..." and so does this script (CTest then
# reports a skip, not a pass).
file(MAKE_DIRECTORY "${WORK}")
function(run_or_fail)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
    TIMEOUT 900)
  if(out MATCHES "SKIPPED: ")
    message("${out}")
    set(skipped TRUE PARENT_SCOPE)
    return()
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\nstdout:\n${out}\nstderr:\n${err}")
  endif()
  message(STATUS "${out}")
  set(last_out "${out}" PARENT_SCOPE)
endfunction()

if(MODE STREQUAL "logits")
  run_or_fail("${PARITY}" write-tokens "${MODEL}" "${TOKENIZER}" "${TEXT}" "${WORK}/ids.txt")
  run_or_fail("${PYTHON}" "${SCRIPTS}/reference_logits.py" --model "${MODEL}"
              --tokens "${WORK}/ids.txt" --out "${WORK}/logits.f32")
  if(skipped)
    return()
  endif()
  run_or_fail("${PARITY}" compare "${MODEL}" "${WORK}/ids.txt" "${WORK}/logits.f32")
elseif(MODE STREQUAL "export")
  run_or_fail("${PYTHON}" "${SCRIPTS}/export_check.py" --out "${WORK}")
  if(skipped)
    return()
  endif()
  run_or_fail("${PARITY}" check-export "${WORK}/tiny.bin" "${WORK}/tiny.f32")
elseif(MODE STREQUAL "kivi")
  run_or_fail("${PARITY}" write-tokens "${MODEL}" "${TOKENIZER}" "${TEXT}" "${WORK}/ids.txt")
  run_or_fail("${PARITY}" kv-dump "${MODEL}" "${WORK}/ids.txt" 32 "${WORK}/kv.bin")
  run_or_fail("${PYTHON}" "${ANCHOR}" --dump "${WORK}/kv.bin")
elseif(MODE STREQUAL "kvpress" OR MODE STREQUAL "duo")
  run_or_fail("${PARITY}" ${MODE}-dump "${WORK}/cases.txt")
  run_or_fail("${PYTHON}" "${ANCHOR}" --dump "${WORK}/cases.txt")
elseif(MODE STREQUAL "sinks")
  run_or_fail("${PYTHON}" "${SCRIPTS}/sink_positions.py" --model "${MODEL}" --tokenizer
              "${TOKENIZER}" --stories "${TEXT}" --budgets 2,5,10)
  if(skipped)
    return()
  endif()
  set(python_out "${last_out}")
  run_or_fail("${COMPARE}" --model "${MODEL}" --tokenizer "${TOKENIZER}" --text "${TEXT}"
              --policies full,sinks --budgets 2,5,10)
  foreach(percent 2 5 10)
    # "    2%          4 + 14     3.317      3.410    1.463  ..." and
    # "  2% = 18    sinks     18       3.317      0.442  ..."
    if(NOT python_out MATCHES "\n +${percent}% +[0-9]+ \\+ [0-9]+ +([0-9.]+)")
      message(FATAL_ERROR "no ${percent}% row in sink_positions.py's output:\n${python_out}")
    endif()
    set(python_ppl "${CMAKE_MATCH_1}")
    if(NOT last_out MATCHES "\n +${percent}% = [0-9]+ +sinks +[0-9]+ +([0-9.]+)")
      message(FATAL_ERROR "no ${percent}% sinks row in compare_policies' output:\n${last_out}")
    endif()
    set(cpp_ppl "${CMAKE_MATCH_1}")
    # Both print three decimals: within one unit of the last (float32 sums in two orders).
    string(REPLACE "." "" a "${python_ppl}")
    string(REPLACE "." "" b "${cpp_ppl}")
    math(EXPR diff "${a} - ${b}")
    if(diff GREATER 1 OR diff LESS -1)
      message(FATAL_ERROR "sinks at ${percent}%: perplexity ${cpp_ppl} in compare_policies, "
                          "${python_ppl} in sink_positions.py")
    endif()
    message(STATUS "sinks at ${percent}%: ${cpp_ppl} (C++) and ${python_ppl} (PyTorch)")
  endforeach()
elseif(MODE STREQUAL "names")
  string(REPLACE "," ";" texts "${TEXTS}")
  foreach(pair IN LISTS texts)
    string(REPLACE "|" ";" pair "${pair}")
    list(GET pair 0 text)
    list(GET pair 1 names)
    execute_process(COMMAND ${CMAKE_COMMAND} -E env "PYTHONPATH=${NO_TORCH}" "${PYTHON}"
                            "${SCRIPTS}/name_diagnosis.py" --model "${MODEL}" --tokenizer
                            "${TOKENIZER}" --stories "${text}" --names "${names}" --twice 0
                    RESULT_VARIABLE rc OUTPUT_VARIABLE python_out ERROR_VARIABLE err TIMEOUT 900)
    # Its "SKIPPED: python3-torch ..." is expected here: shown otherwise, so that CTest does not
    # take a failure for a skip.
    string(REPLACE "SKIPPED: " "skipped, as expected here: " python_out "${python_out}")
    if(NOT rc EQUAL 0 OR NOT python_out MATCHES "skipped, as expected here: ")
      message(FATAL_ERROR "name_diagnosis.py without PyTorch (${rc}):\n${python_out}\n${err}")
    endif()
    run_or_fail("${COMPARE}" --model "${MODEL}" --tokenizer "${TOKENIZER}" --text "${text}"
                --names "${names}" --policies full --budgets 50)
    # "read 22 stories of unseen_stories.txt: 13249 tokens, 148 name events (a name last seen
    # more than 64 tokens back)", wrapped at 100 columns, from both.
    set(events "([0-9]+)[ \n]+name[ \n]+events?[ \n]+\\(a[ \n]+name[ \n]+last")
    if(NOT python_out MATCHES "${events}")
      message(FATAL_ERROR "no count of name events from name_diagnosis.py:\n${python_out}")
    endif()
    set(python_events "${CMAKE_MATCH_1}")
    if(NOT last_out MATCHES "${events}")
      message(FATAL_ERROR "no count of name events from compare_policies:\n${last_out}")
    endif()
    if(NOT python_events EQUAL CMAKE_MATCH_1)
      message(FATAL_ERROR "${text}: compare_policies counts ${CMAKE_MATCH_1} name events, "
                          "name_diagnosis.py ${python_events}")
    endif()
    message(STATUS "${text}: ${python_events} name events in both")
  endforeach()
else()
  message(FATAL_ERROR "unknown MODE '${MODE}'")
endif()
