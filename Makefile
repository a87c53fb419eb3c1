# bootbench: build, test, benchmark, boot.
#
#   make build   static release binary (x86_64-unknown-linux-musl)
#   make deps    install what the rest needs (Debian packages, Rust targets); run by qemu and test
#   make kernel  Debian's kernel and its signed boot chain, shim-signed and grub-efi-amd64-signed
#                (apt-get download + dpkg -x) into out/, when absent
#   make image   out/vmlinuz, out/initramfs.img, out/bootbench.img (the USB stick image); out/vmlinux,
#                the kernel decompressed, for the tests' direct boots (qemu/vmlinux.sh)
#   make netboot out/netboot: the network boot directory (kernel, initramfs, iPXE/PXELINUX/GRUB
#                scripts and loaders, dnsmasq example); NETBOOT_ARGS='--config-url URL ...'
#   make qemu    boot out/bootbench.img as a USB stick under OVMF with four virtual disks;
#                prints the table, copies the results from the stick to out/results/ and
#                writes out/report.html (bootbench-report html)
#   make test    what CI runs: rustfmt check, no_std build of bench-core, clippy (host and musl),
#                the static musl binary, the image, all tests including the QEMU end-to-end ones
#   make bench   bootbench vs fio on a RAM-backed loop device (needs root, fio), and each io_uring
#                option's CPU per I/O against fio's same engine (bench/engines-compare.sh;
#                BENCH_NVME=/dev/nvmeXnY adds hipri and io_uring_cmd on an NVMe drive); the image's
#                sizes, PID 1 start to first I/O and PID 1 peak memory from a QEMU boot;
#                bootbench-report fleet's memory and time over generated documents (bench-fleet)
#   make bench-fleet  that fleet part alone (FLEET_DOCS, default 10000; FLEET_MEM_DOCS,
#                default "200 2000 10000"; FLEET_TMPDIR: about 390 KB per document on disk)
#   make fidelity  every classic twin beside its real tool (hdparm, dd, sysbench, fio/CDM)
#                on loop devices over /dev/shm and the local disk (needs root; FIDELITY_* env)
#   make maas    out/maas: the MAAS tarball (static bootbench-init, integrations/maas/'s module and
#                default configs) and the two testing scripts to upload; MAAS_URL=where the
#                tarball will be served (written into the scripts' packages: {url: ...})
#   make man     out/man: the man pages of the four commands and of each subcommand
#                (bootbench-report.1, bootbench-report-fleet.1, ...), from their clap definitions
#   make install the host tools (bootbench-image, bootbench-qemu, bootbench-report, release builds),
#                the static bootbench-init and the man pages into $(DESTDIR)$(PREFIX)/bin and
#                $(DESTDIR)$(PREFIX)/share/man/man1 (PREFIX=/usr/local by default); builds them first
#   make fmt     rustfmt
#   make clean
#
# Overrides: KERNEL=linux-image-<version> (default: what linux-image-amd64 depends on),
# SHIM_PKG=shim-signed, GRUB_PKG=grub-efi-amd64-signed, OUT=out, CONFIG=FILE (the stick's bootbench.json),
# EXTRA_MODULES="NAME ..." (modules the initramfs carries besides its set, for bootbench.modules=),
# ACCEL=auto|tcg|kvm, TIMEOUT=seconds and QEMU_CONFIG=FILE (default qemu/configs/quick.json) for make qemu,
# PREFIX=/usr/local and DESTDIR= for make install.

CARGO ?= cargo
MUSL  := x86_64-unknown-linux-musl
BARE  := x86_64-unknown-none
OUT   ?= out

# The kernel package: linux-image-amd64's dependency, looked up only when needed.
KERNEL  ?= $(shell apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $$2; exit}')
SHIM_PKG ?= shim-signed
GRUB_PKG ?= grub-efi-amd64-signed
CONFIG  ?=
ACCEL   ?= auto
# The config make qemu puts on its copy of the stick.
QEMU_CONFIG ?= qemu/configs/quick.json
TIMEOUT ?= 1200

# End-to-end tests to leave out (cargo test filters, e.g. E2E_SKIP='--skip t5'); none by default.
E2E_SKIP ?=
# The end-to-end test targets by name (tests/tests/NAME.rs: --test NAME), run in the workspace's
# selection: cargo then reuses the host tests' build, where `-p bootbench-e2e` resolves the
# dependencies' features for that package alone and rebuilds them (42 s of a CI run). No other
# package may have a test target of one of these names (cargo would run it too).
E2E_TESTS := $(patsubst tests/tests/%.rs,--test %,$(sort $(wildcard tests/tests/*.rs)))

TARGET_DIR := $(or $(CARGO_TARGET_DIR),target)
INIT_BIN   := $(TARGET_DIR)/$(MUSL)/release/bootbench-init
IMAGE_TOOL := $(TARGET_DIR)/release/bootbench-image
QEMU_TOOL  := $(TARGET_DIR)/release/bootbench-qemu
REPORT_TOOL := $(TARGET_DIR)/release/bootbench-report
SHIM_EFI   := $(OUT)/shim/usr/lib/shim/shimx64.efi.signed
GRUB_EFI   := $(OUT)/grub/usr/lib/grub/x86_64-efi-signed/grubx64.efi.signed
GRUB_NET_EFI := $(OUT)/grub/usr/lib/grub/x86_64-efi-signed/grubnetx64.efi.signed
NETBOOT_ARGS ?=
CONFIG_ARG := $(if $(CONFIG),--config $(CONFIG))
# Modules the initramfs carries besides the default set (bootbench-image --add-module), loaded at
# boot when the kernel command line names them (bootbench.modules=NAME,...): EXTRA_MODULES="a b".
EXTRA_MODULES ?=
ADD_MODULE_ARGS = $(foreach m,$(EXTRA_MODULES),--add-module $(m))
PREFIX  ?= /usr/local
DESTDIR ?=
MAN_DIR := $(OUT)/man

MAAS_URL ?=

.PHONY: maas build test bench bench-fleet fidelity fuzz fmt clean targets deps kernel image tools qemu netboot man install

targets:
	rustup target add $(MUSL) $(BARE)

# Debian packages and Rust components, installed only when something is missing.
deps:
	bash .ci/deps

build: targets
	$(CARGO) build --release -p bootbench-init --target $(MUSL)
	@echo "binary: $(INIT_BIN)"

# The MAAS testing scripts and the tarball they download (docs/fleets.md, "MAAS").
maas: build
	bash integrations/maas/pack.sh $(INIT_BIN) $(OUT)/maas $(MAAS_URL)

tools:
	$(CARGO) build --release -p bootbench-image -p bootbench-qemu -p bootbench-report

# bootbench-man (man/): clap_mangen's roff from the commands' clap definitions, in a generator of
# its own so that none of the shipped binaries links it. Written anew: no page of a removed
# subcommand stays behind.
man:
	rm -rf $(MAN_DIR)
	$(CARGO) run -q -p bootbench-man -- $(MAN_DIR)

install: build tools man
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(INIT_BIN) $(IMAGE_TOOL) $(QEMU_TOOL) $(REPORT_TOOL) $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(MAN_DIR)/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/

# Fetch and unpack a package into DIR unless DIR/.pkg names it already.
# $(call unpack,PACKAGE,DIR)
define unpack
	@if [ -z "$(1)" ]; then \
	  echo "no package name: run 'apt-get update' (apt-cache depends linux-image-amd64 found nothing) or set KERNEL=" >&2; \
	  exit 1; fi
	@if [ "$$(cat $(2)/.pkg 2>/dev/null)" != "$(1)" ]; then \
	  set -e; mkdir -p $(OUT)/pkgs; \
	  echo "fetching $(1)"; \
	  (cd $(OUT)/pkgs && rm -f $(1)_*.deb && apt-get download $(1)); \
	  rm -rf $(2); dpkg -x $(OUT)/pkgs/$(1)_*.deb $(2); echo "$(1)" > $(2)/.pkg; \
	else echo "$(2): $(1) already unpacked"; fi
endef

kernel:
	$(call unpack,$(KERNEL),$(OUT)/kernel)
	$(call unpack,$(SHIM_PKG),$(OUT)/shim)
	$(call unpack,$(GRUB_PKG),$(OUT)/grub)

# The image's files from the kernel, the static binary and $(IMAGE_TOOL): image's recipe, and
# make test's with the test build's bootbench-image.
define make-image
	cp $$(ls $(OUT)/kernel/boot/vmlinuz-* | head -n 1) $(OUT)/vmlinuz
	bash qemu/vmlinux.sh $(OUT)/vmlinuz $(OUT)/vmlinux
	$(IMAGE_TOOL) initramfs --kernel-dir $(OUT)/kernel --init $(INIT_BIN) $(ADD_MODULE_ARGS) -o $(OUT)/initramfs.img
	$(IMAGE_TOOL) usb --kernel-dir $(OUT)/kernel --initramfs $(OUT)/initramfs.img --shim $(SHIM_EFI) --grub $(GRUB_EFI) \
	  $(CONFIG_ARG) -o $(OUT)/bootbench.img
	@ls -l $(OUT)/vmlinuz $(OUT)/vmlinux $(OUT)/initramfs.img $(OUT)/bootbench.img
endef

image: build tools kernel
	$(make-image)

netboot: image
	$(IMAGE_TOOL) netboot --kernel-dir $(OUT)/kernel --initramfs $(OUT)/initramfs.img \
	  --shim $(SHIM_EFI) --grub $(GRUB_NET_EFI) $(NETBOOT_ARGS) -o $(OUT)/netboot

qemu: deps image
	rm -rf $(OUT)/results $(OUT)/serial-results
	@# A copy of the stick with QEMU_CONFIG on it (the image's own default is standard).
	cp $(OUT)/bootbench.img $(OUT)/qemu-stick.img
	$(QEMU_TOOL) usb --image $(OUT)/qemu-stick.img --config $(QEMU_CONFIG) --default-disks --out-dir $(OUT) \
	  --accel $(ACCEL) --probe-kernel $(OUT)/vmlinuz --timeout $(TIMEOUT)
	@# The run's documents: the stick's copies, else those cut from the console.
	$(REPORT_TOOL) html $$(ls $(OUT)/results/*.json 2>/dev/null || ls $(OUT)/serial-results/*.json) \
	  -o $(OUT)/report.html
	@echo "report: $(OUT)/report.html"

# The image make test boots carries scsi_debug (270 KB, 62 KB zstd-compressed): zoned.rs z2's
# host-managed SCSI disk. It is made with the host tools of the test build (target/debug: the
# same code, without the release profile's fat LTO, which takes about 3 minutes on 2 cores); the
# walkthrough test runs them in place of target/release's (BOOTBENCH_TOOLS).
TEST_TOOLS = $(TARGET_DIR)/debug
test: override EXTRA_MODULES += scsi_debug
test: IMAGE_TOOL = $(TEST_TOOLS)/bootbench-image
test: deps targets build kernel
	$(CARGO) fmt --all --check
	$(CARGO) build -p bench-core --target $(BARE)
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) clippy -p bootbench-init --target $(MUSL) -- -D warnings
	@# The shipped binary must be static: no program interpreter, no needed libraries.
	@bin=$(INIT_BIN); \
	  if readelf -ld $$bin | grep -Eq 'INTERP|NEEDED'; then echo "$$bin is not static" >&2; exit 1; fi; \
	  echo "$$bin: static, $$(stat -c %s $$bin) bytes"
	@# The test build, with bootbench-image and bootbench-report (their integration tests need them).
	$(CARGO) test --workspace --exclude bootbench-e2e --no-run
	$(make-image)
	$(CARGO) test --workspace --exclude bootbench-e2e
	@# QEMU end to end (TCG): boots out/vmlinux (direct) or out/vmlinuz + out/initramfs.img and out/bootbench.img.
	@dup=$$(for f in tests/tests/*.rs; do ls */tests/$$(basename $$f) 2>/dev/null | grep -v '^tests/'; done); \
	  if [ -n "$$dup" ]; then echo "test targets named as an end-to-end test (E2E_TESTS would run them): $$dup" >&2; exit 1; fi
	BOOTBENCH_OUT=$(abspath $(OUT)) BOOTBENCH_TOOLS=$(abspath $(TEST_TOOLS)) \
	  $(CARGO) test --workspace $(E2E_TESTS) -- --test-threads=1 $(E2E_SKIP)

bench: image
	bash bench/fio-compare.sh
	bash bench/engines-compare.sh
	bash bench/placement.sh
	bash bench/burnin-compare.sh
	bash bench/boot.sh
	$(MAKE) bench-fleet

# bootbench-report fleet over many generated documents: the release tool and
# the Value-parse floor it is measured against (report/examples/parse_floor.rs).
bench-fleet:
	$(CARGO) build --release -p bootbench-report --bin bootbench-report --example parse_floor
	python3 bench/fleet.py

fidelity:
	bash bench/fidelity.sh

fuzz:
	bash fuzz/run.sh

fmt:
	$(CARGO) fmt --all

clean:
	$(CARGO) clean
	rm -rf $(OUT)
