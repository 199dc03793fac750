# A lesson's --step mode on a real terminal: tmux runs it in a pseudo-terminal of its own, the
# check types Enter and reads the screen.
#   cmake -DPROGRAM=bin/04_online_tokens -DNAME=lesson_04 -DENTERS=4 -DAFTER="evicted: sat@2"
#         [-DFIRST=text] [-DNO_COLOR=1] [-DLAST=text] [-DWIDTH=80 -DHEIGHT=24]
#         -P check_step_mode.cmake
# Checks: the first frame shows FIRST (the roles in words) and, unless NO_COLOR, colour codes;
# with NO_COLOR none at all; after ENTERS presses of Enter the screen was cleared and redrawn and
# shows AFTER; then "q" and Enter let the lesson run to its end (LAST on screen) and exit 0. On
# every screen read, no line is wider than the terminal (WIDTH columns, 100 unless given): tmux
# had to break none, so none is broken inside a word.
# Prints "SKIPPED: ..." (CTest's skip) when tmux is not installed.
cmake_policy(VERSION 3.18)
string(REPLACE "@@" ";" FIRST "${FIRST}")
find_program(tmux tmux)
if(NOT tmux)
  message("SKIPPED: tmux is not installed (apt-get install tmux)")
  return()
endif()
# A tmux server of the check's own (-L): never the user's sessions, and never another check's.
set(tmux_cmd "${tmux}" -L "h2o_step_${NAME}" -f /dev/null)
execute_process(COMMAND ${tmux_cmd} kill-server OUTPUT_QUIET ERROR_QUIET)
set(env "")
if(NO_COLOR)
  set(env "NO_COLOR=1 ")
endif()
if(NOT WIDTH)
  set(WIDTH 100)
endif()
if(NOT HEIGHT)
  set(HEIGHT 50)
endif()
execute_process(COMMAND ${tmux_cmd} new-session -d -x ${WIDTH} -y ${HEIGHT} -s step
                        "${env}'${PROGRAM}' --step; echo \"lesson exit $?\"; sleep 120"
  RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tmux could not start the lesson: ${err}")
endif()

# screen: the visible screen (with colour codes when `escapes`), once `text` shows (up to 20 s).
function(wait_for text escapes)
  set(flags -p)
  if(escapes)
    set(flags -p -e)
  endif()
  foreach(attempt RANGE 200)
    execute_process(COMMAND ${tmux_cmd} capture-pane ${flags} -t step OUTPUT_VARIABLE shown)
    string(FIND "${shown}" "${text}" at)
    if(NOT at EQUAL -1)
      set(screen "${shown}" PARENT_SCOPE)
      return()
    endif()
    execute_process(COMMAND sleep 0.1)
  endforeach()
  execute_process(COMMAND ${tmux_cmd} kill-server OUTPUT_QUIET ERROR_QUIET)
  message(FATAL_ERROR "the screen never showed '${text}'; it shows:\n${shown}")
endfunction()
# Fails when a line of the screen is one the terminal broke because it was too long: capture-pane
# -J joins such lines (and keeps trailing spaces, which say nothing).
function(check_unbroken)
  execute_process(COMMAND ${tmux_cmd} capture-pane -p -t step OUTPUT_VARIABLE as_shown)
  execute_process(COMMAND ${tmux_cmd} capture-pane -p -J -t step OUTPUT_VARIABLE joined)
  string(REGEX REPLACE " +\n" "\n" as_shown "${as_shown}")
  string(REGEX REPLACE " +\n" "\n" joined "${joined}")
  if(NOT as_shown STREQUAL joined)
    execute_process(COMMAND ${tmux_cmd} kill-server OUTPUT_QUIET ERROR_QUIET)
    message(FATAL_ERROR "a line is wider than the terminal's ${WIDTH} columns, so the terminal "
                        "broke it:\n${joined}")
  endif()
endfunction()
function(press key)
  execute_process(COMMAND ${tmux_cmd} send-keys -t step ${key})
endfunction()

set(prompt "[Enter] next token, q [Enter] stop stepping")
wait_for("${prompt}" ON)
string(ASCII 27 escape)
string(FIND "${screen}" "${escape}[" colour)
if(NO_COLOR AND NOT colour EQUAL -1)
  message(FATAL_ERROR "NO_COLOR is set, but the screen holds colour codes:\n${screen}")
elseif(NOT NO_COLOR AND colour EQUAL -1)
  message(FATAL_ERROR "a terminal without NO_COLOR shows no colour:\n${screen}")
endif()
wait_for("${prompt}" OFF)
check_unbroken()
foreach(text "heavy = kept for its score, recent = among the newest," ${FIRST})
  string(FIND "${screen}" "${text}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the first frame does not show '${text}':\n${screen}")
  endif()
endforeach()

if(ENTERS)
  # All at once: the lesson reads one line a frame, so the keys wait in the terminal's input.
  set(keys)
  foreach(i RANGE 1 ${ENTERS})
    list(APPEND keys Enter)
  endforeach()
  press("${keys}")
  wait_for("${AFTER}" OFF)
  check_unbroken()
  string(FIND "${screen}" "Lesson 0" title)  # the first screen's title line, cleared since
  if(NOT title EQUAL -1)
    message(FATAL_ERROR "the screen was not redrawn after Enter:\n${screen}")
  endif()
endif()
press(q)
press(Enter)
wait_for("lesson exit " OFF)
check_unbroken()
string(FIND "${screen}" "lesson exit 0" ok)
string(FIND "${screen}" "${LAST}" last)
execute_process(COMMAND ${tmux_cmd} kill-server OUTPUT_QUIET ERROR_QUIET)
if(ok EQUAL -1 OR last EQUAL -1)
  message(FATAL_ERROR "after q the lesson did not run to its end ('${LAST}', exit 0):\n${screen}")
endif()
message("step mode of ${PROGRAM}: frames, colour, Enter and q work on a terminal")
