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
WORKLOAD_CFLAGS := -fno-optimize-sibling-calls -fno-omit-frame-pointer -mbackchain
# bullseye has no s390x any more.
KERNEL_SUITES := bookworm trixie sid
# --call-graph fp by default: with dwarf (and a back-chain step over musl's
# code without CFI) QEMU s390x-6.12 still lost blocker_mutex_wait (stacks
# cut after lock_mutex; not understood yet).  --call-graph dwarf works where
# every file has CFI (glibc).
DWARF_DEFAULT := 0
