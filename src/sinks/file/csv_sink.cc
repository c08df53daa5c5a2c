#include "sinks/file/csv_sink.h"

#include <string_view>
#include <utility>

#include "core/json_render.h"

namespace faucet {
namespace {

bool SameColumnNames(const Relation& a, const Relation& b) {
  if (a.columns.size() != b.columns.size()) return false;
  for (size_t i = 0; i < a.columns.size(); ++i) {
    if (a.columns[i].name != b.columns[i].name) return false;
  }
  return true;
}

std::string ColumnList(const Relation& r) {
  std::string list;
  for (const Column& c : r.columns) list += (list.empty() ? "" : ", ") + c.name;
  return "(" + list + ")";
}

}  // namespace

Result<CsvSinkOptions> CsvSinkOptions::FromConfig(const config::Block& cfg) {
  CsvSinkOptions o;
  ASSIGN_OR_RETURN(o.path, cfg.RequiredString("path"));
  ASSIGN_OR_RETURN(std::string delimiter, cfg.String("delimiter", ","));
  if (delimiter.size() != 1 || delimiter == "\"" || delimiter == "\r" || delimiter == "\n") {
    return cfg.Error("delimiter", "expected one character other than a quote, CR or LF, got '" +
                                      delimiter + "'");
  }
  o.delimiter = delimiter[0];
  ASSIGN_OR_RETURN(o.write_headers, cfg.Bool("write_headers", true));
  ASSIGN_OR_RETURN(o.append, cfg.Bool("append", false));
  // The reference's batching knob; the pipeline sizes pages here, so it is only checked.
  RETURN_IF_ERROR(cfg.Int("batch_size", 1000, 1).status());
  return o;
}

CsvSink::CsvSink(CsvSinkOptions options, FileSystem& fs)
    : options_(std::move(options)), file_(options_.path, fs) {}

Status CsvSink::Open(bool resuming) { return file_.Open(options_.append, resuming); }

void CsvSink::AppendField(std::string_view text) {
  std::string& out = file_.buffer();
  const char specials[] = {options_.delimiter, '"', '\r', '\n'};
  if (!text.empty() &&
      text.find_first_of(std::string_view(specials, sizeof specials)) == std::string_view::npos) {
    out.append(text);
    return;
  }
  out.push_back('"');
  for (char c : text) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
}

void CsvSink::AppendRecord(const Relation& relation, const Row& row) {
  std::string& out = file_.buffer();
  for (size_t i = 0; i < row.size() && i < relation.columns.size(); ++i) {
    if (i > 0) out.push_back(options_.delimiter);
    const Cell& cell = row[i];
    if (cell.state != CellState::kValue) continue;
    if (relation.columns[i].type == ValueType::kBool) {
      if (std::optional<bool> b = ParseBoolText(cell.text)) {
        out.append(*b ? "true" : "false");
        continue;
      }
    }
    AppendField(cell.text);
  }
  out.push_back('\n');
}

Status CsvSink::CheckColumns(const RelationPtr& relation) {
  if (relation == checked_relation_) return Status::Ok();
  if (!first_relation_) {
    first_relation_ = relation;
    if (options_.write_headers && file_.opened_empty()) {
      std::string& out = file_.buffer();
      for (size_t i = 0; i < relation->columns.size(); ++i) {
        if (i > 0) out.push_back(options_.delimiter);
        AppendField(relation->columns[i].name);
      }
      out.push_back('\n');
    }
  } else if (!SameColumnNames(*first_relation_, *relation)) {
    return FailedPrecondition(options_.path + ": rows of " + relation->schema + "." +
                              relation->name + " have columns " + ColumnList(*relation) +
                              " but earlier rows have " + ColumnList(*first_relation_));
  }
  checked_relation_ = relation;
  return Status::Ok();
}

Status CsvSink::Write(const Page& page) {
  for (const Change& change : page.changes) {
    const std::optional<Row>& row = change.after ? change.after : change.before;
    if (!row) continue;
    RETURN_IF_ERROR(CheckColumns(change.relation));
    AppendRecord(*change.relation, *row);
    RETURN_IF_ERROR(file_.SpillIfFull());
  }
  return Status::Ok();
}

Status CsvSink::Flush() { return file_.Flush(); }

Result<std::unique_ptr<Sink>> MakeCsvSink(const config::Block& cfg) {
  ASSIGN_OR_RETURN(CsvSinkOptions options, CsvSinkOptions::FromConfig(cfg));
  return std::unique_ptr<Sink>(std::make_unique<CsvSink>(std::move(options)));
}

}  // namespace faucet
