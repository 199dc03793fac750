# Runs one program and checks how it behaved. Used by CTest (see program_checks.cmake):
#   cmake -DPROGRAM=path -DARGS="a@@b" -DEXIT=0|nonzero -DEXPECT="text one@@text two"
#         -DSTREAM=stdout|stderr [-DREQUIRES=file] [-DREQUIRES_IMPORT=module]
#         [-DFORBID="text@@text"] [-DENV_SETTING=VAR=value]
#         [-DTIMEOUT=seconds] -P check_program.cmake
# Passes when the exit code is as expected, every EXPECT text appears literally in STREAM and no
# FORBID text does.
# A failure-exit check also demands the error be a single line, and no crash (signal) is accepted.
if(REQUIRES AND NOT EXISTS "${REQUIRES}")
  message("SKIPPED: ${REQUIRES} not found (the real model lives outside this repository; see README)")
  return()
endif()
# PROGRAM is a python3 here: without the optional module (PyTorch) the check is skipped, not failed.
if(REQUIRES_IMPORT)
  execute_process(COMMAND "${PROGRAM}" -c "import ${REQUIRES_IMPORT}" RESULT_VARIABLE import_rc
    OUTPUT_QUIET ERROR_QUIET)
  if(NOT import_rc EQUAL 0)
    message("SKIPPED: ${PROGRAM} cannot import ${REQUIRES_IMPORT} (optional; see README)")
    return()
  endif()
endif()
string(REPLACE "@@" ";" arg_list "${ARGS}")
string(REPLACE "@@" ";" expect_list "${EXPECT}")
string(REPLACE "@@" ";" forbid_list "${FORBID}")
set(env_prefix)
if(ENV_SETTING)
  set(env_prefix ${CMAKE_COMMAND} -E env "${ENV_SETTING}")
endif()
if(NOT TIMEOUT)
  set(TIMEOUT 600)
endif()
execute_process(COMMAND ${env_prefix} "${PROGRAM}" ${arg_list}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT ${TIMEOUT})

if(NOT rc MATCHES "^[0-9]+$")
  message(FATAL_ERROR "${PROGRAM} did not exit normally: ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(EXIT STREQUAL "0" AND NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited ${rc}, expected 0\nstdout:\n${out}\nstderr:\n${err}")
endif()
if(EXIT STREQUAL "nonzero")
  if(rc EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} exited 0, expected an error\nstdout:\n${out}\nstderr:\n${err}")
  endif()
  string(STRIP "${err}" stripped)
  if(stripped MATCHES "\n")
    message(FATAL_ERROR "the error should be one line, got:\n${err}")
  endif()
endif()

if(STREAM STREQUAL "stderr")
  set(text "${err}")
else()
  set(text "${out}")
endif()
foreach(expected IN LISTS expect_list)
  string(FIND "${text}" "${expected}" where)
  if(where EQUAL -1)
    message(FATAL_ERROR "missing from ${STREAM}: '${expected}'\nstdout:\n${out}\nstderr:\n${err}")
  endif()
endforeach()
foreach(forbidden IN LISTS forbid_list)
  string(FIND "${text}" "${forbidden}" where)
  if(NOT where EQUAL -1)
    message(FATAL_ERROR "${STREAM} must not contain '${forbidden}'\nstdout:\n${out}\nstderr:\n${err}")
  endif()
endforeach()
message(STATUS "ok: ${PROGRAM} exited ${rc} and printed every expected text")
