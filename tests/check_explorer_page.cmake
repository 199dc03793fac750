# The explorer page in a real browser: does what a reader sees match what the C++ run kept?
#   cmake -DEXPLORE=bin/explore -DBROWSER=scripts/headless-chromium.sh -DTEXT=story.txt
#         -DWORK=dir -DSCREENSHOT=explorer.png -DVIEWPORT_JS=explorer_viewport.js
#         -P check_explorer_page.cmake
# Writes a page for h2o and window (with --kept: every step's kept positions, read from the
# decoder's caches), loads it in headless chromium at several URL fragments (steps, layers, KV
# heads, either policy on the left), and checks every word's data-state in both panels against
# those kept sets: kept words are exactly the kept positions, the words after the step are unread,
# the others evicted; a window keeps no heavy hitters; step 0 shows one token's KV bytes. Then
# checks that a word's pieces show as one word, decoded, that the words the teaching steps name
# are in view on a 1366x768 screen at 100% and 150%, and saves a screenshot at a fixed step.
# Prints "SKIPPED: ..." (CTest's skip) when chromium is not installed.
cmake_policy(VERSION 3.18)  # if() compares quoted words as words (CMP0054)
find_program(chromium NAMES chromium chromium-browser)
if(NOT chromium)
  message("SKIPPED: chromium is not installed (bash scripts/install-deps.sh --only chromium)")
  return()
endif()

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(page "${WORK}/explorer.html")
set(kept "${WORK}/kept.txt")
execute_process(COMMAND "${EXPLORE}" --text "${TEXT}" --policies h2o,window --budget 20%
                        --out "${page}" --kept "${kept}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "explore exited ${rc}\n${out}\n${err}")
endif()
# The last step the run traced, from the last line of the kept file.
file(STRINGS "${kept}" last REGEX "^window layer 0 head 0 step ")
list(GET last -1 last)
string(REGEX REPLACE "^.* step ([0-9]+):.*$" "\\1" last_step "${last}")
math(EXPR middle "${last_step} / 2")
# The float32 full cache's key/value bytes per token, from the page's data.
file(STRINGS "${page}" data_line REGEX "\"full_kv_bytes_per_token\":[0-9]+")
string(REGEX REPLACE "^.*\"full_kv_bytes_per_token\":([0-9]+).*$" "\\1" kv_bytes_per_token
       "${data_line}")

# Every step, layer, KV head and policy of these is loaded (step 999999 clamps to the last step).
# Each case: step, layer, KV head, the policy on the left, the one on the right (the shipped
# model has 2 KV heads a layer).
set(cases "0,0,0,h2o,window" "${middle},1,1,h2o,window" "${middle},3,1,window,h2o"
          "${last_step},2,0,window,h2o" "999999,0,1,h2o,window" "25,3,1,h2o,window")
set(checked 0)
set(checked_words 0)
foreach(case IN LISTS cases)
  string(REPLACE "," ";" case "${case}")
  list(GET case 0 step)
  list(GET case 1 layer)
  list(GET case 2 head)
  list(GET case 3 left)
  list(GET case 4 right)
  set(url "file://${page}#step=${step}&layer=${layer}&head=${head}&policy=${left}")
  execute_process(COMMAND bash "${BROWSER}" --dump-dom "${url}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE dom ERROR_VARIABLE err TIMEOUT 180)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "chromium could not load ${url} (exit ${rc}):\n${err}")
  endif()
  if(step GREATER last_step)
    set(step ${last_step})
  endif()
  string(FIND "${dom}" "id=\"stepText\">step ${step} of ${last_step}<" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "${url}: the page does not show step ${step} of ${last_step}")
  endif()
  # At step 0 every cache holds one token in float32: the full cache's bytes per token, 100%.
  if(step EQUAL 0)
    string(FIND "${dom}" "; ${kv_bytes_per_token} KV bytes, all layers (100.0% of the fp32" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${url}: step 0 does not show ${kv_bytes_per_token} KV bytes (100.0%)")
    endif()
  endif()
  # Panel A (left) and B (right): each word's position and state, in page order.
  string(FIND "${dom}" "id=\"textA\"" a_start)
  string(FIND "${dom}" "id=\"textB\"" b_start)
  string(FIND "${dom}" "</main>" b_end)
  math(EXPR a_length "${b_start} - ${a_start}")
  math(EXPR b_length "${b_end} - ${b_start}")
  string(SUBSTRING "${dom}" ${a_start} ${a_length} panel_a)
  string(SUBSTRING "${dom}" ${b_start} ${b_length} panel_b)
  # What each panel holds besides its recent window, above its text (A's first, then B's); the
  # entities' ";" (&lt;) would split CMake's list.
  string(REPLACE ";" "," flat "${dom}")
  string(REGEX MATCHALL "<p class=\"holds\">[^<]*(<b>[^<]*</b>[^<]*)*</p>" holds "${flat}")
  list(LENGTH holds holds_count)
  if(NOT holds_count EQUAL 2)
    message(FATAL_ERROR "${url}: ${holds_count} panels say what they hold, not 2")
  endif()
  list(GET holds 0 holds_a)
  list(GET holds 1 holds_b)
  # The chart's step labels: the current one always; "step 0" and the last step's only where the
  # current one leaves them room (at the last step it would print over the last step's label).
  string(FIND "${dom}" ">step ${last_step}</text>" end_label)
  string(FIND "${dom}" ">step 0</text>" start_label)
  if(step EQUAL last_step AND NOT end_label EQUAL -1)
    message(FATAL_ERROR "${url}: the chart prints the last step's label under the current one")
  endif()
  if(step EQUAL middle AND (end_label EQUAL -1 OR start_label EQUAL -1))
    message(FATAL_ERROR "${url}: the chart lacks its first or last step's label at step ${step}")
  endif()
  foreach(side a b)
    if(side STREQUAL "a")
      set(policy ${left})
    else()
      set(policy ${right})
    endif()
    string(REGEX MATCHALL "data-p=\"[0-9]+\" data-state=\"[a-z]+\"" words "${panel_${side}}")
    set(shown_kept "")
    set(unread 0)
    set(heavy 0)
    set(count 0)
    foreach(word IN LISTS words)
      string(REGEX REPLACE "data-p=\"([0-9]+)\" data-state=\"([a-z]+)\"" "\\1;\\2" word "${word}")
      list(GET word 0 p)
      list(GET word 1 state)
      if(NOT p EQUAL count)
        message(FATAL_ERROR "${url}: panel ${side} shows word ${p} where ${count} belongs")
      endif()
      math(EXPR count "${count} + 1")
      if(state STREQUAL "heavy" OR state STREQUAL "recent")
        string(APPEND shown_kept " ${p}")
      endif()
      if(state STREQUAL "heavy")
        math(EXPR heavy "${heavy} + 1")
      endif()
      if(state STREQUAL "unread")
        math(EXPR unread "${unread} + 1")
        if(NOT p GREATER step)
          message(FATAL_ERROR "${url}: panel ${side} shows word ${p} unread at step ${step}")
        endif()
      elseif(p GREATER step)
        message(FATAL_ERROR "${url}: panel ${side} shows word ${p} as ${state} before it is read")
      endif()
    endforeach()
    # The heavy hitters held now, listed whole above the text: one entry per word (at most one
    # per heavy token, at least one when there is any); none for a window, which keeps none.
    string(REGEX MATCHALL "<b>" entries "${holds_${side}}")
    list(LENGTH entries entries)
    if(policy STREQUAL "window" AND NOT holds_${side} STREQUAL "<p class=\"holds\"></p>")
      message(FATAL_ERROR "${url}: the window's panel lists what it holds: ${holds_${side}}")
    elseif(policy STREQUAL "h2o")
      string(FIND "${holds_${side}}" "Held now, heavy hitter (${entries} word" said)
      if(said EQUAL -1 OR entries GREATER heavy OR (heavy GREATER 0 AND entries EQUAL 0))
        message(FATAL_ERROR "${url}: ${heavy} heavy tokens, but the panel lists: "
                            "${holds_${side}}")
      endif()
    endif()
    math(EXPR expected_unread "${last_step} + 1 - ${step}")
    if(NOT unread EQUAL expected_unread)
      message(FATAL_ERROR "${url}: panel ${side} shows ${unread} unread words, not ${expected_unread}")
    endif()
    file(STRINGS "${kept}" expected REGEX "^${policy} layer ${layer} head ${head} step ${step}:")
    string(REGEX REPLACE "^[^:]*:" "" expected "${expected}")
    if(NOT shown_kept STREQUAL expected)
      message(FATAL_ERROR "${url}: panel ${side} (${policy}, layer ${layer}, KV head ${head}, "
                          "step ${step}) shows kept [${shown_kept}] but the run kept [${expected}]")
    endif()
    if(policy STREQUAL "window" AND heavy GREATER 0)
      message(FATAL_ERROR "${url}: a sliding window shows ${heavy} heavy hitters")
    endif()
    math(EXPR checked "${checked} + 1")
  endforeach()
endforeach()

# Writes `page` (in WORK) with explore on words.txt and any further options, loads it at the URL
# fragment, and sets `dom_var` to the DOM after the page's script ran and `panel_var` to the
# markup of the left panel's text box.
function(page_of_words_txt page fragment dom_var panel_var)
  execute_process(COMMAND "${EXPLORE}" --text "${WORK}/words.txt" ${ARGN} --out "${WORK}/${page}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "explore ${ARGN} exited ${rc} on words.txt\n${out}\n${err}")
  endif()
  execute_process(COMMAND bash "${BROWSER}" --dump-dom "file://${WORK}/${page}${fragment}"
    RESULT_VARIABLE rc OUTPUT_VARIABLE dom ERROR_VARIABLE err TIMEOUT 180)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "chromium could not load ${page} (exit ${rc}):\n${err}")
  endif()
  string(FIND "${dom}" "id=\"textA\"" a_start)
  string(FIND "${dom}" "id=\"textB\"" b_start)
  math(EXPR a_length "${b_start} - ${a_start}")
  string(SUBSTRING "${dom}" ${a_start} ${a_length} panel)
  set(${dom_var} "${dom}" PARENT_SCOPE)
  set(${panel_var} "${panel}" PARENT_SCOPE)
endfunction()

# Words, not pieces: a text with a name# Words, not pieces: a text with a name the vocabulary splits into pieces, accented letters it
# spells as byte tokens and control characters. Each word's tokens sit together in one
# <span class="word">, decoded ("Priya", "café" as written), and control characters show as \x01.
string(ASCII 1 2 controls)
file(WRITE "${WORK}/words.txt" "Priya met Zoë at the café. ${controls} Priya smiled.\n")
page_of_words_txt(words.html "#step=20" dom panel)
# Words as [text]: a word ends where its last token's </span> meets its own.
string(REPLACE "</span></span>" "]" panel "${panel}")
string(REPLACE "<span class=\"word\">" "[" panel "${panel}")
string(REGEX REPLACE "<[^>]*>" "" panel "${panel}")
foreach(word "[Priya]" "[Zoë]" "[café]" "[\\x01]" "[\\x02]" "[smiled]")
  string(FIND "${panel}" "${word}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "words.html does not show the word ${word}: ${panel}")
  endif()
endforeach()
# A character of two byte tokens ("ë") draws its later byte as a box only where its state differs
# from the letter's: the same state, no stray bar after the letter.
string(REGEX MATCH "data-state=\"([a-z]+)\"[^>]*>ë</span><span class=\"w ([a-z ]*)\" data-p=\"[0-9]+\" data-state=\"([a-z]+)\""
       e_pair "${dom}")
if(NOT e_pair OR (CMAKE_MATCH_1 STREQUAL CMAKE_MATCH_3 AND NOT CMAKE_MATCH_2 MATCHES "part same"))
  message(FATAL_ERROR "words.html draws the later byte of ë as a bar of its own: ${e_pair}")
endif()
if(panel MATCHES "${controls}|<0x")
  message(FATAL_ERROR "words.html shows a raw control character or a byte token: ${panel}")
endif()
# The legend names what each shown policy keeps besides its recent window (the policy table's
# kept labels), and the chart's legend is written in each line's colour.
foreach(expected "<span id=\"keptLabel\">h2o: heavy hitter; window: none</span>"
                 "style=\"fill:#b35806\">h2o: " "style=\"fill:#2166ac\">window: ")
  string(FIND "${dom}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "words.html lacks ${expected}")
  endif()
endforeach()

# A passage read twice (--secret): its two readings are marked in the text, token by token
# (data-reading), and the legend says where they are; a page without one keeps that line hidden.
if(NOT dom MATCHES "<span id=\"readingsLegend\" hidden=\"\">")
  message(FATAL_ERROR "words.html, read once, shows the legend of a passage read twice")
endif()
page_of_words_txt(secret.html "#step=10" dom panel --secret 6)
string(REGEX MATCHALL "data-p=\"[0-9]+\" data-state=\"[a-z]+\" data-reading=\"first\"" first
       "${panel}")
string(REGEX MATCHALL "data-p=\"[0-9]+\" data-state=\"[a-z]+\" data-reading=\"second\"" second
       "${panel}")
list(LENGTH first n_first)
list(LENGTH second n_second)
string(REGEX MATCHALL "data-p=\"[0-9]+\"" all_words "${panel}")
list(LENGTH all_words n_words)
math(EXPR second_from "${n_words} - 6")
if(NOT n_first EQUAL 6 OR NOT n_second EQUAL 6 OR NOT first MATCHES "^data-p=\"1\""
   OR NOT second MATCHES "^data-p=\"${second_from}\"")
  message(FATAL_ERROR "secret.html marks ${n_first} tokens as the first reading and ${n_second} "
                      "as the second, not 6 each at positions 1-6 and ${second_from} on: "
                      "${first} / ${second}")
endif()
math(EXPR second_to "${n_words} - 1")
set(expected "<span id=\"readingsLegend\">")
string(APPEND expected "<span class=\"w\" data-reading=\"first\">purple line above</span> the\n"
       "passage read twice (<span id=\"readingsWhere\">positions 1–6 and ${second_from}–"
       "${second_to}</span>)</span>")
string(FIND "${dom}" "${expected}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "secret.html's legend does not say where the readings are: ${expected}")
endif()

# The teaching steps on a 1366x768 screen, at 100% and zoomed to 150%: at the steps README.md and
# docs/classroom.md name (check_teaching_steps.py checks the words against the page's data), on
# the default page, each word the steps name is inside the viewport (getBoundingClientRect, by
# VIEWPORT_JS run after the page's own script). The zoom is CSS zoom on the page's root element:
# chromium's --force-device-scale-factor=1.5 only changes devicePixelRatio (the layout stays 1366
# CSS pixels wide), while zoom: 1.5 lays the page out 911 pixels wide at 1.5x, as a browser's
# 150% does. Each case: the words (see explorer_viewport.js: h:P held-now entry, t:P token in the
# text box, c:P / r:P the count line's evicted-now / oldest-recent word), then the moment.
execute_process(COMMAND "${EXPLORE}" --out "${WORK}/default.html"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "explore exited ${rc} on the default story\n${out}\n${err}")
endif()
file(READ "${WORK}/default.html" default_page)
file(READ "${VIEWPORT_JS}" viewport_js)
string(REPLACE "</body>" "<script>${viewport_js}</script>\n</body>" checked_page "${default_page}")
file(WRITE "${WORK}/viewport_100.html" "${checked_page}")
string(REPLACE "</head>" "<style>html { zoom: 1.5; }</style>\n</head>" checked_page
       "${checked_page}")
file(WRITE "${WORK}/viewport_150.html" "${checked_page}")
set(viewport_cases
    "h:17,h:15,h:29#step=300&layer=2&head=0"  # README 3: Noufem, "girl called", "cousin Rue was"
    "h:58,h:74#step=300&layer=2&head=1"       # "favorite toy", "Rue wanted"
    "t:210|r:210,h:48#step=254&layer=1&head=1"  # README 4: "picked" the guess, "Grandma" held
    "c:48#step=255&layer=1&head=1")            # ... and evicted at the next step
set(viewport_ok "")
foreach(zoom 100 150)
  foreach(case IN LISTS viewport_cases)
    string(REPLACE "|" "%7C" query "${case}")
    set(url "file://${WORK}/viewport_${zoom}.html?see=${query}")
    execute_process(COMMAND bash "${BROWSER}" --window-size=1366,768 --dump-dom "${url}"
      RESULT_VARIABLE rc OUTPUT_VARIABLE dom ERROR_VARIABLE err TIMEOUT 180)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "chromium could not load ${url} (exit ${rc}):\n${err}")
    endif()
    string(REGEX MATCH "<pre id=\"viewportCheck\">[^<]*</pre>" report "${dom}")
    if(report STREQUAL "" OR report MATCHES "FAIL " OR NOT report MATCHES "ok ")
      message(FATAL_ERROR "at ${zoom}% zoom on a 1366x768 screen, a word the teaching steps name "
                          "is not in view at ${case}:${report}")
    endif()
    string(REGEX MATCHALL "\nok " oks "${report}")
    list(LENGTH oks n_ok)
    math(EXPR checked_words "${checked_words} + ${n_ok}")
  endforeach()
endforeach()

# A screenshot at a fixed step, for people to look at (docs/pictures/explorer.png is made so too).
execute_process(COMMAND bash "${BROWSER}" --window-size=1400,1250 "--screenshot=${SCREENSHOT}"
                        "file://${page}#step=${middle}&layer=1&head=0&policy=h2o"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 180)
file(SIZE "${SCREENSHOT}" bytes)
if(NOT rc EQUAL 0 OR bytes LESS 10000)
  message(FATAL_ERROR "no screenshot (exit ${rc}, ${bytes} bytes):\n${err}")
endif()
message("explorer page: ${checked} panels match the kept positions of the C++ run; "
        "${checked_words} words of the teaching steps in view at 100% and 150% on 1366x768; "
        "screenshot ${SCREENSHOT}")
