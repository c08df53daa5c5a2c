// Stored state read back: state values (bare, exactly-once wrapper, the reference's
// envelope), commit tokens and LSNs. Bad input must be a kDataLoss or kInvalidArgument error,
// never an exception or a crash.
#include <cstdlib>
#include <string>

#include "core/lsn.h"
#include "core/pipeline.h"
#include "fuzz_target.h"
#include "state/state_json.h"

namespace {

void RequireTyped(const faucet::Status& st) {
  if (!st.ok() && st.code() != faucet::StatusCode::kDataLoss &&
      st.code() != faucet::StatusCode::kInvalidArgument) {
    std::abort();
  }
}

}  // namespace

FAUCET_FUZZ_TARGET(state) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  faucet::Result<faucet::Json> value = faucet::ParseStateValue(text, "fuzz");
  RequireTyped(value.status());
  if (value.ok()) {
    (void)faucet::StateBookmark(*value);
    faucet::Result<std::string> dumped = faucet::DumpStateValue(*value);
    RequireTyped(dumped.status());
  }
  faucet::Result<faucet::CommitToken> token = faucet::ParseCommitToken(text);
  RequireTyped(token.status());
  if (token.ok() && token->bookmark) {
    const std::string again =
        token->chunk_changes
            ? faucet::FormatChunkToken(token->seq, token->bookmark, *token->chunk_changes)
            : faucet::FormatCommitToken(token->seq, *token->bookmark);
    if (faucet::ParseCommitToken(again).status().code() != faucet::StatusCode::kOk) std::abort();
  }
  RequireTyped(faucet::Lsn::Parse(text).status());
}
