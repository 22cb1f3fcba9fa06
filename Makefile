# Top-level entry points. `make run` and `make test` work on a fresh Debian 12
# machine: they install missing Debian packages and the pinned npm test
# readers, configure, build and run. Everything else is CMake.
BUILD         ?= build
BUILD_ASAN    ?= build-asan
BUILD_TSAN    ?= build-tsan
BUILD_FUZZ    ?= build-fuzz
BUILD_RELEASE ?= build-release
JOBS          ?= $(shell nproc)
# Tests at once in the main and ASan builds, whose scripts spend much of
# their time waiting on daemons, sockets and radosgw: twice the cores kept
# both busy (the kill -9 and timeout checks are made for a loaded machine).
TEST_JOBS     ?= $(shell expr $$(nproc) \* 2)
# Warnings are errors in our builds (CI runs `make test` with the compilers
# we test: Debian 12's GCC 12 and clang 14), not in a user's: `make run`
# turns it off, and `make test PQ_WERROR=OFF` does on another compiler.
PQ_WERROR     ?= ON
CMAKE_OPTS     = -DPQ_WERROR=$(PQ_WERROR) $(LINK_OPTS)
# Ninja for a new build directory (one configured before keeps its
# generator): CI configures five builds of ~100 executables, and Make's
# per-target CMake steps cost a quarter of each build's CPU. gold, where
# binutils has it, links them in a third of ld.bfd's CPU (the ASan build's
# links: 14 CPU-s against 39); the code linked is the same.
cmake_generator = $(if $(wildcard $(1)/CMakeCache.txt),,-G Ninja)
LINK_OPTS := $(shell command -v ld.gold >/dev/null 2>&1 && echo -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=gold)

DEB_PACKAGES := build-essential cmake pkg-config clang libclang-rt-14-dev \
  libuv1-dev libzstd-dev libsnappy-dev liblz4-dev zlib1g-dev libbrotli-dev \
  libxxhash-dev libssl-dev libyaml-dev libcmocka-dev valgrind time \
  syslog-ng-core syslog-ng-mod-http syslog-ng-scl openssl libcurl4-openssl-dev libhttp-parser-dev ninja-build
# For the Debian package (make deb, and its test in make test): the man
# page's scdoc and lintian; installed by deps-deb, not by `make run`.
DEB_PACKAGING := scdoc lintian
# Tools that may come from elsewhere (a newer Node.js, say): installed from
# Debian only when the command is missing. Format: command:package. zstd:
# bench_compare.sh's floor (the raw input compressed, nothing parsed).
DEB_TOOLS := node:nodejs npm:npm systemd-analyze:systemd python3:python3 zstd:zstd curl:curl
# The S3 tests' real server (tests/scripts/s3/rgw.sh): Ceph's radosgw on a
# throw-away single-node cluster (the tests read the bucket with curl's
# --aws-sigv4); installed by deps-s3 (the test targets), without
# recommends (~256 MiB, not 1 GiB).
DEB_S3_PACKAGES := ceph-mon ceph-osd radosgw ceph-common

# rsyslog for test_daemon_http_rsyslog: Debian 12's rsyslog and
# syslog-ng-core conflict (both provide system-log-daemon) and syslog-ng
# is installed for test_daemon_http_syslogng, so deps-rsyslog unpacks
# rsyslog and rsyslog-elasticsearch (and the libraries they need that are
# not installed) under $(RSYSLOG_DIR) instead; the test runs that rsyslogd
# unprivileged with -M for its modules. Nothing is installed.
RSYSLOG_DIR := build-deps/rsyslog
RSYSLOG_DEBS := rsyslog rsyslog-elasticsearch
RSYSLOG_LIBS := libestr0 libfastjson4 liblognorm5 libcurl4 libsystemd0 libuuid1

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all run query test deps deps-deb deps-s3 deps-rsyslog deb npm build build-asan build-tsan build-fuzz build-release \
	unit unit-asan unit-tsan unit-release unit-clang interop fuzz-smoke bench clean

all: build

# Installs only what is missing, so a prepared machine pays nothing.
deps-deb: DEB_PACKAGES += $(DEB_PACKAGING)
deps deps-deb:
	@missing=$$(for p in $(DEB_PACKAGES); do \
	    dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done; \
	    for t in $(DEB_TOOLS); do command -v $${t%%:*} >/dev/null || echo $${t#*:}; done); \
	if [ -n "$$missing" ]; then \
	    echo "installing Debian packages:" $$missing; \
	    $(SUDO) apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

deps-s3: deps
	@missing=$$(for p in $(DEB_S3_PACKAGES); do \
	    dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
	    echo "installing Debian packages:" $$missing; \
	    $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	    $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

deps-rsyslog:
	@if [ ! -f $(RSYSLOG_DIR)/root/usr/sbin/rsyslogd ] || \
	    [ -z "$$(find $(RSYSLOG_DIR)/root -name omelasticsearch.so)" ]; then \
	    rm -rf $(RSYSLOG_DIR) && mkdir -p $(RSYSLOG_DIR)/debs && cd $(RSYSLOG_DIR)/debs && \
	    pkgs="$(RSYSLOG_DEBS)"; for p in $(RSYSLOG_LIBS); do \
	        dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || pkgs="$$pkgs $$p"; done; \
	    echo "unpacking under $(RSYSLOG_DIR):" $$pkgs; \
	    { apt-get download $$pkgs 2>/dev/null || { $(SUDO) apt-get update -qq && apt-get download $$pkgs; }; } && \
	    for d in *.deb; do dpkg-deb -x $$d ../root || exit 1; done; \
	fi

npm: deps
	@cd tests/interop && if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then \
	    npm ci --no-audit --no-fund --loglevel=error; fi

build: deps
	cmake -S . -B $(BUILD) $(call cmake_generator,$(BUILD)) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_OPTS) >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

# AddressSanitizer + UBSan: Debug (the asserts run) at -O1, as ASan's
# documentation recommends: at -O0 the converts in the script tests ran
# several times slower and the ASan stage was the longest of CI.
build-asan: deps
	cmake -S . -B $(BUILD_ASAN) $(call cmake_generator,$(BUILD_ASAN)) -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS=-O1 -DPQ_SANITIZE=ON \
	    $(CMAKE_OPTS) >/dev/null
	cmake --build $(BUILD_ASAN) -j $(JOBS)

# ThreadSanitizer (clang): Debug, so the lock-ownership asserts run too,
# at -O1, which TSan's documentation recommends for speed.
build-tsan: deps
	CC=clang cmake -S . -B $(BUILD_TSAN) $(call cmake_generator,$(BUILD_TSAN)) -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS=-O1 -DPQ_TSAN=ON \
	    $(CMAKE_OPTS) >/dev/null
	cmake --build $(BUILD_TSAN) -j $(JOBS)

# clang, RelWithDebInfo, ASan + UBSan and libFuzzer's coverage hooks: the
# fuzz targets, and the unit tests that `make unit-clang` runs. One clang
# build for both: a separate plain clang build compiled everything a
# second time (about a minute of CI) to run the same unit tests, and the
# TSan build already compiles every test with clang.
build-fuzz: deps
	CC=clang cmake -S . -B $(BUILD_FUZZ) $(call cmake_generator,$(BUILD_FUZZ)) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPQ_FUZZ=ON \
	    $(CMAKE_OPTS) >/dev/null
	cmake --build $(BUILD_FUZZ) -j $(JOBS)

# Optimisation levels and compilers other than the main build's: -O3 with
# GCC and clang's diagnostics find what RelWithDebInfo does not (GCC 12 at
# -O3 once broke a user's Release build on a -Wmaybe-uninitialized).
build-release: deps
	CC=gcc cmake -S . -B $(BUILD_RELEASE) $(call cmake_generator,$(BUILD_RELEASE)) -DCMAKE_BUILD_TYPE=Release $(CMAKE_OPTS) >/dev/null
	cmake --build $(BUILD_RELEASE) -j $(JOBS)

# `make run` starts the daemon in the foreground with conf/run.yaml
# (TCP 127.0.0.1:5170, run-data/parqd.sock, files under run-data/out).
# Send it lines from another terminal, e.g.
#     cat conf/sample.ndjson > /dev/tcp/127.0.0.1/5170
# and see what landed with `make query`. Ctrl-C publishes every file.
run: PQ_WERROR = OFF
run: build npm
	./$(BUILD)/parqd check --config conf/run.yaml >/dev/null
	@mkdir -p run-data
	@echo "parqd: listening on 127.0.0.1:5170 and run-data/parqd.sock; Ctrl-C to stop"
	@echo "  send:  cat conf/sample.ndjson > /dev/tcp/127.0.0.1/5170"
	@echo "  query: make query"
	exec ./$(BUILD)/parqd --config conf/run.yaml

# With nothing published yet, query.mjs says why and when a file will be,
# from conf/run.yaml and the daemon's metrics.
QUERY ?= SELECT ts, level, service, msg, status, user FROM read_parquet('run-data/out/**/*.parquet') ORDER BY ts
query: npm
	@node tests/interop/query.mjs --config conf/run.yaml "$(QUERY)"

# Some ctest scripts read files back with the npm readers: install them first.
# test_deb_install builds the package: deps-deb first, so build finds scdoc.
unit: deps-deb deps-s3 deps-rsyslog build npm
	cd $(BUILD) && ctest --output-on-failure -j $(TEST_JOBS)

unit-asan: deps-s3 deps-rsyslog build-asan npm
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	    ctest --output-on-failure -j $(TEST_JOBS)

# Every cmocka test and the scripts labelled "tsan" in CMakeLists.txt (those
# that run the pipeline's threads; the list and why there), in one ctest
# run: the cmocka tests fill the cores while the kill -9 scripts wait. A
# report fails the test: a cmocka test exits 66, a daemon's log is searched
# by tests/daemon/lib.sh. tests/tsan.supp names each suppression and why.
TSAN_ENV := TSAN_OPTIONS="second_deadlock_stack=1 suppressions=$(CURDIR)/tests/tsan.supp"
unit-tsan: build-tsan npm
	cd $(BUILD_TSAN) && $(TSAN_ENV) ctest -L '^(unit|tsan)$$' --output-on-failure -j $(TEST_JOBS)

# The cmocka tests only (label "unit"): the interop scripts already ran
# against the main build, and their files do not depend on the compiler.
unit-release: build-release
	cd $(BUILD_RELEASE) && ctest -L unit --output-on-failure -j $(JOBS)

# The unit tests built by clang (the fuzz build, above).
unit-clang: build-fuzz
	cd $(BUILD_FUZZ) && ctest -L unit --output-on-failure -j $(JOBS)

interop: build npm
	@if [ -f tests/interop/run.sh ]; then bash tests/interop/run.sh $(BUILD); fi

# A few seconds per fuzz target, as many at once as there are cores:
# catches regressions (a crash on the committed corpus or near it); long
# runs are manual. tests/fuzz/smoke.sh says where outputs and crashes go.
FUZZ_SMOKE_SECONDS ?= 3
fuzz-smoke: build-fuzz
	bash tests/fuzz/smoke.sh $(BUILD_FUZZ) $(FUZZ_SMOKE_SECONDS) $(JOBS)

test: unit unit-asan unit-tsan unit-release unit-clang interop fuzz-smoke

bench: deps-s3 build npm
	@for b in $(BUILD)/bench_*; do [ -x "$$b" ] && "$$b"; done
	bash bench/bench_e2e.sh $(BUILD)
	bash bench/bench_daemon.sh $(BUILD)
	bash bench/bench_http.sh $(BUILD)
	bash bench/bench_compare.sh $(BUILD)
	bash bench/bench_s3.sh $(BUILD)

# The Debian package $(BUILD)/parqd_VERSION_ARCH.deb (packaging/deb.cmake),
# checked by lintian; the build is configured again once scdoc is there.
deb: deps-deb
	$(MAKE) --no-print-directory build
	cd $(BUILD) && cpack -G DEB
	lintian --fail-on error $(BUILD)/parqd_$$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' \
	    $(BUILD)/CMakeCache.txt)_$$(dpkg --print-architecture).deb

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_TSAN) $(BUILD_FUZZ) $(BUILD_RELEASE)
