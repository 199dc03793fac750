# Runs one program and checks how it behaved. Used by CTest (see program_checks.cmake):
#   cmake -DPROGRAM=path -DARGS="a@@b" -DEXIT=0|nonzero -DEXPECT="text one@@text two"
#         -DSTREAM=stdout|stderr [-DREQUIRES=file] -P check_program.cmake
# Passes when the exit code is as expected and every EXPECT text appears literally in STREAM.
# A failure-exit check also demands the error be a single line, and no crash (signal) is accepted.
if(REQUIRES AND NOT EXISTS "${REQUIRES}")
  message("SKIPPED: ${REQUIRES} not found (the real model lives outside this repository; see README)")
  return()
endif()
string(REPLACE "@@" ";" arg_list "${ARGS}")
string(REPLACE "@@" ";" expect_list "${EXPECT}")
execute_process(COMMAND "${PROGRAM}" ${arg_list}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 600)

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
message(STATUS "ok: ${PROGRAM} exited ${rc} and printed every expected text")
