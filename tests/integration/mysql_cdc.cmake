# Integration tests of the mysql-cdc source against the MariaDB scripts/services.sh starts.
faucet_test(faucet_mysql_cdc_integration_test
  ${CMAKE_CURRENT_LIST_DIR}/mysql_cdc_test.cc
  LIBS faucet_source_mysql faucet_testing faucet_core)
