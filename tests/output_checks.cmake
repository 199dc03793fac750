# Nothing lost silently (base/output_file.hpp, the stdout check of app/cli.hpp) and memory that
# grows with the text, not with its square (compare_policies' picture record).
add_test(NAME outputs_are_never_lost_silently
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/check_outputs.sh ${CMAKE_BINARY_DIR}/bin
          ${CMAKE_CURRENT_BINARY_DIR}/output_checks)
find_program(H2O_MEMORY_PYTHON NAMES python3)
if(H2O_MEMORY_PYTHON)
  add_test(NAME compare_policies_memory_stays_flat
    COMMAND ${H2O_MEMORY_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_memory.py
            ${CMAKE_BINARY_DIR}/bin ${CMAKE_CURRENT_BINARY_DIR}/memory_check)
endif()

# scripts/train-model.sh checks its options before it installs or writes anything, and never
# writes into data/ unless --install says so.
set(h2o_train_script "${PROJECT_SOURCE_DIR}/scripts/train-model.sh")
foreach(bad
    "seed@--seed,x@--seed expects a whole number 0..999999999, got 'x'"
    "stories@--stories,0@--stories expects a whole number 1..10000000, got '0'"
    "schedule@--schedule,12@--schedule must look like 256x16:2400,1024x4:300, got '12'"
    "out_is_data@--out,${PROJECT_SOURCE_DIR}/data@--out must not be data/ (use --install"
    "out_unwritable@--out,/sys/h2o_model@cannot create the folder '/sys/h2o_model'")
  h2o_split_case("${bad}" short flags text)
  h2o_check_program(NAME train_model_bad_${short} COMMAND bash ARGS "${h2o_train_script}" ${flags}
    EXIT nonzero STREAM stderr EXPECT "${text}")
endforeach()
h2o_check_program(NAME train_model_help COMMAND bash ARGS "${h2o_train_script}" --help
  EXPECT "--out DIR" "--install" "git checkout data/")
