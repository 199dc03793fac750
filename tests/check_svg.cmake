# Runs a program that writes an SVG picture and checks the file. Used by CTest
# (picture_checks.cmake):
#   cmake -DPROGRAM=path -DARGS="a@@b" -DSVG_FILE="path@@path" [-DREQUIRES=file]
#         [-DEXPECT="text@@text"] -P check_svg.cmake
# Passes when the program exits 0 and every SVG_FILE (written afresh: one run of the program
# writes them all) starts with "<svg", ends with "</svg>", holds rectangles and every EXPECT text.
# Without REQUIRES' file: "SKIPPED: ...".
if(REQUIRES AND NOT EXISTS "${REQUIRES}")
  message("SKIPPED: ${REQUIRES} not found (the real model lives outside this repository; see README)")
  return()
endif()
string(REPLACE "@@" ";" arg_list "${ARGS}")
string(REPLACE "@@" ";" expect_list "${EXPECT}")
string(REPLACE "@@" ";" svg_files "${SVG_FILE}")
file(REMOVE ${svg_files})
execute_process(COMMAND "${PROGRAM}" ${arg_list}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 600)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
foreach(SVG_FILE IN LISTS svg_files)
  if(NOT EXISTS "${SVG_FILE}")
    message(FATAL_ERROR "${PROGRAM} exited 0 but wrote no ${SVG_FILE}\nstdout:\n${out}")
  endif()
  file(READ "${SVG_FILE}" svg)
  string(SUBSTRING "${svg}" 0 4 head)
  if(NOT head STREQUAL "<svg")
    message(FATAL_ERROR "${SVG_FILE} does not start with '<svg' but with '${head}'")
  endif()
  string(STRIP "${svg}" stripped)
  if(NOT stripped MATCHES "</svg>$")
    message(FATAL_ERROR "${SVG_FILE} does not end with '</svg>'")
  endif()
  foreach(expected IN LISTS expect_list ITEMS "<rect")
    string(FIND "${svg}" "${expected}" where)
    if(where EQUAL -1)
      message(FATAL_ERROR "missing from ${SVG_FILE}: '${expected}'")
    endif()
  endforeach()
  message(STATUS "ok: ${SVG_FILE} is an SVG picture holding every expected text")
endforeach()
