// SPDX-License-Identifier: GPL-2.0
/* Kernel feature probing and the choice of program variant. */
#include <byteswap.h>
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <stdarg.h>
#include <gelf.h>
#include <linux/capability.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "record/btf_archive.h"
#include "record/embed.h"
#include "record/probe.h"
#include "record/kfunc_range.h"

#define KVER(a, b, c) (((a) << 16) + ((b) << 8) + (c))
#define SYS_BTF "/sys/kernel/btf/vmlinux"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/*
 * Where the BPF checks' refusals go: stderr, or with --backend auto this
 * buffer, which becomes the reason the perf backend was chosen.
 */
static char *refusal;
static size_t refusal_len;

static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (refusal) {
		vsnprintf(refusal, refusal_len, fmt, ap);
		refusal[strcspn(refusal, "\n")] = '\0';
	} else {
		vfprintf(stderr, fmt, ap);
	}
	va_end(ap);
}

static int parse_kver(const char *release)
{
	unsigned a = 0, b = 0, c = 0;

	sscanf(release, "%u.%u.%u", &a, &b, &c);
	return KVER(a, b, c > 255 ? 255 : c);
}

static bool has_caps(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = {};

	if (syscall(SYS_capget, &h, d))
		return geteuid() == 0;
#define HAS(c) (d[(c) / 32].effective & (1u << ((c) % 32)))
	return HAS(CAP_SYS_ADMIN) || (HAS(CAP_BPF) && HAS(CAP_PERFMON));
#undef HAS
}

static bool read_flag(const char *path)
{
	FILE *f = fopen(path, "r");
	int v = 0;

	if (!f)
		return false;
	if (fscanf(f, "%d", &v) != 1)
		v = 0;
	fclose(f);
	return v != 0;
}

/* Extract the embedded minimal BTF for this kernel into a private temp file. */
static int embedded_btf(struct probe *p)
{
	char err[128] = "";
	void *btf = NULL;
	size_t len = 0;
	const char *tmp = getenv("TMPDIR");
	int fd, r;

	r = btf_archive_find(offcpu_btf_archive,
			     offcpu_btf_archive_end - offcpu_btf_archive,
			     p->machine, p->release, &btf, &len, err, sizeof(err));
	if (r < 0)
		say("offcpu: embedded BTF archive: %s\n", err);
	if (r <= 0)
		return -1;
	snprintf(p->btf_path, sizeof(p->btf_path), "%s/offcpu-btf.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	fd = mkstemp(p->btf_path);	/* mode 0600, O_EXCL */
	if (fd < 0 || write(fd, btf, len) != (ssize_t)len) {
		say("offcpu: cannot write a temporary BTF file %s: %s\n",
			p->btf_path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(p->btf_path);
		}
		free(btf);
		p->btf_path[0] = '\0';
		return -1;
	}
	close(fd);
	free(btf);
	p->btf_tmp = true;
	return 0;
}

/* BTF bytes whose header libbpf 1.5 would accept but then misread. */
static bool btf_header_ok(const unsigned char *d, size_t n)
{
	uint16_t magic;
	uint32_t len;

	if (n < 8)
		return true;	/* libbpf rejects it cleanly */
	memcpy(&magic, d, 2);
	memcpy(&len, d + 4, 4);
	if (magic == bswap_16(0xeb9f))
		len = bswap_32(len);
	else if (magic != 0xeb9f)
		return true;
	/* Types follow the header: unaligned, libbpf reads them misaligned (UBSan). */
	return len % 4 == 0;
}

/* Raw BTF, or an ELF's .BTF and .BTF.base sections, as btf__parse reads them. */
static bool btf_file_ok(const char *path)
{
	unsigned char hdr[8];
	bool ok = true;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : pread(fd, hdr, sizeof(hdr), 0);

	if (n < 4 || memcmp(hdr, ELFMAG, SELFMAG)) {
		if (fd >= 0)
			close(fd);
		return n < 0 || btf_header_ok(hdr, n);
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && !elf_getshdrstrndx(elf, &shstrndx)) {
		while (ok && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *name;
			Elf_Data *data;

			if (!gelf_getshdr(scn, &sh))
				continue;
			name = elf_strptr(elf, shstrndx, sh.sh_name);
			if (!name || (strcmp(name, ".BTF") && strcmp(name, ".BTF.base")))
				continue;
			/* Empty: libbpf would memcpy from NULL (UBSan), then fail. */
			data = elf_getdata(scn, NULL);
			ok = data && data->d_buf && btf_header_ok(data->d_buf, data->d_size);
		}
	}
	elf_end(elf);
	close(fd);
	return ok;
}

struct btf *probe_btf_parse(const char *path)
{
	if (!btf_file_ok(path)) {
		errno = EINVAL;
		return NULL;
	}
	return btf__parse(path, NULL);
}

/* Append one step of the BTF search to p->chain. */
static void chain(struct probe *p, const char *fmt, ...)
{
	size_t used = strlen(p->chain);
	va_list ap;

	if (used >= sizeof(p->chain) - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(p->chain + used, sizeof(p->chain) - used, fmt, ap);
	va_end(ap);
}

static bool btf_none(const char *btf_file)
{
	return btf_file && !strcmp(btf_file, "none");
}

/*
 * CO-RE needs BTF: an explicit --btf wins (so it can be tested, and so a user
 * can correct a kernel's broken BTF), then the kernel's own, then the archive
 * embedded in the binary.  Kernel BTF alone decides whether tp_btf works.
 * Returns 0 when BTF was found, 1 when there is none (the BTF-free variant
 * is next), -1 after one line on a bad --btf FILE.
 */
static int find_btf(struct probe *p, const char *btf_file)
{
	struct btf *btf;

	if (btf_file) {
		btf = probe_btf_parse(btf_file);
		if (!btf) {
			say("offcpu: --btf %s: %s\n", btf_file,
				errno == ENOENT ? "no such file" : "not a BTF or ELF file with BTF");
			return -1;
		}
		btf__free(btf);
		snprintf(p->btf_path, sizeof(p->btf_path), "%s", btf_file);
		p->btf = BTF_FILE;
		chain(p, "--btf %s (given: wins)", btf_file);
		return 0;
	}
	if (p->kernel_btf) {
		p->btf = BTF_KERNEL;
		chain(p, "kernel BTF %s", SYS_BTF);
		return 0;
	}
	chain(p, "kernel BTF: %s missing -> ", SYS_BTF);
	if (!embedded_btf(p)) {
		p->btf = BTF_EMBEDDED;
		chain(p, "embedded: %s %s", p->machine, p->release);
		return 0;
	}
	chain(p, "embedded: none for %s %s -> --btf: not given -> ", p->machine, p->release);
	return 1;
}

/* The BTF-free variant's record layouts; FORCED: asked for, not the last resort. */
static int find_formats(struct probe *p, bool forced)
{
	char err[256];

	if (!tracefs_sched_read(&p->tp, err, sizeof(err))) {
		chain(p, "none: classic tracepoints, record layouts from %s%s",
		      p->tp.dir, p->tp.mounted ? " (mounted for the reading)" : "");
		return 0;
	}
	if (forced)
		say("offcpu: the BTF-free variant needs the sched tracepoints' formats from tracefs: %s\n",
			err);
	else
		say("offcpu: no BTF for kernel %s %s (%s is missing, none is embedded, no --btf FILE) "
			"and no tracepoint format for the BTF-free variant (%s)\n",
			p->release, p->machine, SYS_BTF, err);
	return -1;
}

/*
 * Where the program's types come from: BTF (find_btf), or none, when none
 * is found or the BTF-free variant is asked for (--btf none, --variant
 * tp,hash).
 */
static int find_types(struct probe *p, const char *btf_file, const char *variant)
{
	bool tp = variant && !strcmp(variant, "tp,hash");
	int r;

	p->kernel_btf = !access(SYS_BTF, R_OK);
	if (btf_none(btf_file) && variant && !tp) {
		say("offcpu: --btf none runs the BTF-free variant tp,hash, not --variant %s\n",
			variant);
		return -1;
	}
	if (tp && btf_file && !btf_none(btf_file)) {
		say("offcpu: --variant tp,hash uses no BTF: drop --btf %s\n", btf_file);
		return -1;
	}
	if (tp || btf_none(btf_file)) {
		chain(p, "%s: no BTF used -> ", tp ? "--variant tp,hash" : "--btf none");
		return find_formats(p, true);
	}
	r = find_btf(p, btf_file);
	return r > 0 ? find_formats(p, false) : r;
}

/* sched_switch's BTF prototype has prev_state as its 4th argument (5.18+). */
static void probe_prev_state(struct probe *p, const struct btf *btf)
{
	const struct btf_type *t;
	int id;

	id = btf ? btf__find_by_name_kind(btf, "btf_trace_sched_switch", BTF_KIND_TYPEDEF) : -1;
	if (id > 0) {
		t = btf__type_by_id(btf, id);
		t = btf__type_by_id(btf, t->type);
		if (t && btf_is_ptr(t))
			t = btf__type_by_id(btf, t->type);
		if (t && btf_is_func_proto(t)) {
			/* First parameter is the tracepoint's void *__data. */
			p->prev_state_arg = btf_vlen(t) >= 5;
			p->prev_state_why = "btf_trace_sched_switch prototype";
			return;
		}
	}
	/* Minimal BTF lacks the prototype: the kernel version decides. */
	p->prev_state_arg = p->kver >= KVER(5, 18, 0);
	p->prev_state_why = "kernel version (no btf_trace_sched_switch in BTF)";
}

void probe_btf_read(struct probe *p, const struct btf *btf)
{
	const struct btf_type *t;
	int id;

	p->state_new = p->kver >= KVER(5, 14, 0);
	id = btf ? btf__find_by_name_kind(btf, "task_struct", BTF_KIND_STRUCT) : -1;
	if (id > 0) {
		const struct btf_member *m;

		t = btf__type_by_id(btf, id);
		m = btf_members(t);
		p->state_new = false;
		for (int i = 0; i < btf_vlen(t); i++, m++)
			if (!strcmp(btf__name_by_offset(btf, m->name_off), "__state"))
				p->state_new = true;
	}
	probe_prev_state(p, btf);
}

static void probe_btf_facts(struct probe *p)
{
	struct btf *btf = p->btf == BTF_KERNEL ? btf__load_vmlinux_btf()
					       : probe_btf_parse(p->btf_path);

	probe_btf_read(p, btf);
	btf__free(btf);
}

static int choose_variant(struct probe *p, const char *btf_file, const char *variant)
{
	if (variant) {
		if (!strcmp(variant, "tp_btf,task")) {
			p->tp_btf = p->use_task_storage = true;
		} else if (!strcmp(variant, "tp_btf,hash")) {
			p->tp_btf = true;
		} else if (!strcmp(variant, "raw_tp,hash")) {
			p->tp_btf = false;
		} else if (!strcmp(variant, "tp,hash")) {
			p->classic_tp = true;
		} else {
			say("offcpu: invalid --variant '%s': expected tp_btf,task, tp_btf,hash, raw_tp,hash or tp,hash\n",
				variant);
			return -1;
		}
		if (!p->classic_tp && p->btf == BTF_NONE) {
			say("offcpu: --variant %s needs BTF, and there is none: %s\n",
				variant, p->chain);
			return -1;
		}
		if (p->tp_btf && !p->kernel_btf) {
			say("offcpu: --variant %s needs kernel BTF (%s), which this kernel lacks\n",
				variant, SYS_BTF);
			return -1;
		}
		if (p->use_task_storage && !p->task_storage) {
			say("offcpu: --variant %s needs task local storage (Linux 5.11+)\n",
				variant);
			return -1;
		}
		snprintf(p->why, sizeof(p->why), "forced by --variant");
		return 0;
	}
	if (p->btf == BTF_NONE) {
		p->classic_tp = true;
		snprintf(p->why, sizeof(p->why), "%s: classic tracepoints, no CO-RE, hash keyed by tid",
			 btf_none(btf_file) ? "--btf none" : "no BTF for this kernel");
		return 0;
	}
	p->tp_btf = p->kernel_btf;
	p->use_task_storage = p->kernel_btf && p->task_storage;
	if (p->use_task_storage)
		snprintf(p->why, sizeof(p->why), "kernel BTF and task local storage available");
	else if (p->kernel_btf)
		snprintf(p->why, sizeof(p->why), "no task local storage (needs 5.11+): hash keyed by tid");
	else
		snprintf(p->why, sizeof(p->why),
			 "no kernel BTF: raw tracepoint, CO-RE against %s BTF, hash keyed by tid",
			 p->btf == BTF_FILE ? "--btf" : "embedded");
	return 0;
}

static int check_bpf(void)
{
	union bpf_attr attr;
	int r;

	/*
	 * libbpf's probe returns 0 for every failure: ask bpf() itself first.
	 * An empty BPF_PROG_LOAD is EINVAL wherever the syscall exists.
	 */
	memset(&attr, 0, sizeof(attr));
	if (syscall(__NR_bpf, BPF_PROG_LOAD, &attr, sizeof(attr)) < 0 && errno == ENOSYS) {
		say("offcpu: this kernel has no bpf() system call (needs CONFIG_BPF_SYSCALL=y)\n");
		return -1;
	}
	r = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_RAW_TRACEPOINT, NULL);
	if (r == 1)
		return 0;
	if (r == -EPERM || r == -EACCES)
		say("offcpu: not allowed to load BPF programs: run as root or with CAP_BPF and CAP_PERFMON\n");
	else
		say("offcpu: this kernel cannot load raw tracepoint BPF programs (%s)\n",
			strerror(r < 0 ? -r : EINVAL));
	return -1;
}

/*
 * Attach a program that does nothing to sched_switch for a moment: the
 * only sure test that the tracepoint exists (tracefs may not be mounted),
 * and it fails here, before the output file is touched.
 */
static int check_tracepoint(void)
{
	const struct bpf_insn ret0[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int prog, link, err;

	prog = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, NULL, "GPL", ret0, 2, NULL);
	if (prog < 0)
		return 0;	/* check_bpf loaded the same: let the real load say why */
	link = bpf_raw_tracepoint_open("sched_switch", prog);
	err = errno;
	close(prog);
	if (link >= 0) {
		close(link);
		return 0;
	}
	if (err != ENOENT)
		return 0;	/* not about the tracepoint: attaching will say */
	say("offcpu: this kernel has no sched:sched_switch tracepoint\n");
	return -1;
}

/*
 * bpf_get_smp_processor_id() as the programs will run it, on each CPU we
 * may run on.  The dwarf and spill stack ids carry the CPU, so a wrong one
 * pairs stacks with other threads' blocks.  6.11+ verifiers leave the call
 * unpatched for JITs that inline it (riscv64, arm64, powerpc), also when the
 * JIT is off: the interpreter then calls an address that is no helper
 * (riscv64 6.12 with net.core.bpf_jit_enable = 0).  Returns 0, or -1 after
 * one line.  A kernel that cannot run the test is trusted.
 */
static int check_cpu_helper(const struct probe *p)
{
	const struct bpf_insn prog[] = {
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_get_smp_processor_id },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	unsigned char pkt[64] = { 0 };
	cpu_set_t mask, one;
	int fd, cpu, bad = -1;
	unsigned int said = 0;

	fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, NULL, "GPL", prog, 2, NULL);
	if (fd < 0)
		return 0;
	if (sched_getaffinity(0, sizeof(mask), &mask)) {
		close(fd);
		return 0;
	}
	for (cpu = 0; cpu < CPU_SETSIZE && bad < 0; cpu++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = pkt, .data_size_in = sizeof(pkt),
			    .repeat = 1);

		if (!CPU_ISSET(cpu, &mask))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			continue;
		if (!bpf_prog_test_run_opts(fd, &o) && o.retval != (unsigned int)cpu) {
			bad = cpu;
			said = o.retval;
		}
	}
	sched_setaffinity(0, sizeof(mask), &mask);
	close(fd);
	if (bad < 0)
		return 0;
	say("offcpu: this kernel's BPF %s gives CPU %u for bpf_get_smp_processor_id() "
		"on CPU %d, so stacks would go to other threads' blocks%s\n",
		p->jit ? "JIT" : "interpreter", said, bad,
		p->jit_off ? "; turn the JIT on: sysctl -w net.core.bpf_jit_enable=1" : "");
	return -1;
}

/*
 * Whether bpf_task_storage_get(..., F_CREATE) creates storage for the
 * current task, in a raw tracepoint program run once (BPF_PROG_TEST_RUN).
 * Since "bpf: Replace bpf memory allocator with kmalloc_nolock() in local
 * storage" (6.19) it allocates with kmalloc_nolock(), which always fails
 * where the slab has no cmpxchg_double (riscv64 7.2.13: every block was
 * dropped as "per-thread storage full", 0 samples).  Returns 1 when storage
 * was refused, 0 when it was made or the test could not run (a kernel that
 * cannot run it is trusted, as in check_cpu_helper).
 */
static int task_storage_refused(void)
{
	struct bpf_insn prog[] = {
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_get_current_task_btf },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_0 },
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1,
		  .src_reg = BPF_PSEUDO_MAP_FD },	/* .imm: the map, below */
		{ 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_3 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_4,
		  .imm = BPF_LOCAL_STORAGE_GET_F_CREATE },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_task_storage_get },
		{ .code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = BPF_REG_0, .off = 2 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	uint64_t args[1] = { 0 };
	LIBBPF_OPTS(bpf_test_run_opts, run, .ctx_in = args, .ctx_size_in = sizeof(args));
	LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = BPF_F_NO_PREALLOC);
	struct btf *btf = btf__new_empty();
	int key, val, map = -1, fd = -1, refused = 0;

	/* Local storage maps need BTF for their key (an int) and value. */
	key = btf ? btf__add_int(btf, "int", 4, BTF_INT_SIGNED) : -1;
	val = btf ? btf__add_int(btf, "long", 8, BTF_INT_SIGNED) : -1;
	if (key < 0 || val < 0 || btf__load_into_kernel(btf))
		goto out;
	mo.btf_fd = btf__fd(btf);
	mo.btf_key_type_id = key;
	mo.btf_value_type_id = val;
	map = bpf_map_create(BPF_MAP_TYPE_TASK_STORAGE, "offcpu_selftest", 4, 8, 0, &mo);
	if (map < 0)
		goto out;
	prog[2].imm = map;
	fd = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, NULL, "GPL", prog,
			   sizeof(prog) / sizeof(prog[0]), NULL);
	if (fd >= 0 && !bpf_prog_test_run_opts(fd, &run))
		refused = run.retval == 1;
out:
	if (fd >= 0)
		close(fd);
	if (map >= 0)
		close(map);
	btf__free(btf);
	return refused;
}

/*
 * The task variant only where its storage can be made: elsewhere the hash
 * by tid, said in -v; a forced --variant tp_btf,task is refused.
 */
static int check_task_storage(struct probe *p, const char *variant)
{
	if (!p->use_task_storage || !task_storage_refused())
		return 0;
	p->task_storage_broken = true;
	if (variant) {
		say("offcpu: --variant %s: this kernel's bpf_task_storage_get() creates no "
			"task local storage (a self-test got none); use tp_btf,hash\n", variant);
		return -1;
	}
	p->use_task_storage = false;
	snprintf(p->why, sizeof(p->why), "kernel BTF; task local storage cannot be created here "
		 "(bpf_task_storage_get gave none in a self-test): hash keyed by tid");
	return 0;
}

/*
 * Where task_pt_regs() puts a task's user registers, for kernels without
 * bpf_task_pt_regs and for raw_tp: THREAD_SIZE and the padding above them,
 * as the kernel's headers define them for its default configuration (16 KiB
 * stacks; arm64: at least a page; armhf: 8 KiB; x86_64 with FRED, 6.9+: 16 bytes of
 * padding).  KASAN's larger stacks are not detected: the BPF side takes
 * registers only from a user-mode frame and counts the rest.  FRED is told
 * by its entry symbol, looked up by a syscall program where the kernel has
 * them (kfunc_range.c): its absence would otherwise cost a whole read of
 * /proc/kallsyms at start-up.
 */
static void probe_uregs(struct probe *p)
{
	long page = sysconf(_SC_PAGESIZE);

	p->thread_size = 16384;
	if (!strcmp(p->machine, "aarch64") && page > 16384)
		p->thread_size = page;
	else if (!strcmp(p->machine, "armv7l")) {
		/* arm: 8 KiB stacks, THREAD_START_SP 8 bytes below their top. */
		p->thread_size = 8192;
		p->uregs_pad = 8;
	} else if (!strcmp(p->machine, "x86_64") && p->kver >= KVER(6, 9, 0) &&
		 kfunc_exists("asm_fred_entrypoint_user"))
		p->uregs_pad = 16;
}

/* The BPF backend's facts and variant; -1 after one line (to stderr or the refusal). */
static int probe_bpf(struct probe *p, const char *btf_file, const char *variant)
{
	if (p->kver < KVER(5, 8, 0)) {
		say("offcpu: kernel %s is too old: Linux 5.8 or later is needed (BPF ring buffer)\n",
			p->release);
		return -1;
	}
	if (check_bpf() || check_tracepoint() || find_types(p, btf_file, variant))
		return -1;
	p->task_storage = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) == 1;
	p->ringbuf = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1;
	p->jit = read_flag("/proc/sys/net/core/bpf_jit_enable");
	p->jit_off = !p->jit && access("/proc/sys/net/core/bpf_jit_enable", F_OK) == 0;
	/* Asked of the kernel, not its version: distributions backport helpers. */
	p->bpf_loop = libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT, BPF_FUNC_loop, NULL) == 1;
	if (check_cpu_helper(p))
		return -1;
	if (p->btf != BTF_NONE)
		probe_btf_facts(p);
	if (choose_variant(p, btf_file, variant) || check_task_storage(p, variant))
		return -1;
	/* The user stack cache reads user registers through a BTF task pointer. */
	p->task_pt_regs = p->tp_btf && p->kver >= KVER(5, 15, 0);
	if (!p->task_pt_regs && !p->classic_tp)
		probe_uregs(p);
	/*
	 * Threads asleep at the start: iter/task (5.8) attaches by kernel BTF,
	 * bpf_get_task_stack is 5.9; user stacks need a sleepable iterator and
	 * bpf_copy_from_user_task (5.18), and the saved registers (5.15).
	 */
	p->scan_start = p->tp_btf && p->kver >= KVER(5, 9, 0);
	p->scan_ustack = p->scan_start && p->task_pt_regs && p->kver >= KVER(5, 18, 0);
	return 0;
}

/*
 * No sched_switch in tracefs (a kernel without event tracing, a tracefs that
 * cannot be mounted here): switch-outs from the context-switch software
 * event instead.  It is counted in perf_event_task_sched_out(prev, next),
 * called by prepare_task_switch() before switch_to(), so current is still
 * prev: the sample's tid, kernel callchain (from the scheduler, caller
 * registers), user registers and stack copy are those of the thread that
 * switches out, as sched_switch's.  It carries no prev_state: the
 * PERF_RECORD_SWITCH_CPU_WIDE switch-out written right after it tells a
 * preemption (PERF_RECORD_MISC_SWITCH_OUT_PREEMPT, Linux 4.17) from a block,
 * no more.  Before 4.17 every preemption would count as a block: refused.
 * TRACEFS: why tracefs could not serve; FORCED, WHY as probe_perf's.
 */
static int probe_swevent(struct probe *p, const char *tracefs, bool forced, const char *why)
{
	if (p->kver < KVER(4, 17, 0)) {
		fprintf(stderr, "offcpu: %s%sthe perf backend needs sched:sched_switch from tracefs "
			"(%s) or, for the context-switch software event, Linux 4.17 or later "
			"(its preemption flag)\n", forced ? "" : why, forced ? "" : "; ", tracefs);
		return -1;
	}
	memset(&p->tp, 0, sizeof(p->tp));
	p->swevent = true;
	snprintf(p->swevent_why, sizeof(p->swevent_why), "%s", tracefs);
	return 0;
}

/*
 * The perf backend (src/record/switch_events.c): sched:sched_switch as a
 * perf event, its id and record layout from tracefs, else the context-switch
 * software event (probe_swevent).  4.14 is the oldest kernel whose
 * prev_state is reported as it reads now (a preempted task above 0xff,
 * TASK_IDLE as 0x80; __trace_sched_switch_state's rework);
 * PERF_RECORD_SWITCH_CPU_WIDE (4.3) and CLOCK_MONOTONIC samples (4.1) are
 * older.  WHY: why BPF is not used.
 */
static int probe_perf(struct probe *p, const char *why)
{
	bool forced = !strcmp(why, "--backend perf");
	char err[160];

	memset(&p->tp, 0, sizeof(p->tp));
	p->btf = BTF_NONE;
	p->perf_backend = true;
	p->swevent = false;
	snprintf(p->backend_why, sizeof(p->backend_why), "%s", why);
	if (p->kver < KVER(4, 14, 0)) {
		fprintf(stderr, "offcpu: kernel %s is too old: the perf backend needs Linux 4.14 "
			"or later (sched_switch's prev_state as it reports it now)\n", p->release);
		return -1;
	}
	if (tracefs_sched_read(&p->tp, err, sizeof(err)) && probe_swevent(p, err, forced, why))
		return -1;
	snprintf(p->why, sizeof(p->why), "perf backend: %s", why);
	return 0;
}

int probe_kernel(struct probe *p, const char *btf_file, const char *variant,
		 enum backend backend, bool bpf_asked)
{
	char why[sizeof(p->backend_why) - 16];
	struct utsname u;
	int err;

	memset(p, 0, sizeof(*p));
	uname(&u);
	snprintf(p->release, sizeof(p->release), "%s", u.release);
	snprintf(p->machine, sizeof(p->machine), "%s", u.machine);
	p->kver = parse_kver(u.release);
	if (!has_caps()) {
		say("offcpu: not allowed to load BPF programs or open perf events: run as root or "
		    "with CAP_BPF and CAP_PERFMON\n");
		return -1;
	}
	if (backend == BACKEND_PERF)
		return probe_perf(p, "--backend perf");
	/* An option that asks for BPF (cli_bpf_option): its refusal is the user's to read. */
	if (backend == BACKEND_AUTO && !bpf_asked) {
		refusal = why;
		refusal_len = sizeof(why);
	}
	why[0] = '\0';
	err = probe_bpf(p, btf_file, variant);
	refusal = NULL;
	if (!err) {
		snprintf(p->backend_why, sizeof(p->backend_why), "%s",
			 backend == BACKEND_BPF ? "--backend bpf" : "BPF loads on this kernel");
		return 0;
	}
	if (!why[0])
		return -1;
	probe_cleanup(p);
	return probe_perf(p, why + (strncmp(why, "offcpu: ", 8) ? 0 : 8));
}

int probe_fall_back(struct probe *p, const char *why)
{
	probe_cleanup(p);
	return probe_perf(p, why);
}

/* -v and probe: what becomes of threads blocked at the start and at the end. */
static void print_blocked(const struct probe *p, FILE *out)
{
	fprintf(out, "still blocked at the end: %s\n", p->use_task_storage ?
		"task storage read by a task iterator" : "per-thread hash read at the end");
	fprintf(out, "blocked at the start: %s\n",
		p->scan_ustack ? "task iterator, kernel and user stacks (sleepable, bpf_copy_from_user_task)" :
		p->scan_start ? "task iterator, kernel stacks only (user stacks need 5.18+)" :
		p->tp_btf ? "not seen (task iterator with bpf_get_task_stack needs 5.9+)" :
			    "not seen (task iterators need kernel BTF)");
}

const char *probe_variant(const struct probe *p)
{
	if (p->classic_tp)
		return "tp,hash";
	if (!p->tp_btf)
		return "raw_tp,hash";
	return p->use_task_storage ? "tp_btf,task" : "tp_btf,hash";
}

/* The BTF-free variant: what it reads from where, and what it cannot do. */
static void print_classic(const struct probe *p, FILE *out)
{
	const struct tracefs_sched *t = &p->tp;

	fprintf(out, "attach: tracepoint/sched/sched_switch, sched_process_fork, sched_process_free\n");
	fprintf(out, "record layout: %s: sched_switch prev_state +%u (%u bytes), next_pid +%u; "
		"sched_process_fork parent_pid +%u, child_pid +%u; sched_process_free pid +%u\n",
		t->dir, t->switch_prev_state.offset, t->switch_prev_state.size,
		t->switch_next_pid.offset, t->fork_parent_pid.offset,
		t->fork_child_pid.offset, t->free_pid.offset);
	fprintf(out, "task storage: hash by tid, entries freed on sched_process_free\n");
	fprintf(out, "state: the record's prev_state (TASK_IDLE, reported as I, counted as D)\n");
	fprintf(out, "thread ids: bpf_get_current_pid_tgid at switch-out, tgid kept for switch-in\n");
	fprintf(out, "kernel threads: PF_KTHREAD in /proc at start, then the children of kthreadd (pid 2)\n");
}

/* The perf backend's switch-outs from the context-switch software event: what it cannot tell. */
static void print_swevent(FILE *out)
{
	fprintf(out, "attach: perf event context-switches (software) per CPU, with "
		"PERF_RECORD_SWITCH_CPU_WIDE for switch-ins and preemptions, and "
		"PERF_RECORD_EXIT\n");
	fprintf(out, "state: not known: a switch-out that is not a preemption is a block, "
		"S or D unknown (--state refused)\n");
	fprintf(out, "kernel stacks: from schedule (the event's caller registers), "
		"not __schedule\n");
}

/* The perf backend: what it opens, what it reads, what it cannot do. */
static void print_perf(const struct probe *p, FILE *out)
{
	const struct tracefs_sched *t = &p->tp;

	if (p->swevent) {
		print_swevent(out);
	} else {
		fprintf(out, "attach: perf event sched:sched_switch (id %u) per CPU, with "
			"PERF_RECORD_SWITCH_CPU_WIDE for switch-ins\n", t->switch_id);
		fprintf(out, "record layout: %s: sched_switch prev_state +%u (%u bytes), "
			"next_pid +%u\n", t->dir, t->switch_prev_state.offset,
			t->switch_prev_state.size, t->switch_next_pid.offset);
	}
	fprintf(out, "stacks: kernel and user callchains of the sample (frame pointers), or "
		"user registers and stack copies unwound here with CFI (dwarf)\n");
	fprintf(out, "pairing: switch-out and switch-in in time order in user space\n");
	fprintf(out, "blocked at the start: not seen (no task iterator)\n");
	fprintf(out, "still blocked at the end: the threads whose switch-in was not seen\n");
	if (p->swevent)
		fprintf(out, "wakers: no (--wakers needs sched:sched_waking from tracefs)\n");
	else if (t->waking_event[0])
		fprintf(out, "wakers: perf event sched:%s (id %u) per CPU, into the switch rings\n",
			t->waking_event, t->waking_id);
	else
		fprintf(out, "wakers: no (%s)\n", t->waking_err);
	fprintf(out, "why: %s\n", p->why);
}

/*
 * "backend: bpf (WHY)", "backend: perf (WHY; SOURCE)": what records the
 * switch-outs, the tracepoint or, without it, the software event and why.
 */
static void print_backend(const struct probe *p, FILE *out)
{
	if (!p->perf_backend)
		fprintf(out, "backend: bpf (%s)\n", p->backend_why);
	else if (!p->swevent)
		fprintf(out, "backend: perf (%s; sched_switch tracepoint)\n", p->backend_why);
	else
		fprintf(out, "backend: perf (%s; context-switch software event: tracefs has no "
			"sched_switch: %s)\n", p->backend_why, p->swevent_why);
}

void probe_print(const struct probe *p, FILE *out)
{
	static const char *const src[] = {
		[BTF_NONE] = "none", [BTF_KERNEL] = "kernel (" SYS_BTF ")",
		[BTF_FILE] = "file", [BTF_EMBEDDED] = "embedded",
	};

	fprintf(out, "kernel: %s\n", p->release);
	fprintf(out, "arch: %s\n", p->machine);
	print_backend(p, out);
	if (p->perf_backend) {
		print_perf(p, out);
		return;
	}
	fprintf(out, "btf: %s%s%s\n", src[p->btf],
		p->btf == BTF_FILE ? " " : "", p->btf == BTF_FILE ? p->btf_path : "");
	fprintf(out, "btf chain: %s\n", p->chain);
	fprintf(out, "variant: %s\n", probe_variant(p));
	if (p->classic_tp) {
		print_classic(p, out);
	} else {
		fprintf(out, "attach: %s/sched_switch\n", p->tp_btf ? "tp_btf" : "raw_tp");
		fprintf(out, "task storage: %s\n", p->use_task_storage ? "task local storage" :
			p->task_storage_broken ? "hash by tid (task local storage cannot be created: "
						 "bpf_task_storage_get gave none in a self-test)" :
			p->task_storage ? "hash by tid (task storage available)" :
					  "hash by tid (no task local storage)");
		fprintf(out, "state field: %s\n", p->state_new ? "__state" : "state");
		fprintf(out, "prev_state argument: %s (%s)\n", p->prev_state_arg ? "yes" : "no",
			p->prev_state_why);
	}
	fprintf(out, "ring buffer: %s\n", p->ringbuf ? "yes" : "no");
	fprintf(out, "jit: %s\n", p->jit ? "yes" : p->jit_off ? "off (net.core.bpf_jit_enable = 0)" :
		"no (interpreter)");
	fprintf(out, "bpf_loop: %s\n", p->bpf_loop ? "yes" : "no (needs 5.17+)");
	fprintf(out, "stacks: bpf_get_stackid, user stacks by frame pointer%s\n",
		!strcmp(p->machine, "s390x") ? " (back chain)" : "");
	if (p->task_pt_regs)
		fprintf(out, "user registers: bpf_task_pt_regs\n");
	else if (p->thread_size)
		fprintf(out, "user registers: at the top of the task's stack (THREAD_SIZE %u, "
			"padding %u)\n", p->thread_size, p->uregs_pad);
	else
		fprintf(out, "user registers: none (BTF-free variant: no task layout)\n");
	fprintf(out, "user stack cache: %s\n", p->task_pt_regs ? "yes (bpf_task_pt_regs)" :
		p->thread_size ? "with --call-graph dwarf only (registers read at the top of the task's stack)" :
		p->classic_tp ? "no (BTF-free variant: no task registers, every user stack is walked)" :
		p->tp_btf ? "no (bpf_task_pt_regs needs 5.15+)" : "no (needs kernel BTF)");
	print_blocked(p, out);
	fprintf(out, "why: %s\n", p->why);
}

void probe_cleanup(struct probe *p)
{
	if (p->btf_tmp && p->btf_path[0])
		unlink(p->btf_path);
	p->btf_tmp = false;
}
