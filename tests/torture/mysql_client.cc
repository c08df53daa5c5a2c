#include "mysql_client.h"

namespace faucet::torture {

MyConn::MyConn(const std::string& url) {
  Result<MysqlUrl> parts = ParseMysqlUrl(url);
  if (!parts.ok()) throw TortureError(parts.status().ToString());
  endpoint_ = mysql::Endpoint{url, *parts, {}};
  Result<mysql::ConnPtr> conn = mysql::Connect(endpoint_, "torture");
  if (!conn.ok()) throw TortureError(conn.status().ToString());
  conn_ = std::move(conn).value();
}

uint64_t MyConn::Exec(const std::string& sql) {
  Status s = mysql::Exec(conn_.get(), sql, sql.substr(0, 200));
  if (!s.ok()) throw TortureError("mariadb: " + s.ToString());
  return mysql_affected_rows(conn_.get());
}

mysql::Rows MyConn::Fetch(const std::string& sql) {
  Result<mysql::Rows> rows = mysql::Fetch(conn_.get(), sql, sql.substr(0, 200));
  if (!rows.ok()) throw TortureError("mariadb: " + rows.status().ToString());
  return std::move(rows).value();
}

std::optional<std::string> MyConn::Scalar(const std::string& sql) {
  mysql::Rows rows = Fetch(sql);
  if (rows.empty() || rows.front().empty()) return std::nullopt;
  return rows.front().front();
}

std::string MyConn::Literal(const Param& p) {
  return p ? mysql::Literal(conn_.get(), *p) : std::string("NULL");
}

}  // namespace faucet::torture
