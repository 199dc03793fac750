# The lessons' terminal step mode (--step, report/step_view.hpp) on a real terminal: tmux runs
# each lesson in a pseudo-terminal, the check types Enter and reads the screen
# (check_step_mode.cmake; skipped where tmux is not installed), at 100 columns and on a school
# projector's 80x24, where every line must break between words. Without --step the lessons'
# output is unchanged: the lesson checks and their stable-output checks cover that
# (tests/checks/), and test_step_view.cpp's frames into a pipe, laid out for 100 columns.
function(h2o_check_step_mode)
  cmake_parse_arguments(S "NO_COLOR" "NAME;TARGET;ENTERS;AFTER;LAST;WIDTH;HEIGHT" "FIRST" ${ARGN})
  string(REPLACE ";" "@@" first "${S_FIRST}")
  add_test(NAME ${S_NAME}
    COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:${S_TARGET}> -DNAME=${S_NAME}
            -DENTERS=${S_ENTERS} "-DAFTER=${S_AFTER}" "-DLAST=${S_LAST}" -DNO_COLOR=${S_NO_COLOR}
            "-DWIDTH=${S_WIDTH}" "-DHEIGHT=${S_HEIGHT}"
            "-DFIRST=${first}" -P ${CMAKE_CURRENT_SOURCE_DIR}/check_step_mode.cmake)
  set_tests_properties(${S_NAME} PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED: " TIMEOUT 120
                       LABELS "lesson;terminal")
endfunction()

h2o_check_step_mode(NAME lesson_04_step_terminal TARGET 04_online_tokens ENTERS 4
  FIRST "the cache after token 0 ('The')" "cache        heavy: - | recent: The@0 1.00 | evicted: -"
  AFTER "cache        heavy: The@0 1.78 cat@1 1.58 | recent: because@3 0.51 it@4 0.22 | evicted: sat@2"
  LAST "that is real H2O behaviour.")
h2o_check_step_mode(NAME lesson_04_step_no_color TARGET 04_online_tokens NO_COLOR ENTERS 0
  LAST "that is real H2O behaviour.")
h2o_check_step_mode(NAME lesson_07_step_terminal TARGET 07_h2o_tensor_cache ENTERS 4
  FIRST "head 0 alone, token 0"
  AFTER "cache        heavy: #0 1.53 #1 2.89 | recent: #3 0.11 #4 0.06 | evicted: #2"
  LAST "Step 5: what it shows")
h2o_check_step_mode(NAME lesson_08_step_terminal TARGET 08_full_vs_h2o ENTERS 8
  FIRST "H2O layer 0 head 0 heavy: - | recent: #0 "
  AFTER "token 8: max |logit diff| 0.000000"
  LAST "Step 5: KV bytes at the end")
# A projector's terminal: 80x24 and 100x30. Lines break between tokens and words (no line wider
# than the terminal); frames wrap with the roles' words whole.
h2o_check_step_mode(NAME lesson_04_step_80_columns TARGET 04_online_tokens ENTERS 4 WIDTH 80 HEIGHT 24
  FIRST "cache        heavy: - | recent: The@0 1.00 | evicted: -"
  AFTER "| evicted: sat@2"
  LAST "that is real H2O behaviour.")
h2o_check_step_mode(NAME lesson_07_step_80_columns TARGET 07_h2o_tensor_cache ENTERS 13 WIDTH 80
  HEIGHT 24 FIRST "head 0 alone, token 0" AFTER "3 heads, token 1" LAST "Step 5: what it shows")
h2o_check_step_mode(NAME lesson_08_step_80_columns TARGET 08_full_vs_h2o ENTERS 12 WIDTH 80
  HEIGHT 24 FIRST "H2O layer 0 head 0 heavy: - | recent: #0 "
  AFTER "               #10 " LAST "Step 5: KV bytes at the end")
h2o_check_step_mode(NAME lesson_07_step_100_columns TARGET 07_h2o_tensor_cache ENTERS 14 WIDTH 100
  HEIGHT 30 FIRST "head 0 alone, token 0"
  AFTER "  per-head 0   heavy: #0 1.28 | recent: #1 1.57 #2 0.15 | evicted: -"
  LAST "Step 5: what it shows")
