# Integration tests of the MySQL/MariaDB query source and doctor against the server
# scripts/services.sh starts.
faucet_test(faucet_mysql_query_source_test
  ${CMAKE_CURRENT_LIST_DIR}/mysql_query_source_test.cc
  LIBS faucet_source_mysql faucet_testing)
target_compile_definitions(faucet_mysql_query_source_test PRIVATE
  FAUCET_BINARY="$<TARGET_FILE:faucet>")
add_dependencies(faucet_mysql_query_source_test faucet)

# Changes server-wide settings (SET GLOBAL binlog_format, time_zone, ...): must not overlap
# any other test.
add_executable(faucet_mysql_doctor_test ${CMAKE_CURRENT_LIST_DIR}/mysql_doctor_test.cc)
target_link_libraries(faucet_mysql_doctor_test PRIVATE
  faucet_source_mysql faucet_testing GTest::gtest GTest::gtest_main)
target_compile_definitions(faucet_mysql_doctor_test PRIVATE
  FAUCET_BINARY="$<TARGET_FILE:faucet>")
add_dependencies(faucet_mysql_doctor_test faucet)
gtest_discover_tests(faucet_mysql_doctor_test DISCOVERY_TIMEOUT 60
  PROPERTIES RUN_SERIAL TRUE TIMEOUT 600 LABELS integration)
