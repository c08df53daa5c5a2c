#include "core/dlq.h"

#include <chrono>

#include "core/json_render.h"

namespace faucet {
namespace {

const RelationPtr& EnvelopeRelation() {
  static const RelationPtr kRelation = std::make_shared<Relation>(
      Relation{0,
               "",
               "dlq",
               {Column{"error", ValueType::kJson, 3802}, Column{"reason", ValueType::kText, 25},
                Column{"payload", ValueType::kJson, 3802}, Column{"ts_ms", ValueType::kInt, 20},
                Column{"sink", ValueType::kText, 25}, Column{"pipeline", ValueType::kText, 25},
                Column{"row", ValueType::kText, 25}, Column{"record_index", ValueType::kInt, 20}}});
  return kRelation;
}

}  // namespace

Change MakeDlqEnvelope(const Change& rejected, size_t record_index, const Status& error,
                       const DlqOptions& options) {
  Json error_json = {{"kind", StatusCodeName(error.code())}, {"message", error.message()}};
  Cell payload = Cell::Null();
  if (options.include_original_payload) {
    std::string rendered;
    AppendChangeJson(rejected, rendered);
    payload = Cell::Value(std::move(rendered));
  }
  int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  Change envelope;
  envelope.op = ChangeOp::kRead;
  envelope.relation = EnvelopeRelation();
  envelope.commit_position = rejected.commit_position;
  envelope.commit_time_us = rejected.commit_time_us;
  envelope.after = Row{Cell::Value(error_json.dump()),
                       Cell::Value("sink_rejected"),
                       std::move(payload),
                       Cell::Value(std::to_string(now_ms)),
                       Cell::Value(options.sink_type),
                       Cell::Value(options.pipeline_name),
                       Cell::Value("row-0"),
                       Cell::Value(std::to_string(record_index))};
  return envelope;
}

}  // namespace faucet
