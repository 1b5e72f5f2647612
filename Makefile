# vigil - top-level wrapper around meson.
#   make demo    install deps, build, run the demo end to end
#   make test    install deps, build with ASan+UBSan, run every test
#   make bench   build optimized, run the benchmarks in bench/
BUILD ?= build
ASAN ?= build-asan
MESON ?= meson

.PHONY: all deps build asan test demo bench clean

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

clean:
	rm -rf $(BUILD) $(ASAN)
