# tfdoctor - single non-recursive GNU make.
#   make            build build/rel/tfdoctor
#   make demo       install missing packages, build, analyze a bundled example
#   make check      install missing packages, build, run every test suite that
#                   needs no system service
#   make check SAN=1   the same under AddressSanitizer + UBSan (build/san/)
#   make check-threads the unit tests and the one-core-against-all suite
#                   under ThreadSanitizer (build/tsan/)
#   make check-fleet   the PostgreSQL and Slurm suites (installs those packages;
#                   the tests start throwaway servers, never system services)
#   make bench      benchmarks (ratios, not timed tests)

SHELL := /bin/bash
CC ?= cc
PKGS := libprotobuf-c libcjson yajl igraph libcgraph libgvc zlib sqlite3

ifeq ($(SAN),1)
export LSAN_OPTIONS := suppressions=$(CURDIR)/tests/supp/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS := print_stacktrace=1:halt_on_error=1
VARIANT := san
OPT := -O1 -g -fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all -fno-omit-frame-pointer
else ifeq ($(SAN),thread)
export TSAN_OPTIONS := halt_on_error=1
VARIANT := tsan
OPT := -O1 -g -fsanitize=thread -fno-omit-frame-pointer
# gcc's -O1 under ThreadSanitizer warns of uninitialized values -O2 proves set
WERROR ?= 0
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

# libpq: headers only; history_pg.c loads libpq.so.5 with dlopen on first use
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null) $(shell pkg-config --cflags libpq 2>/dev/null)
# igraph from its static archive where the package ships one (Debian's
# libigraph-dev does): the few functions the critical path calls need none
# of the libraries the shared one loads at every start (BLAS, LAPACK, GLPK,
# GMP, libxml2 with ICU, OpenMP, libstdc++ and more): 34 libraries before
# main() became 15, `tfdoctor version` 5 ms and 8.2 MB became 2 ms and 3.0 MB
IGRAPH_A = $(wildcard $(shell pkg-config --variable=libdir igraph 2>/dev/null)/libigraph.a)
# Graphviz and SQLite are loaded with dlopen() where a diagram or the
# history first needs them (include/tfd/dl.h), as libpq is: their headers
# only
LINK_PKGS = $(filter-out libcgraph libgvc sqlite3 $(if $(IGRAPH_A),igraph),$(PKGS))
PKG_LIBS = $(IGRAPH_A) $(shell pkg-config --libs $(LINK_PKGS) 2>/dev/null)
CPPFLAGS := -Iinclude -I$(B)/gen -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -D_XOPEN_SOURCE=700
CFLAGS_ALL = -std=c11 -pthread $(OPT) $(WARN) $(CPPFLAGS) $(PKG_CFLAGS) $(CFLAGS)
LDLIBS_ALL = $(PKG_LIBS) -lm -ldl -pthread $(LDLIBS)

LIB_SRC := $(filter-out src/main.c,$(wildcard src/*/*.c))
GEN_SRC := $(B)/gen/xplane.pb-c.c $(B)/gen/rules_builtin.c
LIB_OBJ := $(patsubst src/%.c,$(B)/obj/%.o,$(LIB_SRC)) $(B)/obj/gen/xplane.pb-c.o \
	$(B)/obj/gen/rules_builtin.o
UNIT_SRC := $(wildcard tests/unit/*.c tests/unit/*/*.c)
UNIT_OBJ := $(patsubst tests/unit/%.c,$(B)/obj/unit/%.o,$(UNIT_SRC))
BIN := $(B)/tfdoctor
UNIT := $(B)/unit

.PHONY: all deps deps-fleet demo check check-fleet check-threads clean bench fuzz deps-fuzz fuzz-build fuzz-merge format hdrcheck golden-update \
	install uninstall man format-check format-tool
all: $(BIN)

deps:
	@./src/tools/install-deps.sh

deps-fleet:
	@./src/tools/install-deps.sh --fleet

# one protoc-c run makes both files (a grouped target: run once, not per file)
$(B)/gen/xplane.pb-c.c $(B)/gen/xplane.pb-c.h &: src/input/xplane.proto
	@mkdir -p $(B)/gen
	protoc-c --c_out=$(B)/gen --proto_path=src/input $<

$(B)/gen/rules_builtin.c: $(sort $(wildcard rules/*.json)) src/tools/embed-rules.sh
	@mkdir -p $(B)/gen
	./src/tools/embed-rules.sh $(sort $(wildcard rules/*.json)) > $@.tmp && mv $@.tmp $@

# generated code gets relaxed warnings
$(B)/obj/gen/%.o: $(B)/gen/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 $(OPT) $(CPPFLAGS) $(PKG_CFLAGS) -w -c $< -o $@

# objects depend on the headers they include (-MMD -MP), found by the compiler
$(B)/obj/%.o: src/%.c $(B)/gen/xplane.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

# the unit tests use the public headers; the white-box cases of a folder's
# internals live in tests/unit/FOLDER/ and see that folder's headers only
$(B)/obj/unit/%.o: tests/unit/%.c $(B)/gen/xplane.pb-c.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -Itests/unit $(if $(findstring /,$*),-Isrc/$(patsubst %/,%,$(dir $*))) \
		-c $< -o $@

-include $(LIB_OBJ:.o=.d) $(UNIT_OBJ:.o=.d) $(B)/obj/main.d

$(B)/libtfd.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN): $(B)/obj/main.o $(B)/libtfd.a
	$(CC) $(OPT) -o $@ $^ $(LDLIBS_ALL)

$(UNIT): $(UNIT_OBJ) $(B)/libtfd.a
	$(CC) $(OPT) -o $@ $^ $(LDLIBS_ALL)

# the build's packages only: the fleet tests' servers are for make check-fleet;
# the example is a real TensorFlow 2.21 job (tests/tf): 30 steps
demo: deps
	@$(MAKE) --no-print-directory all
	$(BIN) analyze examples/real-tfrecord-seq-map/vm.xplane.pb

# Every suite prints "<suite>: N passed, N failed"; tests/check.sh runs each
# as its own process, fails on a crash, a missing summary or a sanitizer
# report, and prints the sum last.
VG := $(if $(VALGRIND),valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite --suppressions=tests/supp/valgrind.supp)
SUITES = \
	'unit=$(VG) $(UNIT)' \
	'cli=TFD=$(BIN) VALGRIND=$(VALGRIND) tests/cli/run.sh' \
	'output=TFD=$(BIN) tests/output/run.sh' \
	'agree=TFD=$(BIN) tests/output/agree.sh' \
	'golden=TFD=$(BIN) tests/golden/run.sh' \
	'real=TFD=$(BIN) tests/real/run.sh' \
	'share=TFD=$(BIN) tests/share/run.sh' \
	'device=TFD=$(BIN) tests/device/run.sh' \
	'synth=TFD=$(BIN) tests/synth/run.sh' \
	'estimate=TFD=$(BIN) tests/estimate/run.sh' \
	'fuzz=B=$(B) tests/fuzz/run.sh' \
	'browser=TFD=$(BIN) tests/browser/run.sh' \
	'harness=tests/harness/run.sh' \
	'layout=B=$(B) tests/layout/run.sh' \
	'watch=TFD=$(BIN) tests/watch/run.sh' \
	'diff=TFD=$(BIN) tests/diff/run.sh' \
	'merge=TFD=$(BIN) tests/fleet/merge.sh' \
	'memory=TFD=$(BIN) SAN=$(SAN) tests/memory/run.sh' \
	'cores=TFD=$(BIN) tests/cores/run.sh' \
	'forms=TFD=$(BIN) tests/forms/run.sh' \
	'install=SAN=$(SAN) tests/install/run.sh'

check: deps
	@$(MAKE) --no-print-directory $(BIN) $(UNIT) $(addprefix $(B)/fuzz-replay-,$(FUZZ_TARGETS)) \
		$(B)/writedelay.so $(B)/nolib.so
	@tests/check.sh $(B)/check $(SUITES)

# what runs on several threads (the blocks of a host plane, the pools of
# the analysis, the device sweep beside it) under ThreadSanitizer: the unit
# tests, which read captures in blocks on three threads, and the suite
# comparing one core with all of them
check-threads: deps
	@$(MAKE) --no-print-directory SAN=thread build/tsan/tfdoctor build/tsan/unit
	@TSAN_OPTIONS=halt_on_error=1 tests/check.sh build/tsan/check 'unit=build/tsan/unit' \
		'cores=TFD=build/tsan/tfdoctor tests/cores/run.sh'

# the suites that start servers: a throwaway PostgreSQL and a single-node
# Slurm with munge, in temporary directories, stopped when they end
FLEET_SUITES = \
	'pg=TFD=$(BIN) tests/fleet/pg.sh' \
	'slurm=TFD=$(BIN) tests/fleet/slurm.sh'

check-fleet: deps-fleet
	@$(MAKE) --no-print-directory $(BIN) $(B)/writedelay.so $(B)/nolib.so
	@tests/check.sh $(B)/check-fleet $(FLEET_SUITES)

# ---- install: make install [PREFIX=/usr/local] [DESTDIR=staging] -----------------
# the man pages come from the binary's own help texts (src/tools/make-man.sh)
PREFIX ?= /usr/local
MANDIR := $(B)/man
VERSION = $(shell sed -n 's/.*TFD_VERSION "\(.*\)".*/\1/p' include/tfd/version.h)
MANDEST = $(DESTDIR)$(PREFIX)/share/man/man1
COMPDEST = $(DESTDIR)$(PREFIX)/share/bash-completion/completions

$(MANDIR)/tfdoctor.1: $(BIN) src/tools/make-man.sh include/tfd/version.h
	./src/tools/make-man.sh $(BIN) $(MANDIR) "$(VERSION)"

man: $(MANDIR)/tfdoctor.1

install: $(BIN) $(MANDIR)/tfdoctor.1
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(MANDEST)" "$(COMPDEST)"
	install -m 755 $(BIN) "$(DESTDIR)$(PREFIX)/bin/tfdoctor"
	install -m 644 $(MANDIR)/*.1 "$(MANDEST)/"
	install -m 644 src/tools/tfdoctor.bash "$(COMPDEST)/tfdoctor"

uninstall:
	rm -f "$(DESTDIR)$(PREFIX)/bin/tfdoctor" "$(MANDEST)"/tfdoctor.1 "$(MANDEST)"/tfdoctor-*.1 \
		"$(COMPDEST)/tfdoctor"

# ---- fuzzing ------------------------------------------------------------------
FUZZ_TARGETS := xspace chrome rules partial spec json
FUZZ_SECONDS ?= 600
FZ := build/fuzz
FUZZ_CFLAGS := -std=c11 -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer $(CPPFLAGS) -I$(FZ)/gen
FUZZ_OBJ := $(patsubst src/%.c,$(FZ)/obj/%.o,$(LIB_SRC)) $(FZ)/obj/gen/xplane.pb-c.o \
	$(FZ)/obj/gen/rules_builtin.o

$(B)/fuzz-replay-%: tests/fuzz/fuzz_%.c tests/fuzz/replay.c tests/fuzz/fuzz_capture.h $(B)/libtfd.a
	$(CC) $(CFLAGS_ALL) -Wno-missing-prototypes -o $@ tests/fuzz/fuzz_$*.c tests/fuzz/replay.c \
		$(B)/libtfd.a $(LDLIBS_ALL)

$(FZ)/gen/%: $(B)/gen/%
	@mkdir -p $(dir $@)
	cp $< $@

$(FZ)/obj/gen/%.o: $(FZ)/gen/%.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) $(PKG_CFLAGS) -w -c $< -o $@

$(FZ)/obj/%.o: src/%.c $(FZ)/gen/xplane.pb-c.h
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) $(PKG_CFLAGS) -MMD -MP -c $< -o $@

-include $(FUZZ_OBJ:.o=.d)

$(FZ)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJ)
	clang $(FUZZ_CFLAGS) $(PKG_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS_ALL)

fuzz-build: $(addprefix $(FZ)/fuzz_,$(FUZZ_TARGETS))

# clang with libFuzzer, installed when missing (before anything is compiled)
deps-fuzz:
	@./src/tools/install-deps.sh --fuzz

# each target runs FUZZ_SECONDS on a scratch copy of its committed corpus
fuzz: deps-fuzz
	@$(MAKE) --no-print-directory fuzz-build
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FZ)/corpus-$$t && cp -n tests/fuzz/corpus/$$t/* $(FZ)/corpus-$$t/ 2>/dev/null; \
	  echo "fuzz: $$t for $(FUZZ_SECONDS) s"; \
	  $(FZ)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -max_len=262144 -rss_limit_mb=2048 \
	    -timeout=10 -print_final_stats=1 -artifact_prefix=$(FZ)/crash-$$t- \
	    $(FZ)/corpus-$$t > $(FZ)/log-$$t 2>&1; rc=$$?; tail -12 $(FZ)/log-$$t; \
	  [ $$rc -eq 0 ] || { echo "fuzz: $$t failed (exit $$rc; see $(FZ)/log-$$t)"; exit 1; }; \
	done

# fold what fuzzing found back into the committed corpus, minimized
fuzz-merge: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
	  $(FZ)/fuzz_$$t -merge=1 -max_len=262144 -artifact_prefix=$(FZ)/crash-$$t- tests/fuzz/corpus/$$t $(FZ)/corpus-$$t 2>&1 | tail -1; \
	done

golden-update: $(BIN)
	UPDATE=1 TFD=$(BIN) tests/golden/run.sh

$(B)/runstat: tests/bench/runstat.c
	$(CC) -O2 -o $@ $<

# the tests' write-delay hook (LD_PRELOAD; tests/lib.sh with_write_delay)
$(B)/writedelay.so: tests/lib/writedelay.c
	@mkdir -p $(B)
	$(CC) -O2 -shared -fPIC -o $@ $< -ldl

# the tests' missing-library hook (LD_PRELOAD; tests/lib.sh without_lib)
$(B)/nolib.so: tests/lib/nolib.c
	@mkdir -p $(B)
	$(CC) -O2 -shared -fPIC -o $@ $< -ldl

$(B)/pbunpack: tests/bench/pbunpack.c $(B)/obj/gen/xplane.pb-c.o
	$(CC) -O2 $(CPPFLAGS) $(PKG_CFLAGS) -o $@ $^ $(LDLIBS_ALL)

$(B)/timewalk: tests/bench/timewalk.c src/input/wire.h
	@mkdir -p $(B)
	$(CC) -O2 -Isrc/input -o $@ $<

bench: $(BIN) $(B)/runstat $(B)/pbunpack $(B)/timewalk
	./tests/bench/run.sh $(BIN)

hdrcheck:
	@for h in include/tfd/*.h; do echo "#include \"$${h#include/}\"" | \
	  $(CC) $(CFLAGS_ALL) -x c -fsyntax-only - || exit 1; done; echo "hdrcheck: ok"

# every C file in git (tests too), with the pinned clang-format (14, what
# Debian 12 ships; another major formats differently)
FORMAT_FILES = $(shell git ls-files '*.c' '*.h' 2>/dev/null)
CLANG_FORMAT ?= clang-format

format-tool:
	@./src/tools/install-deps.sh --format
	@$(CLANG_FORMAT) --version | grep -q 'version 14\.' || \
	  { echo "format: needs clang-format 14, found: $$($(CLANG_FORMAT) --version)" >&2; exit 1; }

format: format-tool
	@$(CLANG_FORMAT) -i $(FORMAT_FILES)

format-check: format-tool
	@$(CLANG_FORMAT) --dry-run -Werror $(FORMAT_FILES) && echo "format-check: $(words $(FORMAT_FILES)) files ok"

clean:
	rm -rf build

# keep intermediate objects (the fuzz build's pattern chain would delete them)
.SECONDARY:

# ---- real TensorFlow (tests/tf): never part of make check -----------------------
# a virtual environment under build/ with TensorFlow (CPU) and xprof, the
# catalog of real tf.data pipelines, and docs/accuracy.md made from it
TF_VENV := build/tfvenv
TF_PY := $(TF_VENV)/bin/python
TF_PKGS := tensorflow-cpu==2.21.0 xprof==2.24.2
REAL_OUT ?= build/real/catalog
REAL_SMOKE := tfrecord_seq_map missing_prefetch light_pipeline

$(TF_PY):
	python3 -m venv $(TF_VENV)
	$(TF_VENV)/bin/pip install -q $(TF_PKGS)

tf-venv: $(TF_PY)

# every case (about 8 minutes on 2 cores, on a quiet machine: the truth is
# timed), its results into tests/tf/results (committed), then docs/accuracy.md
real-captures: $(BIN) $(TF_PY)
	rm -rf $(REAL_OUT)
	TFD=$(BIN) tests/tf/run.sh $(REAL_OUT)
	rm -rf tests/tf/results
	for d in $(REAL_OUT)/*/; do c=$$(basename $$d); mkdir -p tests/tf/results/$$c; \
	  cp $$d/result.json tests/tf/results/$$c/; done
	python3 tests/tf/report.py tests/tf/results -o docs/accuracy.md

# the committed results judged by this binary again (no TensorFlow: the
# captures under REAL_OUT, the truth kept), then docs/accuracy.md
real-rejudge: $(BIN)
	python3 tests/tf/report.py $(REAL_OUT) --rejudge $(BIN) --write > /dev/null
	for d in $(REAL_OUT)/*/; do c=$$(basename $$d); mkdir -p tests/tf/results/$$c; \
	  cp $$d/result.json tests/tf/results/$$c/; done
	python3 tests/tf/report.py tests/tf/results -o docs/accuracy.md

# the random pipelines of tests/tf/mixes.py, judged like the catalog's cases
REAL_MIXES ?= $(foreach n,$(shell seq 1 96),mix_$(n))
real-mixes: $(BIN) $(TF_PY)
	TFD=$(BIN) tests/tf/run.sh build/real/mix $(REAL_MIXES)
	$(TF_PY) tests/tf/mixes.py summary build/real/mix $(BIN)

# a few cases with short windows: the generator and the judges still run
real-smoke: $(BIN) $(TF_PY)
	rm -rf build/real/smoke
	QUICK=1 TFD=$(BIN) tests/tf/run.sh build/real/smoke $(REAL_SMOKE)
	python3 tests/tf/report.py build/real/smoke > /dev/null
	@tests/tf/smoke-check.sh build/real/smoke $(REAL_SMOKE)

# large real captures (three kinds, 34-94 MB, made once into
# build/real/large): one core and every core give the same answer (their
# host planes are read in blocks, their lines in parts)
real-large: $(BIN) $(B)/runstat $(TF_PY)
	tests/tf/large.sh $(BIN) $(TF_PY) build/real/large

# every catalog case and random pipeline captured once into build/real/forms
# (about 25 minutes on 2 cores the first time), and on each capture the
# checks of a reader in time order beside the same report (tests/tf/forms.sh)
real-forms: $(BIN) $(TF_PY)
	tests/tf/forms.sh $(BIN) $(TF_PY) build/real/forms

# instructions per case (callgrind) against tests/bench/instructions.txt
bench-instr: $(BIN)
	./tests/bench/instr.sh $(BIN)

# tfdoctor beside xprof's converter on the same XSpace files (time, memory)
bench-peers: $(BIN) $(B)/runstat $(TF_PY)
	./tests/bench/peers.sh $(BIN) $(TF_PY)

.PHONY: tf-venv real-captures real-rejudge real-mixes real-smoke real-large real-forms bench-peers bench-instr
