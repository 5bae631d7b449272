// SPDX-License-Identifier: GPL-2.0
/* The BPF walker's CFI rows and process mappings, loaded on request (see ktables.h). */
#include <elf.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "lib/clock.h"
#include "lib/hashset.h"
#include "lib/procfs.h"
#include "lib/procmaps.h"
#include "unwind/ktables.h"
#include "unwind/unwind.h"

/* The files of this machine's processes: the walker reads this board's frames only. */
#if defined(__x86_64__)
#define KT_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define KT_MACHINE EM_AARCH64
#elif defined(__riscv) && __riscv_xlen == 64
#define KT_MACHINE EM_RISCV
#elif defined(__s390x__)
#define KT_MACHINE EM_S390
#elif defined(__arm__)
#define KT_MACHINE EM_ARM
#else
#define KT_MACHINE 0
#endif

#define KT_MAX_ROWS	(1u << OFFCPU_KROW_SEARCH)	/* a file's rows, at most */
#define KT_POOL_SHARE	4	/* nor more than the pool's rows over this */
#define KT_KEEP_NS	2000000000ull	/* a file loaded this recently is not given back */
#define KT_RELOAD_NS	1000000000ull	/* a loaded process is read again at most this often */
/*
 * Rows given back are rewritten only after this long: a walk that read the
 * file's slot before it was cleared runs with its CPU's runqueue locked and
 * interrupts off, for microseconds (the rows' tags catch what is left).
 */
#define KT_GRACE_NS	2000000
#define KT_POLL_NS	2000000		/* how often the loader looks for requests while they come */
/*
 * Once idle, each empty look doubles the wait up to this: polling every
 * 2 ms was a tenth of the recorder's CPU over a recording.  A copy whose
 * walk missed wakes the loader at once (ktables_learn); requests with no
 * copy (a fork's, or one made while the ring was full) wait at most this.
 */
#define KT_IDLE_NS	64000000
#define KT_LEARN	256		/* copied stacks waiting for the loader */
#define KT_TODO		256		/* files whose rows wait to be built */
#define KT_OPEN		4		/* parted files kept open for their next parts */
/*
 * A file of more FDEs than this is loaded by parts of this many consecutive
 * FDEs (libc's 3,713 FDEs make 28,371 rows), each a file of its own to the
 * walker, built when a walk needs it: building rows is what the loader
 * spends its time on (less since cfi.c runs each FDE's program once), its
 * rows take the pool's room, and stacks pass through few parts of a large
 * file.  Parts are larger where
 * there would be more than KT_MAX_PARTS (a process has OFFCPU_KMAPS
 * mappings).
 */
#define KT_PART_FDES	512
#define KT_MAX_PARTS	16

struct kt_file {
	unsigned int maj, min;
	uint64_t ino;
	uint32_t id;		/* registered under this id, in this slot (0: not registered) */
	uint32_t slot;
	uint32_t first, n;	/* its run in the pool (n 0: its rows not loaded) */
	uint64_t loaded;	/* when (CLOCK_MONOTONIC ns) */
	bool no_rows;		/* no usable CFI: never loaded */
	size_t nr_loads;
	struct unwind_load loads[UNWIND_MAX_LOADS];
	/* Too large for one run: loaded by parts, each a kt_file of its own. */
	struct kt_file **parts;
	size_t nr_parts;
	/* Its CFI kept open for the next part (reading its FDEs again costs). */
	struct cfi_file *cf;
	int cf_fd;
	bool sized;		/* known to have at most KT_PART_FDES FDEs */
	/* A mapping of it to open it by (its process may be gone by then). */
	struct proc_map *at;
	uint32_t at_pid;
	/* A part: its file, its file addresses [lo, hi) and its FDEs. */
	struct kt_file *whole;
	uint64_t lo, hi;
	size_t first_fde, nr_fdes;
};

struct kt_proc {
	uint64_t mm;
	uint64_t loaded;	/* CLOCK_MONOTONIC ns */
	struct offcpu_kproc *kp;	/* as last written to ku_procs */
	bool read;		/* kp read from /proc here (else inherited at fork) */
};

/* A file whose rows are to be built, and a mapping of it to open it by. */
struct kt_todo {
	struct kt_file *f;
	uint32_t pid;
	struct proc_map m;
};

/* A copied stack, queued for the loader: the files its frames lie in want rows. */
struct kt_learn {
	uint32_t pid, n;
	uint64_t mm;
	uint64_t ip[OFFCPU_SPILL_FRAMES];
};

struct ktables {
	int rows_fd, files_fd, procs_fd, want_fd;
	long page;			/* ku_rows is mapped a window at a time (pool_write) */
	uint32_t nr_rows, head;		/* the ring's next free row */
	/* Until then the ring's head holds a file loaded just now: loads wait (load_file). */
	uint64_t busy_until;
	uint32_t next_id, next_slot;
	struct kt_file **files;
	size_t nr_files;
	struct kt_file *slots[OFFCPU_KFILES];
	struct kt_file *open[KT_OPEN];	/* parted files whose CFI is kept open */
	uint32_t next_open;
	struct u32_map procs;		/* pid -> struct kt_proc */
	struct offcpu_krow *scratch;	/* one file's rows being built */
	struct ktables_counts counts;
	pthread_mutex_t lock;		/* the learn queue, filled by the ring's reader */
	pthread_cond_t wake;		/* the loader's, signalled with lock held */
	struct kt_learn learn[KT_LEARN];
	uint32_t learn_head, learn_n;
	/* Rows to build, after the processes asking are loaded (the loader thread's). */
	struct kt_todo *todo[KT_TODO];
	uint32_t todo_head, todo_n;
	pthread_t loader;		/* serves ku_want apart from the ring's reader */
	bool started;
	atomic_bool stop;
};

static bool fits16(int32_t v)
{
	return v >= INT16_MIN && v <= INT16_MAX;
}

void ktable_row(const struct cfi_row *row, uint16_t tag, struct offcpu_krow *out)
{
	*out = (struct offcpu_krow){ .pc = (uint32_t)row->pc, .tag = tag, .kind = OFFCPU_KROW_MISS };
	if (row->kind == CFI_END || (row->kind == CFI_NORMAL && row->ra_rule == CFI_UNDEF)) {
		out->kind = OFFCPU_KROW_END;
		return;
	}
	if (row->kind != CFI_NORMAL || !fits16(row->cfa_off) || !fits16(row->ra_off) ||
	    !fits16(row->fp_off) || (row->cfa_base != CFI_BASE_SP && row->cfa_base != CFI_BASE_FP))
		return;
	out->kind = OFFCPU_KROW_NORMAL;
	out->cfa_base = row->cfa_base == CFI_BASE_SP ? OFFCPU_KROW_SP : OFFCPU_KROW_FP;
	out->cfa_off = (int16_t)row->cfa_off;
	out->ra_rule = row->ra_rule == CFI_AT_CFA ? OFFCPU_KROW_AT_CFA : OFFCPU_KROW_SAME;
	out->ra_off = out->ra_rule == OFFCPU_KROW_AT_CFA ? (int16_t)row->ra_off : 0;
	/* An undefined frame pointer keeps its value, as cfi_step() does. */
	out->fp_rule = row->fp_rule == CFI_AT_CFA ? OFFCPU_KROW_AT_CFA : OFFCPU_KROW_SAME;
	out->fp_off = out->fp_rule == OFFCPU_KROW_AT_CFA ? (int16_t)row->fp_off : 0;
}

/* Whether A and B unwind alike (their pcs aside). */
static bool same_rule(const struct offcpu_krow *a, const struct offcpu_krow *b)
{
	return a->kind == b->kind && a->cfa_base == b->cfa_base && a->cfa_off == b->cfa_off &&
	       a->ra_rule == b->ra_rule && a->ra_off == b->ra_off && a->fp_rule == b->fp_rule &&
	       a->fp_off == b->fp_off;
}

size_t ktable_rows(const struct cfi_table *t, uint16_t tag, struct offcpu_krow *out)
{
	size_t n = 0;

	for (size_t i = 0; i < t->n; i++) {
		struct offcpu_krow r;

		if (t->rows[i].pc > UINT32_MAX)
			return 0;
		ktable_row(&t->rows[i], tag, &r);
		if (t->machine == EM_ARM && t->rows[i].kind == CFI_GAP)
			r.kind = OFFCPU_KROW_GAP;
		if (n && same_rule(&out[n - 1], &r))
			continue;
		if (n && out[n - 1].pc == r.pc)
			n--;	/* an empty range: the later row holds from there */
		out[n++] = r;
	}
	return n;
}

/* ---- the pool and the file slots ---- */

/* F's slot as the walker reads it: its rows, or none yet (n 0: a miss asks for them). */
static void write_slot(struct ktables *k, const struct kt_file *f)
{
	struct offcpu_kfile kf = { .first = f->first, .n = f->n, .id = f->id };

	bpf_map_update_elem(k->files_fd, &f->slot, &kf, BPF_ANY);
}

/* F gives its rows back; it keeps its slot and id (a miss loads it again). */
static void give_back(struct ktables *k, struct kt_file *f)
{
	f->n = 0;
	write_slot(k, f);
	k->counts.evicted++;
}

/* Waits out every walk that may still read what was just given back. */
static void grace(void)
{
	struct timespec ts = { 0, KT_GRACE_NS };

	nanosleep(&ts, NULL);
}

/* Whether F's run of rows overlaps [FIRST, FIRST + N). */
static bool overlaps(const struct kt_file *f, uint32_t first, uint32_t n)
{
	return f->n && f->first < first + n && first < f->first + f->n;
}

/*
 * N rows at the ring's head: the files loaded longest ago whose runs lie
 * there give them back.  Returns the first row, UINT32_MAX - 1 when one of
 * them was loaded too recently (try later), or UINT32_MAX (never fits).
 */
static uint32_t alloc_rows(struct ktables *k, uint32_t n, uint64_t now)
{
	bool gave = false;
	uint32_t first;

	if (n > k->nr_rows / KT_POOL_SHARE)
		return UINT32_MAX;
	first = k->head + n > k->nr_rows ? 0 : k->head;
	k->busy_until = 0;
	for (size_t i = 0; i < k->nr_files; i++)
		if (overlaps(k->files[i], first, n) && now - k->files[i]->loaded < KT_KEEP_NS &&
		    k->files[i]->loaded + KT_KEEP_NS > k->busy_until)
			k->busy_until = k->files[i]->loaded + KT_KEEP_NS;
	if (k->busy_until)
		return UINT32_MAX - 1;
	for (size_t i = 0; i < k->nr_files; i++)
		if (overlaps(k->files[i], first, n)) {
			give_back(k, k->files[i]);
			gave = true;
		}
	if (gave)
		grace();
	k->head = first + n;
	return first;
}

/*
 * A free file slot, or the next one in turn, taken from its file (which is
 * registered again at its process's next load: its id no longer matches).
 */
static uint32_t alloc_slot(struct ktables *k)
{
	struct kt_file *f;

	for (uint32_t i = 0; i < OFFCPU_KFILES; i++) {
		uint32_t s = (k->next_slot + i) % OFFCPU_KFILES;

		if (!k->slots[s]) {
			k->next_slot = s + 1;
			return s;
		}
	}
	f = k->slots[k->next_slot % OFFCPU_KFILES];
	f->n = 0;
	f->id = 0;
	write_slot(k, f);
	k->counts.evicted++;
	grace();
	return k->next_slot++ % OFFCPU_KFILES;
}

/*
 * DBG's rows for [A, B) into T (J: the FDE to look from, moved past those
 * ending by B): a row before A holds from A, rows from B on are E's.
 */
static int debug_rows(struct cfi_file *dbg, size_t *j, uint64_t a, uint64_t b,
		      size_t max_rows, struct cfi_table *t)
{
	size_t nf = cfi_file_fdes(dbg);
	struct cfi_table d;
	int rc = 0;

	while (*j < nf && cfi_file_fde_end(dbg, *j) <= a)
		(*j)++;
	for (size_t i = *j; !rc && i < nf && cfi_file_fde_start(dbg, i) < b; i++) {
		if (cfi_file_table(dbg, i, 1, cfi_file_fde_start(dbg, i), 0, &d))
			continue;	/* a broken FDE: its range stays a gap */
		for (size_t r = 0; !rc && r < d.n && d.rows[r].pc < b; r++) {
			struct cfi_row row = d.rows[r];

			row.pc = row.pc > a ? row.pc : a;
			rc = cfi_table_push(t, max_rows, &row);
		}
		cfi_table_free(&d);
		/* An FDE reaching past B may cover E's next gap too. */
		if (cfi_file_fde_end(dbg, i) <= b)
			*j = i + 1;
	}
	return rc;
}

/*
 * Debian's armhf libc has no EHABI entry for start_thread or
 * pthread_mutex_lock; its libc6-dbg's .debug_frame has FDEs for all.
 */
int ktable_ehabi_rows(const struct cfi_table *e, struct cfi_file *dbg, size_t max_rows,
		      struct cfi_table *t)
{
	struct cfi_row gap = { .kind = CFI_GAP };
	size_t j = 0;
	int rc = 0;

	memset(t, 0, sizeof(*t));
	t->machine = EM_ARM;
	for (size_t i = 0; !rc && i <= e->n; i++) {
		/* Range i: [the end of row i - 1's, row i's pc); the last reaches the end. */
		uint64_t a = i ? e->rows[i - 1].pc : 0, b = i < e->n ? e->rows[i].pc : UINT64_MAX;

		if (i && e->rows[i - 1].kind != CFI_GAP) {
			rc = cfi_table_push(t, max_rows, &e->rows[i - 1]);
			continue;
		}
		gap.pc = a;
		rc = cfi_table_push(t, max_rows, &gap);
		if (!rc && dbg && a < b)
			rc = debug_rows(dbg, &j, a, b, max_rows, t);
	}
	if (rc)
		cfi_table_free(t);
	return rc;
}

/*
 * The rows of CF (its own CFI, or an EHABI file's with its debug file's,
 * opened by PID as M maps it, from FD): 0, -2 past MAX_ROWS, -1 otherwise.
 */
static int file_table(struct kt_file *f, struct cfi_file *cf, int fd, uint32_t pid,
		      const struct proc_map *m, size_t max_rows, struct cfi_table *t)
{
	const struct cfi_table *e = cfi_file_ehabi(cf);
	struct cfi_file *dbg = NULL;
	int dfd, rc;

	if (!e)
		return f->whole ? cfi_file_table(cf, f->first_fde, f->nr_fdes, f->lo, max_rows, t) :
				  cfi_file_table(cf, 0, cfi_file_fdes(cf), 0, max_rows, t);
	dfd = unwind_open_debug(pid, m->file, fd);
	if (dfd >= 0) {
		dbg = cfi_file_open(dfd, NULL, 0);
		if (dbg && cfi_file_machine(dbg) != EM_ARM) {
			cfi_file_close(dbg);
			dbg = NULL;
		}
	}
	rc = ktable_ehabi_rows(e, dbg, max_rows, t);
	cfi_file_close(dbg);
	if (dfd >= 0)
		close(dfd);
	return rc;
}

/*
 * ROWS (N) into the pool from row FIRST on, through a mapping of their pages
 * only (BPF_F_MMAPABLE: a file's thousands of rows cost no syscall each).
 * The whole pool stayed mapped before: mapping a BPF array inserts all its
 * pages at once, 4 MiB of the process's RSS for rows it never reads.
 */
static int pool_write(struct ktables *k, uint32_t first, const struct offcpu_krow *rows,
		      size_t n)
{
	size_t lo = (size_t)first * sizeof(*rows), hi = lo + n * sizeof(*rows);
	size_t off = lo / k->page * k->page, len = hi - off;
	char *w = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, k->rows_fd, (off_t)off);

	if (w == MAP_FAILED)
		return -1;
	memcpy(w + (lo - off), rows, n * sizeof(*rows));
	munmap(w, len);
	return 0;
}

/*
 * Builds F's rows from its CFI (CF, opened from FD by PID as M maps it) and
 * loads them: 0, -1 when it has none usable, -2 when they would take too
 * much of the pool, -3 when the pool holds only files loaded just now (F is
 * tried again later).
 */
static int load_rows(struct ktables *k, struct kt_file *f, struct cfi_file *cf, int fd,
		     uint32_t pid, const struct proc_map *m)
{
	uint32_t cap = k->nr_rows / KT_POOL_SHARE < KT_MAX_ROWS ? k->nr_rows / KT_POOL_SHARE :
			KT_MAX_ROWS;
	struct cfi_table t = { 0 };
	struct offcpu_krow *v;
	uint32_t first;
	size_t n;
	int rc;

	if (cfi_file_machine(cf) != KT_MACHINE || (!cfi_file_fdes(cf) && !cfi_file_ehabi(cf)))
		return -1;
	/* One row more than fits: a file that large is an error, not a cut table. */
	rc = file_table(f, cf, fd, pid, m, cap + 1, &t);
	if (rc)
		return rc == -2 ? -2 : -1;
	if (!t.n || !(v = realloc(k->scratch, t.n * sizeof(*v)))) {
		cfi_table_free(&t);
		return -1;
	}
	k->scratch = v;
	n = ktable_rows(&t, (uint16_t)f->id, v);
	cfi_table_free(&t);
	if (!n)
		return -1;
	f->loaded = mono_ns();
	first = alloc_rows(k, n, f->loaded);
	if (first >= UINT32_MAX - 1)
		return first == UINT32_MAX ? -2 : -3;
	if (pool_write(k, first, v, n))
		return -1;
	f->first = first;
	f->n = n;
	/* The syscall orders the rows' stores before the slot's. */
	write_slot(k, f);
	k->counts.files++;
	k->counts.rows += n;
	return 0;
}

static int part_file(struct ktables *k, struct kt_file *f, struct cfi_file *cf);

static void close_cfi(struct kt_file *f)
{
	cfi_file_close(f->cf);
	if (f->cf)
		close(f->cf_fd);
	f->cf = NULL;
}

/*
 * The parted file F's CFI (CF, open as FD) stays open for its next parts;
 * the one kept longest gives its place (KT_OPEN: each holds its FDE index).
 */
static void keep_open(struct ktables *k, struct kt_file *f, struct cfi_file *cf, int fd)
{
	struct kt_file **slot = &k->open[k->next_open++ % KT_OPEN];

	if (*slot)
		close_cfi(*slot);
	f->cf = cf;
	f->cf_fd = fd;
	*slot = f;
}

/*
 * Loads the rows of F, mapped by PID as M, or parts it (its parts are
 * loaded as walks need them); counts what keeps them out.
 */
static void load_file(struct ktables *k, struct kt_file *f, uint32_t pid, const struct proc_map *m)
{
	struct kt_file *w = f->whole ? f->whole : f;
	struct cfi_file *cf = w->cf;
	int fd = w->cf_fd;

	/*
	 * The pool's head is still held by a file loaded under KT_KEEP_NS ago:
	 * these rows would be built to be put off again.  On a busy machine
	 * (the pool turning over) each such try opened the file's CFI and
	 * built its rows for nothing, most of the loader's time; the file is
	 * asked for again at its next miss.
	 */
	if (mono_ns() < k->busy_until) {
		k->counts.deferred++;
		return;
	}
	if (!cf) {
		fd = unwind_open_mapped(pid, m);
		if (fd < 0) {
			/* Its process is gone: the next one to map it is asked. */
			if (w->at && w->at_pid == pid) {
				free(w->at);
				w->at = NULL;
			}
			return;
		}
		cf = cfi_file_open(fd, NULL, 0);
	}
	if (cf && !f->whole && !f->sized && cfi_file_fdes(cf) > KT_PART_FDES &&
	    cfi_file_machine(cf) == KT_MACHINE && !part_file(k, f, cf)) {
		k->counts.parted++;
		keep_open(k, f, cf, fd);
		return;
	}
	switch (cf ? load_rows(k, f, cf, fd, pid, m) : -1) {
	case -1:
		f->no_rows = true;
		k->counts.no_rows++;
		break;
	case -2:
		f->no_rows = true;
		k->counts.too_large++;
		break;
	case -3:
		k->counts.deferred++;
		break;
	}
	if (cf != w->cf) {
		cfi_file_close(cf);
		close(fd);
	}
	/* A whole file's CFI kept from part_large: its rows are built now. */
	if (w == f && !f->parts)
		close_cfi(f);
}

/* F gets a slot and a fresh id, without rows yet. */
static void register_file(struct ktables *k, struct kt_file *f)
{
	f->slot = alloc_slot(k);
	f->id = k->next_id;
	k->next_id = k->next_id + 1 ? k->next_id + 1 : 1;
	k->slots[f->slot] = f;
	write_slot(k, f);
}

/*
 * File M of PID, registered (slot, id, load segments) without its rows,
 * which wait for a walk to need them.  NULL where it has no usable CFI.
 */
static struct kt_file *file_of(struct ktables *k, uint32_t pid, const struct proc_map *m)
{
	struct kt_file *f = NULL, **v;
	int fd;

	for (size_t i = 0; i < k->nr_files && !f; i++)
		if (!k->files[i]->whole && k->files[i]->maj == m->maj &&
		    k->files[i]->min == m->min && k->files[i]->ino == m->ino)
			f = k->files[i];
	if (!f) {
		v = realloc(k->files, (k->nr_files + 1) * sizeof(*v));
		if (!v)
			return NULL;
		k->files = v;
		f = calloc(1, sizeof(*f));
		if (!f)
			return NULL;
		*f = (struct kt_file){ .maj = m->maj, .min = m->min, .ino = m->ino };
		k->files[k->nr_files++] = f;
	}
	if ((f->id || f->parts) && !f->at && (f->at = malloc(sizeof(*f->at)))) {
		*f->at = *m;	/* the last one to open it by was gone */
		f->at_pid = pid;
	}
	if (f->id || f->no_rows || f->parts)
		return f->id || f->parts ? f : NULL;
	fd = unwind_open_mapped(pid, m);
	if (fd < 0)
		return NULL;
	f->nr_loads = unwind_read_loads(fd, f->loads);
	close(fd);
	if (!f->at)
		f->at = malloc(sizeof(*f->at));
	if (f->at) {
		*f->at = *m;
		f->at_pid = pid;
	}
	register_file(k, f);
	return f;
}

/*
 * F's file (its CFI: CF) by parts of consecutive FDEs, each registered as a
 * file of its own (a slot, an id, its file addresses); F itself is no
 * longer a walker's file.  0, or -1 when out of memory.
 */
static int part_file(struct ktables *k, struct kt_file *f, struct cfi_file *cf)
{
	size_t nf = cfi_file_fdes(cf), per, np;
	struct kt_file **v;

	per = (nf + KT_MAX_PARTS - 1) / KT_MAX_PARTS;
	if (per < KT_PART_FDES)
		per = KT_PART_FDES;
	np = (nf + per - 1) / per;
	f->parts = calloc(np, sizeof(*f->parts));
	v = realloc(k->files, (k->nr_files + np) * sizeof(*v));
	if (v)
		k->files = v;
	if (!f->parts || !v) {
		free(f->parts);
		f->parts = NULL;
		return -1;
	}
	for (size_t i = 0; i < np; i++) {
		struct kt_file *q = calloc(1, sizeof(*q));

		if (!q)
			break;
		*q = (struct kt_file){ .maj = f->maj, .min = f->min, .ino = f->ino, .whole = f,
				       .first_fde = i * per, .nr_fdes = nf - i * per < per ? nf - i * per : per,
				       .lo = i ? cfi_file_fde_start(cf, i * per) : 0,
				       .hi = i + 1 < np ? cfi_file_fde_start(cf, (i + 1) * per) : UINT64_MAX,
				       .nr_loads = f->nr_loads };
		memcpy(q->loads, f->loads, sizeof(q->loads));
		register_file(k, q);
		f->parts[f->nr_parts++] = q;
		k->files[k->nr_files++] = q;
	}
	/* Its slot names no rows from now on: a walk through it asks again, for a part. */
	f->n = 0;
	write_slot(k, f);
	return 0;
}

/* ---- processes ---- */

/* M of file F as the walker's mapping; false where no load segment holds it. */
static bool kmap_of(const struct kt_file *f, const struct proc_map *m, struct offcpu_kmap *out)
{
	for (size_t i = 0; i < f->nr_loads; i++) {
		const struct unwind_load *l = &f->loads[i];
		uint64_t end;

		if (m->pgoff < l->offset || m->pgoff - l->offset >= l->filesz)
			continue;
		/* Past the segment's file bytes no pc has a file address (as proc_row). */
		end = m->start + (l->offset + l->filesz - m->pgoff);
		*out = (struct offcpu_kmap){
			.start = m->start, .end = end < m->end ? end : m->end,
			.bias = m->start - m->pgoff + l->offset - l->vaddr,
			.slot = f->slot, .id = f->id,
		};
		return true;
	}
	return false;
}

/* Whether a pc of PCS (N) lies in M. */
static bool holds_pc(const struct proc_map *m, const uint64_t *pcs, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (pcs[i] >= m->start && pcs[i] < m->end)
			return true;
	return false;
}

/*
 * Whether F (mapped by PID as M), whose rows are wanted, is loaded by parts:
 * decided now (its FDEs read, which costs far less than its rows), so the
 * process's entry names the parts at once and only the wanted ones are
 * built.  Its CFI stays open for them.
 */
static bool part_large(struct ktables *k, struct kt_file *f, uint32_t pid,
		       const struct proc_map *m)
{
	struct cfi_file *cf;
	int fd;

	if (f->sized || f->whole || f->parts)
		return f->parts != NULL;
	fd = unwind_open_mapped(pid, m);
	if (fd < 0)
		return false;
	cf = cfi_file_open(fd, NULL, 0);
	if (cf && cfi_file_fdes(cf) > KT_PART_FDES && cfi_file_machine(cf) == KT_MACHINE &&
	    !part_file(k, f, cf)) {
		k->counts.parted++;
		keep_open(k, f, cf, fd);
		return true;
	}
	f->sized = true;
	/*
	 * Its rows are built next (want_rows): opening a file's CFI reads and
	 * checks all its FDEs, the larger part of the loader's time, so the
	 * build takes this one (load_file) rather than reading them again.
	 */
	if (cf && !f->cf) {
		f->cf = cf;
		f->cf_fd = fd;
		return false;
	}
	cfi_file_close(cf);
	close(fd);
	return false;
}

/*
 * F's rows (mapped by PID as M) are wanted: built later, one file per poll,
 * so a file's rows (tens of milliseconds) never keep the processes asking
 * for entries waiting (each of their blocks meanwhile is copied, or walked
 * by frame pointer once the ring is full).
 */
static void want_rows(struct ktables *k, struct kt_file *f, uint32_t pid, const struct proc_map *m)
{
	struct kt_todo *t;

	for (uint32_t i = 0; i < k->todo_n; i++)
		if (k->todo[(k->todo_head + i) % KT_TODO]->f == f)
			return;
	if (k->todo_n == KT_TODO || !(t = malloc(sizeof(*t)))) {
		if (!f->whole && !f->parts)
			close_cfi(f);	/* kept for a build that does not come */
		return;		/* asked again at its next miss */
	}
	*t = (struct kt_todo){ .f = f, .pid = pid, .m = *m };
	k->todo[(k->todo_head + k->todo_n++) % KT_TODO] = t;
}

/* Builds the rows of the first file waiting (if still wanted); whether one was waiting. */
static bool build_one(struct ktables *k)
{
	struct kt_todo *t;
	uint64_t t0 = mono_ns();

	if (!k->todo_n)
		return false;
	t = k->todo[k->todo_head];
	k->todo_head = (k->todo_head + 1) % KT_TODO;
	k->todo_n--;
	if (t->f->id && !t->f->n && !t->f->no_rows && !t->f->parts)
		load_file(k, t->f, t->pid, &t->m);
	else if (!t->f->whole && !t->f->parts)
		close_cfi(t->f);	/* no longer wanted: its kept CFI goes */
	free(t);
	k->counts.load_ns += mono_ns() - t0;
	return true;
}

/* Whether WANT names F (its slot and id). */
static bool names(const struct offcpu_kwant *want, const struct kt_file *f)
{
	return f->id && want->id == f->id && want->slot == f->slot;
}

/*
 * Mapping M of the parted file F into P, one mapping per part it holds;
 * the rows loaded of the parts WANT names (the part, or F and a file
 * address in the part) or a pc of PCS (N) lies in.
 */
static void add_parts(struct ktables *k, uint32_t pid, const struct proc_map *m,
		      struct kt_file *f, struct offcpu_kproc *p, const struct offcpu_kwant *want,
		      const uint64_t *pcs, uint32_t n)
{
	struct offcpu_kmap whole, *out;

	if (!kmap_of(f, m, &whole))
		return;
	for (size_t i = 0; i < f->nr_parts && p->n < OFFCPU_KMAPS; i++) {
		struct kt_file *q = f->parts[i];
		uint64_t lo = whole.start - whole.bias, hi = whole.end - whole.bias;
		struct proc_map pm = *m;

		lo = lo > q->lo ? lo : q->lo;
		hi = hi < q->hi ? hi : q->hi;
		if (lo >= hi)
			continue;
		if (!q->id)
			register_file(k, q);	/* its slot was taken */
		pm.start = lo + whole.bias;
		pm.end = hi + whole.bias;
		if (!q->n && !q->no_rows &&
		    (names(want, q) || (names(want, f) && want->addr >= q->lo && want->addr < q->hi) ||
		     holds_pc(&pm, pcs, n)))
			want_rows(k, q, pid, m);
		out = &p->maps[p->n++];
		*out = whole;
		out->start = pm.start;
		out->end = pm.end;
		out->slot = q->slot;
		out->id = q->id;
	}
}

/* read_kproc's state along /proc/PID/maps. */
struct kproc_read {
	struct ktables *k;
	uint32_t pid;
	struct offcpu_kproc *p;
	const struct offcpu_kwant *want;
	const uint64_t *pcs;
	uint32_t n;
};

/* One line of the maps: an executable file mapping kept, its rows wanted; 1 when P is full. */
static int kproc_map(void *ctx, const struct proc_map *m)
{
	struct kproc_read *r = ctx;
	struct offcpu_kproc *p = r->p;
	struct kt_file *f;

	if (!(m->prot & 4) || m->file[0] != '/')
		return 0;
	f = file_of(r->k, r->pid, m);
	if (!f)
		return 0;
	if (!f->parts && !f->n && (names(r->want, f) || holds_pc(m, r->pcs, r->n)) &&
	    !part_large(r->k, f, r->pid, m))
		want_rows(r->k, f, r->pid, m);
	/* /proc/PID/maps is sorted: so are the mappings kept. */
	if (!f->parts && f->id && kmap_of(f, m, &p->maps[p->n]))
		p->n++;
	else if (f->parts)
		add_parts(r->k, r->pid, m, f, p, r->want, r->pcs, r->n);
	return p->n >= OFFCPU_KMAPS;
}

/*
 * PID's executable file mappings into P; the rows loaded of the file WANT
 * (slot) and of the files the pcs PCS (N) lie in.
 */
static int read_kproc(struct ktables *k, uint32_t pid, struct offcpu_kproc *p,
		      const struct offcpu_kwant *want, const uint64_t *pcs, uint32_t n)
{
	struct kproc_read r = { k, pid, p, want, pcs, n };

	/* Pid 0 would be this process to proc_maps_read: no user mappings to load. */
	if (!pid)
		return -1;
	return proc_maps_read(pid, kproc_map, &r) < 0 ? -1 : 0;
}

static void kt_proc_free(void *v)
{
	struct kt_proc *p = v;

	if (p)
		free(p->kp);
	free(p);
}

/* ku_procs is full: the entries of processes gone leave it. */
static void prune_procs(struct ktables *k)
{
	uint32_t key, next;
	void *prev = NULL;

	while (!bpf_map_get_next_key(k->procs_fd, prev, &next)) {
		key = next;
		prev = &key;
		if (kill((pid_t)key, 0) && errno == ESRCH) {
			bpf_map_delete_elem(k->procs_fd, &key);
			kt_proc_free(u32_map_del(&k->procs, key));
			prev = NULL;	/* the walk starts again: the key is gone */
		}
	}
}

/* Whether WANT names a registered file whose rows are not loaded yet. */
static bool rows_wanted(const struct ktables *k, const struct offcpu_kwant *want)
{
	const struct kt_file *f = want->slot < OFFCPU_KFILES ? k->slots[want->slot] : NULL;

	/* A parted file's slot: the process's mappings name its parts after a reload. */
	return want->id && f && f->id == want->id && !f->n && !f->no_rows;
}

/*
 * F's rows wanted, opened by the mapping it was registered with: no need to
 * read its process's maps again.  False where that cannot be (a file since
 * loaded by parts: the process's entry must name the parts).
 */
static bool queue_known(struct ktables *k, struct kt_file *f)
{
	const struct kt_file *w = f->whole ? f->whole : f;

	/* Not sized yet: reading the maps again parts it if large (part_large). */
	if (f->parts || !w->at || (!f->whole && !f->sized))
		return false;
	want_rows(k, f, w->at_pid, w->at);
	return true;
}

/*
 * Whether a pc of PCS (N) lies in a mapping of P whose file has no rows
 * yet and was not tried in the last KT_RELOAD_NS (a load put off), and
 * cannot be queued without reading P's maps again (queue_known: the others
 * are queued).
 */
static bool pcs_wanted(struct ktables *k, const struct kt_proc *p, const uint64_t *pcs,
		       uint32_t n, uint64_t now)
{
	for (uint32_t i = 0; p->kp && i < n; i++)
		for (uint32_t j = 0; j < p->kp->n; j++) {
			const struct offcpu_kmap *m = &p->kp->maps[j];
			struct kt_file *f = k->slots[m->slot];

			if (pcs[i] < m->start || pcs[i] >= m->end)
				continue;
			if (f && f->id == m->id && !f->n && !f->no_rows &&
			    now - f->loaded >= KT_RELOAD_NS && !queue_known(k, f))
				return true;
			break;
		}
	return false;
}

/* Whether a pc of PCS (N) lies in no mapping of P. */
static bool unmapped(const struct kt_proc *p, const uint64_t *pcs, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t j = 0;

		while (j < p->kp->n && (pcs[i] < p->kp->maps[j].start || pcs[i] >= p->kp->maps[j].end))
			j++;
		if (j == p->kp->n)
			return true;
	}
	return false;
}

/*
 * Whether P's mappings are to be read again for a request (address space
 * MM; a copied stack's pcs PCS, N): none yet, another address space's,
 * or, unless read here in the last KT_RELOAD_NS, asked for by the walker
 * (a pc in no mapping) or with a pc in none (a library mapped since).
 */
static bool stale(const struct kt_proc *p, uint64_t mm, const uint64_t *pcs, uint32_t n,
		  uint64_t now)
{
	if (!p->kp || p->mm != mm)
		return true;
	if (p->read && now - p->loaded < KT_RELOAD_NS)
		return false;
	return !n || unmapped(p, pcs, n);
}

/*
 * PID's kt_proc, new: with the entry the walker has for it (address space
 * MM) when there is one (inherited at fork), as if loaded at NOW, so a
 * copied stack of a forked child reads its maps only if a file it passed
 * through lacks rows.  NULL when out of memory.
 */
static struct kt_proc *adopt(struct ktables *k, uint32_t pid, uint64_t mm, uint64_t now)
{
	struct kt_proc *p = calloc(1, sizeof(*p));

	if (!p || u32_map_put(&k->procs, pid, p)) {
		free(p);
		return NULL;
	}
	p->kp = malloc(sizeof(*p->kp));
	if (p->kp && !bpf_map_lookup_elem(k->procs_fd, &pid, p->kp) && p->kp->mm == mm &&
	    p->kp->n <= OFFCPU_KMAPS) {
		p->mm = mm;
		p->loaded = now;
	} else {
		free(p->kp);
		p->kp = NULL;
	}
	return p;
}

/* ktables_request, and the rows of the files the pcs PCS (N) lie in. */
static void request(struct ktables *k, uint32_t pid, const struct offcpu_kwant *want,
		    const uint64_t *pcs, uint32_t n)
{
	struct kt_proc *p = u32_map_get(&k->procs, pid);
	struct offcpu_kproc *kp;
	uint64_t t0 = mono_ns();

	if (!p && !(p = adopt(k, pid, want->mm, t0)))
		return;
	/* The walker found the mapping: only the file's rows are missing. */
	if (p->kp && p->mm == want->mm && rows_wanted(k, want) &&
	    queue_known(k, k->slots[want->slot]))
		return;
	if (!stale(p, want->mm, pcs, n, t0) && !rows_wanted(k, want) &&
	    !pcs_wanted(k, p, pcs, n, t0))
		return;
	p->mm = want->mm;
	p->loaded = t0;
	p->read = true;
	kp = calloc(1, sizeof(*kp));
	if (!kp)
		return;
	kp->mm = want->mm;
	if (!read_kproc(k, pid, kp, want, pcs, n)) {
		if (bpf_map_update_elem(k->procs_fd, &pid, kp, BPF_ANY) && errno == E2BIG) {
			prune_procs(k);
			bpf_map_update_elem(k->procs_fd, &pid, kp, BPF_ANY);
		}
		k->counts.procs++;
		free(p->kp);
		p->kp = kp;
	} else {
		free(kp);
	}
	k->counts.load_ns += mono_ns() - t0;
}

void ktables_request(struct ktables *k, uint32_t pid, const struct offcpu_kwant *want)
{
	request(k, pid, want, NULL, 0);
}

void ktables_learn(struct ktables *k, uint32_t pid, uint64_t mm, const uint64_t *ip, uint32_t n)
{
	struct kt_learn *l;

	if (!n)
		return;
	pthread_mutex_lock(&k->lock);
	/* A process's threads copy the same stacks at once (a burst of forks, a pool). */
	for (uint32_t i = 0; i < k->learn_n; i++) {
		const struct kt_learn *q = &k->learn[(k->learn_head + i) % KT_LEARN];

		if (q->pid == pid && q->mm == mm && q->n == n && q->ip[0] == ip[0]) {
			pthread_mutex_unlock(&k->lock);
			return;
		}
	}
	if (k->learn_n == KT_LEARN) {
		k->counts.learn_dropped++;
	} else {
		l = &k->learn[(k->learn_head + k->learn_n++) % KT_LEARN];
		l->pid = pid;
		l->mm = mm;
		l->n = n < OFFCPU_SPILL_FRAMES ? n : OFFCPU_SPILL_FRAMES;
		/* A return address points past its call: the call's file is wanted. */
		for (uint32_t i = 0; i < l->n; i++)
			l->ip[i] = ip[i] - (i > 0);
		pthread_cond_signal(&k->wake);
	}
	pthread_mutex_unlock(&k->lock);
}

/* The copied stacks queued by ktables_learn: the loader thread's. */
static void serve_learned(struct ktables *k)
{
	struct kt_learn l;

	for (;;) {
		pthread_mutex_lock(&k->lock);
		if (!k->learn_n) {
			pthread_mutex_unlock(&k->lock);
			return;
		}
		l = k->learn[k->learn_head];
		k->learn_head = (k->learn_head + 1) % KT_LEARN;
		k->learn_n--;
		pthread_mutex_unlock(&k->lock);
		request(k, l.pid, &(struct offcpu_kwant){ .mm = l.mm }, l.ip, l.n);
		k->counts.learned++;
	}
}

void ktables_compare(struct ktables *k, const uint64_t *kip, uint32_t kn, const uint64_t *uip,
		     uint32_t un)
{
	struct ktables_counts *n = &k->counts;
	uint32_t at = 0;

	n->compared++;
	while (at < kn && at < un && kip[at] == uip[at])
		at++;
	if (at == kn && at == un)
		return;
	if (at == kn)
		n->walk_shorter++;
	else if (at == un)
		n->copy_shorter++;
	if (!n->differed++) {
		n->first_kn = kn;
		n->first_un = un;
		n->first_at = at;
		n->first_kip = at < kn ? kip[at] : 0;
		n->first_uip = at < un ? uip[at] : 0;
	}
}

static void loader_wait(struct ktables *k, uint64_t ns)
{
	uint64_t until = clock_ns(CLOCK_MONOTONIC) + ns;
	struct timespec ts = { (time_t)(until / 1000000000), (long)(until % 1000000000) };

	pthread_mutex_lock(&k->lock);
	if (!k->learn_n && !atomic_load(&k->stop))
		pthread_cond_timedwait(&k->wake, &k->lock, &ts);
	pthread_mutex_unlock(&k->lock);
}

/*
 * The loader thread: building a large file's rows takes tens of
 * milliseconds, which the ring's reader must not wait for (the ring would
 * fill and blocks fall back to frame pointers).
 */
static void *loader_main(void *arg)
{
	struct ktables *k = arg;
	uint64_t wait_ns = KT_POLL_NS, seen;

	while (!atomic_load(&k->stop)) {
		seen = k->counts.requests + k->counts.learned;
		ktables_poll(k);
		if (k->todo_n)
			continue;	/* the next file's rows at once */
		if (k->counts.requests + k->counts.learned != seen)
			wait_ns = KT_POLL_NS;
		else if (wait_ns < KT_IDLE_NS)
			wait_ns *= 2;
		loader_wait(k, wait_ns);
	}
	return NULL;
}

void ktables_poll(struct ktables *k)
{
	struct offcpu_kwant want;
	uint32_t key, next;

	while (!bpf_map_get_next_key(k->want_fd, NULL, &next)) {
		key = next;
		if (!bpf_map_lookup_elem(k->want_fd, &key, &want))
			ktables_request(k, key, &want);
		bpf_map_delete_elem(k->want_fd, &key);
		k->counts.requests++;
	}
	serve_learned(k);
	build_one(k);
}

const struct ktables_counts *ktables_counts(const struct ktables *k)
{
	return &k->counts;
}

/* The loader's wake-up, timed by the monotonic clock (loader_wait). */
static int init_wake(struct ktables *k)
{
	pthread_condattr_t attr;
	int err;

	if (pthread_condattr_init(&attr))
		return -1;
	err = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) ||
	      pthread_cond_init(&k->wake, &attr);
	pthread_condattr_destroy(&attr);
	return err ? -1 : 0;
}

struct ktables *ktables_new(int rows_fd, int files_fd, int procs_fd, int want_fd, uint32_t rows)
{
	struct ktables *k = calloc(1, sizeof(*k));
	void *probe;

	if (!k)
		return NULL;
	k->rows_fd = rows_fd;
	k->files_fd = files_fd;
	k->procs_fd = procs_fd;
	k->want_fd = want_fd;
	k->nr_rows = rows;
	k->next_id = 1;
	k->counts.rows_max = rows;
	k->page = sysconf(_SC_PAGESIZE);
	/* Rows are written through mappings of the map (pool_write): it must allow them. */
	probe = mmap(NULL, (size_t)k->page, PROT_READ | PROT_WRITE, MAP_SHARED, rows_fd, 0);
	if (probe == MAP_FAILED) {
		free(k);
		return NULL;
	}
	munmap(probe, (size_t)k->page);
	atomic_init(&k->stop, false);
	pthread_mutex_init(&k->lock, NULL);
	if (init_wake(k))
		goto no_wake;
	if (pthread_create(&k->loader, NULL, loader_main, k))
		goto no_thread;
	k->started = true;
	return k;
no_thread:
	pthread_cond_destroy(&k->wake);
no_wake:
	pthread_mutex_destroy(&k->lock);
	free(k);
	return NULL;
}

void ktables_stop(struct ktables *k)
{
	if (!k->started)
		return;
	pthread_mutex_lock(&k->lock);
	atomic_store(&k->stop, true);
	pthread_cond_signal(&k->wake);
	pthread_mutex_unlock(&k->lock);
	pthread_join(k->loader, NULL);
	k->started = false;
}

void ktables_free(struct ktables *k)
{
	if (!k)
		return;
	ktables_stop(k);
	while (k->todo_n) {
		free(k->todo[k->todo_head]);
		k->todo_head = (k->todo_head + 1) % KT_TODO;
		k->todo_n--;
	}
	for (size_t i = 0; i < k->nr_files; i++) {
		close_cfi(k->files[i]);
		free(k->files[i]->parts);
		free(k->files[i]->at);
		free(k->files[i]);
	}
	free(k->files);
	free(k->scratch);
	u32_map_free(&k->procs, kt_proc_free);
	pthread_cond_destroy(&k->wake);
	pthread_mutex_destroy(&k->lock);
	free(k);
}
