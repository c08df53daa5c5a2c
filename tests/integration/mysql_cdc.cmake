# Integration tests of the mysql-cdc source against the MariaDB scripts/services.sh starts.
faucet_test(faucet_mysql_cdc_integration_test
  ${CMAKE_CURRENT_LIST_DIR}/mysql_cdc_test.cc
  LIBS faucet_source_mysql faucet_testing faucet_core)

# `faucet mirror` from MariaDB (one table, and a database's tables) into each SQL destination,
# with crashes and SIGKILLs.
faucet_test(faucet_mysql_mirror_test ${CMAKE_CURRENT_LIST_DIR}/mysql_mirror_test.cc
  LIBS faucet_mysql_client faucet_testing_sql faucet_testing faucet_state faucet_mirror)
target_compile_definitions(faucet_mysql_mirror_test PRIVATE FAUCET_BINARY="$<TARGET_FILE:faucet>")
add_dependencies(faucet_mysql_mirror_test faucet)
