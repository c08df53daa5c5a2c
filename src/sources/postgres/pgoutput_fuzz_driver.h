// Test-only: what the pgoutput fuzzers run on every input — the replication-message parser
// and a fresh decoder fed a sequence of messages, replaying any committed streamed
// transaction. Returns the first error; a fuzzer asserts that it is typed.
#pragma once

#include <string>
#include <vector>

#include "sources/postgres/pgoutput_decoder.h"
#include "sources/postgres/walsender_protocol.h"

namespace faucet::postgres {

inline Status DecodeFuzzInput(const std::vector<std::string>& messages,
                              size_t stream_memory_bytes) {
  PgoutputDecoder decoder(DecoderOptions{stream_memory_bytes, ""});
  std::vector<TxnEvent> events;
  for (const std::string& m : messages) {
    (void)ParseReplicationMessage(m);
    events.clear();
    RETURN_IF_ERROR(decoder.Decode(m, events));
    while (decoder.replaying()) {
      events.clear();
      RETURN_IF_ERROR(decoder.Replay(3, events));
    }
  }
  return Status::Ok();
}

// Errors the decoder may return for bad input: anything else is a bug.
inline bool IsTypedDecodeError(const Status& s) {
  return s.ok() || s.code() == StatusCode::kDataLoss || s.code() == StatusCode::kInternal;
}

}  // namespace faucet::postgres
