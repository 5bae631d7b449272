# riscv64 (rv64gc, lp64d): little-endian; Debian's port since trixie.
TRIPLE        := riscv64-linux-gnu
DEB_ARCH      := riscv64
UNAME_M       := riscv64
BPF_TARGET    := bpfel
BPF_ARCH      := riscv
ELF_MACHINE   := UCB RISC-V
ELF_ENDIAN    := LSB
# bookworm has no riscv64: musl is built from bookworm's musl source, the
# kernel's UAPI headers come from linux-libc-dev-riscv64-cross (toolchain/build.sh).
MUSL_FROM     := source
QEMU_USER     := qemu-riscv64-static
QEMU_SYSTEM   := qemu-system-riscv64
# OpenSBI from qemu-system-data (QEMU's default -bios for virt).
QEMU_MACHINE  := -M virt -cpu rv64
QEMU_CONSOLE  := ttyS0
KERNEL_FLAVOUR := riscv64
# bookworm's busybox-static has no riscv64 either.
BUSYBOX_SUITE := trixie
# GCC 12 for RISC-V has no -mno-omit-leaf-frame-pointer: a leaf saves s0 at
# fp - 8 and keeps its return address in ra, as the kernel's walk assumes
# of the innermost frame (it takes the saved ra register there).  The walk
# then reads records from s0 on: a frameless syscall() would lose its
# caller's caller, so the blocker makes its own system calls (sys4).
WORKLOAD_CFLAGS := -fno-optimize-sibling-calls -fno-omit-frame-pointer
# The distro workload as sid's native compiler (gcc-16) builds it: of its
# defaults, only the unwind tables differ from the cross gcc-12's (-Q
# --help=common, the native driver under qemu-user): none by default in
# GCC 12 for RISC-V, asynchronous ones in 16.  Same -O2, PIE, no frame pointer.
DISTRO_CFLAGS := -fasynchronous-unwind-tables -funwind-tables
# The cross libc6 (bookworm's, built by that gcc-12) has unwind tables only
# where glibc asks for them: 810 FDEs, none for pthread_mutex_lock or
# epoll_wait.  The cells run the workload on trixie's own riscv64 libc6, as
# a device running Debian has it (and its libc6-dbg for start_thread).
DISTRO_LIBC_SUITE := trixie
# 6.12 and 7.2 (sid's creates no task local storage: tp_btf,hash there).
KERNEL_SUITES := trixie sid
# --call-graph dwarf by default (where the kernel can); a frame record
# {caller's s0, ra} sits just below the CFA, at fp - 16, where the code keeps
# one (musl's own code keeps none, nor CFI: GCC 12 makes no unwind tables
# for RISC-V by default).
DWARF_DEFAULT := 1
# --unwind-in kernel: the BPF program walks user stacks with CFI rows.
KUNWIND := 1
# perf_regs indexes (uapi asm/perf_regs.h) of pc, sp, frame pointer and link
# register (-1: none): the registers -F samples copy for dwarf.
PERF_UREGS := 0,2,8,1
