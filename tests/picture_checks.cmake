# Checks of what programs draw and show, beyond the text they print (the text: tests/checks/):
# SVG pictures (check_svg.cmake), the README's committed pictures (check_pictures.cmake) and the
# explorer page in a real browser (check_explorer_page.cmake).

# The README's pictures (docs/pictures/) are drawn by the default runs the lesson checks make
# anyway (tests/checks/: each writes into pictures_now, relative to build/tests where the checks
# run, so that the lines naming it are as short on every machine; with the options
# scripts/make-pictures.sh uses), so no lesson runs a second time just to draw. The folder is
# emptied first, so a picture no program draws any more cannot linger there; CTest's fixtures
# order the three stages, and `ctest -R` of a check below runs the runs it reads.
set(pictures_now ${CMAKE_CURRENT_BINARY_DIR}/pictures_now)
add_test(NAME pictures_now_emptied
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${pictures_now})
set_tests_properties(pictures_now_emptied PROPERTIES FIXTURES_SETUP pictures_now_empty
                     LABELS pictures)
set(runs_that_draw lesson_10_measures lesson_11_sweep_and_verdicts lesson_12_answer_and_numbers
                   lesson_14_rules_runs_and_answer compare_policies_kept_positions_picture)
set_property(TEST ${runs_that_draw} APPEND PROPERTY FIXTURES_REQUIRED pictures_now_empty)
set_property(TEST ${runs_that_draw} APPEND PROPERTY FIXTURES_SETUP readme_pictures)

# h2o_check_picture(NAME test_name SVG file ... [EXPECT "text" ...])
# Each SVG picture of pictures_now starts with "<svg", ends with "</svg>", holds rectangles and
# every EXPECT text (check_svg.cmake).
function(h2o_check_picture)
  cmake_parse_arguments(P "" "NAME" "SVG;EXPECT" ${ARGN})
  list(TRANSFORM P_SVG PREPEND ${pictures_now}/)
  string(REPLACE ";" "@@" joined_svg "${P_SVG}")
  string(REPLACE ";" "@@" joined_expect "${P_EXPECT}")
  add_test(NAME ${P_NAME}
    COMMAND ${CMAKE_COMMAND} "-DSVG_FILE=${joined_svg}" "-DEXPECT=${joined_expect}"
            -P ${CMAKE_CURRENT_SOURCE_DIR}/check_svg.cmake)
  set_tests_properties(${P_NAME} PROPERTIES FIXTURES_REQUIRED readme_pictures LABELS pictures)
endfunction()

# Lesson 10: one head's attention (heatmap) and accumulated attention against rank.
h2o_check_picture(NAME lesson_10_pictures SVG attention_heatmap.svg rank_score.svg
  EXPECT "<title>" "<desc>Made by: 10_sparse_attention --pictures")
# Lesson 11: one line chart per measure of the budget sweep.
h2o_check_picture(NAME lesson_11_pictures
  SVG budget_perplexity.svg budget_kl.svg budget_agreement.svg budget_name_recall.svg
  EXPECT "<title>" ">h2o<" ">h2o-norm<" ">window<" "cache budget (% of the text's tokens)")
# Lesson 12: quality against bytes, one line per storage format.
h2o_check_picture(NAME lesson_12_picture_evict_or_quantise SVG evict_or_quantise.svg
  EXPECT "<title>" ">fp32 + H2O<" ">4-bit + H2O<" ">2-bit + H2O<" "% of the full float32 cache")
# Lesson 14: perplexity against bytes, FastGen's targets beside the window at their bytes.
h2o_check_picture(NAME lesson_14_picture_rules_per_head SVG rules_per_head.svg
  EXPECT "<title>" ">FastGen<" "T = 50%, 70%, 90%" ">window<" ">h2o<"
         "% of the full cache's")
# compare_policies: which positions each policy kept, step by step.
h2o_check_picture(NAME compare_policies_svg_picture SVG kept_positions.svg
  EXPECT ">h2o<" ">window<" ">sinks<" ">tova<" "decoding step" "original position"
         "budget 90 tokens")

# explore's page in a real browser (skipped without chromium: bash scripts/install-deps.sh --only
# chromium).
add_test(NAME explore_page_in_browser
  COMMAND ${CMAKE_COMMAND} -DEXPLORE=$<TARGET_FILE:explore>
          -DBROWSER=${PROJECT_SOURCE_DIR}/scripts/headless-chromium.sh
          -DTEXT=${PROJECT_SOURCE_DIR}/data/story.txt -DWORK=${CMAKE_CURRENT_BINARY_DIR}/explore_page
          -DSCREENSHOT=${CMAKE_BINARY_DIR}/explorer.png
          -DVIEWPORT_JS=${CMAKE_CURRENT_SOURCE_DIR}/explorer_viewport.js
          -P ${CMAKE_CURRENT_SOURCE_DIR}/check_explorer_page.cmake)
set_tests_properties(explore_page_in_browser PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED: "
                     TIMEOUT 900 LABELS browser)

# The pictures the README shows (docs/pictures/) are what the programs draw today.
add_test(NAME pictures_up_to_date
  COMMAND ${CMAKE_COMMAND} -DDRAWN=${pictures_now} -DDRAWN_AS=pictures_now
          -DCOMMITTED=${PROJECT_SOURCE_DIR}/docs/pictures
          -P ${CMAKE_CURRENT_SOURCE_DIR}/check_pictures.cmake)
set_tests_properties(pictures_up_to_date PROPERTIES FIXTURES_REQUIRED readme_pictures
                     LABELS pictures)

# The classroom's teaching steps (README.md, docs/classroom.md) against the data the default page
# embeds: every word in the state the steps say, at their step, layer and KV head.
find_program(H2O_PYTHON NAMES python3)
if(H2O_PYTHON)
  add_test(NAME explorer_teaching_steps
    COMMAND ${H2O_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_teaching_steps.py
            $<TARGET_FILE:explore> ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/teaching_steps)
  set_tests_properties(explorer_teaching_steps PROPERTIES LABELS docs)
endif()
