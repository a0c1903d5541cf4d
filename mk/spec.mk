# mk/spec.mk — rules of the format spec's tooling (spec/trc-format.md):
# the fixture generator used by tests/e2e/fixtures.sh and
# scripts/regen-fixtures.  `make fixtures` regenerates fixtures/ and
# their .expect files (check the diff by eye before committing).
GEN_FIXTURES := $(BUILD)/gen_fixtures

$(GEN_FIXTURES): $(BUILD)/tests/fixtures/gen_fixtures.o $(LIBTRC_A)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIBTRC_A) $(LDFLAGS_EXTRA) $(LDLIBS_BASE)

TEST_EXTRA_DEPS += $(GEN_FIXTURES)

.PHONY: fixtures
fixtures: $(GEN_FIXTURES) $(BIN)/trc-dump
	BUILD=$(BUILD) BIN=$(BIN) ./scripts/regen-fixtures
