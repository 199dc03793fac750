# Checks SVG pictures a program wrote. Used by CTest (picture_checks.cmake, after the runs that
# draw them):
#   cmake -DSVG_FILE="path@@path" [-DEXPECT="text@@text"] -P check_svg.cmake
# Passes when every SVG_FILE exists, starts with "<svg", ends with "</svg>", holds rectangles and
# every EXPECT text.
string(REPLACE "@@" ";" expect_list "${EXPECT}")
string(REPLACE "@@" ";" svg_files "${SVG_FILE}")
foreach(SVG_FILE IN LISTS svg_files)
  if(NOT EXISTS "${SVG_FILE}")
    message(FATAL_ERROR "no picture ${SVG_FILE}: the run that draws it did not write it")
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
