// CPU micro-benchmark of the CDC hot path, no server: a streamed transaction of N six-column
// rows (pgoutput protocol 2, as the bench's `big` table sends it) through PgoutputDecoder
// (Decode of the stream blocks, then Replay in pages of 1000) and AppendChangeJson, per row.
// Built with the project (target faucet_decode_render); run:
//   build/release/bench/faucet_decode_render 1000000
// NORENDER=1 skips the rendering.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/json_render.h"
#include "sources/postgres/pgoutput_decoder.h"
#include "sources/postgres/pgoutput_test_messages.h"

using namespace faucet;
using namespace faucet::postgres;

int main(int argc, char** argv) {
  const int rows = argc > 1 ? atoi(argv[1]) : 1000000;
  const uint32_t xid = 777;
  const uint32_t oid = 16384;
  std::vector<std::string> msgs;
  msgs.push_back(testmsg::StreamStart(xid, true));
  msgs.push_back(testmsg::Relation(oid, "public", "bench_src",
                                   {{"id", 20, true},
                                    {"name", 25},
                                    {"amount", 1700},
                                    {"qty", 23},
                                    {"created_at", 1184},
                                    {"flag", 16}},
                                   xid));
  for (int g = 1; g <= rows; ++g) {
    msgs.push_back(
        testmsg::Insert(oid,
                        {testmsg::T(std::to_string(g)), testmsg::T("name-" + std::to_string(g)),
                         testmsg::T(std::to_string(g / 100) + "." + std::to_string(g % 100 / 10) +
                                    std::to_string(g % 10)),
                         testmsg::T(std::to_string(g % 1000)), testmsg::T("2024-01-12 13:46:40+00"),
                         testmsg::T(g % 2 ? "f" : "t")},
                        xid));
  }
  msgs.push_back(testmsg::StreamStop());
  msgs.push_back(testmsg::StreamCommit(xid, 0x0B42FAB8, 0x0B42FB20, 100));

  using Clock = std::chrono::steady_clock;
  PgoutputDecoder dec(DecoderOptions{64 << 20, "/tmp"});
  std::vector<TxnEvent> ev;
  auto t0 = Clock::now();
  for (auto& x : msgs) {
    Status s = dec.Decode(x, ev);
    if (!s.ok()) {
      fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
  }
  auto t1 = Clock::now();
  double t_replay = 0, t_render = 0, t_free = 0;
  size_t n = 0, bytes = 0;
  std::string out;
  while (dec.replaying()) {
    auto a = Clock::now();
    ev.clear();
    Status s = dec.Replay(1000, ev);
    if (!s.ok()) {
      fprintf(stderr, "%s\n", s.ToString().c_str());
      return 1;
    }
    std::vector<Change> page;
    for (auto& e : ev)
      if (e.kind == TxnEvent::Kind::kChange) {
        page.push_back(std::move(e.change));
      }
    ev.clear();
    n += page.size();
    auto b = Clock::now();
    if (!getenv("NORENDER"))
      for (auto& c : page) {
        AppendChangeJson(c, out);
        out.push_back(10);
      }
    bytes += out.size();
    out.clear();
    auto c = Clock::now();
    page = {};
    auto d = Clock::now();
    t_replay += std::chrono::duration<double, std::nano>(b - a).count();
    t_render += std::chrono::duration<double, std::nano>(c - b).count();
    t_free += std::chrono::duration<double, std::nano>(d - c).count();
  }
  printf(
      "rows %zu  decode(stream) %.0f ns/row  replay %.0f ns/row  render %.0f ns/row  free %.0f "
      "ns/row  json bytes %zu\n",
      n, std::chrono::duration<double, std::nano>(t1 - t0).count() / n, t_replay / n, t_render / n,
      t_free / n, bytes);
}
