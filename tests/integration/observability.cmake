faucet_test(faucet_observability_integration_test
  ${CMAKE_CURRENT_LIST_DIR}/observability_test.cc
  LIBS faucet_source_postgres_testing faucet_testing_sql PkgConfig::HTTPLIB)
target_compile_definitions(faucet_observability_integration_test
  PRIVATE FAUCET_BINARY="$<TARGET_FILE:faucet>")
add_dependencies(faucet_observability_integration_test faucet)
