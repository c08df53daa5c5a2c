// CPU micro-benchmark of the CDC hot path, no server: a streamed transaction of N six-column
// rows (pgoutput protocol 2, as the bench's `big` table sends it) through PgoutputDecoder
// (Decode of the stream blocks, then Replay in pages of 1000) and AppendChangeJson, per row.
// Not built by CMake; against a build dir B (e.g. build/release):
//   g++ -O2 -std=c++20 -Isrc bench/decode_render.cc -o /tmp/decode_render \
//     B/src/sources/postgres/libfaucet_source_postgres.a B/src/core/libfaucet_core.a \
//     -lspdlog -lfmt -lpthread && /tmp/decode_render 1000000
// NORENDER=1 skips the rendering.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/json_render.h"
#include "sources/postgres/pgoutput_decoder.h"

using namespace faucet;
using namespace faucet::postgres;

static void U8(std::string& s, uint8_t v) { s.push_back(char(v)); }
static void U16(std::string& s, uint16_t v) {
  U8(s, v >> 8);
  U8(s, v & 255);
}
static void U32(std::string& s, uint32_t v) {
  U16(s, v >> 16);
  U16(s, v & 65535);
}
static void U64(std::string& s, uint64_t v) {
  U32(s, v >> 32);
  U32(s, uint32_t(v));
}
static void Str(std::string& s, const std::string& v) {
  s += v;
  s.push_back('\0');
}

int main(int argc, char** argv) {
  const int rows = argc > 1 ? atoi(argv[1]) : 1000000;
  const uint32_t xid = 777;
  std::vector<std::string> msgs;
  std::string m;
  m = "S";
  U32(m, xid);
  U8(m, 1);
  msgs.push_back(m);
  m = "R";
  U32(m, xid);
  U32(m, 16384);
  Str(m, "public");
  Str(m, "bench_src");
  U8(m, 'd');
  struct C {
    const char* n;
    uint32_t oid;
  } cols[] = {{"id", 20},  {"name", 25},         {"amount", 1700},
              {"qty", 23}, {"created_at", 1184}, {"flag", 16}};
  U16(m, 6);
  for (auto& c : cols) {
    U8(m, c.n[0] == 'i' && c.n[1] == 'd' ? 1 : 0);
    Str(m, c.n);
    U32(m, c.oid);
    U32(m, uint32_t(-1));
  }
  msgs.push_back(m);
  for (int g = 1; g <= rows; ++g) {
    m = "I";
    U32(m, xid);
    U32(m, 16384);
    U8(m, 'N');
    U16(m, 6);
    std::string v[6] = {
        std::to_string(g),
        "name-" + std::to_string(g),
        std::to_string(g / 100) + "." + std::to_string(g % 100 / 10) + std::to_string(g % 10),
        std::to_string(g % 1000),
        "2024-01-12 13:46:40+00",
        g % 2 ? "f" : "t"};
    for (auto& x : v) {
      U8(m, 't');
      U32(m, x.size());
      m += x;
    }
    msgs.push_back(m);
  }
  m = "E";
  msgs.push_back(m);
  m = "c";
  U32(m, xid);
  U8(m, 0);
  U64(m, 0x0B42FAB8);
  U64(m, 0x0B42FB20);
  U64(m, 100);
  msgs.push_back(m);

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
