# The expected output of every program, one plain-text file per program in tests/checks/ (the
# format in full: tests/checks/README.md). This file reads them at configure time and adds one
# CTest test per block. A file names its program once, then holds blocks:
#
#   program: generate                          (a target built here; or command: bash {source}/x.sh)
#
#   test: generate_unknown_flag                (starts a block: the CTest name)
#   args: --cache h2o --heavy 0                (arguments split at spaces; may repeat)
#   arg: the cat sat                           (one argument, verbatim, spaces and all)
#   exit: error                                (0, the default; error: non-zero, stderr one line;
#                                               a number: that status, stderr one line)
#   stdout: text                               (must appear in stdout; one per line, any number)
#   stderr: text                               (must appear in stderr)
#   not in stdout: text / not in stderr: text  (must not appear)
#   width: 100                                 (no line of stdout is wider)
#   stable: yes                                (two runs print the same stdout; width 100 unless
#                                               given; the texts are checked on each run)
#   stdout is the file: path                   (instead of texts: stdout equals that file byte for
#                                               byte; skipped when the file is absent)
#   env: VAR=value  timeout: seconds  after: other_test
#   repeat: N                                  (runs it N times, each within the timeout; every
#                                               run passes and prints the stdout of the first)
#   requires file: path                        (skipped, not failed, when the file is absent)
#   requires python module: torch              (skipped when {python} cannot import it)
#   label: deep                                (one more CTest label; may repeat)
#
# Every test is labelled by its file: "lesson" (NN_*.txt), "python" (training_*.txt and the
# PyTorch anchors), "tool" (the others); a block with "exit: error" also "bad-input".
#
# Every value is the rest of the line after "key: ", taken verbatim (spaces at either end count);
# nothing is escaped. Placeholders: {source} (the checkout), {data} ({source}/data), {build} (this
# folder of the build, build/tests), {inputs} (the synthetic inputs h2o_make_test_inputs writes; a
# test that names it waits for them), {models} (H2O_MODELS_DIR), {python} (python3). Lines
# starting with # are comments.
#
# Inside, values travel to check_program.cmake joined by "@@" with ; [ ] \ encoded (CMake list
# characters, check_values.cmake); that script decodes them. The maintainer never sees this.

set(H2O_CHECK_SCRIPTS ${CMAKE_CURRENT_LIST_DIR})
include(${CMAKE_CURRENT_LIST_DIR}/check_values.cmake)

# Placeholders -> paths; and the internal encoding of CMake's list characters.
function(h2o_check_expand text out_var)
  string(REPLACE "{inputs}" "${CMAKE_CURRENT_BINARY_DIR}/generate_inputs" text "${text}")
  string(REPLACE "{build}" "${CMAKE_CURRENT_BINARY_DIR}" text "${text}")
  string(REPLACE "{data}" "${PROJECT_SOURCE_DIR}/data" text "${text}")
  string(REPLACE "{source}" "${PROJECT_SOURCE_DIR}" text "${text}")
  string(REPLACE "{models}" "${H2O_MODELS_DIR}" text "${text}")
  string(REPLACE "{python}" "${H2O_PYTHON}" text "${text}")
  set(${out_var} "${text}" PARENT_SCOPE)
endfunction()

# Adds the test of the block gathered so far (variables b_* of h2o_add_check_file).
macro(h2o_check_finish_block)
  if(b_name)
    h2o_check_expand("${b_args}" b_args)
    set(all_args "${command_args}")
    if(NOT "${b_args}" STREQUAL "")
      h2o_check_append(all_args "${b_args}")
    endif()
    if(b_stable AND b_file)
      message(FATAL_ERROR "${check_file}: test ${b_name}: 'stable: yes' and 'stdout is the file' "
                          "are two ways to check the same bytes; keep one")
    endif()
    if(b_file)
      h2o_check_expand("${b_file}" b_file)
      add_test(NAME ${b_name}
        COMMAND ${CMAKE_COMMAND} -DPROGRAM=${program} "-DARGS=${all_args}"
                "-DEXPECTED_FILE=${b_file}"
                "-DOUTPUT_FILE=${CMAKE_CURRENT_BINARY_DIR}/${b_name}.out"
                -P ${H2O_CHECK_SCRIPTS}/compare_output.cmake)
      set_tests_properties(${b_name} PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED: ")
    else()
      foreach(part b_stdout b_stderr b_not_stdout b_not_stderr b_requires b_env)
        h2o_check_expand("${${part}}" ${part})
      endforeach()
      if(b_stable)
        if(NOT b_width)
          set(b_width 100)
        endif()
        if(b_repeat LESS 2)
          set(b_repeat 2)
        endif()
      endif()
      add_test(NAME ${b_name}
        COMMAND ${CMAKE_COMMAND} -DPROGRAM=${program} "-DARGS=${all_args}"
                -DEXIT=${b_exit} "-DSTDOUT=${b_stdout}" "-DSTDERR=${b_stderr}"
                "-DNOT_STDOUT=${b_not_stdout}" "-DNOT_STDERR=${b_not_stderr}"
                "-DREQUIRES=${b_requires}" "-DREQUIRES_IMPORT=${b_import}"
                "-DENV_SETTING=${b_env}" -DTIMEOUT=${b_timeout} -DREPEAT=${b_repeat}
                "-DWIDTH=${b_width}"
                -P ${H2O_CHECK_SCRIPTS}/check_program.cmake)
      set_tests_properties(${b_name} PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED: ")
    endif()
    if(b_uses_inputs)
      set_tests_properties(${b_name} PROPERTIES FIXTURES_REQUIRED generate_inputs)
    endif()
    set(labels ${file_label} ${b_labels})
    if(b_exit STREQUAL "nonzero")
      list(APPEND labels bad-input)
    endif()
    set_property(TEST ${b_name} APPEND PROPERTY LABELS ${labels})
    if(b_after)
      set_tests_properties(${b_name} PROPERTIES DEPENDS "${b_after}")
    endif()
  endif()
  foreach(part name args stdout stderr not_stdout not_stderr requires import env after stable file
               width uses_inputs labels)
    set(b_${part})
  endforeach()
  set(b_exit 0)
  set(b_timeout 600)
  set(b_repeat 1)
endmacro()

# Appends one encoded value to a "@@"-joined list variable.
macro(h2o_check_append var value)
  if("${${var}}" STREQUAL "")
    set(${var} "${value}")
  else()
    set(${var} "${${var}}@@${value}")
  endif()
endmacro()

function(h2o_add_check_file check_file)
  file(READ "${check_file}" content)
  h2o_encode("${content}" content)
  string(REPLACE "\n" ";" lines "${content}")
  set(program)
  set(command_args)
  set(line_number 0)
  get_filename_component(file_stem "${check_file}" NAME_WE)
  if(file_stem MATCHES "^[0-9][0-9]_")
    set(file_label lesson)
  elseif(file_stem MATCHES "^training_|_anchor$")
    set(file_label python)
  else()
    set(file_label tool)
  endif()
  h2o_check_finish_block()
  foreach(line IN LISTS lines)
    math(EXPR line_number "${line_number} + 1")
    if(line STREQUAL "" OR line MATCHES "^#")
      continue()
    endif()
    if(NOT line MATCHES "^([a-z][a-z ]*): (.*)$")
      message(FATAL_ERROR "${check_file}:${line_number}: expected 'key: value', got: ${line}")
    endif()
    set(key "${CMAKE_MATCH_1}")
    set(value "${CMAKE_MATCH_2}")
    if(NOT b_name AND NOT key MATCHES "^(test|program|command)$")
      message(FATAL_ERROR "${check_file}:${line_number}: '${key}:' before the first 'test:'")
    endif()
    if(key STREQUAL "program")
      set(program $<TARGET_FILE:${value}>)
    elseif(key STREQUAL "command")
      # A script, or python3 with a script: the first word runs, the rest come before the args.
      string(FIND "${value}" "{python}" uses_python)
      if(uses_python GREATER -1 AND NOT H2O_PYTHON)
        return()  # python_checks.cmake reports the python checks as skipped
      endif()
      h2o_check_expand("${value}" value)
      string(REPLACE " " ";" words "${value}")
      list(POP_FRONT words program)
      set(command_args)
      foreach(word IN LISTS words)
        h2o_check_append(command_args "${word}")
      endforeach()
    elseif(key STREQUAL "test")
      h2o_check_finish_block()
      if(NOT program)
        message(FATAL_ERROR "${check_file}: no 'program:' or 'command:' before the first test")
      endif()
      set(b_name "${value}")
      string(FIND "${command_args}" "/generate_inputs/" where)
      if(where GREATER -1)
        set(b_uses_inputs TRUE)
      endif()
    elseif(key STREQUAL "args")
      string(REPLACE " " ";" words "${value}")
      foreach(word IN LISTS words)
        if(NOT word STREQUAL "")
          h2o_check_append(b_args "${word}")
        endif()
      endforeach()
    elseif(key STREQUAL "arg")
      h2o_check_append(b_args "${value}")
    elseif(key MATCHES "^(stdout|stderr)$")
      h2o_check_append(b_${key} "${value}")
    elseif(key MATCHES "^not in (stdout|stderr)$")
      h2o_check_append(b_not_${CMAKE_MATCH_1} "${value}")
    elseif(key STREQUAL "exit")
      if(value STREQUAL "error")
        set(b_exit nonzero)
      elseif(value MATCHES "^(0|[1-9][0-9]?|1[0-9][0-9]|2[0-4][0-9]|25[0-5])$")
        set(b_exit ${value})
      else()
        message(FATAL_ERROR "${check_file}:${line_number}: exit is 0, error or a status 1..255, "
                            "got '${value}'")
      endif()
    elseif(key STREQUAL "stable")
      set(b_stable TRUE)
    elseif(key STREQUAL "stdout is the file")
      set(b_file "${value}")
    elseif(key STREQUAL "width")
      if(NOT value MATCHES "^[1-9][0-9]*$")
        message(FATAL_ERROR "${check_file}:${line_number}: width is a count of columns, "
                            "got '${value}'")
      endif()
      set(b_width "${value}")
    elseif(key STREQUAL "timeout")
      set(b_timeout "${value}")
    elseif(key STREQUAL "repeat")
      if(NOT value MATCHES "^[1-9][0-9]*$")
        message(FATAL_ERROR "${check_file}:${line_number}: repeat is a count, got '${value}'")
      endif()
      set(b_repeat "${value}")
    elseif(key STREQUAL "env")
      set(b_env "${value}")
    elseif(key STREQUAL "after")
      list(APPEND b_after "${value}")
    elseif(key STREQUAL "requires file")
      set(b_requires "${value}")
    elseif(key STREQUAL "requires python module")
      set(b_import "${value}")
    elseif(key STREQUAL "label")
      if(NOT value MATCHES "^[a-z][a-z-]*$")
        message(FATAL_ERROR "${check_file}:${line_number}: a label is one word, got '${value}'")
      endif()
      list(APPEND b_labels "${value}")
    else()
      message(FATAL_ERROR "${check_file}:${line_number}: unknown key '${key}:'")
    endif()
    string(FIND "${value}" "{inputs}" where)
    if(where GREATER -1)
      set(b_uses_inputs TRUE)
    endif()
  endforeach()
  h2o_check_finish_block()
endfunction()

# Every file of tests/checks/, in name order. A build after a file is edited or added configures
# again, so the tests are always those the files say.
file(GLOB h2o_check_files CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/checks/*.txt)
list(SORT h2o_check_files)
foreach(check_file IN LISTS h2o_check_files)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${check_file})
  h2o_add_check_file(${check_file})
endforeach()
