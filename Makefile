# trc build.  Sources are discovered, so adding a file needs no edit here:
#   format/*.c, lib/**/*.c at any depth
#     (not lib/cupti/ nor the folders of
#     LIB_INTERNAL_DIRS)                     -> libtrc.a / libtrc.so (public API)
#   lib/{rec,py,gpu,export,dump}/**/*.c     -> build/libtrc-internal.a (tools only)
#   tools/common/*.c                        -> build/libtrctool.a (shared tool code)
#   tools/NAME.c                            -> bin/NAME
#   tests/unit/**/test_NAME.c at any depth  -> build/tests/test_NAME (cmocka;
#                                              NAME unique across folders)
#   tests/e2e/NAME.sh                       -> run by `make test`
#   mk/*.mk                                 -> extra rules owned by one feature
# Targets: all test asan bench install clean deps

PREFIX ?= /usr/local
CC ?= cc
BUILD ?= build
BIN ?= bin
OPT ?= -O2
CFLAGS_WARN = -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wvla
CFLAGS_BASE = -std=c11 -D_GNU_SOURCE -g $(OPT) -fPIC -Iinclude -I. -pthread
CFLAGS_EXTRA ?=
ALL_CFLAGS = $(CFLAGS_BASE) $(CFLAGS_WARN) $(CFLAGS_EXTRA) $(CFLAGS)
LDLIBS_BASE = -lz -lm -pthread -ldl
LDFLAGS_EXTRA ?=

# Every .c below a folder, at any depth: a new subfolder cannot drop out of
# the build.
rwildcard = $(foreach d,$(wildcard $(1)/*),$(call rwildcard,$(d),$(2)) $(filter $(2),$(d)))
FORMAT_SRC := $(sort $(wildcard format/*.c))
# libtrc is the format and the trace API of include/trc/*.h: the reader,
# the writer, the model and lib/util.  The engines only the tools use
# (recorder, CPython walker, GPU side, exporters, trc-dump's internals)
# go to an archive of their own, so the installed library neither carries
# them nor exports them.  A new lib/ folder is public unless listed here.
LIB_INTERNAL_DIRS := lib/rec lib/py lib/gpu lib/export lib/dump
LIB_ANY_SRC := $(sort $(filter-out lib/cupti/%,$(call rwildcard,lib,%.c)))
LIB_INTERNAL_SRC := $(filter $(addsuffix /%,$(LIB_INTERNAL_DIRS)),$(LIB_ANY_SRC))
LIB_SRC := $(filter-out $(LIB_INTERNAL_SRC),$(LIB_ANY_SRC))
TOOLCOMMON_SRC := $(sort $(wildcard tools/common/*.c))
TOOL_SRC := $(sort $(wildcard tools/*.c))
TOOLS := $(patsubst tools/%.c,$(BIN)/%,$(TOOL_SRC))
# Unit tests live in folders that mirror lib/ (tests/unit/py/, export/...);
# their binaries stay flat, so two tests of one name would overwrite each
# other: refuse that outright.
UNIT_SRC := $(sort $(foreach f,$(call rwildcard,tests/unit,%.c),$(if $(filter test_%,$(notdir $(f))),$(f))))
UNIT_NAMES := $(basename $(notdir $(UNIT_SRC)))
UNIT_BINS := $(patsubst %,$(BUILD)/tests/%,$(UNIT_NAMES))
ifneq ($(words $(UNIT_NAMES)),$(words $(sort $(UNIT_NAMES))))
$(error two unit tests share a name: $(strip $(foreach n,$(sort $(UNIT_NAMES)),$(if $(word 2,$(filter %/$(n).c,$(UNIT_SRC))),$(filter %/$(n).c,$(UNIT_SRC))))))
endif
# The source of unit test binary NAME (a path that does not exist when
# there is none, so make says "no rule" rather than linking nothing).
unit_src = $(or $(filter %/$(1).c,$(UNIT_SRC)),tests/unit/$(1).c)
TEST_SUPPORT_SRC := $(sort $(wildcard tests/support/*.c))

LIB_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(FORMAT_SRC) $(LIB_SRC))
LIB_INTERNAL_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(LIB_INTERNAL_SRC))
TOOLCOMMON_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(TOOLCOMMON_SRC))
TEST_SUPPORT_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(TEST_SUPPORT_SRC))

LIBTRC_A := $(BUILD)/libtrc.a
LIBTRC_SO := $(BUILD)/libtrc.so
LIBTOOL_A := $(BUILD)/libtrctool.a
LIBINTERNAL_A := $(BUILD)/libtrc-internal.a
# What libtrc.so exports: the functions of include/trc/*.h, no more
# (tests/e2e/lib_exports.sh holds the two to each other).
LIBTRC_MAP := packaging/libtrc.map

# libxml2 and cJSON are linked only where they are used: libxml2 into
# the tool that writes SVG (trc2nvvp) and the tests, cJSON into the unit
# tests that parse JSON; every other tool needs neither at run time
# (tests/e2e/tool_libs.sh).  Their flags come from pkg-config.
XML_CFLAGS := $(shell pkg-config --cflags libxml-2.0 2>/dev/null)
XML_LIBS := $(shell pkg-config --libs libxml-2.0 2>/dev/null)
CJSON_LIBS := $(shell pkg-config --libs libcjson 2>/dev/null || echo -lcjson)
ALL_CFLAGS += $(XML_CFLAGS)
XML_TOOLS := $(BIN)/trc2nvvp
$(XML_TOOLS): TOOL_LIBS = $(XML_LIBS)
# Unit tests link cJSON: the shared test support (tests/support/export_run.c)
# parses the JSON the exporters write.  No tool links it.
UNIT_LIBS = $(CJSON_LIBS)

.PHONY: all test unit e2e asan bench install clean deps deps-build demo
all: deps-build $(TOOLS) $(LIBTRC_A) $(LIBTRC_SO) $(BUILD)/trc.pc

# A fresh machine: install the Debian packages the build needs (quick no-op
# when present). SKIP_DEPS=1 skips the check.
deps-build:
	@[ -n "$(SKIP_DEPS)" ] || ./scripts/install-deps build

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c $< -o $@

# Also rebuilt when the Makefile changes what goes in: the installed
# archive must never keep members an older build put there.
$(LIBTRC_A): $(LIB_OBJ) Makefile
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $(LIB_OBJ)

# -z defs: the public objects must not lean on the internal archive.
$(LIBTRC_SO): $(LIB_OBJ) $(LIBTRC_MAP)
	$(CC) -shared -o $@ $(LIB_OBJ) -Wl,--version-script=$(LIBTRC_MAP) -Wl,-z,defs \
	  $(LDFLAGS_EXTRA) $(LDLIBS_BASE)

$(LIBINTERNAL_A): $(LIB_INTERNAL_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(LIBTOOL_A): $(TOOLCOMMON_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# Link order: shared tool code, then the engines, then libtrc.
TRC_TOOL_ARCHIVES := $(LIBTOOL_A) $(LIBINTERNAL_A) $(LIBTRC_A)

$(BIN)/%: $(BUILD)/tools/%.o $(TRC_TOOL_ARCHIVES)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(TRC_TOOL_ARCHIVES) $(LDFLAGS_EXTRA) $(TOOL_LIBS) $(LDLIBS_BASE)

# The source is looked up by name ($$* is the binary's name): secondary
# expansion, since a pattern cannot reach into the mirrored folders.
.SECONDEXPANSION:
$(BUILD)/tests/test_%: $$(call unit_src,test_$$*) $(TEST_SUPPORT_OBJ) $(TRC_TOOL_ARCHIVES)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -o $@ $< $(TEST_SUPPORT_OBJ) $(TRC_TOOL_ARCHIVES) $(LDFLAGS_EXTRA) $(XML_LIBS) $(UNIT_LIBS) -lcmocka $(LDLIBS_BASE)

TRC_VERSION := $(shell sed -n 's/^\#define TRC_VERSION_STRING "\(.*\)"/\1/p' include/trc/trc.h)
# The build tree's trc.pc points at PREFIX as given at build time; install
# writes its own for the PREFIX it installs to.
$(BUILD)/trc.pc: packaging/trc.pc.in include/trc/trc.h
	@mkdir -p $(dir $@)
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(TRC_VERSION)|g' $< > $@

# Tool objects are intermediates of a pattern rule: keep them for fast rebuilds.
.SECONDARY:

-include mk/*.mk

# Tests: every unit binary, then every end-to-end script; one summary line.
test: all $(UNIT_BINS) $(TEST_EXTRA_DEPS)
	@[ -n "$(SKIP_DEPS)" ] || ./scripts/install-deps
	@BUILD=$(BUILD) BIN=$(BIN) ./tests/run-all $(UNIT_BINS)

unit: $(UNIT_BINS)
	@BUILD=$(BUILD) BIN=$(BIN) ONLY=unit ./tests/run-all $(UNIT_BINS)

e2e: all $(TEST_EXTRA_DEPS)
	@BUILD=$(BUILD) BIN=$(BIN) ONLY=e2e ./tests/run-all

# AddressSanitizer + UBSan build in its own tree, whole suite.
asan:
	$(MAKE) test BUILD=build-asan BIN=build-asan/bin OPT=-O1 \
	  CFLAGS_EXTRA="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	  LDFLAGS_EXTRA="-fsanitize=address,undefined" TRC_ASAN=1

bench: all $(BENCH_DEPS)
	@BUILD=$(BUILD) BIN=$(BIN) ./bench/run-all

deps:
	./scripts/install-deps

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include/trc $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(TOOLS) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(LIBTRC_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIBTRC_SO) $(DESTDIR)$(PREFIX)/lib/
	install -m 644 include/trc/*.h $(DESTDIR)$(PREFIX)/include/trc/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(TRC_VERSION)|g' packaging/trc.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/trc.pc
	for m in $(wildcard docs/man/*.1); do install -m 644 $$m $(DESTDIR)$(PREFIX)/share/man/man1/; done
	$(INSTALL_EXTRA)

clean:
	rm -rf build build-asan build-clang bin

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# The README's first command: build quietly (the compiler's lines go to
# a log, shown only when the build fails), then record the bundled
# example and show it (scripts/demo says what it shows).
demo:
	@mkdir -p $(BUILD)
	@echo "demo: building (log in $(BUILD)/demo-build.log)"
	@$(MAKE) --no-print-directory all > $(BUILD)/demo-build.log 2>&1 || { tail -n 30 $(BUILD)/demo-build.log; exit 1; }
	@BUILD=$(BUILD) BIN=$(BIN) ./scripts/demo
