# Runs a program and compares its stdout with a reference file, byte for byte. Used by CTest:
#   cmake -DPROGRAM=path -DARGS="a@@b" -DEXPECTED_FILE=path -DOUTPUT_FILE=path
#         -P compare_output.cmake
# When EXPECTED_FILE is absent (the downloaded model folder is missing), prints "SKIPPED: ..." and
# passes; check_files.cmake marks that text as a CTest skip.
# (ARGS as check_program.cmake takes them: check_values.cmake.)
include(${CMAKE_CURRENT_LIST_DIR}/check_values.cmake)
h2o_decode_arguments("${ARGS}" arg_list)
if(NOT EXISTS "${EXPECTED_FILE}")
  message("SKIPPED: ${EXPECTED_FILE} is absent (see H2O_MODELS_DIR)")
  return()
endif()
execute_process(COMMAND "${PROGRAM}" ${arg_list}
  RESULT_VARIABLE rc OUTPUT_FILE "${OUTPUT_FILE}" ERROR_VARIABLE err TIMEOUT 600)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited ${rc}\nstderr:\n${err}")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${OUTPUT_FILE}" "${EXPECTED_FILE}"
  RESULT_VARIABLE differ)
if(NOT differ EQUAL 0)
  file(READ "${OUTPUT_FILE}" got)
  file(READ "${EXPECTED_FILE}" want)
  message(FATAL_ERROR
    "stdout differs from ${EXPECTED_FILE}\n--- got:\n${got}\n--- expected:\n${want}")
endif()
message(STATUS "ok: stdout is byte-identical to ${EXPECTED_FILE}")
