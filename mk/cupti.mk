# mk/cupti.mk — GPU recording (docs/gpu.md).
#
# libtrec-cupti.so (lib/cupti/, the CUDA injection) is built only when
# the CUPTI headers are found at $(CUDA_HOME)/include (default
# /usr/local/cuda); the rest of the tree builds without CUDA.  It links
# no libcupti (dlopen at run time) and carries its own hidden copy of
# the libtrc objects it needs (version script lib/cupti/cupti.map).
# Tests that drive the injection through the fake CUPTI (tests/gpu/) get
# explicit rules here; without CUDA the same test files compile to a
# skip.  lib/gpu/ (trec's side: env set-up, merge, NVML) is in the tools'
# internal archive (libtrc-internal.a) and needs no CUDA.

CUDA_HOME ?= /usr/local/cuda
CUPTI_INC := $(CUDA_HOME)/include
HAVE_CUPTI := $(if $(wildcard $(CUPTI_INC)/cupti.h),1,)
CUPTI_VERSION_NUM := $(if $(HAVE_CUPTI),$(shell sed -n 's/^\#define CUPTI_API_VERSION \([0-9]*\).*/\1/p' $(CUPTI_INC)/cupti_version.h),0)

CUPTI_SO := $(BUILD)/libtrec-cupti.so
CUPTI_SRC := $(sort $(wildcard lib/cupti/*.c))
CUPTI_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(CUPTI_SRC))
# The CPython walker (lib/py) that launch.c calls for launch-site stacks.
PYWALK_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(sort $(call rwildcard,lib/py,%.c)))
FAKE_CUPTI_OBJ := $(BUILD)/tests/gpu/fake_cupti.o $(BUILD)/tests/gpu/fake_scenario.o
GPU_CHECK_OBJ := $(BUILD)/tests/gpu/trace_check.o
# cmocka asserts over a scenario trace: tests only, never make_fixture
SCENARIO_CHECK_OBJ := $(BUILD)/tests/gpu/scenario_check.o
GPU_CUPTI_TESTS := $(patsubst %,$(BUILD)/tests/%,test_gpu_inject test_gpu_lifecycle test_gpu_decode test_gpu_locking test_gpu_graph)
GPU_PLAIN_TESTS := $(filter $(UNIT_BINS),$(patsubst %,$(BUILD)/tests/%,test_gpu_summary test_gpu_nvml test_gpu_merge test_gpu_pystack))
GPU_FIXTURE_TOOL := $(BUILD)/tests/gpu/make_fixture
# plays the CUDA driver over the fake CUPTI for a program trec records
# (tests/e2e/trec_relocated.sh); loads the injection with dlopen
FAKE_DRIVER := $(BUILD)/tests/gpu/fake_driver
FAKE_NVML_SO := $(BUILD)/tests/libfake-nvml.so

# trec's side needs to know what was built and where the build tree
# keeps it as seen from the tools' directory (lib/gpu/gpu_support.c):
# a relative path, so a moved tree finds its own library.
# (GNU realpath; without it, the default layout BIN=BUILD/bin.)
GPU_BUILD_REL := $(or $(shell realpath -m --relative-to='$(BIN)' '$(BUILD)' 2>/dev/null),..)
GPU_STAMP := $(BUILD)/gpu-config.stamp
GPU_CONFIG := $(if $(HAVE_CUPTI),$(CUPTI_VERSION_NUM),0) $(GPU_BUILD_REL)
$(GPU_STAMP): FORCE_GPU_STAMP
	@mkdir -p $(dir $@)
	@if [ "$$(cat $@ 2>/dev/null)" != "$(GPU_CONFIG)" ]; then echo "$(GPU_CONFIG)" > $@; fi
.PHONY: FORCE_GPU_STAMP
$(BUILD)/lib/gpu/gpu_support.o: $(GPU_STAMP)
$(BUILD)/lib/gpu/gpu_support.o: ALL_CFLAGS += -DTREC_CUPTI_VERSION=$(CUPTI_VERSION_NUM) \
	-DTREC_GPU_BUILD_REL='"$(GPU_BUILD_REL)"'

$(FAKE_NVML_SO): tests/gpu/fake_nvml.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -shared -o $@ $< $(LDFLAGS_EXTRA)

TEST_EXTRA_DEPS += $(FAKE_NVML_SO)

# GPU tests that need no CUDA, with the trace loader linked in.
$(GPU_PLAIN_TESTS): $(BUILD)/tests/%: $$(call unit_src,$$*) $(GPU_CHECK_OBJ) $(TEST_SUPPORT_OBJ) $(TRC_TOOL_ARCHIVES)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -o $@ $< $(GPU_CHECK_OBJ) $(TEST_SUPPORT_OBJ) $(TRC_TOOL_ARCHIVES) \
	  $(LDFLAGS_EXTRA) $(XML_LIBS) $(UNIT_LIBS) -lcmocka $(LDLIBS_BASE)

ifeq ($(HAVE_CUPTI),1)
GPU_TARGETS := $(CUPTI_SO) $(GPU_FIXTURE_TOOL)
all: $(GPU_TARGETS)
INSTALL_EXTRA += install -d $(DESTDIR)$(PREFIX)/lib/trc && install -m 755 $(CUPTI_SO) $(DESTDIR)$(PREFIX)/lib/trc/;

CUPTI_CFLAGS := -isystem $(CUPTI_INC) -DTRC_HAVE_CUPTI=1
$(CUPTI_OBJ): ALL_CFLAGS += $(CUPTI_CFLAGS) -fvisibility=hidden
$(FAKE_CUPTI_OBJ) $(SCENARIO_CHECK_OBJ): ALL_CFLAGS += $(CUPTI_CFLAGS)

$(CUPTI_SO): $(CUPTI_OBJ) $(PYWALK_OBJ) $(LIBTRC_A) lib/cupti/cupti.map
	$(CC) -shared -o $@ $(CUPTI_OBJ) $(PYWALK_OBJ) $(LIBTRC_A) \
	  -Wl,--version-script=lib/cupti/cupti.map -Wl,-z,defs -Wl,-rpath,$(CUDA_HOME)/lib64 \
	  $(LDFLAGS_EXTRA) -lz -pthread -ldl

$(GPU_CUPTI_TESTS): $(BUILD)/tests/%: $$(call unit_src,$$*) $(CUPTI_OBJ) $(PYWALK_OBJ) $(FAKE_CUPTI_OBJ) $(SCENARIO_CHECK_OBJ) $(GPU_CHECK_OBJ) $(TEST_SUPPORT_OBJ) $(TRC_TOOL_ARCHIVES)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CUPTI_CFLAGS) -MMD -MP -o $@ $< $(CUPTI_OBJ) $(PYWALK_OBJ) $(FAKE_CUPTI_OBJ) \
	  $(SCENARIO_CHECK_OBJ) $(GPU_CHECK_OBJ) $(TEST_SUPPORT_OBJ) $(TRC_TOOL_ARCHIVES) $(LDFLAGS_EXTRA) $(XML_LIBS) $(UNIT_LIBS) -lcmocka $(LDLIBS_BASE)

TEST_EXTRA_DEPS += $(FAKE_DRIVER)
$(FAKE_DRIVER): tests/gpu/fake_driver.c $(FAKE_CUPTI_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CUPTI_CFLAGS) -MMD -MP -o $@ $< $(FAKE_CUPTI_OBJ) $(LDFLAGS_EXTRA) $(LDLIBS_BASE)

# per-launch cost of the injection over the fake CUPTI (bench/gpu_launch.sh)
GPU_LAUNCH_BENCH := $(BUILD)/bench/gpu_launch_bench
BENCH_DEPS += $(GPU_LAUNCH_BENCH)
$(GPU_LAUNCH_BENCH): bench/gpu_launch_bench.c $(CUPTI_OBJ) $(PYWALK_OBJ) $(FAKE_CUPTI_OBJ) $(LIBTRC_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CUPTI_CFLAGS) -MMD -MP -o $@ $< $(CUPTI_OBJ) $(PYWALK_OBJ) $(FAKE_CUPTI_OBJ) \
	  $(LIBTRC_A) $(LDFLAGS_EXTRA) $(LDLIBS_BASE)

$(GPU_FIXTURE_TOOL): tests/gpu/make_fixture.c $(CUPTI_OBJ) $(PYWALK_OBJ) $(FAKE_CUPTI_OBJ) $(LIBTRC_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(CUPTI_CFLAGS) -MMD -MP -o $@ $< $(CUPTI_OBJ) $(PYWALK_OBJ) $(FAKE_CUPTI_OBJ) \
	  $(LIBTRC_A) $(LDFLAGS_EXTRA) $(LDLIBS_BASE)
endif
