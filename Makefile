# vigil - top-level wrapper around meson.
#   make demo    install deps, build, run the demo end to end
#   make test    install deps, build with ASan+UBSan, run every test
#   make bench   build optimized, run the benchmarks in bench/
#   make install PREFIX=/usr DESTDIR=/tmp/root
#                build optimized ($(BUILD)) for PREFIX (default /usr/local) and
#                meson install into DESTDIR (default /): programs, libvigil,
#                headers, vigil.pc, units, completion, sample /etc/vigil
BUILD ?= build
ASAN ?= build-asan
FUZZ ?= build-fuzz
FUZZ_SECONDS ?= 60
MESON ?= meson
PREFIX ?= /usr/local
# the configuration directory: /etc for a /usr install, else under PREFIX
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
DESTDIR ?=

.PHONY: all deps build asan test demo bench clean fuzz leakcheck install

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

# no deps here: installing (as root, into DESTDIR) must not install packages
install:
	@[ -f $(BUILD)/build.ninja ] || $(MESON) setup $(BUILD) --buildtype=release -Dtests=false
	@$(MESON) configure $(BUILD) --prefix=$(PREFIX) --sysconfdir=$(SYSCONFDIR)
	@ninja -C $(BUILD)
	@$(MESON) install -C $(BUILD) --no-rebuild $(if $(DESTDIR),--destdir $(DESTDIR))

demo: build
	@bash scripts/demo.sh $(BUILD)

bench: build
	@bash scripts/deps.sh --bench
	@bash bench/hash $(BUILD)
	@bash bench/tree $(BUILD)
	@bash bench/log $(BUILD)
	@bash bench/verifier $(BUILD)
	@bash bench/enforce $(BUILD)
	@bash bench/cold-parts $(BUILD)
	@bash bench/trust $(BUILD)

# libFuzzer runs of every tests/fuzz harness, FUZZ_SECONDS each (clang)
fuzz: deps
	@bash scripts/fuzz.sh $(FUZZ) $(FUZZ_SECONDS)

# leak pass over the CLI tests: LeakSanitizer on the ASan build, or
# LEAKCHECK=valgrind for valgrind --leak-check=full on the release build
leakcheck: asan $(if $(filter valgrind,$(LEAKCHECK)),build)
	@bash scripts/leakcheck.sh $(ASAN) $(if $(filter valgrind,$(LEAKCHECK)),--valgrind $(BUILD))

clean:
	rm -rf $(BUILD) $(ASAN) $(FUZZ)
