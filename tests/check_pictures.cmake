# Are the pictures committed in docs/pictures/ what the current code and model draw? Used by
# CTest ("pictures_up_to_date", after the lesson checks that draw them: picture_checks.cmake):
#   cmake -DDRAWN=/abs/build/tests/pictures_now -DDRAWN_AS=pictures_now
#         -DCOMMITTED=/abs/docs/pictures -P check_pictures.cmake
# Compares each picture drawn into DRAWN with the committed file byte for byte; the <desc> line,
# which records the command that drew it, must match too once DRAWN_AS (the folder as the
# commands named it) reads docs/pictures, so the checks draw with the options
# scripts/make-pictures.sh uses. A picture drawn but not committed, or committed but no longer
# drawn, fails too.
set(refresh "run scripts/make-pictures.sh and commit docs/pictures/")

# Sets `result` to the number of numbers that differ by one in their last printed digit when the
# two pictures (lists of lines) are otherwise identical, or to -1 when they differ in anything
# else. Another compiler or BLAS build (Debian 13 and unstable against Debian 12) sums a float in
# another order and now and then rounds a coordinate the other way (189.3 against 189.2 pixels);
# any real change to a picture moves more than that.
function(count_rounding_differences new_lines old_lines result)
  set(number "-?[0-9]+(\\.[0-9]+)?")
  string(REGEX REPLACE "${number}" "#" new_shape "${new_lines}")
  string(REGEX REPLACE "${number}" "#" old_shape "${old_lines}")
  set(${result} -1 PARENT_SCOPE)
  if(NOT new_shape STREQUAL old_shape)
    return()
  endif()
  string(REGEX MATCHALL "${number}" new_numbers "${new_lines}")
  string(REGEX MATCHALL "${number}" old_numbers "${old_lines}")
  set(count 0)
  foreach(a b IN ZIP_LISTS new_numbers old_numbers)
    if(NOT a STREQUAL b)
      string(REGEX REPLACE "^-?[0-9]+" "" a_decimals "${a}")
      string(REGEX REPLACE "^-?[0-9]+" "" b_decimals "${b}")
      string(LENGTH "${a_decimals}" a_places)
      string(LENGTH "${b_decimals}" b_places)
      if(NOT a_places EQUAL b_places)
        return()
      endif()
      string(REPLACE "." "" a_digits "${a}")
      string(REPLACE "." "" b_digits "${b}")
      math(EXPR step "${a_digits} - ${b_digits}")
      if(step GREATER 1 OR step LESS -1)
        return()
      endif()
      math(EXPR count "${count} + 1")
    endif()
  endforeach()
  set(${result} ${count} PARENT_SCOPE)
endfunction()
file(GLOB drawn RELATIVE "${DRAWN}" "${DRAWN}/*.svg")
file(GLOB committed RELATIVE "${COMMITTED}" "${COMMITTED}/*.svg")
list(SORT drawn)
list(SORT committed)
if(NOT drawn STREQUAL committed)
  message(FATAL_ERROR "docs/pictures/ holds [${committed}] but the programs draw [${drawn}]: "
                      "${refresh}")
endif()
foreach(name IN LISTS drawn)
  file(STRINGS "${DRAWN}/${name}" new_lines)
  file(STRINGS "${COMMITTED}/${name}" old_lines)
  set(new_desc "${new_lines}")
  set(old_desc "${old_lines}")
  list(FILTER new_desc INCLUDE REGEX "^<desc>")
  list(FILTER old_desc INCLUDE REGEX "^<desc>")
  string(REPLACE "${DRAWN_AS}" "docs/pictures" new_desc "${new_desc}")
  if(NOT new_desc STREQUAL old_desc)
    message(FATAL_ERROR "docs/pictures/${name} was drawn by another command than the checks "
                        "run:\n  committed: ${old_desc}\n  checks:    ${new_desc}\n"
                        "draw both with the same options (scripts/make-pictures.sh, tests/checks/)")
  endif()
  list(FILTER new_lines EXCLUDE REGEX "^<desc>")
  list(FILTER old_lines EXCLUDE REGEX "^<desc>")
  if(NOT new_lines STREQUAL old_lines)
    count_rounding_differences("${new_lines}" "${old_lines}" rounding)
    if(rounding EQUAL -1)
      message(FATAL_ERROR "docs/pictures/${name} is out of date: ${refresh}")
    endif()
    message("${name}: ${rounding} numbers differ by one in the last digit (float rounding)")
  endif()
endforeach()
list(LENGTH drawn count)
message("${count} pictures in docs/pictures/ are up to date")
