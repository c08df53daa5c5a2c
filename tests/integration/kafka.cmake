# The kafka sink against the broker scripts/services.sh starts, alone and under `faucet run`.
faucet_test(faucet_kafka_integration_test ${CMAKE_CURRENT_LIST_DIR}/kafka_sink_test.cc
  LIBS faucet_sink_kafka_testing faucet_source_postgres_testing faucet_testing nlohmann_json::nlohmann_json)
target_compile_definitions(faucet_kafka_integration_test PRIVATE
  FAUCET_BINARY="$<TARGET_FILE:faucet>")
add_dependencies(faucet_kafka_integration_test faucet)

# A broker of its own, killed and restarted (scripts/services.sh, scripts/kafka/broker.sh).
faucet_test(faucet_kafka_broker_crash_test ${CMAKE_CURRENT_LIST_DIR}/kafka_broker_crash_test.cc
  LIBS faucet_sink_kafka_testing faucet_source_postgres_testing nlohmann_json::nlohmann_json)
target_compile_definitions(faucet_kafka_broker_crash_test PRIVATE
  FAUCET_BINARY="$<TARGET_FILE:faucet>" FAUCET_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
add_dependencies(faucet_kafka_broker_crash_test faucet)

# The kafka source: a consumer group of `faucet run` processes into Postgres.
faucet_test(faucet_kafka_source_test ${CMAKE_CURRENT_LIST_DIR}/kafka_source_test.cc
  LIBS faucet_sink_kafka_testing faucet_source_postgres_testing faucet_testing)
target_compile_definitions(faucet_kafka_source_test PRIVATE FAUCET_BINARY="$<TARGET_FILE:faucet>")
add_dependencies(faucet_kafka_source_test faucet)
