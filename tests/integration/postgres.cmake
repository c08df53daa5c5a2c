# Integration tests of the Postgres sources against the server scripts/services.sh starts.
faucet_test(faucet_postgres_integration_test
  ${CMAKE_CURRENT_LIST_DIR}/postgres_cdc_rule_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/postgres_cdc_streaming_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/postgres_cdc_types_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/postgres_discovery_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/postgres_query_source_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/postgres_slot_test.cc
  LIBS faucet_source_postgres faucet_source_postgres_testing faucet_sink_file faucet_core)

# Changes a server-wide setting (max_slot_wal_keep_size): must not overlap any other test.
add_executable(faucet_postgres_serial_test
  ${CMAKE_CURRENT_LIST_DIR}/postgres_slot_invalidation_test.cc)
target_link_libraries(faucet_postgres_serial_test PRIVATE
  faucet_source_postgres faucet_source_postgres_testing GTest::gtest GTest::gtest_main)
gtest_discover_tests(faucet_postgres_serial_test DISCOVERY_TIMEOUT 60
  PROPERTIES RUN_SERIAL TRUE TIMEOUT 600)
