// SPDX-License-Identifier: GPL-2.0
/* User stacks from copies, unwound with the mapped files' CFI (see unwind.h). */
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/hashset.h"
#include "lib/procfs.h"
#include "lib/procmaps.h"
#include "symbols/debuginfo.h"
#include "unwind/unwind.h"

const char *const unwind_end_names[UNWIND_NR] = {
	[UNWIND_CFI] = "complete by CFI",
	[UNWIND_FP] = "complete, some frames by frame pointer",
	[UNWIND_NO_CFI] = "cut: no CFI for a pc",
	[UNWIND_SHORT_COPY] = "cut: stack copy too short",
	[UNWIND_UNREADABLE] = "cut: stack unreadable",
	[UNWIND_DEPTH] = "cut: depth limit",
	[UNWIND_BAD] = "cut: stack pointer went backwards",
	[UNWIND_GONE] = "cut: address space gone (exit, exec) before its maps were read",
	[UNWIND_BUDGET] = "cut: CFI rows over the --unwind-tables budget",
};

/* ---- the unwinding itself, on a copy ---- */

#define RAW_READS (4 * UNWIND_READS_MAX)

/*
 * The copy being unwound, and every word read from it.  A saved frame
 * pointer read from the stack matters only once some frame uses it (a CFA
 * based on it, a frame-pointer step): until then it is no key of the stack
 * cache (libc keeps plain values in rbp, a timestamp say, that would make
 * every block a miss).
 */
struct copy_view {
	uint64_t sp;
	const uint8_t *bytes;
	uint32_t len;
	bool beyond;	/* a read fell outside the copy */
	bool ends_stack;	/* the copy was shortened: its end is the stack mapping's */
	bool past_end;		/* a read fell beyond that end: no frame lies there */
	uint32_t nraw;
	int fp_src;	/* the read the frame pointer came from, -1: the registers */
	bool sp_from_fp;	/* arm64 after a frame-record step: sp from the next row */
	bool fp_used, lr_used;	/* the registers' fp, lr */
	unsigned int word;	/* bytes of a stack word: 4 on 32-bit ARM, else 8 */
	bool check_pc;		/* a guessable step: its pc must lie in a mapped file */
	bool short_key;		/* a 4-byte word without the 8 bytes the cache compares */
	uint64_t addr[RAW_READS], val[RAW_READS];
	bool need[RAW_READS];
};

static int read_copy(void *ctx, uint64_t addr, uint64_t *val)
{
	struct copy_view *v = ctx;

	uint32_t w32;

	if (addr < v->sp || addr - v->sp > v->len || v->len - (addr - v->sp) < v->word) {
		v->beyond = true;
		v->past_end |= v->ends_stack && addr >= v->sp && addr - v->sp >= v->len;
		return -1;
	}
	if (v->word == 4) {
		memcpy(&w32, v->bytes + (addr - v->sp), 4);
		*val = w32;
	} else {
		memcpy(val, v->bytes + (addr - v->sp), 8);
	}
	if (v->nraw < RAW_READS) {
		v->addr[v->nraw] = addr;
		v->val[v->nraw] = *val;
		v->need[v->nraw] = true;
		/*
		 * The stack cache's BPF side compares 8-byte words: a 4-byte
		 * word is keyed with the word after it (a stricter key, still
		 * right), or, at the copy's end, not cached at all.
		 */
		if (v->word == 4 && v->len - (addr - v->sp) >= 8)
			memcpy(&v->val[v->nraw], v->bytes + (addr - v->sp), 8);
		else if (v->word == 4)
			v->short_key = true;
	}
	v->nraw++;
	return 0;
}

/* The frame pointer is used: the word it came from is part of the key. */
static void need_fp(struct copy_view *v)
{
	if (v->fp_src < 0)
		v->fp_used = true;
	else if (v->fp_src < RAW_READS)
		v->need[v->fp_src] = true;
}

/* The frame pointer of the step just made came from its last read. */
static void fp_from_last_read(struct copy_view *v)
{
	v->fp_src = v->nraw - 1;
	if (v->nraw && v->nraw <= RAW_READS)
		v->need[v->nraw - 1] = false;
}

static void keep_reads(const struct copy_view *v, struct unwind_reads *r)
{
	*r = (struct unwind_reads){ .overflow = v->nraw > RAW_READS || v->short_key,
				    .fp_used = v->fp_used,
				    .lr_used = v->lr_used };
	for (uint32_t i = 0; i < v->nraw && i < RAW_READS; i++) {
		if (!v->need[i])
			continue;
		if (r->n == UNWIND_READS_MAX) {
			r->overflow = true;
			return;
		}
		r->addr[r->n] = v->addr[i];
		r->val[r->n++] = v->val[i];
	}
}

bool unwind_cacheable(enum unwind_end end, const struct unwind_reads *reads)
{
	/* A cut copy or a wrong row may end otherwise another time. */
	return !reads->overflow && end != UNWIND_SHORT_COPY && end != UNWIND_UNREADABLE &&
	       end != UNWIND_BAD && end != UNWIND_GONE && end != UNWIND_BUDGET;
}

/*
 * 32-bit ARM, a pc without EHABI table: the Thumb frame record {caller's r7,
 * lr} at r7, as clang's Thumb code (and the AAPCS32 frame chain) keeps it:
 * push {.., r7, lr}; add r7, sp, #N.  The caller's sp is just above it.
 * GCC's Thumb-2 -fno-omit-frame-pointer points r7 at the bottom of the
 * locals instead, with no record there: only a record that is plausible
 * (aligned, on the copied stack, the caller's r7 above it or 0, and its
 * return address in a mapped file: check_pc) is taken.
 */
static enum cfi_step_result thumb_fp_step(struct cfi_frame *f, struct copy_view *v)
{
	uint64_t up, ra;

	need_fp(v);
	/*
	 * GCC's code keeps no chain, so r7 = 0 says nothing of the outermost
	 * frame (Debian's start_thread and _start have no table either): a cut.
	 */
	if (!f->fp || (f->fp & 3) || f->fp < f->sp || f->fp < v->sp || f->fp - v->sp > v->len ||
	    v->len - (f->fp - v->sp) < 8)
		return CFI_STEP_GAP;	/* also beyond the copy: no "end of stack" from a guess */
	if (read_copy(v, f->fp + 4, &ra) || read_copy(v, f->fp, &up))
		return CFI_STEP_UNREADABLE;
	v->fp_src = v->nraw - 1;
	if (!ra || (up && (up <= f->fp || (up & 3))))
		return CFI_STEP_GAP;
	*f = (struct cfi_frame){ .pc = ra, .sp = f->fp + 8, .fp = up };
	v->check_pc = true;
	return CFI_STEP_OK;
}

/*
 * A frame record for a pc no FDE covers: the caller's fp and the return
 * address.  x86_64 and arm64: at FP ([fp] the caller's fp, [fp + 8] the
 * return address); riscv64: just below the CFA, where s0 points ([fp - 16],
 * [fp - 8]); s390x keeps none.
 */
static enum cfi_step_result fp_step(unsigned int machine, struct cfi_frame *f,
				    struct copy_view *v)
{
	uint64_t up, ra, rec;

	if (machine == EM_ARM)
		return thumb_fp_step(f, v);
	if (machine != EM_X86_64 && machine != EM_AARCH64 && machine != EM_RISCV)
		return CFI_STEP_GAP;
	need_fp(v);
	/* Thread entry code clears the frame pointer (musl's __clone, glibc's _start). */
	if (!f->fp)
		return CFI_STEP_END;
	rec = machine == EM_RISCV ? f->fp - 16 : f->fp;
	if (f->fp < 16 || rec < f->sp)
		return CFI_STEP_GAP;
	if (read_copy(v, rec + 8, &ra) || read_copy(v, rec, &up))
		return CFI_STEP_UNREADABLE;
	v->fp_src = v->nraw - 1;
	if (!ra)
		return CFI_STEP_END;
	/*
	 * x86_64: the caller's sp is exactly above the record; riscv64: it is
	 * the CFA, fp itself.  arm64: GCC puts the record at the bottom of the
	 * frame, so the caller's sp is found from its own row and frame
	 * pointer (sp_from_fp, in unwind_frames).
	 */
	*f = (struct cfi_frame){ .pc = ra, .sp = rec + 16, .fp = up };
	v->sp_from_fp = machine == EM_AARCH64;
	return CFI_STEP_OK;
}

/*
 * s390x's back chain ([sp] the caller's sp; the return address saved at
 * offset 112 of the caller's register save area), where the code keeps it
 * (-mbackchain), for a pc no FDE covers.  As the kernel walks it.
 */
static enum cfi_step_result chain_step(struct cfi_frame *f, struct copy_view *v)
{
	uint64_t up, ra;

	if (read_copy(v, f->sp, &up))
		return CFI_STEP_UNREADABLE;
	if (!up)
		return CFI_STEP_END;
	if (up <= f->sp || (up & 7))
		return CFI_STEP_GAP;
	if (read_copy(v, up + 112, &ra))
		return CFI_STEP_UNREADABLE;
	if (!ra)
		return CFI_STEP_END;
	*f = (struct cfi_frame){ .pc = ra, .sp = up, .fp = f->fp };
	return CFI_STEP_OK;
}

/* One step without CFI: frame record, or back chain. */
static enum cfi_step_result fallback_step(unsigned int machine, struct cfi_frame *f,
					  struct copy_view *v)
{
	return machine == EM_S390 ? chain_step(f, v) : fp_step(machine, f, v);
}

static enum unwind_end end_of(enum cfi_step_result r, const struct copy_view *v, bool by_fp)
{
	switch (r) {
	case CFI_STEP_END:
		return by_fp ? UNWIND_FP : UNWIND_CFI;
	case CFI_STEP_UNREADABLE:
		/* Beyond the end of the thread's stack mapping: the last frame was the outermost. */
		if (v->past_end)
			return by_fp ? UNWIND_FP : UNWIND_CFI;
		return v->beyond ? UNWIND_SHORT_COPY : UNWIND_UNREADABLE;
	default:
		return UNWIND_NO_CFI;
	}
}

static uint32_t unwind_frames(struct copy_view *v, struct cfi_frame f, unwind_row_fn rows,
			      void *ctx, uint64_t *ip, uint32_t max, enum unwind_end *end)
{
	unsigned int machine = 0;
	bool by_fp = false;
	uint32_t n = 1;

	for (;;) {
		/*
		 * A return address points past its call: look up the call.  On
		 * 32-bit ARM, bit 0 of a return address says Thumb state.
		 */
		uint64_t pc = (machine == EM_ARM ? f.pc & ~1ull : f.pc) - (n > 1);
		uint64_t vaddr = 0, sp = f.sp;
		unsigned int file_machine = 0;
		const struct cfi_row *row = rows(ctx, pc, &vaddr, &file_machine);
		enum cfi_step_result r = CFI_STEP_GAP;

		/* A frame record whose return address lies in no file was no record. */
		if (v->check_pc && !file_machine) {
			*end = UNWIND_NO_CFI;
			return n - 1;
		}
		v->check_pc = false;
		if (file_machine) {
			machine = file_machine;
			v->word = machine == EM_ARM ? 4 : 8;
			f.pc = vaddr;
			/*
			 * After a frame-record step (arm64) the frame pointer points
			 * at its own save slot (CFA + fp_off): the CFA, hence sp,
			 * follows from it.  Without that rule the step is a guess.
			 */
			if (v->sp_from_fp && row && row->kind == CFI_NORMAL &&
			    row->cfa_base == CFI_BASE_SP && row->fp_rule == CFI_AT_CFA) {
				need_fp(v);
				f.sp = f.fp - (int64_t)row->fp_off - (int64_t)row->cfa_off;
			}
			v->sp_from_fp = false;
			if (row && row->kind == CFI_NORMAL && row->cfa_base == CFI_BASE_FP)
				need_fp(v);
			if (row && row->kind == CFI_NORMAL && row->ra_rule == CFI_SAME && n == 1)
				v->lr_used = true;
			r = cfi_step(machine, row, n == 1, &f, read_copy, v);
			if (r == CFI_STEP_OK && row->fp_rule == CFI_AT_CFA)
				fp_from_last_read(v);
		}
		if ((r == CFI_STEP_GAP || r == CFI_STEP_UNSUPPORTED) && machine) {
			f.pc = pc;
			r = fallback_step(machine, &f, v);
			by_fp |= r == CFI_STEP_OK;
		}
		if (r != CFI_STEP_OK) {
			*end = end_of(r, v, by_fp);
			return n;
		}
		/* Callers' frames lie above (an arm64 leaf may share its caller's sp). */
		if (f.sp < sp || (f.sp == sp && n > 1)) {
			*end = UNWIND_BAD;
			return n;
		}
		if (n == max) {
			*end = UNWIND_DEPTH;
			return n;
		}
		ip[n++] = machine == EM_ARM ? f.pc & ~1ull : f.pc;
	}
}

uint32_t unwind_stack(const struct offcpu_ucopy *c, uint32_t len, bool ends_stack,
		      unwind_row_fn rows, void *ctx, uint64_t *ip, uint32_t max,
		      enum unwind_end *end, struct unwind_reads *reads)
{
	/* On the stack: a calloc and free per copy made musl map and unmap. */
	struct copy_view v = { .sp = c->sp, .bytes = c->bytes, .len = len, .fp_src = -1,
			       .ends_stack = ends_stack, .word = 8 };
	struct cfi_frame f = { .pc = c->pc, .sp = c->sp, .fp = c->fp, .lr = c->lr };
	uint32_t n = 0;

	*end = UNWIND_DEPTH;
	if (!max) {
		if (reads)
			*reads = (struct unwind_reads){ .overflow = true };
		return 0;
	}
	ip[n++] = c->pc;
	if (!len)
		*end = UNWIND_UNREADABLE;
	else
		n = unwind_frames(&v, f, rows, ctx, ip, max, end);
	if (reads)
		keep_reads(&v, reads);
	return n;
}

/* ---- files and processes ---- */

struct uw_file {
	unsigned int maj, min;
	uint64_t ino;
	int fd;			/* kept open: the CFI is read from its mapping (file_tables) */
	struct cfi_file *cfi;	/* NULL: none */
	/*
	 * Its separate debug file's CFI (.debug_frame), for the pcs its own
	 * tables leave out: Debian's armhf libc has no EHABI entry for
	 * start_thread or pthread_mutex_lock, its libc6-dbg has FDEs for all.
	 * Looked for at the first such pc (dbg_tried).
	 */
	struct cfi_file *dbg;
	int dbg_fd;
	bool dbg_tried;
	bool tables_tried;	/* its loads and CFI read (file_tables), at its first pc */
	uint32_t pid;		/* a process mapping it: where its paths resolve */
	char *path;		/* as mapped, for .gnu_debuglink */
	size_t nr_loads;
	struct unwind_load loads[UNWIND_MAX_LOADS];
};

/*
 * A process's executable mappings over a span of time, kept for its copies
 * unwound once /proc no longer shows them: the process exited (perf bench
 * messaging's workers forked, blocked and exited before user space, behind
 * the ring, unwound their copies, which stopped at their first frame), or
 * exec'ed since the copy was taken.  Times are CLOCK_MONOTONIC: the
 * copies' (bpf_ktime_get_ns) and the task records' (perf's clockid).
 */
struct uw_view {
	uint64_t from, until;	/* for the copies taken in [from, until) */
	uint64_t read_at;	/* read from /proc then; 0: its parent's maps, or unreadable */
	struct pmap maps;	/* none: the span is known, its maps are not */
};

#define UW_VIEWS 4	/* a fork and a few execs while user space is behind */

/* A pid's views, oldest first: the processes under it, and their execs. */
struct uw_views {
	uint32_t n;
	bool dead;	/* its last process exited: swept as its maps are */
	struct uw_view v[UW_VIEWS];
};

/*
 * A process's maps (lib/procmaps): each entry's file a struct uw_file, gen
 * the address space they were read for (0: unknown), dead once an exit, an
 * exec or a new process under the pid was seen: read them again.
 */
struct unwinder {
	struct pmap_set procs;
	struct u32_map views;	/* pid -> struct uw_views */
	bool records_lost;	/* task records lost: views may lack mappings */
	/*
	 * Pids forgotten (exit, exec, a new process), freed at the second
	 * sweep after: copies read behind the ring still find their maps.
	 */
	uint32_t *forgotten;
	size_t nr_forgotten, cap_forgotten, forgotten_ripe;
	struct uw_file **files;
	size_t nr_files;
	size_t budget;
	struct unwind_counts counts;
};

size_t unwind_read_loads(int fd, struct unwind_load *loads)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t n = 0, nr = 0;
	GElf_Phdr ph;

	if (elf && !elf_getphdrnum(elf, &n))
		for (size_t i = 0; i < n && nr < UNWIND_MAX_LOADS; i++)
			if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD) {
				loads[nr].offset = ph.p_offset;
				loads[nr].vaddr = ph.p_vaddr;
				loads[nr].filesz = ph.p_filesz;
				nr++;
			}
	elf_end(elf);
	return nr;
}

int unwind_open_mapped(uint32_t pid, const struct proc_map *m)
{
	char path[4200];
	struct stat st;
	int fd = -1;

	for (int i = 0; fd < 0 && !pmap_file_path(pid, m->start, m->end, m->file, i, path,
						      sizeof(path)); i++)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return fd;
	/* Its process gone (an MMAP2 record's): the same file under its name here. */
	fd = open(m->file, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &st) || major(st.st_dev) != m->maj ||
			minor(st.st_dev) != m->min || st.st_ino != m->ino)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

int unwind_open_debug(uint32_t pid, const char *path, int fd)
{
	char root[64];
	struct debug_file df;
	Elf *elf;
	int dfd = -1;

	if (!path || fd < 0)
		return -1;
	snprintf(root, sizeof(root), "/proc/%u/root", pid);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && !debuginfo_find_file(elf, root, path, &df)) {
		dfd = dup(df.fd);
		debuginfo_close(&df);
	}
	elf_end(elf);
	return dfd;
}

/* The CFI of F's debug file (FD: F itself): unwind_open_debug's. */
static void open_debug_cfi(struct unwinder *u, struct uw_file *f, int fd)
{
	char err[256];
	int dfd;

	f->dbg_tried = true;
	dfd = unwind_open_debug(f->pid, f->path, fd);
	if (dfd < 0)
		return;
	f->dbg = cfi_file_open(dfd, err, sizeof(err));
	/* Another machine's file is no debug file of this one. */
	if (f->dbg && f->cfi && cfi_file_machine(f->dbg) != cfi_file_machine(f->cfi)) {
		cfi_file_close(f->dbg);
		f->dbg = NULL;
	}
	if (!f->dbg) {
		close(dfd);
		return;
	}
	f->dbg_fd = dfd;
	u->counts.debug_files++;
	u->counts.table_bytes += cfi_file_bytes(f->dbg);
}

/*
 * F's loads and tables, read at the first pc that falls in it, not when it
 * is mapped: an exec of perf maps 33 files whose tables took 48 ms to read
 * (8 ms their loads), the reader's time away from the ring while a fast
 * load filled it with copies of stacks that touch two of them.  F's fd is
 * opened when mapped (a container's file is there while it lives).
 */
static void file_tables(struct unwinder *u, struct uw_file *f)
{
	char err[256];
	int fd = f->fd;

	if (f->tables_tried)
		return;
	f->tables_tried = true;
	if (fd < 0)
		return;
	f->fd = -1;
	f->nr_loads = unwind_read_loads(fd, f->loads);
	f->cfi = cfi_file_open(fd, err, sizeof(err));
	if (!f->cfi) {
		/* No tables of its own: its debug file's, now, as F is not kept open. */
		open_debug_cfi(u, f, fd);
		u->counts.no_table += !f->dbg;
		close(fd);
		return;
	}
	f->fd = fd;
	u->counts.files++;
	u->counts.table_bytes += cfi_file_bytes(f->cfi);
}

struct maps_read {
	struct unwinder *u;
	uint32_t pid;
};

/* pmap_read_proc's FILE_OF: the file of mapping M, opened once per device and inode. */
static void *file_of(void *ctx, const struct proc_map *m)
{
	struct unwinder *u = ((struct maps_read *)ctx)->u;
	uint32_t pid = ((struct maps_read *)ctx)->pid;
	struct uw_file *f, **v;

	for (size_t i = 0; i < u->nr_files; i++) {
		f = u->files[i];
		if (f->maj == m->maj && f->min == m->min && f->ino == m->ino)
			return f;
	}
	v = realloc(u->files, (u->nr_files + 1) * sizeof(*v));
	f = calloc(1, sizeof(*f));
	if (v)
		u->files = v;
	if (!v || !f) {
		free(f);
		return NULL;
	}
	f->maj = m->maj;
	f->min = m->min;
	f->ino = m->ino;
	f->fd = -1;
	f->dbg_fd = -1;
	f->pid = pid;
	f->path = strdup(m->file);
	f->fd = unwind_open_mapped(pid, m);
	u->files[u->nr_files++] = f;
	return f;
}

/*
 * PID's executable file mappings into P, or -1, P unchanged, when they
 * cannot be read (gone) or none are listed (pmap_read_proc).
 */
static int read_maps(struct unwinder *u, uint32_t pid, struct pmap *p)
{
	struct maps_read r = { u, pid };

	return pmap_read_proc(p, pid, file_of, &r);
}

struct proc_lookup {
	struct unwinder *u;
	uint32_t pid;
	struct pmap *p;
	bool reread;	/* the maps were read again for this copy */
	bool unmarked;	/* the last pc looked up lies in code built without tables */
	bool gone;	/* /proc did not show the copy's address space */
	bool nowhere;	/* the last pc looked up lies in no mapping */
	bool over_budget;	/* the last pc's row was refused: the budget was spent */
};

static size_t budget_left(const struct unwinder *u)
{
	return u->budget > u->counts.table_bytes ? u->budget - u->counts.table_bytes : 0;
}

/* CF's row for the file address PC, its growth counted against the budget. */
static const struct cfi_row *file_row(struct unwinder *u, struct cfi_file *cf, uint64_t pc)
{
	size_t before = cfi_file_bytes(cf);
	const struct cfi_row *row = cfi_file_lookup(cf, pc, budget_left(u));

	u->counts.table_bytes += cfi_file_bytes(cf) - before;
	u->counts.over_budget += !row && !budget_left(u);
	return row;
}

/*
 * F's row for the file address PC: its own tables', else, where they have
 * none for PC, its debug file's.
 */
static const struct cfi_row *uw_file_row(struct unwinder *u, struct uw_file *f, uint64_t pc)
{
	const struct cfi_row *row = f->cfi ? file_row(u, f->cfi, pc) : NULL, *drow;

	if (f->cfi && (!row || row->kind != CFI_GAP))
		return row;
	if (!f->dbg_tried)
		open_debug_cfi(u, f, f->fd);
	if (!f->dbg)
		return row;
	drow = file_row(u, f->dbg, pc);
	if (!drow || drow->kind == CFI_GAP)
		return row ? row : drow;
	u->counts.debug_rows++;
	return drow;
}

static const struct cfi_row *proc_row(void *ctx, uint64_t pc, uint64_t *vaddr,
				      unsigned int *machine)
{
	struct proc_lookup *l = ctx;
	const struct pmap_entry *m = pmap_find(l->p, pc);
	struct uw_file *f;
	const struct cfi_row *row;
	uint64_t off, refused;

	/* Mapped since the maps were read (dlopen): read them again, once per copy. */
	if (!m && !l->reread) {
		l->reread = true;
		l->gone |= read_maps(l->u, l->pid, l->p) != 0;
		m = pmap_find(l->p, pc);
	}
	l->nowhere = !m;
	l->over_budget = false;
	f = m ? m->file : NULL;
	if (f)
		file_tables(l->u, f);
	/* A file without any table (no mapping: a pc nowhere, no build's fault). */
	l->unmarked = f && (!f->cfi || !cfi_file_gap_is_marked(f->cfi));
	if (!f || (!f->cfi && !f->dbg))
		return NULL;
	off = pc - m->start + m->pgoff;
	for (size_t i = 0; i < f->nr_loads; i++) {
		if (off < f->loads[i].offset || off - f->loads[i].offset >= f->loads[i].filesz)
			continue;
		*vaddr = off - f->loads[i].offset + f->loads[i].vaddr;
		*machine = cfi_file_machine(f->cfi ? f->cfi : f->dbg);
		refused = l->u->counts.over_budget;
		row = uw_file_row(l->u, f, *vaddr);
		l->over_budget = !row && l->u->counts.over_budget != refused;
		/* Its debug file covers what its own tables do not: no cut of the build's. */
		if (row && row->kind != CFI_GAP && !f->cfi)
			l->unmarked = false;
		return row;
	}
	return NULL;
}

/* PID's view of the copies taken at TIME (0: unknown, none), or NULL. */
static const struct uw_view *view_at(const struct unwinder *u, uint32_t pid, uint64_t time)
{
	const struct uw_views *vs = u32_map_get(&u->views, pid);

	for (uint32_t i = vs && time ? vs->n : 0; i-- > 0;)
		if (vs->v[i].from <= time && time < vs->v[i].until)
			return vs->v[i].maps.n ? &vs->v[i] : NULL;
	return NULL;
}

/* Whether PID forked or exec'ed after TIME: /proc shows another address space. */
static bool changed_since(const struct unwinder *u, uint32_t pid, uint64_t time)
{
	const struct uw_views *vs = u32_map_get(&u->views, pid);

	return time && vs && vs->n && vs->v[vs->n - 1].from > time;
}

/*
 * PID's maps, read again when its address space is another than when they
 * were read (MM: an exec, or a new process under a reused pid; 0: unknown,
 * the -F samples, whose exec records forget the pid in time order instead).
 * *GONE: /proc does not show the address space of copy time TIME.
 */
static struct pmap *proc_of(struct unwinder *u, uint32_t pid, uint64_t mm, uint64_t time,
			    bool *fresh, bool *gone)
{
	struct pmap *p = pmap_set_get(&u->procs, pid, false);
	const struct uw_view *w = view_at(u, pid, time);

	*fresh = false;
	if (p && !p->dead && (!mm || !p->gen || p->gen == mm)) {
		p->gen = p->gen ? p->gen : mm;
		return p;
	}
	if (!p) {
		p = pmap_set_get(&u->procs, pid, true);
		if (!p)
			return NULL;
	}
	/*
	 * A process forked or exec'd during the recording has a view: its
	 * parent's maps, or /proc's at the exec, and the MMAP2 records since.
	 * Reading /proc instead (its first copy) cost about 160 us in the
	 * kernel and as much parsing, for each of perf bench's 400 processes.
	 * A pc the view lacks (an MMAP2 not read yet) reads /proc then
	 * (proc_row: *FRESH stays false); lost records leave the views unused.
	 */
	if (w && !u->records_lost) {
		pmap_copy(p, &w->maps);
		u->counts.views_used++;
		*gone = false;
		p->dead = false;
		p->gen = mm;
		return p;
	}
	/*
	 * A process gone before its copies were unwound (user space behind
	 * the ring: riscv64 under a busy TCG host cut a third of a thread's
	 * stacks at their first frame) has no maps to read: those last read
	 * still describe copies of the same address space, else its view of
	 * the copy's time.  So does an address space an exec replaced.
	 */
	*gone = changed_since(u, pid, time) || read_maps(u, pid, p);
	if (*gone && !(mm && p->gen == mm)) {
		if (w) {
			pmap_copy(p, &w->maps);
			u->counts.views_used++;
		} else {
			pmap_reset(p);
		}
	}
	p->dead = false;
	p->gen = mm;
	*fresh = true;
	return p;
}

bool unwinder_knows(const struct unwinder *u, uint32_t pid, uint64_t mm)
{
	const struct pmap *p = u32_map_get(&u->procs.by_pid, pid);

	return p && !p->dead && p->n && (!mm || p->gen == mm);
}

/* PID is swept at the second sweep from now: its maps and views, if dead by then. */
static void sweep_later(struct unwinder *u, uint32_t pid)
{
	if (u->nr_forgotten == u->cap_forgotten) {
		size_t cap = u->cap_forgotten ? 2 * u->cap_forgotten : 64;
		uint32_t *f = realloc(u->forgotten, cap * sizeof(*f));

		if (!f)
			return;	/* kept until the end: memory, not a wrong stack */
		u->forgotten = f;
		u->cap_forgotten = cap;
	}
	u->forgotten[u->nr_forgotten++] = pid;
}

/* PID's maps describe an address space that ended: read again for the next copy. */
static void maps_dead(struct unwinder *u, uint32_t pid)
{
	struct pmap *p = pmap_set_get(&u->procs, pid, false);

	/* Kept for copies unwound once it is gone (proc_of), until swept. */
	if (!p || p->dead)
		return;
	p->dead = true;
	sweep_later(u, pid);
}

void unwinder_forget(struct unwinder *u, uint32_t pid)
{
	struct uw_views *vs = u32_map_get(&u->views, pid);

	maps_dead(u, pid);
	if (vs && !vs->dead) {
		vs->dead = true;
		sweep_later(u, pid);
	}
}

static void views_free(void *v)
{
	struct uw_views *vs = v;

	for (uint32_t i = 0; vs && i < vs->n; i++)
		pmap_release(&vs->v[i].maps);
	free(vs);
}

/* PID's views, created if need be (NULL: no memory; its copies may be cut, counted). */
static struct uw_views *views_of(struct unwinder *u, uint32_t pid)
{
	struct uw_views *vs = u32_map_get(&u->views, pid);

	if (vs)
		return vs;
	vs = calloc(1, sizeof(*vs));
	if (vs && u32_map_put(&u->views, pid, vs)) {
		free(vs);
		return NULL;
	}
	return vs;
}

/* A view from FROM on, empty: the last one ends there; the oldest goes when full. */
static struct uw_view *view_open(struct uw_views *vs, uint64_t from)
{
	struct uw_view *w;

	if (vs->n && vs->v[vs->n - 1].until > from)
		vs->v[vs->n - 1].until = from;
	if (vs->n == UW_VIEWS) {
		pmap_release(&vs->v[0].maps);
		memmove(vs->v, vs->v + 1, (UW_VIEWS - 1) * sizeof(*vs->v));
		vs->n--;
	}
	w = &vs->v[vs->n++];
	*w = (struct uw_view){ .from = from, .until = UINT64_MAX };
	return w;
}

/*
 * W := PID's maps now, while it lives (gone: W stays empty, its span
 * known, filled by the MMAP2 records that follow).
 */
static void view_read(struct unwinder *u, uint32_t pid, struct uw_view *w)
{
	uint64_t now = mono_ns();

	if (read_maps(u, pid, &w->maps))
		return;
	w->read_at = now;
	u->counts.views++;
}

void unwinder_mmap(struct unwinder *u, uint32_t pid, uint64_t time, const struct proc_map *m)
{
	struct uw_views *vs = u32_map_get(&u->views, pid);
	struct maps_read r = { u, pid };

	if (!vs || !(m->prot & 4) || m->file[0] != '/' || m->end <= m->start)
		return;
	for (uint32_t i = vs->n; i-- > 0;) {
		struct uw_view *w = &vs->v[i];

		if (w->from > time || time >= w->until)
			continue;
		/* What /proc showed after it holds it, or no longer does. */
		if (w->read_at <= time)
			pmap_add(&w->maps, m->start, m->end, m->pgoff, file_of(&r, m));
		return;
	}
}

void unwinder_fork(struct unwinder *u, uint32_t pid, uint32_t ppid, uint64_t time)
{
	const struct pmap *parent = pmap_set_get(&u->procs, ppid, false);
	const struct uw_view *pw = view_at(u, ppid, time);
	struct uw_views *vs;
	struct uw_view *w;

	maps_dead(u, pid);
	if (!(vs = views_of(u, pid)))
		return;
	vs->dead = false;	/* a sweep due for the pid's old process leaves it */
	w = view_open(vs, time);
	/*
	 * The child's address space is a copy of its parent's: the parent's
	 * maps unless an exec (dead) or the start (no gen) stands between,
	 * else its view of the fork's time, else the child's own, now.
	 */
	if (parent && !parent->dead && parent->gen && parent->n) {
		pmap_copy(&w->maps, parent);
		u->counts.views++;
	} else if (pw) {
		pmap_copy(&w->maps, &pw->maps);
		u->counts.views++;
	} else {
		view_read(u, pid, w);
	}
}

void unwinder_records_lost(struct unwinder *u)
{
	u->records_lost = true;
}

void unwinder_exec(struct unwinder *u, uint32_t pid, uint64_t time)
{
	struct uw_views *vs;
	struct uw_view *last;

	maps_dead(u, pid);
	if (!(vs = views_of(u, pid)))
		return;
	last = vs->n ? &vs->v[vs->n - 1] : NULL;
	/* Read from /proc after this exec: its maps are this exec's, not the span's before. */
	if (last && last->read_at > time && last->from < time) {
		last->from = time;
		return;
	}
	view_read(u, pid, view_open(vs, time));
}

void unwinder_sweep(struct unwinder *u)
{
	size_t ripe = u->forgotten_ripe;

	for (size_t i = 0; i < ripe; i++) {
		struct pmap *p = pmap_set_get(&u->procs, u->forgotten[i], false);

		struct uw_views *vs = u32_map_get(&u->views, u->forgotten[i]);

		/* Read again since (a live process now): not ours to free. */
		if (p && p->dead)
			pmap_set_drop(&u->procs, u->forgotten[i]);
		if (vs && vs->dead)
			views_free(u32_map_del(&u->views, u->forgotten[i]));
	}
	if (ripe)
		memmove(u->forgotten, u->forgotten + ripe,
			(u->nr_forgotten - ripe) * sizeof(*u->forgotten));
	u->nr_forgotten -= ripe;
	u->forgotten_ripe = u->nr_forgotten;
	for (size_t i = 0; i < u->nr_files; i++) {
		cfi_file_drop_pages(u->files[i]->cfi);
		cfi_file_drop_pages(u->files[i]->dbg);
	}
}

uint32_t unwinder_unwind(struct unwinder *u, const struct offcpu_ucopy *c, bool ends_stack,
			 uint64_t *ip, uint32_t max, enum unwind_end *end,
			 struct unwind_reads *reads)
{
	struct proc_lookup l = { .u = u, .pid = c->pid };
	uint32_t n;

	l.p = proc_of(u, c->pid, c->mm, c->time, &l.reread, &l.gone);
	if (!l.p) {
		/* Out of memory: the innermost frame, never cached. */
		if (reads)
			*reads = (struct unwind_reads){ .overflow = true };
		*end = UNWIND_NO_CFI;
		u->counts.end[UNWIND_NO_CFI]++;
		ip[0] = c->pc;
		return max ? 1 : 0;
	}
	n = unwind_stack(c, c->len, ends_stack, proc_row, &l, ip, max, end, reads);
	/* No file at the pc as its maps were not to be had: no build's fault. */
	if (*end == UNWIND_NO_CFI && l.gone && l.nowhere) {
		*end = UNWIND_GONE;
		l.unmarked = false;
	}
	/* No row for want of memory, not of tables: not the build's fault either. */
	if (*end == UNWIND_NO_CFI && l.over_budget) {
		*end = UNWIND_BUDGET;
		l.unmarked = false;
	}
	u->counts.end[*end]++;
	u->counts.cut_no_table += *end == UNWIND_NO_CFI && l.unmarked;
	for (size_t i = 0; !u->counts.machine && i < l.p->n; i++) {
		const struct uw_file *f = l.p->v[i].file;

		if (f && (f->cfi || f->dbg))
			u->counts.machine = cfi_file_machine(f->cfi ? f->cfi : f->dbg);
	}
	/* Its maps were unreadable (gone): kept, it would stay for the run. */
	if (!l.p->n)
		unwinder_forget(u, c->pid);
	return n;
}

size_t unwinder_nr_procs(const struct unwinder *u)
{
	return u->procs.by_pid.n;
}

const char *unwind_cut_hint(unsigned int machine)
{
	/*
	 * GCC makes no unwind tables on 32-bit ARM by default, and its Thumb-2
	 * frame pointer (r7) points below the locals, no chain to walk: only
	 * the tables help there (measured with Debian's gcc-12, t_ehabi).
	 */
	if (machine == EM_ARM)
		return "build the program (and its libraries) with -funwind-tables: GCC's armhf "
		       "code has no unwind tables by default, and its frame pointer is no chain "
		       "(clang's Thumb code with -fno-omit-frame-pointer is)";
	return "build the program (and its libraries) with -fasynchronous-unwind-tables, or "
	       "with -fno-omit-frame-pointer";
}

struct unwinder *unwinder_new(size_t table_budget)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->budget = table_budget;
	elf_version(EV_CURRENT);
	return u;
}

const struct unwind_counts *unwinder_counts(const struct unwinder *u)
{
	return &u->counts;
}

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	pmap_set_free(&u->procs);
	u32_map_free(&u->views, views_free);
	free(u->forgotten);
	for (size_t i = 0; i < u->nr_files; i++) {
		cfi_file_close(u->files[i]->cfi);
		cfi_file_close(u->files[i]->dbg);
		if (u->files[i]->fd >= 0)
			close(u->files[i]->fd);
		if (u->files[i]->dbg_fd >= 0)
			close(u->files[i]->dbg_fd);
		free(u->files[i]->path);
		free(u->files[i]);
	}
	free(u->files);
	free(u);
}
