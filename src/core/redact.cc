#include "core/redact.h"

#include <regex>

namespace faucet {

std::string Redact(std::string_view text) {
  // user:password@ right after "scheme://". The password may contain ':' but not '@' or '/'
  // (a URL requires those to be percent-encoded).
  static const std::regex kUrlPassword(R"(([A-Za-z][A-Za-z0-9+.\-]*://[^:/@\s]*:)[^@/\s]*@)");
  static const std::regex kKeyValuePassword(R"((password\s*=\s*)('[^']*'|[^\s]+))",
                                            std::regex::icase);
  std::string out(text);
  out = std::regex_replace(out, kUrlPassword, "$1***@");
  out = std::regex_replace(out, kKeyValuePassword, "$1***");
  return out;
}

}  // namespace faucet
