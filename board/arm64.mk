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
# --call-graph dwarf by default (where the kernel can): over code without
# CFI (musl's own, in static binaries) a frame-record step; GCC puts arm64
# frame records at the bottom of the frame, so the caller's sp then comes
# from its own row (CFA = x29 - its offset), as tested in the QEMU cells.
DWARF_DEFAULT := 1
# --unwind-in kernel: the BPF program walks user stacks with CFI rows.
KUNWIND := 1
# perf_regs indexes (uapi asm/perf_regs.h) of pc, sp, frame pointer and link
# register (-1: none): the registers -F samples copy for dwarf.
PERF_UREGS := 32,31,29,30
