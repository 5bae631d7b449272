# arm64 (aarch64): little-endian; the kernel and uname call it aarch64.
TRIPLE        := aarch64-linux-gnu
DEB_ARCH      := arm64
UNAME_M       := aarch64
BPF_TARGET    := bpfel
BPF_ARCH      := arm64
ELF_MACHINE   := ARM aarch64
ELF_ENDIAN    := LSB
QEMU_USER     := qemu-aarch64-static
QEMU_SYSTEM   := qemu-system-aarch64
# pauth-impdef: plain -cpu max spends half its time emulating QARMA pointer auth.
QEMU_MACHINE  := -M virt -cpu max,pauth-impdef=on
QEMU_CONSOLE  := ttyAMA0
KERNEL_FLAVOUR := arm64
WORKLOAD_CFLAGS := -fno-optimize-sibling-calls -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
KERNEL_SUITES := bullseye bookworm trixie sid
# --call-graph fp by default: the frame record of GCC's arm64 code sits at
# the bottom of its frame, so a frame-pointer step over code without CFI
# (musl's, in the matrix's static workload) does not give the caller's sp
# and the CFI steps after it fail (QEMU arm64-6.12: every blocker function
# lost).  --call-graph dwarf works where every file has CFI (glibc).
DWARF_DEFAULT := 0
