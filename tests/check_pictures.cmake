# Are the pictures committed in docs/pictures/ what the current code and model draw? Used by
# CTest ("pictures_up_to_date"):
#   cmake -DSCRIPT=scripts/make-pictures.sh -DBUILD_DIR=build -DOUT=dir -DCOMMITTED=docs/pictures
#         -P check_pictures.cmake
# Draws every picture afresh into OUT with the built programs, then compares each with the
# committed file byte for byte, except the <desc> line (it names the output folder). A picture
# drawn but not committed, or committed but no longer drawn, fails too.
file(REMOVE_RECURSE "${OUT}")
execute_process(COMMAND "${CMAKE_COMMAND}" -E env "H2O_BUILD_DIR=${BUILD_DIR}" H2O_NO_SCREENSHOT=1
                        bash "${SCRIPT}" --no-build "${OUT}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 600)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "make-pictures.sh exited ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
set(refresh "run scripts/make-pictures.sh and commit docs/pictures/")
file(GLOB drawn RELATIVE "${OUT}" "${OUT}/*.svg")
file(GLOB committed RELATIVE "${COMMITTED}" "${COMMITTED}/*.svg")
list(SORT drawn)
list(SORT committed)
if(NOT drawn STREQUAL committed)
  message(FATAL_ERROR "docs/pictures/ holds [${committed}] but the programs draw [${drawn}]: "
                      "${refresh}")
endif()
foreach(name IN LISTS drawn)
  file(STRINGS "${OUT}/${name}" new_lines)
  file(STRINGS "${COMMITTED}/${name}" old_lines)
  list(FILTER new_lines EXCLUDE REGEX "^<desc>")
  list(FILTER old_lines EXCLUDE REGEX "^<desc>")
  if(NOT new_lines STREQUAL old_lines)
    message(FATAL_ERROR "docs/pictures/${name} is out of date: ${refresh}")
  endif()
endforeach()
list(LENGTH drawn count)
message("${count} pictures in docs/pictures/ are up to date")
