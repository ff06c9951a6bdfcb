# Entry points; scripts/setup.sh installs missing tools first (quietly).
SHELL := /bin/bash
export PATH := $(HOME)/.cargo/bin:$(PATH)

.PHONY: run test

run:
	scripts/setup.sh && cargo xtask run

test:
	scripts/setup.sh && cargo xtask test
