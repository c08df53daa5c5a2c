# State stores against real servers (scripts/services.sh: pg, redis).
faucet_test(faucet_state_integration_test ${CMAKE_CURRENT_LIST_DIR}/state_stores_test.cc
  LIBS faucet_state faucet_testing PostgreSQL::PostgreSQL PkgConfig::HIREDIS)
