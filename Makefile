# Page Detective: the kernel files live at their kernel paths; the tooling
# that builds, boots and checks them lives in harness/.  See README.md.
include harness/rules.mk
