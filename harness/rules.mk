# make run | check | shell | series | bench | clean  (see README.md)
ROOT := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)
H := $(ROOT)/harness
# The kernel base (harness/base): 7.2, the mainline series, or 6.12, its
# backport.  `make check` and `make series` do both unless BASE is given.
BASES := $(or $(BASE),7.2 6.12)
BASE ?= 7.2
export BASE
export BUILD := $(ROOT)/build/$(BASE)
# ccache hashes paths under it relative to the object folder, so that
# clones of this repository (CI's fresh ones) share each other's hits.
export CCACHE_BASEDIR := $(ROOT)/build
# The shared build cache: ccache results of main's kernels in ../shared/ccache,
# beside this clone, where it exists (see harness/README.md, "The build
# cache"); ccache reads it after its local cache, and never writes it.  A
# CCACHE_REMOTE_STORAGE of your own takes its place.
SHARED_CCACHE := $(realpath $(ROOT)/../shared/ccache)
ifneq ($(SHARED_CCACHE),)
export CCACHE_REMOTE_STORAGE ?= file:$(SHARED_CCACHE)|read-only
endif
# default, or debug (KASAN, lockdep, DEBUG_VM, ...)
VARIANT ?= default

.PHONY: run check quick soak shell series bench apply kernel clean

run: kernel
	@$(H)/boot $(VARIANT) run

check:
	@BASES="$(BASES)" $(H)/check check

# The loop for the change at hand: the default kernel of BASE (7.2) rebuilt
# incrementally, one guest, the functional tests, or those T= names
# (T=page_detective_test,pd_kvm_test).
quick:
	@$(H)/check quick

# The stress programs at their full counts on the 7.2 debug kernel, which
# make check runs at a fraction of them: before resolving an issue about
# the verdict.
soak:
	@$(H)/check soak

shell: kernel
	@$(H)/boot $(VARIANT) shell

# The bench variant: the default kernel with what drgn needs
# (harness/bench.config), which the benchmark runs beside Page Detective
# from a Debian sid root; without that root it runs without drgn.  arm64
# measures its default kernel: drgn's root is amd64's.
BENCH_VARIANT := $(if $(filter arm64,$(ARCH)),default,bench)
bench: apply
	@$(H)/build $(BENCH_VARIANT)
	-@[ "$(BENCH_VARIANT)" = default ] || $(H)/drgn-root
	@$(H)/bench $(BENCH_VARIANT)

series:
	@$(H)/deps
	@for base in $(BASES); do \
		BASE=$$base BUILD=$(ROOT)/build/$$base $(H)/apply-series && \
		BASE=$$base BUILD=$(ROOT)/build/$$base $(H)/format-series || exit 1; \
	done

kernel: apply
	@$(H)/build $(VARIANT)

apply:
	@$(H)/deps
	@$(H)/apply-series

clean:
	rm -rf $(BUILD)
