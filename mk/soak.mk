# The soak (tests/soak/, docs/design/soak.md): a seeded random run on the local
# control plane that checks gpushare's invariants after every step.
#   make soak SOAK_STEPS=N SOAK_SEED=S   (defaults: 10000 steps, a seed from the clock)
# `make e2e` runs a short one (tests/e2e/test_soak.sh).
SOAK_SRC := $(sort $(wildcard tests/soak/*.c))
SOAK_STEPS ?= 10000
SOAK_SEED ?=
.DEFAULT_GOAL := all

.PHONY: soak
$(BUILD)/soak: $(SOAK_SRC) $(wildcard tests/soak/*.h) $(BUILD)/libgpushare.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -iquote . -o $@ $(SOAK_SRC) $(BUILD)/libgpushare.a $(LDLIBS_ALL)

soak: all $(BUILD)/soak
	@SOAK_STEPS=$(SOAK_STEPS) SOAK_SEED=$(SOAK_SEED) tests/soak/run.sh $(BUILD)/gpushare $(BUILD)/soak

e2e: $(BUILD)/soak
