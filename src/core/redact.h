// Secrets never reach output: every log line, error message and status string passes through
// Redact before it is printed.
#pragma once

#include <string>
#include <string_view>

namespace faucet {

// Replaces the password of every URL with userinfo ("scheme://user:secret@host" ->
// "scheme://user:***@host") and of every libpq key/value "password=secret" with "password=***".
std::string Redact(std::string_view text);

}  // namespace faucet
