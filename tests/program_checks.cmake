# h2o_check_program(NAME test_name TARGET program | COMMAND path [ARGS a b ...] [EXIT 0|nonzero]
#                   [STREAM stdout|stderr] [EXPECT "literal text" ...] [FORBID "text" ...]
#                   [REQUIRES file] [REQUIRES_IMPORT module] [ENV VAR=value] [TIMEOUT seconds])
# Registers a CTest test that runs a built program (TARGET) or any other executable (COMMAND: a
# script, python3) and checks its exit code and output texts. A program that prints "SKIPPED: "
# is reported as skipped.
# With REQUIRES, the test is reported as skipped (not passed) when that file does not exist, e.g.
# the real model in ../shared/models, which is not part of this repository. REQUIRES_IMPORT does
# the same when COMMAND (a python3) cannot import that module, e.g. torch, which is optional.
# TIMEOUT (default 600)
# stops a program that runs too long, e.g. one reading /dev/zero without end, and fails the check.
function(h2o_check_program)
  cmake_parse_arguments(P "" "NAME;TARGET;COMMAND;EXIT;STREAM;REQUIRES;REQUIRES_IMPORT;ENV;TIMEOUT"
                        "ARGS;EXPECT;FORBID" ${ARGN})
  if(P_TARGET)
    set(program $<TARGET_FILE:${P_TARGET}>)
  else()
    set(program ${P_COMMAND})
  endif()
  if(NOT P_EXIT)
    set(P_EXIT 0)
  endif()
  if(NOT P_TIMEOUT)
    set(P_TIMEOUT 600)
  endif()
  if(NOT P_STREAM)
    set(P_STREAM stdout)
  endif()
  string(REPLACE ";" "@@" joined_args "${P_ARGS}")
  string(REPLACE ";" "@@" joined_expect "${P_EXPECT}")
  string(REPLACE ";" "@@" joined_forbid "${P_FORBID}")
  add_test(NAME ${P_NAME}
    COMMAND ${CMAKE_COMMAND} -DPROGRAM=${program} "-DARGS=${joined_args}"
            -DEXIT=${P_EXIT} -DSTREAM=${P_STREAM} "-DEXPECT=${joined_expect}"
            "-DREQUIRES=${P_REQUIRES}" "-DREQUIRES_IMPORT=${P_REQUIRES_IMPORT}"
            "-DFORBID=${joined_forbid}" "-DENV_SETTING=${P_ENV}"
            -DTIMEOUT=${P_TIMEOUT} -P ${CMAKE_CURRENT_SOURCE_DIR}/check_program.cmake)
  set_tests_properties(${P_NAME} PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED: ")
endfunction()

# h2o_check_stable_output(NAME test_name TARGET program [ARGS a b ...])
# Runs the program twice and passes when both runs print the same bytes, exit 0, and no output line
# is wider than 100 columns (the lessons' promise to readers and to classroom projectors).
function(h2o_check_stable_output)
  cmake_parse_arguments(P "" "NAME;TARGET" "ARGS" ${ARGN})
  string(REPLACE ";" "@@" joined_args "${P_ARGS}")
  add_test(NAME ${P_NAME}
    COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:${P_TARGET}> "-DARGS=${joined_args}"
            -P ${CMAKE_CURRENT_SOURCE_DIR}/check_stable_output.cmake)
endfunction()

# h2o_check_script(NAME test_name SCRIPT path ...h2o_check_program's options)
# h2o_check_program for a script of scripts/ rather than a built program.
function(h2o_check_script)
  cmake_parse_arguments(S "" "SCRIPT" "" ${ARGN})
  h2o_check_program(${S_UNPARSED_ARGUMENTS} COMMAND ${S_SCRIPT})
endfunction()

# h2o_split_case("short@a,b,c@message" short flags message): the three fields of one case of a
# table of refusals; in the arguments "," separates them and "#" stands for a comma inside one.
macro(h2o_split_case case short_var flags_var message_var)
  string(REPLACE "@" ";" h2o_case_parts "${case}")
  list(GET h2o_case_parts 0 ${short_var})
  list(GET h2o_case_parts 1 ${flags_var})
  list(GET h2o_case_parts 2 ${message_var})
  string(REPLACE "," ";" ${flags_var} "${${flags_var}}")
  string(REPLACE "#" "," ${flags_var} "${${flags_var}}")
endmacro()

# h2o_check_refusals(TARGET program PREFIX name_prefix CASES "short@a,b,c@message" ...)
# One check per case: run with those arguments ("," separates them; "#" stands for a comma inside
# one), the program exits non-zero and prints "program: error: message" on stderr.
function(h2o_check_refusals)
  cmake_parse_arguments(R "" "TARGET;PREFIX" "CASES" ${ARGN})
  foreach(case IN LISTS R_CASES)
    h2o_split_case("${case}" short flags message)
    h2o_check_program(NAME ${R_PREFIX}${short} TARGET ${R_TARGET} ARGS ${flags}
      EXIT nonzero STREAM stderr EXPECT "${R_TARGET}: error: ${message}")
  endforeach()
endfunction()

# h2o_check_picture(NAME test_name TARGET program ARGS a b ... SVG file [EXPECT "text" ...])
# Runs the program (which must exit 0) and checks the SVG picture it wrote afresh: it starts with
# "<svg", ends with "</svg>", holds rectangles and every EXPECT text (check_svg.cmake).
function(h2o_check_picture)
  cmake_parse_arguments(P "" "NAME;TARGET;SVG" "ARGS;EXPECT" ${ARGN})
  string(REPLACE ";" "@@" joined_args "${P_ARGS}")
  string(REPLACE ";" "@@" joined_expect "${P_EXPECT}")
  add_test(NAME ${P_NAME}
    COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:${P_TARGET}> "-DARGS=${joined_args}"
            "-DSVG_FILE=${P_SVG}" "-DEXPECT=${joined_expect}"
            -P ${CMAKE_CURRENT_SOURCE_DIR}/check_svg.cmake)
  set_tests_properties(${P_NAME} PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED: ")
endfunction()
