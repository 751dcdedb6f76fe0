# GPU catalog: data/gpus.tab is embedded as a C string (build/gen/catalog_data.c)
# and parsed by src/model/catalog.c on first use.
CATALOG_DATA := data/gpus.tab
CATALOG_GEN := $(BUILD)/gen/catalog_data.c
GEN_SRC += $(CATALOG_GEN)
# mk/*.mk is included before `all`; keep `make` meaning `make all`.
.DEFAULT_GOAL := all

$(CATALOG_GEN): $(CATALOG_DATA) scripts/embed.sh
	@mkdir -p $(dir $@)
	scripts/embed.sh catalog_data $< >$@.tmp && mv $@.tmp $@
