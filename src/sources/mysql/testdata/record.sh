#!/usr/bin/env bash
# Re-records the binlog files of this directory from a throwaway MariaDB (10.11: ROW, FULL image,
# binlog_row_metadata=FULL, CRC32 checksums), each one whole binlog file (magic, FDE, events):
#   eval "$(bash scripts/services.sh start mysql)"
#   bash src/sources/mysql/testdata/record.sh
#   bash scripts/services.sh stop
# The tests hard-code what `mariadb -e 'SELECT ...'` printed for these rows: re-recording must
# keep the statements below unchanged. binlog_event_test.cc also hard-codes what the server
# numbered (GTIDs 0-1-32.., XIDs, positions, the server version): a re-recording renumbers
# them, and those assertions must be updated with it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
run=${FAUCET_SERVICES_RUN_DIR:?start the services first}
data=$run/mysql/data
m=(mariadb --defaults-file="$run/mysql/my.cnf" -uroot faucet)

enum260=$(for i in $(seq 1 260); do printf "'v%d'," "$i"; done)
set64=$(for i in $(seq 1 64); do printf "'m%d'," "$i"; done)

sql_session="SET SESSION sql_mode = ''; SET SESSION time_zone = '+00:00'; SET NAMES utf8mb4;"

# record NAME SQL: runs SQL alone in a fresh binlog file and copies that file to NAME.binlog.
record() {
  local name=$1 sql=$2 file
  "${m[@]}" -e "FLUSH BINARY LOGS"
  file=$("${m[@]}" -N -e "SHOW MASTER STATUS" | cut -f1)
  "${m[@]}" -e "$sql_session $sql"
  "${m[@]}" -e "FLUSH BINARY LOGS"
  cp "$data/$file" "$here/$name.binlog"
  echo "$name.binlog: $(stat -c %s "$here/$name.binlog") bytes" >&2
}

"${m[@]}" -e "$sql_session
DROP TABLE IF EXISTS ints, nums, times, strs, bins, misc, old_times, comp;
CREATE TABLE ints (
  id INT PRIMARY KEY,
  t TINYINT, tu TINYINT UNSIGNED, s SMALLINT, su SMALLINT UNSIGNED,
  m MEDIUMINT, mu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED,
  b BIGINT, bu BIGINT UNSIGNED, y YEAR);
CREATE TABLE nums (
  id INT PRIMARY KEY, big DECIMAL(65,30), small DECIMAL(5,2), whole DECIMAL(10,0),
  mid DECIMAL(18,9), uns DECIMAL(4,1) UNSIGNED, f FLOAT, d DOUBLE);
CREATE TABLE times (
  id INT PRIMARY KEY, d DATE,
  t0 TIME, t1 TIME(1), t2 TIME(2), t3 TIME(3), t4 TIME(4), t5 TIME(5), t6 TIME(6),
  dt0 DATETIME, dt1 DATETIME(1), dt2 DATETIME(2), dt3 DATETIME(3), dt4 DATETIME(4),
  dt5 DATETIME(5), dt6 DATETIME(6),
  ts0 TIMESTAMP NULL, ts1 TIMESTAMP(1) NULL, ts2 TIMESTAMP(2) NULL, ts3 TIMESTAMP(3) NULL,
  ts4 TIMESTAMP(4) NULL, ts5 TIMESTAMP(5) NULL, ts6 TIMESTAMP(6) NULL, y YEAR);
CREATE TABLE strs (
  id INT PRIMARY KEY, c CHAR(10), vc VARCHAR(20), vc300 VARCHAR(300), tx TEXT, tt TINYTEXT,
  mt MEDIUMTEXT, lt LONGTEXT, c100 CHAR(100), bin_coll VARCHAR(10) COLLATE utf8mb4_bin,
  l1c CHAR(5) CHARSET latin1, l1v VARCHAR(10) CHARSET latin1, l1t TEXT CHARSET latin1,
  asc_v VARCHAR(10) CHARSET ascii, u3 VARCHAR(10) CHARSET utf8mb3,
  cyr VARCHAR(10) CHARSET cp1251, js JSON);
CREATE TABLE bins (
  id INT PRIMARY KEY, b BINARY(4), vb VARBINARY(10), bl BLOB, tb TINYBLOB, mb MEDIUMBLOB,
  lb LONGBLOB, vb300 VARBINARY(300), cbin CHAR(3) CHARSET binary);
CREATE TABLE misc (
  id INT PRIMARY KEY, e ENUM('a','b','c'), e260 ENUM(${enum260%,}), s SET('x','y','z'),
  s64 SET(${set64%,}), el1 ENUM('é','ü') CHARSET latin1,
  bit1 BIT(1), bit10 BIT(10), bit64 BIT(64), g GEOMETRY, p POINT);
CREATE TABLE comp (id INT PRIMARY KEY, v VARCHAR(200), n INT);"

record ints "INSERT INTO ints VALUES
  (1, -128, 255, -32768, 65535, -8388608, 16777215, -2147483648, 4294967295,
   -9223372036854775808, 18446744073709551615, 2155),
  (2, 127, 0, 32767, 0, 8388607, 0, 2147483647, 0, 9223372036854775807, 0, 1901),
  (3, -1, 1, -1, 1, -1, 1, -1, 1, -1, 1, 0),
  (4, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);"

record nums "INSERT INTO nums VALUES
  (1, 12345678901234567890123456789012345.123456789012345678901234567890, 0.5, 1234567890,
   -123456789.987654321, 999.9, 0.1, 0.1),
  (2, -12345678901234567890123456789012345.123456789012345678901234567890, -1, -1,
   0.000000001, 0, -3.4028235e38, 1e100),
  (3, -0.000000000000000000000000000001, 999.99, 0, -0.5, 0.5, 1.5, -2.2250738585072014e-308),
  (4, 0, -999.99, -9999999999, 999999999.999999999, NULL, 0, 1.7976931348623157e308),
  (5, NULL, NULL, NULL, NULL, NULL, NULL, NULL);"

record times "INSERT INTO times VALUES
  (1, '2024-02-29', '-838:59:59', '-12:34:56.1', '-00:00:00.01', '-00:00:01.5', '123:00:00.0001',
   '-00:00:00.00001', '-838:59:59.000000',
   '2024-02-29 13:14:15', '2024-02-29 13:14:15.1', '2024-02-29 13:14:15.12',
   '2024-02-29 13:14:15.123', '2024-02-29 13:14:15.1234', '2024-02-29 13:14:15.12345',
   '2024-02-29 13:14:15.123456',
   '2024-02-29 13:14:15', '2024-02-29 13:14:15.1', '2024-02-29 13:14:15.12',
   '2024-02-29 13:14:15.123', '2024-02-29 13:14:15.1234', '2024-02-29 13:14:15.12345',
   '2024-02-29 13:14:15.123456', 2024),
  (2, '0000-00-00', '00:00:00', '00:00:00', '00:00:00', '00:00:00', '00:00:00', '00:00:00',
   '00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00',
   '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00',
   '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00',
   '0000-00-00 00:00:00', '0000-00-00 00:00:00', '0000-00-00 00:00:00', 0),
  (3, '9999-12-31', '838:59:59', '838:59:59.9', '838:59:59.99', '838:59:59.999',
   '838:59:59.9999', '838:59:59.99999', '838:59:59.999999', '9999-12-31 23:59:59',
   '9999-12-31 23:59:59.9', '9999-12-31 23:59:59.99', '9999-12-31 23:59:59.999',
   '9999-12-31 23:59:59.9999', '9999-12-31 23:59:59.99999', '9999-12-31 23:59:59.999999',
   '2038-01-19 03:14:07', '2038-01-19 03:14:07.9', '2038-01-19 03:14:07.99',
   '2038-01-19 03:14:07.999', '2038-01-19 03:14:07.9999', '2038-01-19 03:14:07.99999',
   '2038-01-19 03:14:07.999999', 2155),
  (4, '2024-00-15', '-00:00:01', '-00:00:00.9', '-00:00:00.99', '-00:00:00.999',
   '-00:00:00.9999', '-00:00:00.99999', '-00:00:00.000001', '1000-01-01 00:00:00',
   '1000-01-01 00:00:00.0', '1000-01-01 00:00:00.01', '1000-01-01 00:00:00.001',
   '1000-01-01 00:00:00.0001', '1000-01-01 00:00:00.00001', '1000-01-01 00:00:00.000001',
   '1970-01-01 00:00:01', '1970-01-01 00:00:01.5', '1970-01-01 00:00:01.05',
   '1970-01-01 00:00:01.005', '1970-01-01 00:00:01.0005', '1970-01-01 00:00:01.00005',
   '1970-01-01 00:00:01.000005', 1901),
  (5, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
   NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);"

record strs "INSERT INTO strs VALUES
  (1, 'ab  ', 'héllo 😀', REPEAT('x', 300), 'text 😀\n\ttab', 'tiny', 'medium', 'long',
   REPEAT('€', 100), 'Bin', '€ÿŠ', 'café', 'latin1 ‰ text', 'ascii', 'ünï', 'Привет',
   '{\"a\": [1, 2.5, \"x\"], \"b\": null}'),
  (2, '', '', '', '', '', '', '', '', '', '', '', '', '', '', '', '[]'),
  (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
   NULL);"

record bins "INSERT INTO bins VALUES
  (1, X'0001', X'00FF00', X'000102', X'FF', X'00', X'DEADBEEF', REPEAT(X'00AB', 150), 'a'),
  (2, '', '', '', '', '', '', '', ''),
  (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);"

record misc "INSERT INTO misc VALUES
  (1, 'b', 'v260', 'x,z', 'm1,m64', 'é', b'1', b'1010101011',
   b'1000000000000000000000000000000000000000000000000000000000000001',
   ST_GeomFromText('POINT(1 2)'), ST_GeomFromText('POINT(-1.5 0)')),
  (2, '', 'v1', '', '', 'ü', b'0', b'0', b'0', ST_GeomFromText('LINESTRING(0 0,1 1)'),
   ST_GeomFromText('POINT(0 0)')),
  (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);"

# Updates, a delete, a DDL and a multi-statement transaction over two tables.
record dml "UPDATE ints SET t = 5, b = NULL WHERE id = 3;
  UPDATE strs SET vc = 'changed 😀', l1v = 'Ñ' WHERE id = 1;
  DELETE FROM bins WHERE id = 2;
  ALTER TABLE ints ADD COLUMN extra VARCHAR(5) DEFAULT 'x';
  BEGIN;
  INSERT INTO ints (id, t, extra) VALUES (10, 10, 'ten'), (11, 11, NULL);
  UPDATE misc SET e = 'c', s = 'y' WHERE id = 1;
  DELETE FROM nums WHERE id = 5;
  COMMIT;"

# binlog_row_metadata=MINIMAL (global only: new connections see it): signedness, charsets,
# ENUM/SET members and geometry types, no names or keys.
"${m[@]}" -e "SET GLOBAL binlog_row_metadata = MINIMAL"
record minimal "INSERT INTO ints (id, t, tu, b, bu) VALUES (20, -5, 250, -1, 18446744073709551615);
  INSERT INTO strs (id, vc, l1v, cyr, bin_coll) VALUES (20, 'ok 😀', 'çà', 'Да', 'x');
  UPDATE misc SET e = 'a', s = 'x,y', el1 = 'ü' WHERE id = 2;"
"${m[@]}" -e "SET GLOBAL binlog_row_metadata = FULL"

# binlog_row_image=MINIMAL: the before image holds the key only, the after image the changed
# columns only.
record image_minimal "SET SESSION binlog_row_image = MINIMAL;
  UPDATE ints SET tu = 7 WHERE id = 20;
  DELETE FROM ints WHERE id = 11;"

# MariaDB compressed events (log_bin_compress): QUERY_COMPRESSED and *_ROWS_COMPRESSED_V1.
"${m[@]}" -e "SET GLOBAL log_bin_compress = ON; SET GLOBAL log_bin_compress_min_len = 10"
record compressed "CREATE TABLE comp_ddl (id INT PRIMARY KEY, note VARCHAR(100));
  INSERT INTO comp VALUES (1, REPEAT('compressible ', 15), -7), (2, 'short', NULL);
  UPDATE comp SET v = REPEAT('again ', 20), n = 8 WHERE id = 1;
  DELETE FROM comp WHERE id = 2;"
"${m[@]}" -e "SET GLOBAL log_bin_compress = OFF; SET GLOBAL log_bin_compress_min_len = 256;
  DROP TABLE comp_ddl"

# The pre-MySQL-5.6 temporal types (TIME, DATETIME, TIMESTAMP without fsp), which MariaDB
# still creates with mysql56_temporal_format=OFF.
"${m[@]}" -e "SET GLOBAL mysql56_temporal_format = OFF;
  CREATE TABLE old_times (id INT PRIMARY KEY, t TIME, dt DATETIME, ts TIMESTAMP NULL);
  SET GLOBAL mysql56_temporal_format = ON"
record old_times "INSERT INTO old_times VALUES
  (1, '-838:59:59', '9999-12-31 23:59:59', '2038-01-19 03:14:07'),
  (2, '12:34:56', '0000-00-00 00:00:00', '0000-00-00 00:00:00'),
  (3, '-00:00:01', '2024-02-29 13:14:15', '1970-01-01 00:00:01');"
