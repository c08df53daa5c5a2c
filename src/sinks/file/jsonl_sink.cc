#include "sinks/file/jsonl_sink.h"

#include <utility>

#include "core/crash_point.h"
#include "core/json_render.h"

namespace faucet {

Result<JsonlSinkOptions> JsonlSinkOptions::FromConfig(const config::Block& cfg) {
  JsonlSinkOptions o;
  ASSIGN_OR_RETURN(o.path, cfg.RequiredString("path"));
  ASSIGN_OR_RETURN(o.append, cfg.Bool("append", false));
  if (cfg.Has("mode")) {
    ASSIGN_OR_RETURN(std::string mode, cfg.Enum("mode", "overwrite", {"append", "overwrite"}));
    const bool mode_append = mode == "append";
    if (cfg.Has("append") && mode_append != o.append) {
      return cfg.Error("mode", "contradicts append: " + std::string(o.append ? "true" : "false"));
    }
    o.append = mode_append;
  }
  ASSIGN_OR_RETURN(bool pretty, cfg.Bool("pretty", false));
  if (pretty) return cfg.Error("pretty", "must be false: JSON lines hold one object per line");
  // The reference's batching knob; the pipeline sizes pages here, so it is only checked.
  RETURN_IF_ERROR(cfg.Int("batch_size", 1000, 1).status());
  return o;
}

JsonlSink::JsonlSink(JsonlSinkOptions options, FileSystem& fs)
    : options_(std::move(options)), file_(options_.path, fs), staged_(file_.Directory()) {}

SinkCapabilities JsonlSink::Capabilities() const {
  SinkCapabilities caps;
  caps.stages = true;
  return caps;
}

Status JsonlSink::Open(bool resuming) {
  staged_.Clear();
  return file_.Open(options_.append, resuming);
}

Status JsonlSink::WriteLines(const Page& page, size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i) {
    AppendChangeJson(page.changes[i], file_.buffer());
    file_.buffer().push_back('\n');
    RETURN_IF_ERROR(file_.SpillIfFull());
  }
  return Status::Ok();
}

Status JsonlSink::Write(const Page& page) {
  if (page.changes.empty()) return Status::Ok();
  if (!CrashPointArmed("sink.jsonl.mid_page")) return WriteLines(page, 0, page.changes.size());
  // The crash point sees a torn page: its first half in the file, unflushed, the rest never
  // written. The next run must replay the whole page after them.
  const size_t mid = (page.changes.size() + 1) / 2;
  RETURN_IF_ERROR(WriteLines(page, 0, mid));
  RETURN_IF_ERROR(file_.Spill());
  CrashPoint("sink.jsonl.mid_page");
  return WriteLines(page, mid, page.changes.size());
}

Status JsonlSink::Stage(const Page& page) {
  const StagedStep& step = *page.staged;
  switch (step.kind) {
    case StagedStep::Kind::kChanges:
      return staged_.Add(step.txn, step.part, page.changes);
    case StagedStep::Kind::kAbort:
      staged_.Abort(step.txn, step.part);
      return Status::Ok();
    case StagedStep::Kind::kCommit: {
      std::string commit;
      AppendCommitJson(step.commit_position, step.commit_time_us, commit);
      return staged_.Publish(step.txn, commit, file_);
    }
  }
  return Internal("jsonl sink: unknown staged step");
}

Status JsonlSink::Flush() { return file_.Flush(); }

Result<std::unique_ptr<Sink>> MakeJsonlSink(const config::Block& cfg) {
  ASSIGN_OR_RETURN(JsonlSinkOptions options, JsonlSinkOptions::FromConfig(cfg));
  return std::unique_ptr<Sink>(std::make_unique<JsonlSink>(std::move(options)));
}

}  // namespace faucet
