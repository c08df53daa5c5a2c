// Test-only: replays binlog events through every parser of binlog_event.h and row_image.h the
// way the mysql-cdc source uses them (FDE first, table maps resolved to codecs, rows events
// decoded row by row), collecting what they decoded. The unit tests check what it collected;
// the fuzzers (binlog_fuzz_test.cc, tests/fuzz/binlog_fuzz.cc) check only that it returns
// normally with a typed error.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sources/mysql/binlog_event.h"
#include "sources/mysql/row_image.h"

namespace faucet::mysql::testing {

inline constexpr std::string_view kBinlogMagic =
    "\xfe"
    "bin";

// The events of a binlog file (the 4-byte magic, then events back to back), each as its bytes.
// An event whose size runs past the end is returned as the bytes left (its parse then fails).
inline std::vector<std::string_view> SplitBinlog(std::string_view file) {
  std::vector<std::string_view> events;
  if (file.substr(0, kBinlogMagic.size()) == kBinlogMagic) file.remove_prefix(kBinlogMagic.size());
  while (!file.empty()) {
    size_t size = file.size();
    if (file.size() >= kEventHeaderBytes) {
      size = 0;
      for (int i = 3; i >= 0; --i) size = (size << 8) | static_cast<uint8_t>(file[9 + i]);
      if (size < kEventHeaderBytes || size > file.size()) size = file.size();
    }
    events.push_back(file.substr(0, size));
    file.remove_prefix(size);
  }
  return events;
}

// Rewrites the trailing CRC32 of `event` to match its bytes (fuzzers: so that a mutated event
// reaches the parsers instead of stopping at its checksum).
inline void Resign(std::string& event) {
  if (event.size() < kEventHeaderBytes + kChecksumBytes) return;
  const size_t n = event.size() - kChecksumBytes;
  const uint32_t crc = static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(event.data()), static_cast<uInt>(n)));
  for (size_t i = 0; i < 4; ++i) event[n + i] = static_cast<char>(crc >> (8 * i));
}

struct DecodedRows {
  std::string table;  // "db.table"
  uint8_t type = 0;
  RowsKind kind = RowsKind::kWrite;
  uint16_t flags = 0;
  std::vector<Row> before;  // delete, update
  std::vector<Row> after;   // write, update
};

struct Replay {
  // Fills in what MINIMAL metadata leaves out (ENUM/SET members), as the catalog would.
  std::function<void(TableMap&)> complete_table_map;
  CharsetLookup charsets = DefaultCharsets();

  FormatDescription fde;
  bool have_fde = false;
  std::map<uint64_t, TableMap> maps;
  std::map<uint64_t, std::vector<ColumnCodec>> codecs;
  std::vector<EventHeader> headers;
  std::vector<DecodedRows> rows;
  std::vector<std::string> statements;   // QUERY_EVENT / QUERY_COMPRESSED_EVENT
  std::vector<std::string> databases;    // of each statement
  std::vector<std::string> annotations;  // ANNOTATE_ROWS / ROWS_QUERY
  std::vector<Gtid> gtids;
  std::vector<uint64_t> xids;
  std::vector<Rotate> rotates;
  std::vector<Heartbeat> heartbeats;

  Status Feed(std::string_view event) {
    ASSIGN_OR_RETURN(EventHeader h, ParseHeader(event));
    headers.push_back(h);
    if (h.type == static_cast<uint8_t>(EventType::kFormatDescription)) {
      ASSIGN_OR_RETURN(fde, ParseFormatDescription(event));
      have_fde = true;
      return Status::Ok();
    }
    ASSIGN_OR_RETURN(std::string_view body, EventBody(event, h, fde));
    return FeedBody(h, body);
  }

  Status FeedAll(const std::vector<std::string_view>& events) {
    for (std::string_view e : events) RETURN_IF_ERROR(Feed(e));
    return Status::Ok();
  }

  // Rows of `table` ("db.table") in the order they were decoded.
  std::vector<const DecodedRows*> RowsOf(const std::string& table) const {
    std::vector<const DecodedRows*> out;
    for (const DecodedRows& r : rows) {
      if (r.table == table) out.push_back(&r);
    }
    return out;
  }

  // One event's body (checksum verified, stripped), by its header's type.
  Status FeedBody(const EventHeader& h, std::string_view body) {
    switch (static_cast<EventType>(h.type)) {
      case EventType::kQuery:
        return AddQuery(body);
      case EventType::kQueryCompressed: {
        std::string inflated;
        RETURN_IF_ERROR(InflateCompressedBody(h.type, body, fde, inflated));
        return AddQuery(inflated);
      }
      case EventType::kRotate: {
        ASSIGN_OR_RETURN(Rotate r, ParseRotate(body));
        rotates.push_back(std::move(r));
        return Status::Ok();
      }
      case EventType::kXid: {
        ASSIGN_OR_RETURN(uint64_t xid, ParseXid(body));
        xids.push_back(xid);
        return Status::Ok();
      }
      case EventType::kMariaGtid: {
        ASSIGN_OR_RETURN(Gtid g, ParseMariaGtid(body, h.server_id));
        gtids.push_back(std::move(g));
        return Status::Ok();
      }
      case EventType::kMysqlGtid:
      case EventType::kMysqlAnonymousGtid: {
        ASSIGN_OR_RETURN(Gtid g, ParseMysqlGtid(body));
        gtids.push_back(std::move(g));
        return Status::Ok();
      }
      case EventType::kHeartbeat:
      case EventType::kHeartbeatV2: {
        ASSIGN_OR_RETURN(Heartbeat hb, ParseHeartbeat(body, h));
        heartbeats.push_back(std::move(hb));
        return Status::Ok();
      }
      case EventType::kAnnotateRows:
      case EventType::kRowsQuery: {
        ASSIGN_OR_RETURN(std::string_view text, ParseAnnotateRows(h.type, body));
        annotations.emplace_back(text);
        return Status::Ok();
      }
      case EventType::kTableMap:
        return AddTableMap(body);
      case EventType::kWriteRowsV1:
      case EventType::kUpdateRowsV1:
      case EventType::kDeleteRowsV1:
      case EventType::kWriteRowsV2:
      case EventType::kUpdateRowsV2:
      case EventType::kDeleteRowsV2:
      case EventType::kPartialUpdateRows:
        return AddRows(h.type, body);
      case EventType::kWriteRowsCompressedV1:
      case EventType::kUpdateRowsCompressedV1:
      case EventType::kDeleteRowsCompressedV1:
      case EventType::kWriteRowsCompressed:
      case EventType::kUpdateRowsCompressed:
      case EventType::kDeleteRowsCompressed: {
        std::string inflated;
        RETURN_IF_ERROR(InflateCompressedBody(h.type, body, fde, inflated));
        return AddRows(h.type, inflated);
      }
      default:
        return Status::Ok();
    }
  }

 private:
  Status AddQuery(std::string_view body) {
    ASSIGN_OR_RETURN(Query q, ParseQuery(body, fde));
    statements.emplace_back(q.statement);
    databases.emplace_back(q.database);
    return Status::Ok();
  }

  Status AddTableMap(std::string_view body) {
    ASSIGN_OR_RETURN(TableMap map, ParseTableMap(body, fde));
    if (complete_table_map) complete_table_map(map);
    ASSIGN_OR_RETURN(std::vector<ColumnCodec> c, ResolveColumns(map, charsets));
    codecs[map.table_id] = std::move(c);
    maps[map.table_id] = std::move(map);
    return Status::Ok();
  }

  Status AddRows(uint8_t type, std::string_view body) {
    ASSIGN_OR_RETURN(RowsEvent ev, ParseRowsEvent(type, body, fde));
    auto it = codecs.find(ev.table_id);
    if (it == codecs.end()) {
      return DataLoss("rows event for unknown table id " + std::to_string(ev.table_id));
    }
    const TableMap& map = maps[ev.table_id];
    DecodedRows out{map.database + "." + map.table, type, ev.kind, ev.flags, {}, {}};
    std::string_view data = ev.rows;
    while (!data.empty()) {
      Row row;
      RETURN_IF_ERROR(DecodeRow(it->second, ev.present, data, row, out.table));
      if (ev.kind == RowsKind::kWrite) {
        out.after.push_back(std::move(row));
        continue;
      }
      out.before.push_back(std::move(row));
      if (ev.kind == RowsKind::kUpdate) {
        RETURN_IF_ERROR(DecodeRow(it->second, ev.present_after, data, row, out.table));
        out.after.push_back(std::move(row));
      }
    }
    rows.push_back(std::move(out));
    return Status::Ok();
  }
};

// Errors the decoders may return for bad input: anything else is a bug.
inline bool IsTypedDecodeError(const Status& s) {
  return s.ok() || s.code() == StatusCode::kDataLoss || s.code() == StatusCode::kFailedPrecondition;
}

// What the fuzzers run on one input: the events through a fresh Replay, re-signed first when
// `resign` (so that mutations get past the checksums). Returns the first error.
inline Status DecodeFuzzEvents(std::vector<std::string> events, bool resign) {
  Replay replay;
  replay.charsets = DefaultCharsets([](uint32_t id) { return id == 51 ? "cp1251" : ""; });
  // A table map without ENUM/SET members gets made-up ones, so that rows still decode.
  replay.complete_table_map = [](TableMap& map) {
    for (ColumnDef& c : map.columns) {
      if (c.enum_values.empty()) c.enum_values = {"a", "b"};
      if (c.set_values.empty()) c.set_values = {"x", "y", "z"};
    }
  };
  for (std::string& e : events) {
    const bool is_fde = e.size() > 4 && static_cast<uint8_t>(e[4]) ==
                                            static_cast<uint8_t>(EventType::kFormatDescription);
    if (resign && (is_fde || replay.fde.checksums)) Resign(e);
    RETURN_IF_ERROR(replay.Feed(e));
  }
  return Status::Ok();
}

}  // namespace faucet::mysql::testing
