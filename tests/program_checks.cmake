# h2o_check_program(NAME test_name TARGET program [ARGS a b ...] [EXIT 0|nonzero]
#                   [STREAM stdout|stderr] [EXPECT "literal text" ...] [REQUIRES file])
# Registers a CTest test that runs a built program and checks its exit code and output texts.
# With REQUIRES, the test is reported as skipped (not passed) when that file does not exist, e.g.
# the real model in ../shared/models, which is not part of this repository.
function(h2o_check_program)
  cmake_parse_arguments(P "" "NAME;TARGET;EXIT;STREAM;REQUIRES" "ARGS;EXPECT" ${ARGN})
  if(NOT P_EXIT)
    set(P_EXIT 0)
  endif()
  if(NOT P_STREAM)
    set(P_STREAM stdout)
  endif()
  string(REPLACE ";" "@@" joined_args "${P_ARGS}")
  string(REPLACE ";" "@@" joined_expect "${P_EXPECT}")
  add_test(NAME ${P_NAME}
    COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:${P_TARGET}> "-DARGS=${joined_args}"
            -DEXIT=${P_EXIT} -DSTREAM=${P_STREAM} "-DEXPECT=${joined_expect}"
            "-DREQUIRES=${P_REQUIRES}" -P ${CMAKE_CURRENT_SOURCE_DIR}/check_program.cmake)
  set_tests_properties(${P_NAME} PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED: ")
endfunction()
