# vigil - top-level wrapper around meson.
#   make demo    install deps, build, run the demo end to end
#   make test    install deps, build with ASan+UBSan, run every test
#   make bench   build optimized, run the benchmarks in bench/
BUILD ?= build
ASAN ?= build-asan
FUZZ ?= build-fuzz
FUZZ_SECONDS ?= 60
MESON ?= meson

.PHONY: all deps build asan test demo bench clean fuzz leakcheck

all: build

deps:
	@bash scripts/deps.sh

build: deps
	@[ -f $(BUILD)/build.ninja ] || $(MESON) setup $(BUILD) --buildtype=release -Dtests=false
	@ninja -C $(BUILD)

asan: deps
	@[ -f $(ASAN)/build.ninja ] || $(MESON) setup $(ASAN) --buildtype=debug \
		-Db_sanitize=address,undefined -Db_lundef=false
	@ninja -C $(ASAN)

test: asan
	@bash scripts/run-tests.sh $(ASAN)

demo: build
	@bash scripts/demo.sh $(BUILD)

bench: build
	@bash scripts/deps.sh --bench
	@bash bench/hash $(BUILD)
	@bash bench/tree $(BUILD)
	@bash bench/log $(BUILD)
	@bash bench/verifier $(BUILD)
	@bash bench/enforce $(BUILD)

# libFuzzer runs of every tests/fuzz harness, FUZZ_SECONDS each (clang)
fuzz: deps
	@bash scripts/fuzz.sh $(FUZZ) $(FUZZ_SECONDS)

# leak pass over the CLI tests: LeakSanitizer on the ASan build, or
# LEAKCHECK=valgrind for valgrind --leak-check=full on the release build
leakcheck: asan $(if $(filter valgrind,$(LEAKCHECK)),build)
	@bash scripts/leakcheck.sh $(ASAN) $(if $(filter valgrind,$(LEAKCHECK)),--valgrind $(BUILD))

clean:
	rm -rf $(BUILD) $(ASAN) $(FUZZ)
