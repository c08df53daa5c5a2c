#!/usr/bin/env bash
# Install every Debian package that faucet's build, tests, fuzzers and benchmarks need.
# Idempotent and fast when nothing is missing (one dpkg-query, no apt-get at all).
# Never leaves the distro's own postgres/mariadb/redis daemons running: tests start their
# own throwaway servers on free ports (scripts/services.sh).
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build ccache pkg-config clang clang-format
  # databases: client libraries, servers (for integration tests) and CLI clients
  libpq-dev postgresql-15 postgresql-contrib
  libmariadb-dev mariadb-server mariadb-client
  libsqlite3-dev sqlite3
  libhiredis-dev redis-server
  librdkafka-dev
  # libraries
  libyaml-cpp-dev libcli11-dev libspdlog-dev libfmt-dev rapidjson-dev nlohmann-json3-dev
  libcpp-httplib-dev libgtest-dev libgmock-dev libbenchmark-dev
  # tools used by scripts and tests (ps/pkill, fuser/killall, /usr/bin/time)
  procps psmisc time
)
# Nice to have; installed only if the mirror has it.
optional=(hyperfine)

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

mapfile -t missing < <(missing_of "${packages[@]}" "${optional[@]}")
if ((${#missing[@]} == 0)); then
  exit 0
fi

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

apt_opts=(-y -qq -o Dpkg::Use-Pty=0 -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)
apt-get update -qq

# Optional packages: keep only those the mirror knows about.
install=()
for p in "${missing[@]}"; do
  if [[ " ${optional[*]} " == *" $p "* ]]; then
    if [[ -n $(apt-cache policy "$p" 2>/dev/null | awk '/Candidate:/ && $2 != "(none)"') ]]; then
      install+=("$p")
    else
      echo "install-deps: optional package $p not available, skipping" >&2
    fi
  else
    install+=("$p")
  fi
done
if ((${#install[@]})); then
  apt-get install "${apt_opts[@]}" --no-install-recommends "${install[@]}" >/dev/null
fi

# On hosts where policy-rc.d is not honoured (e.g. systemd), the packages may still have
# started their daemons on the default ports; stop them so they cannot be mistaken for
# (or collide with) the test servers.
stop_service() {
  local svc=$1
  if command -v systemctl >/dev/null && [[ -d /run/systemd/system ]]; then
    systemctl stop "$svc" >/dev/null 2>&1 || true
  elif [[ -x /etc/init.d/$svc ]]; then
    "/etc/init.d/$svc" stop >/dev/null 2>&1 || true
  fi
}
for svc in postgresql mariadb redis-server; do stop_service "$svc"; done

# Verify: anything still missing is an error (optional ones excepted).
mapfile -t still < <(missing_of "${packages[@]}")
if ((${#still[@]})); then
  echo "install-deps: failed to install: ${still[*]}" >&2
  exit 1
fi
echo "install-deps: done" >&2
