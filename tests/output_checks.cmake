# Nothing lost silently (base/output_file.hpp, the stdout check of app/cli.hpp) and memory that
# grows with the text, not with its square (compare_policies' picture record).
add_test(NAME outputs_are_never_lost_silently
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/check_outputs.sh ${CMAKE_BINARY_DIR}/bin
          ${CMAKE_CURRENT_BINARY_DIR}/output_checks)
set_tests_properties(outputs_are_never_lost_silently PROPERTIES LABELS "tool;bad-input")
# A program stopped by any catchable signal, or by two in quick succession, while it writes.
add_test(NAME signals_leave_no_temporary_file
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/check_signals.sh ${CMAKE_BINARY_DIR}/bin
          ${CMAKE_CURRENT_BINARY_DIR}/signal_checks)
set_tests_properties(signals_leave_no_temporary_file PROPERTIES LABELS "tool;bad-input")
find_program(H2O_MEMORY_PYTHON NAMES python3)
# Not in a sanitizer build: AddressSanitizer keeps freed memory in quarantine and adds its shadow,
# so the peak it shows grows with every allocation made, not with what the program holds.
if(H2O_MEMORY_PYTHON AND NOT H2O_SANITIZE)
  add_test(NAME compare_policies_memory_stays_flat
    COMMAND ${H2O_MEMORY_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_memory.py
            ${CMAKE_BINARY_DIR}/bin ${CMAKE_CURRENT_BINARY_DIR}/memory_check)
  set_tests_properties(compare_policies_memory_stays_flat PROPERTIES LABELS tool)
endif()
