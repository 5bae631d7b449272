# s390x: big-endian; BPF objects must be bpfeb.  Debian's s390x kernels have no
# BPF JIT, and bookworm's has no BTF.  User stacks are walked by back chain.
TRIPLE        := s390x-linux-gnu
DEB_ARCH      := s390x
UNAME_M       := s390x
BPF_TARGET    := bpfeb
BPF_ARCH      := s390
ELF_MACHINE   := IBM S/390
ELF_ENDIAN    := MSB
QEMU_USER     := qemu-s390x-static
QEMU_SYSTEM   := qemu-system-s390x
QEMU_MACHINE  := -M s390-ccw-virtio -cpu max
QEMU_CONSOLE  := ttysclp0
KERNEL_FLAVOUR := s390x
# The back chain for the kernel's walk (fp); no -fno-omit-frame-pointer: it
# gives no walker anything on s390x, and GCC's leaves then keep the caller's
# r11, the CFA base of its every row, in f0, which no copy of the general
# registers recovers (dwarf lost the leaf's caller and all above).
WORKLOAD_CFLAGS := -fno-optimize-sibling-calls -mbackchain
# bullseye has no s390x any more.
KERNEL_SUITES := bookworm trixie sid
# dwarf by default as on the other boards: the registers at kernel entry
# and the stack are copied, unwound with CFI, the back chain where a file
# has none.
DWARF_DEFAULT := 1
# --unwind-in kernel: the BPF program walks user stacks with CFI rows.
KUNWIND := 1
# perf_regs indexes (uapi asm/perf_regs.h) of pc, sp, frame pointer and link
# register (-1: none): the registers -F samples copy for dwarf.
PERF_UREGS := 33,15,11,14
