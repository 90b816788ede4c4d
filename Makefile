# tfdoctor - single non-recursive GNU make.
#   make            build build/rel/tfdoctor
#   make demo       install missing packages, build, analyze a bundled example
#   make check      install missing packages, build, run every test suite
#   make check SAN=1   the same under AddressSanitizer + UBSan (build/san/)
#   make bench      benchmarks (ratios, not timed tests)

SHELL := /bin/bash
CC ?= cc
PKGS := libprotobuf-c libcjson igraph libcgraph libgvc zlib sqlite3

ifeq ($(SAN),1)
VARIANT := san
OPT := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else
VARIANT := rel
OPT := -O2 -g
endif

B := build/$(VARIANT)
WERROR ?= 1
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -Wvla \
	-Wno-unused-parameter
ifeq ($(WERROR),1)
WARN += -Werror
endif

PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CPPFLAGS := -Iinclude -I$(B)/gen -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE
CFLAGS_ALL = -std=c11 $(OPT) $(WARN) $(CPPFLAGS) $(PKG_CFLAGS) $(CFLAGS)
LDLIBS_ALL = $(PKG_LIBS) -lm $(LDLIBS)

LIB_SRC := $(filter-out src/main.c,$(wildcard src/*/*.c))
GEN_SRC := $(B)/gen/xplane.pb-c.c $(B)/gen/rules_builtin.c
LIB_OBJ := $(patsubst src/%.c,$(B)/obj/%.o,$(LIB_SRC)) $(B)/obj/gen/xplane.pb-c.o \
	$(B)/obj/gen/rules_builtin.o
UNIT_SRC := $(wildcard tests/unit/*.c)
UNIT_OBJ := $(patsubst tests/unit/%.c,$(B)/obj/unit/%.o,$(UNIT_SRC))
BIN := $(B)/tfdoctor
UNIT := $(B)/unit
HDRS := $(wildcard include/tfd/*.h src/*/*.h)

.PHONY: all deps demo check clean bench fuzz format hdrcheck golden-update
all: $(BIN)

deps:
	@./scripts/install-deps.sh

$(B)/gen/xplane.pb-c.c $(B)/gen/xplane.pb-c.h: src/input/xplane.proto
	@mkdir -p $(B)/gen
	protoc-c --c_out=$(B)/gen --proto_path=src/input $<

$(B)/gen/rules_builtin.c: $(sort $(wildcard rules/*.json)) scripts/embed-rules.sh
	@mkdir -p $(B)/gen
	./scripts/embed-rules.sh $(sort $(wildcard rules/*.json)) > $@.tmp && mv $@.tmp $@

# generated code gets relaxed warnings
$(B)/obj/gen/%.o: $(B)/gen/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(OPT) $(CPPFLAGS) $(PKG_CFLAGS) -w -c $< -o $@

$(B)/obj/%.o: src/%.c $(HDRS) $(B)/gen/xplane.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Isrc/input -c $< -o $@

$(B)/obj/unit/%.o: tests/unit/%.c $(HDRS) tests/unit/t.h $(B)/gen/xplane.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Isrc/input -Isrc -c $< -o $@

$(B)/libtfd.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(B)/obj/main.o $(B)/libtfd.a
	$(CC) $(OPT) -o $@ $^ $(LDLIBS_ALL)

$(UNIT): $(UNIT_OBJ) $(B)/libtfd.a
	$(CC) $(OPT) -o $@ $^ $(LDLIBS_ALL)

demo: deps
	@$(MAKE) --no-print-directory all
	$(BIN) analyze examples/smdebug-zip/8c859046be41.ant.amazon.com.trace.json.gz

# Every suite prints "<suite>: N passed, N failed"; the last line is the sum.
check: deps
	@$(MAKE) --no-print-directory $(BIN) $(UNIT)
	@set -o pipefail; rm -f $(B)/check.log; \
	  { $(UNIT) || true; } 2>&1 | tee -a $(B)/check.log; \
	  { TFD=$(BIN) VALGRIND=$(VALGRIND) tests/cli/run.sh || true; } 2>&1 | tee -a $(B)/check.log; \
	  { TFD=$(BIN) tests/golden/run.sh || true; } 2>&1 | tee -a $(B)/check.log; \
	  { TFD=$(BIN) tests/synth/run.sh || true; } 2>&1 | tee -a $(B)/check.log; \
	  { TFD=$(BIN) tests/browser/run.sh || true; } 2>&1 | tee -a $(B)/check.log; \
	  tests/sum.sh $(B)/check.log

golden-update: $(BIN)
	UPDATE=1 TFD=$(BIN) tests/golden/run.sh

$(B)/runstat: tests/bench/runstat.c
	$(CC) -O2 -o $@ $<

$(B)/pbunpack: tests/bench/pbunpack.c $(B)/obj/gen/xplane.pb-c.o
	$(CC) -O2 $(CPPFLAGS) $(PKG_CFLAGS) -o $@ $^ $(LDLIBS_ALL)

bench: $(BIN) $(B)/runstat $(B)/pbunpack
	./tests/bench/run.sh $(BIN)

hdrcheck:
	@for h in include/tfd/*.h; do echo "#include \"$${h#include/}\"" | \
	  $(CC) $(CFLAGS_ALL) -x c -fsyntax-only - || exit 1; done; echo "hdrcheck: ok"

format:
	clang-format -i $(LIB_SRC) src/main.c $(wildcard include/tfd/*.h) $(UNIT_SRC)

clean:
	rm -rf build
