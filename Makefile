# Thin wrapper over CMake presets and the scripts. Every target installs what it needs first,
# so a fresh Debian 12 machine needs nothing else.
PRESET ?= release
BUILD := build/$(PRESET)
FAUCET := $(BUILD)/src/cli/faucet

.PHONY: deps build test demo bench format clean

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake --preset $(PRESET) >/dev/null
	@cmake --build --preset $(PRESET)

# Starts throwaway PostgreSQL, MariaDB and Redis servers, runs every test, stops the servers.
test: build
	@bash scripts/test.sh $(BUILD)

demo: build
	@bash scripts/demo.sh $(FAUCET)

bench: build
	@bash bench/run.sh $(BUILD)

format:
	@find src tests bench -name '*.h' -o -name '*.cc' | xargs clang-format -i

clean:
	rm -rf build
