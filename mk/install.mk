# The man page gpushare(1) and the shell completions, generated at build time
# by the binary from the option tables its parser uses (src/cmd/describe.h),
# and `make install` (PREFIX, DESTDIR as usual).
PREFIX ?= /usr/local
DESTDIR ?=
MAN_PAGE := $(BUILD)/gpushare.1
BASH_COMPLETION := $(BUILD)/completion/gpushare
ZSH_COMPLETION := $(BUILD)/completion/_gpushare
GENERATED_DOCS := $(MAN_PAGE) $(BASH_COMPLETION) $(ZSH_COMPLETION)
.DEFAULT_GOAL := all

.PHONY: install docs-gen
all: $(GENERATED_DOCS)
docs-gen: $(GENERATED_DOCS)

$(MAN_PAGE): $(BUILD)/gpushare
	$< __manpage >$@.tmp && mv $@.tmp $@

$(BASH_COMPLETION): $(BUILD)/gpushare
	@mkdir -p $(dir $@)
	$< completion bash >$@.tmp && mv $@.tmp $@

$(ZSH_COMPLETION): $(BUILD)/gpushare
	@mkdir -p $(dir $@)
	$< completion zsh >$@.tmp && mv $@.tmp $@

install: $(BUILD)/gpushare $(GENERATED_DOCS)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(PREFIX)/share/zsh/site-functions
	install -m 755 $(BUILD)/gpushare $(DESTDIR)$(PREFIX)/bin/gpushare
	install -m 644 $(MAN_PAGE) $(DESTDIR)$(PREFIX)/share/man/man1/gpushare.1
	install -m 644 $(BASH_COMPLETION) $(DESTDIR)$(PREFIX)/share/bash-completion/completions/gpushare
	install -m 644 $(ZSH_COMPLETION) $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_gpushare
