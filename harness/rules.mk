# make run | check | shell | series | bench | clean  (see README.md)
ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)
H := $(ROOT)/harness
export BUILD := $(ROOT)/build
# ccache hashes paths under it relative to the object folder, so that
# clones of this repository (CI's fresh ones) share each other's hits.
export CCACHE_BASEDIR := $(BUILD)
# default, or debug (KASAN, lockdep, DEBUG_VM, ...)
VARIANT ?= default

.PHONY: run check shell series bench apply kernel clean

run: kernel
	@$(H)/boot $(VARIANT) run

check:
	@$(H)/check

shell: kernel
	@$(H)/boot $(VARIANT) shell

bench: kernel
	@$(H)/bench $(VARIANT)

series: apply
	@$(H)/format-series

kernel: apply
	@$(H)/build $(VARIANT)

apply:
	@$(H)/deps
	@$(H)/apply-series

clean:
	rm -rf $(BUILD)
