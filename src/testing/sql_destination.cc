#include "testing/sql_destination.h"

#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <mysql.h>
#include <sqlite3.h>

#include "clients/mysql/connection.h"
#include "testing/services.h"

namespace faucet::testing {
namespace {

std::string PostgresQuery(const std::string& url, const std::string& sql) {
  PGconn* conn = PQconnectdb(url.c_str());
  PGresult* r = PQexec(conn, sql.c_str());
  std::string out;
  const ExecStatusType status = PQresultStatus(r);
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    ADD_FAILURE() << sql << ": " << PQerrorMessage(conn);
  } else if (PQntuples(r) > 0 && PQnfields(r) > 0) {
    out = PQgetvalue(r, 0, 0);
  }
  PQclear(r);
  PQfinish(conn);
  return out;
}

std::string SqliteQuery(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_stmt* stmt = nullptr;
  int step = SQLITE_ERROR;
  if (sqlite3_open(path.c_str(), &db) == SQLITE_OK) {
    sqlite3_busy_timeout(db, 5000);  // while the sink writes
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK) {
      step = sqlite3_step(stmt);
    }
  }
  std::string out;
  if (step == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr) {
    out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  } else if (step != SQLITE_ROW && step != SQLITE_DONE) {
    ADD_FAILURE() << path << ": " << sql << ": " << sqlite3_errmsg(db);
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

std::string MysqlQuery(const std::string& url, const std::string& sql) {
  Result<MysqlUrl> m = ParseMysqlUrl(url);
  if (!m.ok()) {
    ADD_FAILURE() << m.status().ToString();
    return "";
  }
  MYSQL* conn = mysql_init(nullptr);
  std::string out;
  if (mysql_real_connect(conn, m->host.c_str(), m->user.c_str(), m->password.c_str(),
                         m->database.c_str(), m->port, nullptr, 0) == nullptr ||
      mysql_real_query(conn, sql.data(), sql.size()) != 0) {
    ADD_FAILURE() << sql << ": " << mysql_error(conn);
  } else if (MYSQL_RES* res = mysql_store_result(conn); res != nullptr) {
    MYSQL_ROW row = mysql_fetch_row(res);
    if (row != nullptr && row[0] != nullptr) out = row[0];
    mysql_free_result(res);
  }
  mysql_close(conn);
  return out;
}

}  // namespace

std::string SqlDestName(SqlDest dest) {
  switch (dest) {
    case SqlDest::kPostgres:
      return "postgres";
    case SqlDest::kSqlite:
      return "sqlite";
    case SqlDest::kMysql:
      return "mysql";
  }
  return "";
}

SqlDestination::SqlDestination(SqlDest dest, const std::string& name, const std::string& dir)
    : dest_(dest) {
  switch (dest) {
    case SqlDest::kPostgres: {
      const std::string server = RequireEnv("FAUCET_TEST_PG_URL");
      PostgresQuery(server, "CREATE DATABASE " + name);
      url_ = server.substr(0, server.rfind('/') + 1) + name;
      break;
    }
    case SqlDest::kSqlite:
      url_ = dir + "/" + name + ".db";
      break;
    case SqlDest::kMysql:
      url_ = RequireEnv("FAUCET_TEST_MYSQL_URL");
      break;
  }
}

std::string SqlDestination::SinkYaml(const std::string& table, const std::string& extra) const {
  const char* url_key = dest_ == SqlDest::kSqlite ? "database_url" : "connection_url";
  return "{type: " + SqlDestName(dest_) + ", config: {" + url_key + ": '" + url_ +
         "', table_name: " + table + extra + "}}";
}

std::string SqlDestination::Query(const std::string& sql) const {
  switch (dest_) {
    case SqlDest::kPostgres:
      return PostgresQuery(url_, sql);
    case SqlDest::kSqlite:
      return SqliteQuery(url_, sql);
    case SqlDest::kMysql:
      return MysqlQuery(url_, sql);
  }
  return "";
}

}  // namespace faucet::testing
