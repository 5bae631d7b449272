# armhf (ARMv7-A, hard-float VFPv3-D16, Thumb-2): little-endian, as Debian's
# armhf; the kernel and uname call it armv7l.  Kernel pointers are 4 bytes
# (BPF registers 8): every kernel read is sized by the kernel's BTF.
TRIPLE        := arm-linux-gnueabihf
DEB_ARCH      := armhf
UNAME_M       := armv7l
BPF_TARGET    := bpfel
BPF_ARCH      := arm
ELF_MACHINE   := ARM
ELF_ENDIAN    := LSB
QEMU_USER     := qemu-arm-static
QEMU_SYSTEM   := qemu-system-arm
QEMU_MACHINE  := -M virt -cpu cortex-a15
QEMU_CONSOLE  := ttyAMA0
KERNEL_FLAVOUR := armmp
# Debian's armhf userland is Thumb-2 (gcc's default), whose frame pointer
# r7 GCC points at the bottom of the locals: no chain a walker can follow.
# The kernel's user walk (arch/arm/kernel/perf_callchain.c) reads APCS
# frames from r11: {caller's fp, sp, lr} at fp - 12.  The fp workload is
# built that way (ARM state, -mapcs-frame), the one layout it walks.
WORKLOAD_CFLAGS := -fno-optimize-sibling-calls -fno-omit-frame-pointer -marm -mapcs-frame
# That workload has no unwind tables for the default call graph (dwarf) to
# read: the cells record it with the kernel's fp walk.  The distribution-
# built one is recorded with --call-graph fp too, the control that must
# miss its hard criteria (qemu-tests/check.py).
CELL_BLOCKER_ARGS := --call-graph fp
CELL_DISTRO_FP := 1
# Debian's defaults (-O2, PIE, no frame pointer, no unwind tables) plus
# -funwind-tables: the .ARM.exidx/.ARM.extab tables the EHABI unwinder reads.
DISTRO_CFLAGS := -funwind-tables
# The cross libc6 has EHABI entries only where glibc asks (none for
# start_thread, pthread_mutex_lock, epoll_wait, ioctl): the cells run the
# workload on bookworm's own armhf libc6 with its libc6-dbg installed in the
# guest, whose .debug_frame the unwinder takes where EHABI has no entry.
DISTRO_LIBC_SUITE := bookworm
KERNEL_SUITES := bullseye bookworm trixie sid
# bpf_get_stackid in raw_tp programs (the only kind without kernel BTF)
# gives one frame on 6.1 and later: arm's unwinder starts at the helper's
# caller, the BPF program (5.10 still walks the whole stack).  Wakers'
# interrupts come from preempt_count there, and from the hrtimer callbacks
# the program sees run (hrtimer_expire_entry/exit: 7.x runs some in task
# context): [irq] counts for a timer too (tests/wakers_check.py
# --irq-for-timer).
KSTACK_CUT := raw_tp
# Copies unwound by EHABI (.ARM.exidx), else the file's .debug_frame from
# its separate debug file (libc6-dbg), else the Thumb frame record.
DWARF_DEFAULT := 1
# perf_regs indexes (uapi asm/perf_regs.h) of pc, sp, frame pointer and link
# register (-1: none): the registers -F samples copy for dwarf.  The frame
# pointer copied is Thumb's r7 (PERF_REG_ARM_R7), as in the switch-out copies
# (bpf/vmlinux_min.h): Debian's armhf code is Thumb-2, whose EHABI and CFI
# rows (vsp = r7) and frame records use r7.  r11 is read only where the
# APCS chain is walked: by the kernel's --call-graph fp walk itself (from
# pt_regs) and by the stack cache's key (OFFCPU_UCHAIN_FP).
PERF_UREGS := 15,13,7,14
# --unwind-in kernel: the BPF program walks user stacks with rows from
# EHABI, and from the debug file's .debug_frame over EHABI's gaps.
KUNWIND := 1
# Kernels built from Debian's source (qemu-tests/kbuild.sh): make's ARCH and
# the image QEMU boots.
KBUILD_ARCH   := arm
KBUILD_IMAGE  := zImage
# Kernels built from Debian's source for the matrix (qemu-tests/kbuild.tsv,
# row NAME-armhf): nobpf, perf events and tracepoints without bpf().
KERNEL_BUILT  := nobpf
