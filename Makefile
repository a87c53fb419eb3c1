# bootbench: build, test, benchmark.
#
#   make build   static release binary (x86_64-unknown-linux-musl)
#   make test    what CI runs: rustfmt check, no_std build of bench-core, clippy (host and musl),
#                the static musl binary, all tests
#   make bench   bootbench vs fio on a RAM-backed loop device (needs root, fio)
#   make fmt     rustfmt
#   make clean

CARGO ?= cargo
MUSL  := x86_64-unknown-linux-musl
BARE  := x86_64-unknown-none

.PHONY: build test bench fmt clean targets

targets:
	rustup target add $(MUSL) $(BARE)

build: targets
	$(CARGO) build --release -p bootbench-init --target $(MUSL)
	@echo "binary: $${CARGO_TARGET_DIR:-target}/$(MUSL)/release/bootbench-init"

test: targets
	$(CARGO) fmt --all --check
	$(CARGO) build -p bench-core --target $(BARE)
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) clippy -p bootbench-init --target $(MUSL) -- -D warnings
	$(CARGO) build --release -p bootbench-init --target $(MUSL)
	@# The shipped binary must be static: no program interpreter, no needed libraries.
	@bin=$${CARGO_TARGET_DIR:-target}/$(MUSL)/release/bootbench-init; \
	  if readelf -ld $$bin | grep -Eq 'INTERP|NEEDED'; then echo "$$bin is not static" >&2; exit 1; fi; \
	  echo "$$bin: static, $$(stat -c %s $$bin) bytes"
	$(CARGO) test --workspace

bench:
	bash bench/fio-compare.sh

fmt:
	$(CARGO) fmt --all

clean:
	$(CARGO) clean
