# Short fuzzing runs: every harness of fuzz/ for a few seconds each, labelled "fuzz" and "deep"
# (the deep run's, scripts/run-tests.sh --deep: the first one builds the whole library again with
# clang and the sanitizers). scripts/fuzz.sh builds them with clang in fuzz/ of this build folder
# and never installs anything from here: without clang and libFuzzer they print "SKIPPED: ..."
# and CTest reports them as skipped, not passed. Longer runs: bash scripts/fuzz.sh --seconds N.
# Not in a sanitizer build (run-tests.sh --sanitize): the harnesses are sanitized by themselves.
if(H2O_SANITIZE)
  return()
endif()
set(H2O_FUZZ_SECONDS 5 CACHE STRING "Seconds each fuzz harness runs in the test suite")
set(h2o_fuzz_script ${CMAKE_COMMAND} -E env H2O_FUZZ_BUILD_DIR=${CMAKE_BINARY_DIR}/fuzz
                    bash ${PROJECT_SOURCE_DIR}/scripts/fuzz.sh --no-install)

add_test(NAME fuzz_build COMMAND ${h2o_fuzz_script} --build-only)
# A first build compiles the whole library with clang and the sanitizers: minutes, not seconds.
set_tests_properties(fuzz_build PROPERTIES FIXTURES_SETUP fuzz_harnesses TIMEOUT 3600
                     SKIP_REGULAR_EXPRESSION "SKIPPED: " RESOURCE_LOCK h2o_fuzz_build
                     LABELS "fuzz;deep")
foreach(harness checkpoint tokenizer options text)
  add_test(NAME fuzz_${harness}_short
    COMMAND ${h2o_fuzz_script} --no-build --fresh --seconds ${H2O_FUZZ_SECONDS} ${harness})
  set_tests_properties(fuzz_${harness}_short PROPERTIES FIXTURES_REQUIRED fuzz_harnesses
                       TIMEOUT 600 SKIP_REGULAR_EXPRESSION "SKIPPED: " LABELS "fuzz;deep")
endforeach()
