faucet_test(faucet_cli_test ${CMAKE_CURRENT_LIST_DIR}/cli_test.cc LIBS faucet_core faucet_testing
  faucet_testing_sql)
target_compile_definitions(faucet_cli_test PRIVATE FAUCET_BINARY="$<TARGET_FILE:faucet>")
add_dependencies(faucet_cli_test faucet)
faucet_test(faucet_delivery_test ${CMAKE_CURRENT_LIST_DIR}/delivery_test.cc LIBS faucet_core faucet_testing)
target_compile_definitions(faucet_delivery_test PRIVATE FAUCET_BINARY="$<TARGET_FILE:faucet>")
add_dependencies(faucet_delivery_test faucet)
