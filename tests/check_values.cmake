# How check_files.cmake hands values to the check scripts: joined by "@@", with CMake's list
# characters encoded (<h2o-semi> <h2o-lb> <h2o-rb> <h2o-bs> for ; [ ] \). One owner for both ends.

# h2o_encode(text out_var): the encoding check_files.cmake applies to a whole check file.
function(h2o_encode text out_var)
  string(REPLACE "\\" "<h2o-bs>" text "${text}")
  string(REPLACE "[" "<h2o-lb>" text "${text}")
  string(REPLACE "]" "<h2o-rb>" text "${text}")
  string(REPLACE ";" "<h2o-semi>" text "${text}")
  set(${out_var} "${text}" PARENT_SCOPE)
endfunction()

# h2o_decode(value out_var): one value back as the check file wrote it.
function(h2o_decode value out_var)
  string(REPLACE "<h2o-semi>" ";" value "${value}")
  string(REPLACE "<h2o-lb>" "[" value "${value}")
  string(REPLACE "<h2o-rb>" "]" value "${value}")
  string(REPLACE "<h2o-bs>" "\\" value "${value}")
  set(${out_var} "${value}" PARENT_SCOPE)
endfunction()

# h2o_decode_arguments("a@@b" out_var): a list of arguments to run a program with.
function(h2o_decode_arguments joined out_var)
  string(REPLACE "@@" ";" encoded "${joined}")
  set(decoded)
  foreach(arg IN LISTS encoded)
    h2o_decode("${arg}" arg)
    list(APPEND decoded "${arg}")
  endforeach()
  set(${out_var} "${decoded}" PARENT_SCOPE)
endfunction()

# Skips the calling check (prints "SKIPPED: ..." and returns from the script; a macro, so its
# return() is the caller's) when REQUIRES names a missing file (the external stories260K) or
# PROGRAM, a python3, cannot import the module REQUIRES_IMPORT (PyTorch): optional, not failed.
macro(h2o_skip_unless_available)
  if(REQUIRES AND NOT EXISTS "${REQUIRES}")
    message("SKIPPED: ${REQUIRES} not found (the real model lives outside this repository; see README)")
    return()
  endif()
  if(REQUIRES_IMPORT)
    execute_process(COMMAND "${PROGRAM}" -c "import ${REQUIRES_IMPORT}" RESULT_VARIABLE import_rc
      OUTPUT_QUIET ERROR_QUIET)
    if(NOT import_rc EQUAL 0)
      message("SKIPPED: ${PROGRAM} cannot import ${REQUIRES_IMPORT} (optional; see README)")
      return()
    endif()
  endif()
endmacro()
