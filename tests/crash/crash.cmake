faucet_test(faucet_crash_test ${CMAKE_CURRENT_LIST_DIR}/generator_jsonl_crash_test.cc
  LIBS faucet_core faucet_testing)
target_compile_definitions(faucet_crash_test PRIVATE FAUCET_BINARY="$<TARGET_FILE:faucet>")
add_dependencies(faucet_crash_test faucet)
