# Runs the project's PyTorch scripts (training/) against the C++ library. Used by CTest
# (python_checks.cmake):
#   cmake -DPYTHON=path -DSCRIPTS=training/ -DPARITY=h2o_model_parity -DWORK=dir -DMODE=...
#         [-DMODEL= -DTOKENIZER= -DTEXT=] -P check_python.cmake
# MODE logits: the C++ decoder's logits on TEXT against training/reference_logits.py's.
# MODE export: training/export_check.py's tiny checkpoint read back by the C++ loader.
# MODE sinks: compare_policies' perplexities of the sinks cache on TEXT (-DCOMPARE=path) against
#   training/sink_positions.py's, keys at original positions: two programs, the same numbers.
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
    # "    2%          4 + 14     3.513      4.039    1.564  ..." and
    # "  2% = 18    sinks     18       3.513      0.463  ..."
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
else()
  message(FATAL_ERROR "unknown MODE '${MODE}'")
endif()
