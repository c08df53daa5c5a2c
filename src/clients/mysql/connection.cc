#include "clients/mysql/connection.h"

#include <errmsg.h>
#include <mysqld_error.h>

#include <charconv>
#include <string_view>

#include "core/redact.h"
#include "core/text.h"

namespace faucet {

Result<MysqlUrl> ParseMysqlUrl(const std::string& url, bool database_required) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("connection_url " + Redact(url) + ": " + why);
  };
  std::string_view rest = url;
  if (rest.rfind("mysql://", 0) == 0) {
    rest.remove_prefix(8);
  } else if (rest.rfind("mariadb://", 0) == 0) {
    rest.remove_prefix(10);
  } else {
    return bad("expected mysql://user:password@host:port/database");
  }
  rest = rest.substr(0, rest.find('?'));
  MysqlUrl out;
  size_t at = rest.rfind('@', rest.find('/'));
  if (at != std::string_view::npos) {
    std::string_view userinfo = rest.substr(0, at);
    size_t colon = userinfo.find(':');
    if (!PercentDecode(userinfo.substr(0, colon), out.user) ||
        (colon != std::string_view::npos &&
         !PercentDecode(userinfo.substr(colon + 1), out.password))) {
      return bad("bad percent-encoding in the user or password");
    }
    rest.remove_prefix(at + 1);
  }
  size_t slash = rest.find('/');
  if (database_required && (slash == std::string_view::npos || slash + 1 == rest.size())) {
    return bad("names no database (mysql://user:password@host:port/database)");
  }
  std::string_view hostport = rest.substr(0, slash);
  if (slash != std::string_view::npos && !PercentDecode(rest.substr(slash + 1), out.database)) {
    return bad("bad database name");
  }
  std::string_view host = hostport, port;
  if (!hostport.empty() && hostport.front() == '[') {  // [IPv6]:port
    size_t close = hostport.find(']');
    if (close == std::string_view::npos) return bad("bad host");
    host = hostport.substr(1, close - 1);
    if (close + 1 < hostport.size()) {
      if (hostport[close + 1] != ':') return bad("bad host");
      port = hostport.substr(close + 2);
    }
  } else if (size_t colon = hostport.rfind(':'); colon != std::string_view::npos) {
    host = hostport.substr(0, colon);
    port = hostport.substr(colon + 1);
  }
  if (!port.empty()) {
    int n = 0;
    auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), n);
    if (ec != std::errc() || ptr != port.data() + port.size() || n <= 0 || n > 65535) {
      return bad("bad port");
    }
    out.port = static_cast<uint16_t>(n);
  }
  if (!host.empty()) out.host = std::string(host);
  return out;
}

}  // namespace faucet

namespace faucet::mysql {

Result<MysqlTls> ParseTls(const config::Block& block) {
  MysqlTls tls;
  ASSIGN_OR_RETURN(std::optional<config::Block> b, block.OptionalChild("tls"));
  if (!b) return tls;
  if (!b->Has("mode")) {
    return b->Error("mode", "is required (disable, require, verify_ca or verify_full)");
  }
  ASSIGN_OR_RETURN(std::string mode,
                   b->Enum("mode", "", {"disable", "require", "verify_ca", "verify_full"}));
  if (mode == "require") tls.mode = MysqlTlsMode::kRequire;
  if (mode == "verify_ca") tls.mode = MysqlTlsMode::kVerifyCa;
  if (mode == "verify_full") tls.mode = MysqlTlsMode::kVerifyFull;
  ASSIGN_OR_RETURN(tls.ca_path, b->OptionalString("ca_path"));
  if (tls.ca_path && tls.mode != MysqlTlsMode::kVerifyCa && tls.mode != MysqlTlsMode::kVerifyFull) {
    return b->Error("ca_path", "applies only to mode verify_ca or verify_full");
  }
  return tls;
}

Result<ConnPtr> Connect(const Endpoint& endpoint, const std::string& who,
                        const std::function<void(MYSQL*)>& configure) {
  ConnPtr conn(mysql_init(nullptr));
  if (!conn) return Internal(who + ": out of memory");
  unsigned int timeout = 10;
  mysql_options(conn.get(), MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
  mysql_options(conn.get(), MYSQL_SET_CHARSET_NAME, "utf8mb4");
  // Every session in UTC: TIMESTAMP values are read and written as UTC.
  mysql_options(conn.get(), MYSQL_INIT_COMMAND, "SET time_zone = '+00:00'");
  const MysqlTls& tls = endpoint.tls;
  if (tls.mode != MysqlTlsMode::kDisable) {
    my_bool enforce = 1;
    mysql_optionsv(conn.get(), MYSQL_OPT_SSL_ENFORCE, &enforce);
    my_bool verify = tls.mode == MysqlTlsMode::kVerifyFull ? 1 : 0;
    mysql_optionsv(conn.get(), MYSQL_OPT_SSL_VERIFY_SERVER_CERT, &verify);
    if (tls.ca_path) mysql_optionsv(conn.get(), MYSQL_OPT_SSL_CA, tls.ca_path->c_str());
  }
  if (configure) configure(conn.get());
  const MysqlUrl& p = endpoint.parts;
  if (mysql_real_connect(conn.get(), p.host.c_str(), p.user.c_str(), p.password.c_str(),
                         p.database.empty() ? nullptr : p.database.c_str(), p.port, nullptr,
                         0) == nullptr) {
    return Unavailable(
        Redact(who + " " + endpoint.url + ": cannot connect: " + mysql_error(conn.get())));
  }
  return conn;
}

StatusCode ErrorCode(unsigned int err) {
  switch (err) {
    case CR_CONNECTION_ERROR:
    case CR_CONN_HOST_ERROR:
    case CR_SERVER_GONE_ERROR:
    case CR_SERVER_LOST:
    case CR_SERVER_LOST_EXTENDED:
    case ER_CON_COUNT_ERROR:
    case ER_SERVER_SHUTDOWN:
    case ER_LOCK_WAIT_TIMEOUT:
    case ER_LOCK_DEADLOCK:
    case ER_CONNECTION_KILLED:
    case ER_QUERY_INTERRUPTED:
      return StatusCode::kUnavailable;
    case ER_BAD_NULL_ERROR:
    case ER_DUP_ENTRY:
    case ER_DUP_ENTRY_WITH_KEY_NAME:
    case ER_WARN_NULL_TO_NOTNULL:
    case ER_WARN_DATA_OUT_OF_RANGE:
    case WARN_DATA_TRUNCATED:
    case ER_TRUNCATED_WRONG_VALUE:
    case ER_TRUNCATED_WRONG_VALUE_FOR_FIELD:
    case ER_ILLEGAL_VALUE_FOR_TYPE:
    case ER_DATA_TOO_LONG:
    case ER_WRONG_VALUE_FOR_TYPE:
    case ER_CANT_CREATE_GEOMETRY_OBJECT:
    case ER_ROW_IS_REFERENCED_2:
    case ER_NO_REFERENCED_ROW_2:
    case ER_DATA_OUT_OF_RANGE:
    case ER_NO_DEFAULT_FOR_FIELD:
    case ER_INVALID_USE_OF_NULL:
    case ER_CONSTRAINT_FAILED:
    case ER_WRONG_VALUE:
    case 3140:  // MySQL 8 ER_INVALID_JSON_TEXT
    case 3819:  // MySQL 8 ER_CHECK_CONSTRAINT_VIOLATED
      return StatusCode::kInvalidArgument;
    case ER_BAD_FIELD_ERROR:
    case ER_NO_SUCH_TABLE:
    case ER_TABLEACCESS_DENIED_ERROR:
    case ER_DBACCESS_DENIED_ERROR:
    case ER_ACCESS_DENIED_ERROR:
    case ER_SPECIFIC_ACCESS_DENIED_ERROR:
      return StatusCode::kFailedPrecondition;
    default:
      return StatusCode::kInternal;
  }
}

Status StatementError(MYSQL* conn, const std::string& what) {
  const unsigned int err = mysql_errno(conn);
  return Status(ErrorCode(err),
                Redact(what + ": " + mysql_error(conn) + " (error " + std::to_string(err) + ")"));
}

Status Exec(MYSQL* conn, const std::string& sql, const std::string& what) {
  if (mysql_real_query(conn, sql.data(), sql.size()) != 0) return StatementError(conn, what);
  ResultPtr result(mysql_store_result(conn));  // a statement that did return rows: drop them
  if (!result && mysql_field_count(conn) != 0) return StatementError(conn, what);
  return Status::Ok();
}

Result<Rows> Fetch(MYSQL* conn, const std::string& sql, const std::string& what) {
  if (mysql_real_query(conn, sql.data(), sql.size()) != 0) return StatementError(conn, what);
  ResultPtr result(mysql_store_result(conn));
  if (!result) {
    if (mysql_field_count(conn) != 0) return StatementError(conn, what);
    return Rows();
  }
  const unsigned int n = mysql_num_fields(result.get());
  Rows rows;
  while (MYSQL_ROW row = mysql_fetch_row(result.get())) {
    const unsigned long* lengths = mysql_fetch_lengths(result.get());
    auto& out = rows.emplace_back(n);
    for (unsigned int i = 0; i < n; ++i) {
      if (row[i] != nullptr) out[i] = std::string(row[i], lengths[i]);
    }
  }
  return rows;
}

uint32_t BytesPerChar(uint32_t collation) {
  const MARIADB_CHARSET_INFO* charset = mariadb_get_charset_by_nr(collation);
  return charset != nullptr && charset->char_maxlen > 0 ? charset->char_maxlen : 4;
}

std::string Literal(MYSQL* conn, const std::string& text) {
  std::string out(text.size() * 2 + 3, '\0');
  out[0] = '\'';
  const unsigned long n = mysql_real_escape_string(conn, out.data() + 1, text.data(), text.size());
  out.resize(n + 1);
  out += '\'';
  return out;
}

}  // namespace faucet::mysql
