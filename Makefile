# Thin wrapper over CMake presets and the scripts. Every target installs what it needs first,
# so a fresh Debian 12 machine needs nothing else.
PRESET ?= release
# ccache hits across checkouts in different folders (CI clones afresh): paths below this one
# are hashed relative, and the working directory is not hashed.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1
BUILD := build/$(PRESET)
FAUCET := $(BUILD)/src/cli/faucet

.PHONY: deps build test check torture demo bench format clean

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake --preset $(PRESET) >/dev/null
	@cmake --build --preset $(PRESET)

# Starts throwaway PostgreSQL, MariaDB and Redis servers, runs every test (but the bench
# label: `make bench` measures), stops the servers.
test: build
	@bash scripts/test.sh $(BUILD) -LE bench

# The checks beyond the tests (README "Checks"): ASan+UBSan and TSan builds running the test
# suites, the fuzzers from their corpora, clang-tidy. CHECKS="asan fuzz" runs a subset.
CHECKS ?= asan tsan fuzz tidy
check: deps
	@bash scripts/check.sh $(CHECKS)

# The long torture run: KILLS random SIGKILLs / crash points per destination under a live
# workload, then a convergence check (tests/torture/README.md). `make test` runs a short one.
KILLS ?= 100
torture: build
	@bash tests/torture/run.sh $(BUILD) $(KILLS)

demo: build
	@bash scripts/demo.sh $(FAUCET)

bench: build
	@bash bench/run.sh $(BUILD)

format:
	@find src tests bench -name '*.h' -o -name '*.cc' | xargs clang-format -i

clean:
	rm -rf build
