# Runs the project's PyTorch scripts (training/) against the C++ library. Used by CTest
# (python_checks.cmake):
#   cmake -DPYTHON=path -DSCRIPTS=training/ -DPARITY=h2o_model_parity -DWORK=dir -DMODE=...
#         [-DMODEL= -DTOKENIZER= -DTEXT=] -P check_python.cmake
# MODE logits: the C++ decoder's logits on TEXT against training/reference_logits.py's.
# MODE export: training/export_check.py's tiny checkpoint read back by the C++ loader.
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
else()
  message(FATAL_ERROR "unknown MODE '${MODE}'")
endif()
