# mk/fuzz.mk — robustness testing ("every byte is hostile"; tests/fuzz/README.md).
#  - $(BUILD)/tests/fuzz-mutate: writes seeded mutants for
#    tests/e2e/fuzz_tools.sh (part of `make test`); the saved findings in
#    fixtures/fuzz/ are replayed by tests/unit/fuzz/test_fuzz_replay.c;
#  - `make fuzz FUZZ_SECONDS=N` (FUZZ_TIME is an alias): builds the
#    libFuzzer harnesses tests/fuzz/fuzz_*.c with clang
#    -fsanitize=fuzzer,address,undefined in $(FUZZ_BUILD) and runs each
#    for N seconds (tests/fuzz/run.sh), one after another, on a corpus
#    per harness seeded from fixtures/**/*.trc (decoded chunk payloads for
#    fuzz_records).  One summary line per harness; exit 1 if any found a
#    crash (the input is in $(FUZZ_BUILD)/findings/).  `make fuzz-build`
#    only builds.  FUZZ=NAME... runs some harnesses only.

FUZZ_MUTATE := $(BUILD)/tests/fuzz-mutate
FUZZ_PAYLOADS := $(BUILD)/tests/fuzz-payloads
TEST_EXTRA_DEPS += $(FUZZ_MUTATE)

$(FUZZ_MUTATE): tests/fuzz/mutate.c $(BUILD)/tests/support/fuzz_mutate.o
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDFLAGS_EXTRA) $(LDLIBS_BASE)

$(FUZZ_PAYLOADS): tests/fuzz/payloads.c $(LIBTRC_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LDFLAGS_EXTRA) $(LDLIBS_BASE)

FUZZ_CC ?= clang
FUZZ_BUILD ?= $(BUILD)/libfuzzer
FUZZ_TIME ?= 60
FUZZ_SECONDS ?= $(FUZZ_TIME)
FUZZ_NAMES := $(patsubst tests/fuzz/fuzz_%.c,%,$(filter-out tests/fuzz/fuzz_common.c,$(sort $(wildcard tests/fuzz/fuzz_*.c))))
FUZZ ?= $(FUZZ_NAMES)
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS := $(CFLAGS_BASE) $(CFLAGS_WARN) $(XML_CFLAGS) -O1 $(FUZZ_SAN) -fsanitize=fuzzer-no-link
# trc-top's screen and the loop that drives it need ncurses and a
# terminal; no harness reaches them, so they stay out of the link.
FUZZ_NO_LINK := lib/export/top/top_screen.c tools/common/top_live.c
FUZZ_SRC := $(filter-out $(FUZZ_NO_LINK),$(FORMAT_SRC) $(wildcard lib/*.c) \
  $(call rwildcard,lib/dump lib/export lib/util,%.c) $(TOOLCOMMON_SRC)) \
  tests/support/fuzz_mutate.c tests/support/fuzz_sinks.c tests/support/fuzz_decode.c \
  tests/support/trace_builder.c tests/fuzz/fuzz_common.c
FUZZ_OBJ := $(patsubst %.c,$(FUZZ_BUILD)/%.o,$(FUZZ_SRC))
FUZZ_BINS := $(patsubst %,$(FUZZ_BUILD)/fuzz_%,$(FUZZ_NAMES))

$(FUZZ_BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_OBJ)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(XML_LIBS) $(LDLIBS_BASE)

.PHONY: fuzz fuzz-build fuzz-corpus
fuzz-build: $(FUZZ_BINS)

# Seeds are added, never removed: what earlier runs found stays.
fuzz-corpus: $(FUZZ_PAYLOADS)
	@for n in $(FUZZ); do mkdir -p $(FUZZ_BUILD)/corpus/$$n; done
	@for n in $(filter-out records,$(FUZZ)); do \
	  find fixtures -name '*.trc' -exec cp -f {} $(FUZZ_BUILD)/corpus/$$n/ \; ; done
	@$(if $(filter records,$(FUZZ)),$(FUZZ_PAYLOADS) $(FUZZ_BUILD)/corpus/records $$(find fixtures -name '*.trc' | sort))

fuzz: $(FUZZ_BINS) fuzz-corpus
	FUZZ_BUILD=$(FUZZ_BUILD) FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz/run.sh $(FUZZ)
