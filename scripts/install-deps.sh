#!/usr/bin/env bash
# Install every Debian package that faucet's build, tests, fuzzers and benchmarks need.
# Idempotent and fast when nothing is missing (one dpkg-query, no apt-get at all).
# Never leaves the distro's own postgres/mariadb/redis daemons running: tests start their
# own throwaway servers on free ports (scripts/services.sh).
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build ccache pkg-config clang clang-format clang-tidy
  # the sanitizer and libFuzzer runtimes of clang (the asan and tsan presets)
  libclang-rt-14-dev
  # databases: client libraries, servers (for integration tests) and CLI clients
  libpq-dev postgresql-15 postgresql-contrib
  libmariadb-dev mariadb-server mariadb-client
  libsqlite3-dev sqlite3
  libhiredis-dev redis-server
  # Kafka: the client library, a broker for the tests (Java; its jars come from Maven Central:
  # scripts/kafka/broker.sh) and kcat (the benchmarks' physical limit)
  librdkafka-dev openjdk-17-jre-headless maven kcat
  # libraries
  libyaml-cpp-dev libcli11-dev libspdlog-dev libfmt-dev rapidjson-dev nlohmann-json3-dev
  libcpp-httplib-dev libgtest-dev libgmock-dev libbenchmark-dev
  # the faucet executable's allocator (src/cli/CMakeLists.txt)
  libjemalloc-dev
  # tools used by scripts and tests (ps/pkill, fuser/killall, /usr/bin/time)
  procps psmisc time
  # the observability tests' real consumers: a Prometheus server (and promtool), a browser
  prometheus chromium
)

# Print the names from "$@" that are not fully installed.
missing_of() {
  local installed
  # dpkg-query exits 1 when it knows nothing of a package: that just means "missing".
  installed=$( (dpkg-query -W -f='${Package} ${db:Status-Status}\n' "$@" 2>/dev/null || true) |
    awk '$2 == "installed" { print $1 }')
  local p
  for p in "$@"; do
    grep -qxF "$p" <<<"$installed" || echo "$p"
  done
}

mapfile -t missing < <(missing_of "${packages[@]}")
((${#missing[@]})) || exit 0

if ((EUID != 0)); then
  echo "install-deps: missing packages: ${missing[*]}" >&2
  echo "install-deps: run as root (or: sudo $0)" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
echo "install-deps: installing: ${missing[*]}" >&2

# Stop package postinst scripts from starting services (exit 101 = "action forbidden").
# Docker images usually already have one; only add (and later remove) ours if absent.
policy=/usr/sbin/policy-rc.d
our_policy=0
if [[ ! -e $policy ]]; then
  printf '#!/bin/sh\nexit 101\n' >"$policy"
  chmod 755 "$policy"
  our_policy=1
fi
cleanup() { if ((our_policy)); then rm -f "$policy"; fi; }
trap cleanup EXIT

apt-get update -qq
apt-get install -y -qq --no-install-recommends -o Dpkg::Use-Pty=0 \
  -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}" >/dev/null

# On hosts where policy-rc.d is not honoured (e.g. systemd), the packages may have started
# their daemons on the default ports; stop them so they cannot be mistaken for (or collide
# with) the test servers. Targeted on purpose: Debian's /etc/init.d/mariadb stop may
# `killall mariadbd`, which would also kill other people's throwaway servers.
if command -v systemctl >/dev/null && [[ -d /run/systemd/system ]]; then
  systemctl stop postgresql mariadb redis-server >/dev/null 2>&1 || true
else
  if command -v pg_lsclusters >/dev/null; then
    pg_lsclusters --no-header 2>/dev/null | awk '$4 == "online" { print $1, $2 }' |
      while read -r ver name; do pg_ctlcluster "$ver" "$name" stop >/dev/null 2>&1 || true; done
  fi
  for pidfile in /run/mysqld/mysqld.pid /run/redis/redis-server.pid; do
    if [[ -s $pidfile ]]; then kill "$(cat "$pidfile")" 2>/dev/null || true; fi
  done
fi

# Verify: anything still missing is an error.
mapfile -t still < <(missing_of "${packages[@]}")
if ((${#still[@]})); then
  echo "install-deps: failed to install: ${still[*]}" >&2
  exit 1
fi
echo "install-deps: done" >&2
