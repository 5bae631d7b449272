# x86_64: build host architecture.
TRIPLE        := x86_64-linux-gnu
DEB_ARCH      := amd64
UNAME_M       := x86_64
BPF_TARGET    := bpfel
BPF_ARCH      := x86
ELF_MACHINE   := x86-64
ELF_ENDIAN    := LSB
QEMU_USER     := qemu-x86_64-static
QEMU_SYSTEM   := qemu-system-x86_64
QEMU_MACHINE  := -M q35 -cpu max
QEMU_CONSOLE  := ttyS0
KERNEL_FLAVOUR := amd64
WORKLOAD_CFLAGS := -fno-optimize-sibling-calls -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
KERNEL_SUITES := bullseye bookworm trixie sid
# --call-graph dwarf by default (where the kernel can): one frame-pointer step
# crosses code without CFI (musl's own code in static binaries), as tested.
DWARF_DEFAULT := 1
# --unwind-in kernel: the BPF program walks user stacks with CFI rows.
KUNWIND := 1
# perf_regs indexes (uapi asm/perf_regs.h) of pc, sp, frame pointer and link
# register (-1: none): the registers -F samples copy for dwarf.
PERF_UREGS := 8,7,6,-1
