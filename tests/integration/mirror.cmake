faucet_test(faucet_mirror_test ${CMAKE_CURRENT_LIST_DIR}/mirror_test.cc
  LIBS faucet_source_postgres_testing faucet_testing_sql faucet_state)
target_compile_definitions(faucet_mirror_test PRIVATE FAUCET_BINARY="$<TARGET_FILE:faucet>")
add_dependencies(faucet_mirror_test faucet)
faucet_test(faucet_mirror_tables_test ${CMAKE_CURRENT_LIST_DIR}/mirror_tables_test.cc
  LIBS faucet_source_postgres_testing faucet_testing_sql faucet_state faucet_mirror)
target_compile_definitions(faucet_mirror_tables_test PRIVATE FAUCET_BINARY="$<TARGET_FILE:faucet>")
add_dependencies(faucet_mirror_tables_test faucet)
