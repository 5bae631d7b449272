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

#include "lib/hashset.h"
#include "lib/procfs.h"
#include "unwind/ktables.h"
#include "unwind/unwind.h"

/* The files of this machine's processes: the walker reads this board's frames only. */
#if defined(__x86_64__)
#define KT_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define KT_MACHINE EM_AARCH64
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
#define KT_POLL_NS	2000000		/* how often the loader looks for requests */

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
};

struct kt_proc {
	uint64_t mm;
	uint64_t loaded;	/* CLOCK_MONOTONIC ns */
};

struct ktables {
	int rows_fd, files_fd, procs_fd, want_fd;
	struct offcpu_krow *pool;	/* ku_rows, mapped */
	size_t pool_bytes;
	uint32_t nr_rows, head;		/* the ring's next free row */
	uint32_t next_id, next_slot;
	struct kt_file **files;
	size_t nr_files;
	struct kt_file *slots[OFFCPU_KFILES];
	struct u32_map procs;		/* pid -> struct kt_proc */
	struct offcpu_krow *scratch;	/* one file's rows being built */
	struct ktables_counts counts;
	pthread_t loader;		/* serves ku_want apart from the ring's reader */
	bool started;
	atomic_bool stop;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

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
	for (size_t i = 0; i < k->nr_files; i++)
		if (overlaps(k->files[i], first, n) && now - k->files[i]->loaded < KT_KEEP_NS)
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
 * Builds F's rows from its open file FD and loads them: 0, -1 when it has
 * none usable, -2 when they would take too much of the pool, -3 when the
 * pool holds only files loaded just now (F is tried again later).
 */
static int load_rows(struct ktables *k, struct kt_file *f, int fd)
{
	uint32_t cap = k->nr_rows / KT_POOL_SHARE < KT_MAX_ROWS ? k->nr_rows / KT_POOL_SHARE :
			KT_MAX_ROWS;
	struct cfi_table t = { 0 };
	struct offcpu_krow *v;
	char err[256];
	uint32_t first;
	size_t n;

	/* One row more than fits: a file that large is an error, not a cut table. */
	if (cfi_table_build(NULL, fd, cap + 1, &t, err, sizeof(err)))
		return strstr(err, "more than") ? -2 : -1;
	if (t.machine != KT_MACHINE || !t.n || !(v = realloc(k->scratch, t.n * sizeof(*v)))) {
		cfi_table_free(&t);
		return -1;
	}
	k->scratch = v;
	n = ktable_rows(&t, (uint16_t)f->id, v);
	cfi_table_free(&t);
	if (!n)
		return -1;
	f->loaded = now_ns();
	first = alloc_rows(k, n, f->loaded);
	if (first >= UINT32_MAX - 1)
		return first == UINT32_MAX ? -2 : -3;
	memcpy(k->pool + first, v, n * sizeof(*v));
	f->first = first;
	f->n = n;
	/* The syscall orders the rows' stores before the slot's. */
	write_slot(k, f);
	k->counts.files++;
	k->counts.rows += n;
	return 0;
}

/* Loads the rows of F, mapped by PID as M; counts what keeps them out. */
static void load_file(struct ktables *k, struct kt_file *f, uint32_t pid, const struct proc_map *m)
{
	int fd = unwind_open_mapped(pid, m);

	if (fd < 0)
		return;
	switch (load_rows(k, f, fd)) {
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
	close(fd);
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
		if (k->files[i]->maj == m->maj && k->files[i]->min == m->min &&
		    k->files[i]->ino == m->ino)
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
	if (f->id || f->no_rows)
		return f->id ? f : NULL;
	fd = unwind_open_mapped(pid, m);
	if (fd < 0)
		return NULL;
	f->nr_loads = unwind_read_loads(fd, f->loads);
	close(fd);
	f->slot = alloc_slot(k);
	f->id = k->next_id;
	k->next_id = k->next_id + 1 ? k->next_id + 1 : 1;
	k->slots[f->slot] = f;
	write_slot(k, f);
	return f;
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

/* PID's executable file mappings into P; the rows of the file WANT (slot) loaded. */
static int read_kproc(struct ktables *k, uint32_t pid, struct offcpu_kproc *p,
		      const struct offcpu_kwant *want)
{
	char path[64], line[PROC_MAPS_LINE];
	struct proc_map m;
	FILE *fp;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	fp = fopen(path, "r");
	if (!fp)
		return -1;
	while (p->n < OFFCPU_KMAPS && fgets(line, sizeof(line), fp)) {
		struct kt_file *f;

		line[strcspn(line, "\n")] = 0;
		if (proc_parse_maps_line(line, &m) || !(m.prot & 4) || m.file[0] != '/')
			continue;
		f = file_of(k, pid, &m);
		if (f && !f->n && want && want->id == f->id && want->slot == f->slot)
			load_file(k, f, pid, &m);
		/* /proc/PID/maps is sorted: so are the mappings kept. */
		if (f && f->id && kmap_of(f, &m, &p->maps[p->n]))
			p->n++;
	}
	fclose(fp);
	return 0;
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
			free(u32_map_del(&k->procs, key));
			prev = NULL;	/* the walk starts again: the key is gone */
		}
	}
}

/* Whether WANT names a registered file whose rows are not loaded yet. */
static bool rows_wanted(const struct ktables *k, const struct offcpu_kwant *want)
{
	const struct kt_file *f = want->slot < OFFCPU_KFILES ? k->slots[want->slot] : NULL;

	return want->id && f && f->id == want->id && !f->n && !f->no_rows;
}

void ktables_request(struct ktables *k, uint32_t pid, const struct offcpu_kwant *want)
{
	struct kt_proc *p = u32_map_get(&k->procs, pid);
	struct offcpu_kproc *kp;
	uint64_t t0 = now_ns();

	if (p && p->mm == want->mm && t0 - p->loaded < KT_RELOAD_NS && !rows_wanted(k, want))
		return;
	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p || u32_map_put(&k->procs, pid, p)) {
			free(p);
			return;
		}
	}
	p->mm = want->mm;
	p->loaded = t0;
	kp = calloc(1, sizeof(*kp));
	if (!kp)
		return;
	kp->mm = want->mm;
	if (!read_kproc(k, pid, kp, want)) {
		if (bpf_map_update_elem(k->procs_fd, &pid, kp, BPF_ANY) && errno == E2BIG) {
			prune_procs(k);
			bpf_map_update_elem(k->procs_fd, &pid, kp, BPF_ANY);
		}
		k->counts.procs++;
	}
	free(kp);
	k->counts.load_ns += now_ns() - t0;
}

void ktables_compare(struct ktables *k, const uint64_t *kip, uint32_t kn, const uint64_t *uip,
		     uint32_t un)
{
	k->counts.compared++;
	if (kn != un || memcmp(kip, uip, kn * sizeof(*kip)))
		k->counts.differed++;
}

/*
 * The loader thread: building a large file's rows takes tens of
 * milliseconds, which the ring's reader must not wait for (the ring would
 * fill and blocks fall back to frame pointers).
 */
static void *loader_main(void *arg)
{
	struct ktables *k = arg;
	struct timespec ts = { 0, KT_POLL_NS };

	while (!atomic_load(&k->stop)) {
		ktables_poll(k);
		nanosleep(&ts, NULL);
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
}

const struct ktables_counts *ktables_counts(const struct ktables *k)
{
	return &k->counts;
}

struct ktables *ktables_new(int rows_fd, int files_fd, int procs_fd, int want_fd, uint32_t rows)
{
	struct ktables *k = calloc(1, sizeof(*k));
	long page = sysconf(_SC_PAGESIZE);

	if (!k)
		return NULL;
	k->rows_fd = rows_fd;
	k->files_fd = files_fd;
	k->procs_fd = procs_fd;
	k->want_fd = want_fd;
	k->nr_rows = rows;
	k->next_id = 1;
	k->counts.rows_max = rows;
	k->pool_bytes = ((size_t)rows * sizeof(struct offcpu_krow) + page - 1) / page * page;
	/* Rows written in place (BPF_F_MMAPABLE): a file's thousands cost no syscall each. */
	k->pool = mmap(NULL, k->pool_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, rows_fd, 0);
	if (k->pool == MAP_FAILED) {
		free(k);
		return NULL;
	}
	atomic_init(&k->stop, false);
	if (pthread_create(&k->loader, NULL, loader_main, k)) {
		munmap(k->pool, k->pool_bytes);
		free(k);
		return NULL;
	}
	k->started = true;
	return k;
}

void ktables_stop(struct ktables *k)
{
	if (!k->started)
		return;
	atomic_store(&k->stop, true);
	pthread_join(k->loader, NULL);
	k->started = false;
}

void ktables_free(struct ktables *k)
{
	if (!k)
		return;
	ktables_stop(k);
	munmap(k->pool, k->pool_bytes);
	for (size_t i = 0; i < k->nr_files; i++)
		free(k->files[i]);
	free(k->files);
	free(k->scratch);
	u32_map_free(&k->procs, free);
	free(k);
}
