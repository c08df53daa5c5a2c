// Config files: any text parses to a Document or a kInvalidArgument naming where it failed;
// yaml-cpp exceptions must not escape.
#include <cstdlib>
#include <string>

#include "config/document.h"
#include "fuzz_target.h"

FAUCET_FUZZ_TARGET(config) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  faucet::Result<faucet::config::Document> doc = faucet::config::ParseDocument(text, "fuzz.yaml");
  if (!doc.ok() && doc.status().code() != faucet::StatusCode::kInvalidArgument) std::abort();
}
