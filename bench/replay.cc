// The apply limit of the bench: a pipeline's changes applied with nothing to decode. It builds
// the pipeline of a config file as `faucet run` does, first reads its source to the end into
// memory (untimed), then runs the real Pipeline over those pages (the config's transforms,
// sink, state store and delivery) from a source that only hands them out, and prints the
// seconds that took. So it is the sink side of the same run alone: what a pipeline whose
// decoding cost nothing would reach.
//
//   faucet_replay [--wait] CONFIG.yaml
//
// With --wait, once the pages are read it prints "ready" and applies them when a line arrives
// on stdin: the bench starts decoding alone (drain) at the same moment, both halves at once.
//
// Holds every page of the run in memory: for the bench's sizes, not for production.
#include <chrono>
#include <cstdio>
#include <deque>
#include <string_view>
#include <utility>

#include "assembly/pipeline_builder.h"
#include "core/pipeline.h"

using namespace faucet;

namespace {

// Hands out the captured pages, then ends.
class ReplaySource : public Source {
 public:
  explicit ReplaySource(std::deque<Page> pages) : pages_(std::move(pages)) {}
  Status Open(const std::optional<Bookmark>&) override { return Status::Ok(); }
  Result<SourceEvent> Next(std::chrono::milliseconds) override {
    if (pages_.empty()) return SourceEvent{SourceEvent::Kind::kEnd, {}};
    SourceEvent event{SourceEvent::Kind::kPage, std::move(pages_.front())};
    pages_.pop_front();
    return event;
  }

 private:
  std::deque<Page> pages_;
};

int Fail(const Status& status) {
  fprintf(stderr, "faucet_replay: %s\n", status.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const bool wait = argc == 3 && std::string_view(argv[1]) == "--wait";
  if ((argc != 2 && !wait) || std::string_view(argv[argc - 1]).starts_with("--")) {
    fprintf(stderr, "usage: faucet_replay [--wait] CONFIG.yaml\n");
    return 2;
  }
  Result<assembly::BuiltPipeline> built = assembly::BuildPipeline(argv[argc - 1]);
  if (!built.ok()) return Fail(built.status());
  Result<std::unique_ptr<StateStore>> state = assembly::OpenState(*built);
  if (!state.ok()) return Fail(state.status());

  using Clock = std::chrono::steady_clock;
  const Clock::time_point read_start = Clock::now();
  std::deque<Page> pages;
  size_t changes = 0;
  {
    Source& source = *built->parts.source;
    if (Status s = source.Open(std::nullopt); !s.ok()) return Fail(s);
    while (true) {
      Result<SourceEvent> event = source.Next(std::chrono::seconds(1));
      if (!event.ok()) return Fail(event.status());
      if (event->kind == SourceEvent::Kind::kEnd) break;
      if (event->kind != SourceEvent::Kind::kPage) continue;
      changes += event->page.changes.size();
      pages.push_back(std::move(event->page));
    }
  }
  built->parts.source.reset();
  const double read_s = std::chrono::duration<double>(Clock::now() - read_start).count();
  if (wait) {
    printf("ready\n");
    fflush(stdout);
    char line[16];
    if (fgets(line, sizeof line, stdin) == nullptr) return Fail(Internal("no go on stdin"));
  }

  const size_t n_pages = pages.size();
  ReplaySource replay(std::move(pages));
  PipelineOptions options;
  options.state_key = built->StateKey();
  assembly::ApplyGuarantee(built->guarantee, options);
  Pipeline pipeline(replay, built->parts.TransformPtrs(), *built->parts.sink, **state, options);
  const Clock::time_point apply_start = Clock::now();
  Result<PipelineStats> stats = pipeline.Run();
  const double apply_s = std::chrono::duration<double>(Clock::now() - apply_start).count();
  if (!stats.ok()) return Fail(stats.status());
  printf("read %zu pages, %zu changes in %.3f s (untimed); applied them in %.3f s\n", n_pages,
         changes, read_s, apply_s);
  printf("apply_seconds %.3f\n", apply_s);
  return 0;
}
