# mk/fuzz.mk — robustness testing ("every byte is hostile").
#  - $(BUILD)/tests/fuzz-mutate: writes seeded mutants for
#    tests/e2e/fuzz_tools.sh (part of `make test`);
#  - `make fuzz`: the libFuzzer harness tests/fuzz/fuzz_reader.c built with
#    clang -fsanitize=fuzzer,address,undefined in $(FUZZ_BUILD), run for
#    FUZZ_TIME seconds on a corpus seeded from fixtures/ and
#    tests/fuzz/regressions/ (not part of `make test`).  Crash files land
#    in $(FUZZ_BUILD)/findings/.

FUZZ_MUTATE := $(BUILD)/tests/fuzz-mutate
TEST_EXTRA_DEPS += $(FUZZ_MUTATE)

$(FUZZ_MUTATE): tests/fuzz/mutate.c $(BUILD)/tests/support/fuzz_mutate.o
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDFLAGS_EXTRA) $(LDLIBS_BASE)

FUZZ_CC ?= clang
FUZZ_BUILD ?= $(BUILD)/libfuzzer
FUZZ_TIME ?= 60
FUZZ_JOBS ?= 1
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS := $(CFLAGS_BASE) $(CFLAGS_WARN) $(XML_CFLAGS) -O1 $(FUZZ_SAN) -fsanitize=fuzzer-no-link
FUZZ_SRC := $(FORMAT_SRC) $(wildcard lib/*.c lib/dump/*.c lib/export/*.c) tests/support/fuzz_mutate.c
FUZZ_OBJ := $(patsubst %.c,$(FUZZ_BUILD)/%.o,$(FUZZ_SRC))

$(FUZZ_BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

$(FUZZ_BUILD)/fuzz_reader: tests/fuzz/fuzz_reader.c $(FUZZ_OBJ)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(XML_LIBS) $(CJSON_LIBS) $(LDLIBS_BASE)

.PHONY: fuzz fuzz-build
fuzz-build: $(FUZZ_BUILD)/fuzz_reader

fuzz: $(FUZZ_BUILD)/fuzz_reader
	@mkdir -p $(FUZZ_BUILD)/corpus $(FUZZ_BUILD)/findings
	cp -f fixtures/valid/*.trc fixtures/invalid/*.trc fixtures/gpu/*.trc $(FUZZ_BUILD)/corpus/
	-cp -f tests/fuzz/regressions/*.trc $(FUZZ_BUILD)/corpus/ 2>/dev/null
	cd $(FUZZ_BUILD) && ./fuzz_reader -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=2048 \
	  -max_len=65536 $(if $(filter-out 1,$(FUZZ_JOBS)),-jobs=$(FUZZ_JOBS) -workers=$(FUZZ_JOBS)) \
	  -artifact_prefix=findings/ corpus
