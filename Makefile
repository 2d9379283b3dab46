# Front door: `make` builds, `make demo` runs the main job (a sweep fine-tuning the packaged all-MiniLM-L6-v2
# on SciFact: trained, stopped early by ASHA, evaluated beside BM25 and the untrained encoder, alone and fused,
# reported), `make demo-tiny` the same machinery on tiny SQuAD encoders in a minute, `make test` runs the suite,
# `make bench` runs the benchmarks. Each target installs the Debian packages it needs first.
BUILD ?= build
JOBS ?= 2
CMAKE_FLAGS ?=
DATA ?= ../shared/data

.PHONY: all deps configure build demo demo-tiny test bench clean format

all: build

deps:
	bash scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) -G Ninja -DRAGMIG_DATA_DIR=$(abspath $(DATA)) $(CMAKE_FLAGS)

configure: deps $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	$(BUILD)/src/apps/ragmig batch examples/sweep-scifact-minilm.toml --cpu-slots 1

demo-tiny: build
	$(BUILD)/src/apps/ragmig batch examples/sweep-squad-tiny.toml

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 900

bench: build
	$(BUILD)/bench/train/bench_train
	bench/train/shared_cores.sh $(BUILD)/src/apps/ragmig
	$(BUILD)/bench/encode/bench_encode
	$(BUILD)/bench/sched/bench_sched
	$(BUILD)/bench/sched/bench_monitor
	$(BUILD)/bench/sim/bench_sim
	$(BUILD)/bench/dp/bench_dp
	$(BUILD)/bench/mig/bench_mig
	RAGMIG=$(BUILD)/src/apps/ragmig DATA=$(DATA) bench/eval/bm25_scale.sh

# libFuzzer harnesses of every parser of outside input (fuzz/README.md): a clang build of the torch-free
# libraries in build-fuzz, then each harness for FUZZ_SECONDS (FUZZ_TARGETS="beir qrels" for some).
FUZZ_SECONDS ?= 600
.PHONY: fuzz
fuzz:
	bash scripts/install-deps.sh --system
	FUZZ_SECONDS=$(FUZZ_SECONDS) JOBS=$(JOBS) bash fuzz/run_libfuzzer.sh

# The whole suite built with AddressSanitizer and UBSan in build-asan (scripts/sanitize.sh: 33 min on 2 cores from an
# empty folder); fails on a failed test or any report, those of the processes tests start included.
.PHONY: sanitize
sanitize: deps
	SAN_BUILD=$(BUILD)-asan JOBS=$(JOBS) DATA=$(DATA) bash scripts/sanitize.sh

# ThreadSanitizer on the tests of the parts with threads of their own (scripts/sanitize.sh) in build-tsan; fails on
# a failed test or any report (the suite 11 min on 2 cores once built).
.PHONY: tsan
tsan: deps
	SAN=thread SAN_BUILD=$(BUILD)-tsan JOBS=$(JOBS) DATA=$(DATA) bash scripts/sanitize.sh

format:
	clang-format -i $$(git ls-files '*.cpp' '*.h')

clean:
	rm -rf $(BUILD)
