faucet_test(faucet_cli_test ${CMAKE_CURRENT_LIST_DIR}/cli_test.cc LIBS faucet_core faucet_testing)
target_compile_definitions(faucet_cli_test PRIVATE FAUCET_BINARY="$<TARGET_FILE:faucet>")
add_dependencies(faucet_cli_test faucet)
