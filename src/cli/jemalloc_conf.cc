// jemalloc's options for the faucet executable, read once at its first allocation
// (MALLOC_CONF in the environment still overrides them).
//
// - dirty_decay_ms: freed pages go back to the kernel within a second instead of jemalloc's ten.
//   A page freed by one thread (the sink's, librdkafka's) stays resident otherwise, so a
//   1,000,000-row transaction into kafka under exactly_once peaked at 75-100 MiB of RSS for
//   about 10 MiB of live heap.
// - narenas: two arenas, not four per core: faucet's threads and librdkafka's share them
//   instead of each keeping freed pages of its own. With both, that transaction peaks at
//   54-59 MiB, and the CPU time of postgres-cdc -> jsonl does not grow (BENCHMARKS.md,
//   "jemalloc's options").
extern "C" {
// NOLINTNEXTLINE(cppcoreguidelines-avoid-non-const-global-variables): jemalloc's interface
const char* malloc_conf = "narenas:2,dirty_decay_ms:1000";
}
