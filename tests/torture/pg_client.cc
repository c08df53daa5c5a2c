#include "pg_client.h"

#include <cstdlib>

namespace faucet::torture {

std::optional<std::string> PgRows::Get(int row, int col) const {
  if (PQgetisnull(r_.get(), row, col)) return std::nullopt;
  return std::string(PQgetvalue(r_.get(), row, col),
                     static_cast<size_t>(PQgetlength(r_.get(), row, col)));
}

std::string PgRows::Text(int row, int col) const {
  std::optional<std::string> v = Get(row, col);
  if (!v) throw TortureError("unexpected NULL in result column " + std::to_string(col));
  return *v;
}

int64_t PgRows::Int(int row, int col) const {
  return std::strtoll(Text(row, col).c_str(), nullptr, 10);
}

PgConn::PgConn(const std::string& url) : conn_(PQconnectdb(url.c_str()), &PQfinish) {
  if (PQstatus(conn_.get()) != CONNECTION_OK) {
    throw TortureError("cannot connect to Postgres: " + std::string(PQerrorMessage(conn_.get())));
  }
  PQclear(PQexec(conn_.get(), "SET client_min_messages = warning"));
}

PgRows PgConn::Exec(const std::string& sql, const std::vector<Param>& params) {
  std::vector<const char*> values;
  for (const Param& p : params) values.push_back(p ? p->c_str() : nullptr);
  PGresult* r = params.empty()
                    ? PQexec(conn_.get(), sql.c_str())
                    : PQexecParams(conn_.get(), sql.c_str(), static_cast<int>(values.size()),
                                   nullptr, values.data(), nullptr, nullptr, 0);
  ExecStatusType st = PQresultStatus(r);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    std::string msg = PQresultErrorMessage(r);
    PQclear(r);
    throw TortureError("SQL failed: " + sql.substr(0, 300) + ": " + msg);
  }
  return PgRows(r);
}

std::optional<std::string> PgConn::Scalar(const std::string& sql,
                                          const std::vector<Param>& params) {
  PgRows rows = Exec(sql, params);
  if (rows.size() == 0) return std::nullopt;
  return rows.Get(0, 0);
}

std::string PgConn::Md5(const std::string& bytes) {
  const char* values[1] = {bytes.data()};
  int lengths[1] = {static_cast<int>(bytes.size())};
  int formats[1] = {1};
  Oid types[1] = {17};  // bytea
  PGresult* r =
      PQexecParams(conn_.get(), "SELECT md5($1::bytea)", 1, types, values, lengths, formats, 0);
  if (PQresultStatus(r) != PGRES_TUPLES_OK) {
    std::string msg = PQresultErrorMessage(r);
    PQclear(r);
    throw TortureError("md5 failed: " + msg);
  }
  std::string out = PQgetvalue(r, 0, 0);
  PQclear(r);
  return out;
}

std::string WithDatabase(const std::string& url, const std::string& db) {
  size_t scheme = url.find("://");
  if (scheme == std::string::npos) throw TortureError("not a postgres:// URL: " + url);
  size_t slash = url.find('/', scheme + 3);
  size_t query = url.find('?', scheme + 3);
  std::string head =
      url.substr(0, slash == std::string::npos ? std::min(query, url.size()) : slash);
  std::string tail = query == std::string::npos ? "" : url.substr(query);
  return head + "/" + db + tail;
}

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

}  // namespace faucet::torture
