# Thin wrapper over CMake (as neovim has). `make demo` and `make test` do all set-up on a
# fresh Debian machine: they install missing packages, configure, build and run.
JOBS ?= $(shell nproc)
BUILD ?= build
CMAKE_FLAGS ?=
CTEST_FLAGS ?= --output-on-failure -j $(JOBS)

.PHONY: all deps deps-realmodels build demo selftest conformance realmodels realmodels-beyond realmodels-fp16 test test-plain test-asan test-tsan build-fuzz fuzz fuzz-smoke bench bench-abi bench-vs-pytorch bench-tenants soak format clean

all: build

deps:
	@./.ci/install-deps.sh

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# The main demo: compile the Fashion-MNIST classifier that ships in models/ (per-layer
# report), then classify its sample images on the emulated NPU (predicted vs true labels,
# cycles, engine utilization); then the same in int8. Builds only the two programs it runs.
demo: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS) --target npu-compile npu-classify
	./$(BUILD)/tools/npu-compile/npu-compile models/fashion_mnist/fashion_mnist.onnx \
	    -o $(BUILD)/fashion_mnist.npub --report
	@echo
	./$(BUILD)/examples/classify/npu-classify $(BUILD)/fashion_mnist.npub \
	    models/fashion_mnist/samples
	@echo
	@echo "# The same model quantized to int8 (post-training, 64 calibration images):"
	./$(BUILD)/tools/npu-compile/npu-compile models/fashion_mnist/fashion_mnist.onnx \
	    -o $(BUILD)/fashion_mnist_int8.npub --quantize int8 \
	    --calibration models/fashion_mnist/calibration.npy
	./$(BUILD)/examples/classify/npu-classify $(BUILD)/fashion_mnist_int8.npub \
	    models/fashion_mnist/samples

# The device self-test (raw command buffers on every engine, checked against the reference).
selftest: build
	./$(BUILD)/tools/npu-selftest/npu-selftest

# ONNX conformance over Debian's libonnx-testdata, one line per test (also part of `make test`).
conformance: build
	./$(BUILD)/tests/conformance/onnx_conformance --list \
	    --expected-failures tests/conformance/expected_failures.txt

# ResNet-18 / MobileNetV2 / SqueezeNet exported from torchvision vs PyTorch (docs/realmodels.md;
# needs python3-torch and python3-torchvision, installed by `make deps-realmodels`).
deps-realmodels:
	@./.ci/install-deps.sh --realmodels

realmodels: deps-realmodels build
	./tests/realmodels/run.sh $(BUILD)

# Architectures beyond classifiers (issue 13; docs/realmodels.md): segmentation heads (Resize),
# a U-Net (ConvTranspose), LSTM, GRU and RNN classifiers, a transformer block at opset 17.
BEYOND_MODELS ?= lraspp_mobilenet_v3_large,deeplabv3_mobilenet_v3_large,unet,lstm_classifier,gru_classifier,rnn_classifier,transformer_block,vit_small,gpt_decoder
realmodels-beyond: deps-realmodels build
	MODELS=$(BEYOND_MODELS) ./tests/realmodels/run.sh $(BUILD)

# Half precision on the device (issue 13; docs/realmodels.md): ResNet-50 at fp32, compiled with
# --precision fp16 and bf16, and exported as a float16 ONNX model, each against PyTorch's fp32
# output. Half-precision error grows with the output's scale, so the tolerance is a share of
# max |y| (3% for fp16, 10% for bf16) and top-1 must agree.
FP16_MODEL ?= resnet50
realmodels-fp16: deps-realmodels build
	OUTDIR=$(BUILD)/rm-fp32 MODELS=$(FP16_MODEL) ./tests/realmodels/run.sh $(BUILD)
	OUTDIR=$(BUILD)/rm-fp16 MODELS=$(FP16_MODEL) RUN_FLAGS="--precision fp16" RTOL=0 ATOL=0 \
	    SCALE_ATOL=0.03 ./tests/realmodels/run.sh $(BUILD)
	OUTDIR=$(BUILD)/rm-bf16 MODELS=$(FP16_MODEL) RUN_FLAGS="--precision bf16" RTOL=0 ATOL=0 \
	    SCALE_ATOL=0.1 ./tests/realmodels/run.sh $(BUILD)
	OUTDIR=$(BUILD)/rm-f16 MODELS=$(FP16_MODEL) EXPORT_FLAGS=--float16 RTOL=0 ATOL=0 \
	    SCALE_ATOL=0.03 ./tests/realmodels/run.sh $(BUILD)
	/usr/bin/python3 scripts/precision_reference.py $(BUILD)/rm-fp16/$(FP16_MODEL) $(FP16_MODEL) \
	    --got $(BUILD)/rm-fp16/$(FP16_MODEL)/out/output.npy \
	    $(BUILD)/rm-bf16/$(FP16_MODEL)/out/output.npy $(BUILD)/rm-f16/$(FP16_MODEL)/out/output.npy

test-plain: build
	cd $(BUILD) && ctest $(CTEST_FLAGS)

# The sanitizer stages leave out the packaging test (label "package": install, then build a
# consumer project, about 3 minutes alone under ASan): it checks the install tree, which the
# plain stage already does, not memory or thread safety. They build with line tables only
# (-g1: enough for the sanitizers' stack traces, a fraction of the full debug information's
# compile and link time) and as unity builds (CMake batches a target's sources into a few
# translation units, so the heavy headers — gtest, nlohmann/json, spdlog — are parsed once per
# batch, not once per file). The plain build stays one file per unit for quick rebuilds.
SAN_DEBUG_FLAGS = -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DCMAKE_C_FLAGS_DEBUG=-g1 -DCMAKE_UNITY_BUILD=ON
SAN_RELDEB_FLAGS = "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" \
    "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" -DCMAKE_UNITY_BUILD=ON
test-asan: deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DNPU_SANITIZE=address,undefined \
	    $(SAN_DEBUG_FLAGS) $(CMAKE_FLAGS)
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ctest $(CTEST_FLAGS) -LE '^package$$'

test-tsan: deps
	cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNPU_SANITIZE=thread \
	    -DNPU_BUILD_COMPILER=OFF $(SAN_RELDEB_FLAGS) $(CMAKE_FLAGS)
	cmake --build build-tsan -j $(JOBS)
	cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ctest $(CTEST_FLAGS)

# libFuzzer targets (docs/reliability.md), built with clang in build-fuzz: `make fuzz` runs
# each for FUZZ_SECONDS (default 60); `make fuzz-smoke`, part of `make test`, for 10 s each.
FUZZ_SECONDS ?= 60
build-fuzz: deps
	cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
	    -DCMAKE_CXX_COMPILER=clang++ -DNPU_SANITIZE=address,undefined -DNPU_BUILD_FUZZERS=ON \
	    $(SAN_RELDEB_FLAGS) $(CMAKE_FLAGS)
	cmake --build build-fuzz -j $(JOBS) --target fuzzers

fuzz: build-fuzz
	./tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

fuzz-smoke: build-fuzz
	./tests/fuzz/run.sh build-fuzz 10

# Everything CI runs: the suite, then the suite under ASan+UBSan and under TSan, then a short
# run of every fuzz target.
test: test-plain test-asan test-tsan fuzz-smoke

# Google Benchmarks of the engine kernels and the submission path (not part of `make test`).
bench: deps
	cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DNPU_BUILD_BENCH=ON $(CMAKE_FLAGS)
	cmake --build build-bench -j $(JOBS) --target bench_kernels bench_submit
	./build-bench/bench/bench_kernels
	NPU_LOG_LEVEL=off ./build-bench/bench/bench_submit

# The cost of one ioctl by path: libnpu's seams and raw ioctl(2) through npu-shim, in-process
# and through npu-daemon (docs/driver-prototyping.md).
bench-abi: deps
	cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DNPU_BUILD_BENCH=ON $(CMAKE_FLAGS)
	cmake --build build-bench -j $(JOBS) --target bench_abi npu-shim npu_shim npu-daemon
	./bench/abi_cost.sh build-bench

# Ours vs PyTorch CPU on the torchvision models, one run (docs/performance.md; not part of
# `make test`): ours in fp32, int8, fp16 and bf16 beside PyTorch fp32 and int8, warm and cold.
# MODELS=resnet18,mobilenet_v2 and PRECISIONS=fp32,int8 limit it; REPEAT=N timed inferences
# per round, ROUNDS=R rounds (ours and PyTorch in turn).
bench-vs-pytorch: deps-realmodels build
	/usr/bin/python3 bench/vs_pytorch.py --build $(BUILD) \
	    $(if $(MODELS),--models $(MODELS)) $(if $(PRECISIONS),--precisions $(PRECISIONS)) \
	    $(if $(REPEAT),--repeat $(REPEAT)) $(if $(ROUNDS),--rounds $(ROUNDS))

# One device, many tenants (issue 30; docs/performance.md): a SqueezeNet victim's latency alone
# and under 1-3 ResNet-50 flooders through npu-daemon, NORMAL and REALTIME, with and without
# preemption. VICTIM=, FLOODER=, FLOODERS=0,1 and REPEAT=N change it.
bench-tenants: deps-realmodels build
	/usr/bin/python3 bench/tenants.py --build $(BUILD) \
	    $(if $(VICTIM),--victim $(VICTIM)) $(if $(FLOODER),--flooder $(FLOODER)) \
	    $(if $(FLOODERS),--flooders $(FLOODERS)) $(if $(REPEAT),--repeat $(REPEAT))

# The daemon soak for minutes (SOAK_SECONDS, default 300): clients with random work,
# priorities, quota hits and kills; `make test` runs a minute of it (ctest daemon.soak; 8 s under the sanitizers).
SOAK_SECONDS ?= 300
soak: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS) --target daemon_soak
	./$(BUILD)/tests/emu/daemon/daemon_soak --seconds $(SOAK_SECONDS) --clients 6

format:
	git ls-files '*.h' '*.cpp' '*.c' | xargs clang-format -i

clean:
	rm -rf $(BUILD) build-asan build-tsan build-bench build-fuzz
