# h2o_check_program(NAME test_name TARGET program [ARGS a b ...] [EXIT 0|nonzero]
#                   [STREAM stdout|stderr] [EXPECT "literal text" ...])
# Registers a CTest test that runs a built program and checks its exit code and output texts.
function(h2o_check_program)
  cmake_parse_arguments(P "" "NAME;TARGET;EXIT;STREAM" "ARGS;EXPECT" ${ARGN})
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
            -P ${CMAKE_CURRENT_SOURCE_DIR}/check_program.cmake)
endfunction()
