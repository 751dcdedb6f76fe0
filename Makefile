# gpushare — plain Makefile. `make` builds build/gpushare.
# make test    include rules + unit + golden + CLI tests + the chart's lint and
#              template (what CI runs besides e2e)
# make asan    the same tests under AddressSanitizer + UBSan
# make valgrind  unit + CLI tests under valgrind (leaks are errors)
# make e2e     end-to-end tests against the local control plane
# make soak    a seeded random run on it, invariants after every step (SOAK_STEPS, SOAK_SEED)
# make e2e-dra-alpha  the DRA tests on a cluster of their own with the DRA alpha gates
# make bench   benchmarks, printed as ratios against their baselines, and every
#              engine entry point at 1x and 4x its input (bench/scale.sh)
# make bench-scale  plan -o json and explain pod on 10,000 nodes x 25,000 pods,
#              plan -o json on 1,000 and 5,000 nodes with DRA ResourceSlices
#              (BENCH_BASE=REV: against the gpushare of that revision, same output)
# make bench-controller  the controller at 5,000 nodes on the local control plane
# make bench-replay  gpushare replay of the whole openb trace: CPU time and peak RSS
# make outage  a 60 s kube-apiserver outage under 500 kwok nodes on a cluster of its
#              own: no node NotReady past the grace, no pod evicted (OUTAGE_HEAL=none: the stall)
# make fuzz    short libFuzzer runs of every parser
# make helm    build the pinned helm into the cache (scripts/cluster/build.sh helm)
# make image   the image localhost/gpushare:VERSION with buildah, no registry
# make image-test  build the image and run gpushare in it
# make ci      everything .ci/run needs, deps included

CC ?= cc
BUILD ?= build
PKGS := yaml-0.1 jansson libcurl libmicrohttpd
# Read when make starts: targets that install deps first (demo, ci) build in
# a sub-make, which reads them again.
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
# libcurl is dlopen()ed by kube/curlapi.c on first use: headers only.
# libmicrohttpd (the webhook's HTTPS server) is linked as usual.
PKG_LIBS := $(shell pkg-config --libs yaml-0.1 jansson libmicrohttpd 2>/dev/null) -ldl -pthread

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wvla
OPT ?= -O2 -g
CFLAGS_ALL = -std=c11 -D_POSIX_C_SOURCE=200809L $(OPT) $(WARN) -iquote src -I$(BUILD)/gen $(PKG_CFLAGS) $(CFLAGS) $(EXTRA_CFLAGS)
LDLIBS_ALL = $(PKG_LIBS) -lm $(LDLIBS) $(EXTRA_LDFLAGS)

SRC := $(sort $(wildcard src/*.c src/*/*.c))
LIB_SRC := $(filter-out src/main.c,$(SRC))
GEN_SRC :=
# Module fragments (generated sources, extra rules) live in mk/*.mk; their
# rules must not become the default goal.
.DEFAULT_GOAL := all
include $(sort $(wildcard mk/*.mk))

LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(GEN_SRC:%.c=$(BUILD)/obj/%.o)
MAIN_OBJ := $(BUILD)/obj/src/main.o
UNIT_SRC := $(sort $(wildcard tests/unit/test_*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)

.PHONY: all test layers unit golden cli chart report-check helm image image-test asan valgrind e2e e2e-versions e2e-dra-alpha bench bench-scale bench-controller bench-replay outage fuzz fuzz-build ci deps clean \
	cluster-up cluster-down cluster-stress demo format format-check

all: $(BUILD)/gpushare

$(BUILD)/gpushare: $(MAIN_OBJ) $(BUILD)/libgpushare.a
	$(CC) $(CFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/libgpushare.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -MMD -MP -c -o $@ $<

# The tests' shared fixtures (tests/unit/*.h) are headers of static functions.
$(BUILD)/tests/%: tests/unit/%.c $(wildcard tests/unit/*.h) $(BUILD)/libgpushare.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests/unit -o $@ $< $(BUILD)/libgpushare.a $(LDLIBS_ALL) -lcmocka

-include $(LIB_OBJ:.o=.d) $(MAIN_OBJ:.o=.d)

unit: $(UNIT_BIN)
	@tests/run-unit.sh $(UNIT_BIN)

golden: $(BUILD)/gpushare
	@tests/golden/run.sh $(BUILD)/gpushare

cli: $(BUILD)/gpushare
	@tests/cli/run.sh $(BUILD)/gpushare

# The house's include rules (docs/design/layout.md).
layers:
	@tests/layers/selftest.sh
	@python3 tests/layers/check.py
	@tests/layers/refs.sh

# deploy/chart/gpushare: helm lint + template, skipped when helm is not built.
chart:
	@tests/chart/run.sh

test: layers unit golden cli chart

# The report page in headless Chromium at 1400 and 800 px (tests/report/layout.sh),
# then replay's charts, page and picture (tests/report/chart.sh): screenshots into
# build/report-layout and the layout checks; a minute or two each.
report-check: $(BUILD)/gpushare
	@status=0; tests/report/layout.sh $(BUILD)/gpushare || status=1; \
	tests/report/chart.sh $(BUILD)/gpushare || status=1; exit $$status

asan:
	$(MAKE) BUILD=build/asan OPT="-O1 -g -fno-omit-frame-pointer" \
		EXTRA_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all" \
		EXTRA_LDFLAGS="-fsanitize=address,undefined" test

valgrind: all $(UNIT_BIN)
	@GS_VALGRIND=1 tests/run-unit.sh $(UNIT_BIN)
	@GS_VALGRIND=1 tests/cli/run.sh $(BUILD)/gpushare

e2e: all
	@tests/e2e/run.sh $(BUILD)/gpushare

# The version-sensitive tests on each pinned Kubernetes version, one table
# (docs/guide/cluster.md); each version's first run builds it (cold).
e2e-versions: all
	@tests/e2e/run-versions.sh $(BUILD)/gpushare $(VERSIONS)

# The DRA tests on a cluster of their own with the DRA alpha gates (docs/guide/dra.md).
e2e-dra-alpha: all
	@tests/e2e/run-dra-alpha.sh $(BUILD)/gpushare

bench: all
	@status=0; bench/run.sh $(BUILD)/gpushare || status=1; echo; \
	bench/scale.sh $(BUILD)/gpushare || status=1; exit $$status

# Not part of bench: runs of seconds each on 10,000 nodes, then on 1,000 and
# 5,000 nodes with DRA ResourceSlices (limits 200 MB, 10 s);
# BENCH_BASE=REV runs the gpushare of REV too, for the ratios.
bench-scale: all
	@bench/scale_big.sh $(BUILD)/gpushare

# Not part of bench or ci: 5,000 nodes (BENCH_NODES) on the local control plane.
bench-controller: all
	@bench/controller.sh $(BUILD)/gpushare

# Not part of bench or ci: the trace is downloaded (TRACE_DIR to use a copy).
bench-replay: all
	@bench/replay.sh $(BUILD)/gpushare

# Not part of test, e2e or ci: a cluster of its own, 500 nodes, about 6 minutes
# (OUTAGE_HEAL=both|guard|controller|none, OUTAGE_FREEZE=1; docs/guide/cluster.md).
outage: all
	@tests/outage/run.sh $(BUILD)/gpushare

fuzz:
	@fuzz/run.sh $${FUZZ_SECONDS:-20}

deps:
	@scripts/deps.sh

helm:
	@scripts/cluster/build.sh helm

image: all
	@scripts/image/build.sh $(BUILD)/gpushare

image-test: all
	@tests/image/run.sh $(BUILD)/gpushare

# CI's deps add buildah (the image test) to what demo needs; helm is built
# from the Go module proxy into the cache, so test's chart check runs.
ci:
	@scripts/deps.sh --ci
	$(MAKE) helm
	$(MAKE) format-check
	$(MAKE) all
	$(MAKE) test
	$(MAKE) asan
	$(MAKE) valgrind
	FUZZ_SECONDS=10 $(MAKE) fuzz
	$(MAKE) image-test
	$(MAKE) e2e

cluster-up: all
	@scripts/cluster/up.sh

cluster-down:
	@scripts/cluster/down.sh

# Starts and stops a cluster of its own (other ports) 10 times under CPU load.
cluster-stress:
	@scripts/cluster/stress.sh $${N:-10}

# deps first, then a fresh make: this one read pkg-config's answers before
# deps could install the packages they name.
demo: deps
	@$(MAKE) --no-print-directory all
	@scripts/demo.sh

format-check:
	clang-format --dry-run --Werror $(SRC) $(wildcard src/*.h src/*/*.h tests/unit/*.c fuzz/*.c tests/soak/*.c tests/soak/*.h)

format:
	clang-format -i $(SRC) $(wildcard src/*.h src/*/*.h tests/unit/*.c fuzz/*.c tests/soak/*.c tests/soak/*.h)

clean:
	rm -rf build
