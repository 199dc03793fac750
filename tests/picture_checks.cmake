# Checks of what programs draw and show, beyond the text they print (the text: tests/checks/):
# SVG pictures (check_svg.cmake), the README's committed pictures (check_pictures.cmake) and the
# explorer page in a real browser (check_explorer_page.cmake).

# h2o_check_picture(NAME test_name TARGET program ARGS a b ... SVG file ... [EXPECT "text" ...])
# Runs the program once (it must exit 0) and checks each SVG picture it wrote afresh: it starts
# with "<svg", ends with "</svg>", holds rectangles and every EXPECT text (check_svg.cmake).
function(h2o_check_picture)
  cmake_parse_arguments(P "" "NAME;TARGET" "ARGS;SVG;EXPECT" ${ARGN})
  string(REPLACE ";" "@@" joined_args "${P_ARGS}")
  string(REPLACE ";" "@@" joined_svg "${P_SVG}")
  string(REPLACE ";" "@@" joined_expect "${P_EXPECT}")
  add_test(NAME ${P_NAME}
    COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:${P_TARGET}> "-DARGS=${joined_args}"
            "-DSVG_FILE=${joined_svg}" "-DEXPECT=${joined_expect}"
            -P ${CMAKE_CURRENT_SOURCE_DIR}/check_svg.cmake)
  set_tests_properties(${P_NAME} PROPERTIES SKIP_REGULAR_EXPRESSION "SKIPPED: " LABELS pictures)
endfunction()

# Lesson 10's two pictures and lesson 11's four, each lesson's from one run (a run per picture
# would measure the same sweep again for each).
set(folder ${CMAKE_CURRENT_BINARY_DIR}/lesson_10_pictures)
h2o_check_picture(NAME lesson_10_pictures TARGET 10_sparse_attention
  ARGS --pictures ${folder} SVG ${folder}/attention_heatmap.svg ${folder}/rank_score.svg
  EXPECT "<title>" "<desc>Made by: 10_sparse_attention --pictures")
set(folder ${CMAKE_CURRENT_BINARY_DIR}/lesson_11_pictures)
h2o_check_picture(NAME lesson_11_pictures TARGET 11_how_much_cache
  ARGS --budgets 10,50 --pictures ${folder}
  SVG ${folder}/budget_perplexity.svg ${folder}/budget_kl.svg ${folder}/budget_agreement.svg
      ${folder}/budget_name_recall.svg
  EXPECT "<title>" ">h2o<" ">h2o-norm<" ">window<" "cache budget (% of the text's tokens)")

# Lesson 12's quality against bytes, one line per storage format.
set(folder ${CMAKE_CURRENT_BINARY_DIR}/lesson_12_picture)
h2o_check_picture(NAME lesson_12_picture_evict_or_quantise TARGET 12_evict_or_quantise
  ARGS --stories 2 --budgets 25,100 --pictures ${folder} SVG ${folder}/evict_or_quantise.svg
  EXPECT "<title>" ">fp32 + H2O<" ">4-bit + H2O<" ">2-bit + H2O<" "% of the full float32 cache")

# Lesson 13's perplexity against bytes: FastGen's targets beside the window at their bytes.
set(folder ${CMAKE_CURRENT_BINARY_DIR}/lesson_13_picture)
h2o_check_picture(NAME lesson_13_picture_every_head_its_cache TARGET 13_every_head_its_cache
  ARGS --stories 3 --targets 60,90 --pictures ${folder} SVG ${folder}/every_head_its_cache.svg
  EXPECT "<title>" ">FastGen<" "T = 60%, 90%" ">window<" ">h2o<" ">adakv<"
         "% of the full cache's")

# compare_policies' picture of what each policy kept.
h2o_check_picture(NAME compare_policies_svg_picture TARGET compare_policies
  ARGS --budgets 10 --svg ${CMAKE_CURRENT_BINARY_DIR}/compare_policies.svg
  SVG ${CMAKE_CURRENT_BINARY_DIR}/compare_policies.svg
  EXPECT ">full<" ">h2o<" ">window<" "decoding step" "original position" "budget 90 tokens")

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
  COMMAND ${CMAKE_COMMAND} -DSCRIPT=${PROJECT_SOURCE_DIR}/scripts/make-pictures.sh
          -DBUILD_DIR=${CMAKE_BINARY_DIR} -DOUT=${CMAKE_CURRENT_BINARY_DIR}/pictures_now
          -DCOMMITTED=${PROJECT_SOURCE_DIR}/docs/pictures
          -P ${CMAKE_CURRENT_SOURCE_DIR}/check_pictures.cmake)
set_tests_properties(pictures_up_to_date PROPERTIES LABELS pictures)

# The classroom's teaching steps (README.md, docs/classroom.md) against the data the default page
# embeds: every word in the state the steps say, at their step, layer and KV head.
find_program(H2O_PYTHON NAMES python3)
if(H2O_PYTHON)
  add_test(NAME explorer_teaching_steps
    COMMAND ${H2O_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_teaching_steps.py
            $<TARGET_FILE:explore> ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/teaching_steps)
  set_tests_properties(explorer_teaching_steps PROPERTIES LABELS docs)
endif()
