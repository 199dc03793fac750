# Runs one program and checks how it behaved. Used by CTest (tests/check_files.cmake adds one such
# test per block of tests/checks/*.txt):
#   cmake -DPROGRAM=path -DARGS="a@@b" -DEXIT=0|nonzero|N -DSTDOUT="text@@text"
#         -DSTDERR="text@@text" [-DNOT_STDOUT="text@@text"] [-DNOT_STDERR="text@@text"]
#         [-DREQUIRES=file] [-DREQUIRES_IMPORT=module] [-DENV_SETTING=VAR=value]
#         [-DTIMEOUT=seconds] [-DREPEAT=n] [-DWIDTH=columns] -P check_program.cmake
# Values are joined by "@@", with CMake's list characters encoded (check_values.cmake).
# Passes when the exit code is as expected, every STDOUT text appears literally in stdout, every
# STDERR text in stderr, and no NOT_ text in its stream.
# A failure-exit check (nonzero, or a status N such as 130) also demands the error be a single
# line, and no crash (signal) is accepted.
# REPEAT runs the program that many times (each within TIMEOUT): every run must pass, and print
# the same stdout as the first (a race between threads shows up as a hang or a different text).
# WIDTH: no line of stdout is wider (the programs print plain ASCII: bytes = columns).

include(${CMAKE_CURRENT_LIST_DIR}/check_values.cmake)

h2o_skip_unless_available()  # REQUIRES, REQUIRES_IMPORT (check_values.cmake)
h2o_decode_arguments("${ARGS}" arg_list)
set(env_prefix)
if(ENV_SETTING)
  set(env_prefix ${CMAKE_COMMAND} -E env "${ENV_SETTING}")
endif()
if(NOT TIMEOUT)
  set(TIMEOUT 600)
endif()
if(NOT REPEAT)
  set(REPEAT 1)
endif()
foreach(run RANGE 1 ${REPEAT})
  execute_process(COMMAND ${env_prefix} "${PROGRAM}" ${arg_list}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT ${TIMEOUT})

  if(NOT rc MATCHES "^[0-9]+$")
    message(FATAL_ERROR "${PROGRAM} did not exit normally: ${rc}\nstdout:\n${out}\nstderr:\n${err}")
  endif()
  if(EXIT STREQUAL "0" AND NOT rc EQUAL 0)
    message(FATAL_ERROR "${PROGRAM} exited ${rc}, expected 0\nstdout:\n${out}\nstderr:\n${err}")
  endif()
  if(EXIT MATCHES "^[1-9][0-9]*$" AND NOT rc EQUAL EXIT)
    message(FATAL_ERROR
      "${PROGRAM} exited ${rc}, expected ${EXIT}\nstdout:\n${out}\nstderr:\n${err}")
  endif()
  if(NOT EXIT STREQUAL "0")
    if(rc EQUAL 0)
      message(FATAL_ERROR "${PROGRAM} exited 0, expected an error\nstdout:\n${out}\nstderr:\n${err}")
    endif()
    string(STRIP "${err}" stripped)
    if(stripped MATCHES "\n")
      message(FATAL_ERROR "the error should be one line, got:\n${err}")
    endif()
  endif()

  foreach(stream stdout stderr)
    string(TOUPPER ${stream} upper)
    if(stream STREQUAL "stderr")
      set(text "${err}")
    else()
      set(text "${out}")
    endif()
    string(REPLACE "@@" ";" expect_list "${${upper}}")
    foreach(expected IN LISTS expect_list)
      h2o_decode("${expected}" expected)
      string(FIND "${text}" "${expected}" where)
      if(where EQUAL -1)
        message(FATAL_ERROR "missing from ${stream}: '${expected}'\nstdout:\n${out}\nstderr:\n${err}")
      endif()
    endforeach()
    string(REPLACE "@@" ";" forbid_list "${NOT_${upper}}")
    foreach(forbidden IN LISTS forbid_list)
      h2o_decode("${forbidden}" forbidden)
      string(FIND "${text}" "${forbidden}" where)
      if(NOT where EQUAL -1)
        message(FATAL_ERROR "${stream} must not contain '${forbidden}'\nstdout:\n${out}\nstderr:\n${err}")
      endif()
    endforeach()
  endforeach()
  if(run EQUAL 1)
    set(first_out "${out}")
    if(WIDTH)
      string(REPLACE ";" "\\;" escaped "${out}")
      string(REPLACE "\n" ";" lines "${escaped}")
      foreach(line IN LISTS lines)
        string(LENGTH "${line}" columns)
        if(columns GREATER WIDTH)
          message(FATAL_ERROR "a line of ${columns} columns (limit ${WIDTH}):\n${line}")
        endif()
      endforeach()
    endif()
  elseif(NOT out STREQUAL first_out)
    message(FATAL_ERROR "run ${run} of ${REPEAT} printed another stdout than run 1:\n${out}\n"
                        "run 1:\n${first_out}")
  endif()
endforeach()
message(STATUS "ok: ${PROGRAM} exited ${rc} and printed every expected text (${REPEAT} runs)")
