# The SQL sinks (postgres, sqlite, mysql) against the servers of scripts/services.sh: the
# scenarios every SQL sink must pass, and each database's own tests.
faucet_test(faucet_sql_sink_test
  ${CMAKE_CURRENT_LIST_DIR}/sql_sink_scenarios_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/sql_sink_drift_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/sql_sink_postgres_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/sql_sink_sqlite_test.cc
  ${CMAKE_CURRENT_LIST_DIR}/sql_sink_mysql_test.cc
  LIBS faucet_sink_postgres faucet_sink_sqlite faucet_sink_mysql faucet_transforms
    faucet_testing faucet_mysql_client PostgreSQL::PostgreSQL SQLite::SQLite3)
