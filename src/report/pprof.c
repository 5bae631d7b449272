// SPDX-License-Identifier: GPL-2.0
/*
 * The pprof writer: strings, mappings, functions and locations interned
 * once each, samples kept until the end, then one Profile message packed by
 * protobuf-c straight into zlib's gzip stream.  Its input is the report's
 * aggregates (names already resolved); it parses nothing.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "lib/hashset.h"
#include "report/pprof.h"
#include "profile.pb-c.h"

/* Sample types, in this order; the first is the one pprof shows by default. */
#define VALUE_NS	0
#define VALUE_COUNT	1
#define NR_VALUES	2
#define NR_LABELS	4	/* thread, tid, process, pid */

struct psample {
	uint64_t *locs;		/* location ids, leaf first */
	size_t n;
	int64_t value[NR_VALUES];
	uint32_t pid, tid;
	int64_t process, thread;	/* string indexes */
};

struct pprof {
	char **strs;		/* the string table; strs[0] is "" */
	size_t nr_strs, cap_strs;
	struct str_map str_ids;	/* string -> its index + 1 */
	struct u64_map fn_ids, loc_ids, map_ids, build_ids;
	Perftools__Profiles__Function *fns;
	Perftools__Profiles__Location *locs;
	Perftools__Profiles__Line *lines;	/* one per location */
	Perftools__Profiles__Mapping *maps;
	size_t nr_fns, nr_locs, nr_maps, cap_fns, cap_locs, cap_maps;
	struct psample *samples;
	size_t nr_samples, cap_samples;
	int64_t *comments;
	size_t nr_comments;
	uint64_t time, duration;
};

/* Room for one more of N elements of SIZE in *V (capacity *CAP). */
static int reserve(void *v, size_t *cap, size_t n, size_t size)
{
	void **vp = v;
	size_t ncap;
	void *nv;

	if (n < *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 64;
	nv = realloc(*vp, ncap * size);
	if (!nv)
		return -1;
	*vp = nv;
	*cap = ncap;
	return 0;
}

/* ---- ids: u64 keys to non-zero u64 (an id, or a string index + 1) ---- */

static uint64_t id_get(const struct u64_map *m, uint64_t key)
{
	return (uintptr_t)u64_map_get(m, key);
}

static int id_put(struct u64_map *m, uint64_t key, uint64_t val)
{
	return u64_map_put(m, key, (void *)(uintptr_t)val);
}

/* ---- the string table ---- */

/* The index of S in the string table (added if new), or -1. */
static int64_t str_index(struct pprof *p, const char *s)
{
	uintptr_t known = (uintptr_t)str_map_get(&p->str_ids, s);
	char *copy;

	if (known)
		return known - 1;
	if (reserve(&p->strs, &p->cap_strs, p->nr_strs, sizeof(*p->strs)))
		return -1;
	copy = strdup(s);
	if (!copy)
		return -1;
	/* The key is the table's own copy; the value its index + 1 (never NULL). */
	if (str_map_put(&p->str_ids, copy, (void *)(uintptr_t)(p->nr_strs + 1))) {
		free(copy);
		return -1;
	}
	p->strs[p->nr_strs++] = copy;
	return p->nr_strs - 1;
}

/* ---- mappings, functions, locations ---- */

struct pprof *pprof_new(void)
{
	struct pprof *p = calloc(1, sizeof(*p));

	if (p && str_index(p, "") != 0) {
		pprof_free(p);
		return NULL;
	}
	return p;
}

int pprof_build_id(struct pprof *p, const char *file, const char *hex)
{
	int64_t f = str_index(p, file), h = str_index(p, hex);

	return f < 0 || h < 0 ? -1 : id_put(&p->build_ids, f, h + 1);
}

/* The mapping id of FILE (a string index; 0: no mapping), or -1. */
static int64_t mapping_id(struct pprof *p, int64_t file)
{
	uint64_t id = file ? id_get(&p->map_ids, file) : 0;
	Perftools__Profiles__Mapping *m;

	if (id || !file)
		return id;
	if (reserve(&p->maps, &p->cap_maps, p->nr_maps, sizeof(*p->maps)))
		return -1;
	m = &p->maps[p->nr_maps];
	perftools__profiles__mapping__init(m);
	m->id = p->nr_maps + 1;
	m->filename = file;
	m->build_id = (int64_t)id_get(&p->build_ids, file) - 1;
	if (m->build_id < 0)
		m->build_id = 0;
	/* Names come resolved: pprof must not look for the binaries. */
	m->has_functions = true;
	if (id_put(&p->map_ids, file, m->id))
		return -1;
	return ++p->nr_maps;
}

/* The function id of NAME in FILE (string indexes), or -1. */
static int64_t function_id(struct pprof *p, int64_t name, int64_t file)
{
	uint64_t key = (uint64_t)name << 32 | (uint64_t)file;
	uint64_t id = id_get(&p->fn_ids, key);
	Perftools__Profiles__Function *f;

	if (id)
		return id;
	if (reserve(&p->fns, &p->cap_fns, p->nr_fns, sizeof(*p->fns)))
		return -1;
	f = &p->fns[p->nr_fns];
	perftools__profiles__function__init(f);
	f->id = p->nr_fns + 1;
	f->name = name;
	f->system_name = name;
	if (id_put(&p->fn_ids, key, f->id))
		return -1;
	return ++p->nr_fns;
}

static int reserve_location(struct pprof *p)
{
	size_t cap = p->cap_locs;
	void *nv;

	if (reserve(&p->locs, &p->cap_locs, p->nr_locs, sizeof(*p->locs)))
		return -1;
	if (cap == p->cap_locs)
		return 0;
	nv = realloc(p->lines, p->cap_locs * sizeof(*p->lines));
	if (!nv)
		return -1;
	p->lines = nv;
	return 0;
}

/* The location of FRAME: one per (function, file). -1: no memory. */
static int64_t location_id(struct pprof *p, const struct pprof_frame *frame)
{
	int64_t name = str_index(p, frame->name);
	int64_t file = frame->file ? str_index(p, frame->file) : 0;
	int64_t fn = name < 0 || file < 0 ? -1 : function_id(p, name, file);
	int64_t map = fn < 0 ? -1 : mapping_id(p, file);
	Perftools__Profiles__Location *l;
	uint64_t id;

	if (map < 0)
		return -1;
	id = id_get(&p->loc_ids, fn);
	if (id)
		return id;
	if (reserve_location(p))
		return -1;
	l = &p->locs[p->nr_locs];
	perftools__profiles__location__init(l);
	perftools__profiles__line__init(&p->lines[p->nr_locs]);
	l->id = p->nr_locs + 1;
	l->mapping_id = map;
	p->lines[p->nr_locs].function_id = fn;
	if (id_put(&p->loc_ids, fn, l->id))
		return -1;
	return ++p->nr_locs;
}

/* ---- samples ---- */

int pprof_add(struct pprof *p, const struct pprof_frame *frames, size_t n,
	      const struct pprof_owner *owner, uint64_t ns, uint64_t count)
{
	struct psample *s;

	if (reserve(&p->samples, &p->cap_samples, p->nr_samples, sizeof(*p->samples)))
		return -1;
	s = &p->samples[p->nr_samples];
	*s = (struct psample){
		.locs = malloc((n ? n : 1) * sizeof(*s->locs)),
		.n = n,
		.value = { [VALUE_NS] = ns, [VALUE_COUNT] = count },
		.pid = owner->pid,
		.tid = owner->tid,
		.process = str_index(p, owner->process),
		.thread = str_index(p, owner->thread),
	};
	if (!s->locs)
		return -1;
	p->nr_samples++;
	if (s->process < 0 || s->thread < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int64_t id = location_id(p, &frames[i]);

		if (id < 0)
			return -1;
		s->locs[i] = id;
	}
	return 0;
}

void pprof_time(struct pprof *p, uint64_t epoch_ns, uint64_t duration_ns)
{
	p->time = epoch_ns;
	p->duration = duration_ns;
}

int pprof_comment(struct pprof *p, const char *text)
{
	int64_t i = str_index(p, text);
	int64_t *nv;

	if (i < 0)
		return -1;
	nv = realloc(p->comments, (p->nr_comments + 1) * sizeof(*nv));
	if (!nv)
		return -1;
	p->comments = nv;
	p->comments[p->nr_comments++] = i;
	return 0;
}

/* ---- output ---- */

/* Everything the Profile message points to, built at the end. */
struct msg {
	Perftools__Profiles__Profile prof;
	Perftools__Profiles__ValueType types[NR_VALUES], period_type;
	Perftools__Profiles__ValueType *type_ptrs[NR_VALUES];
	Perftools__Profiles__Sample *samples, **sample_ptrs;
	Perftools__Profiles__Label *labels, **label_ptrs;
	Perftools__Profiles__Line **line_ptrs;
	Perftools__Profiles__Location **loc_ptrs;
	Perftools__Profiles__Function **fn_ptrs;
	Perftools__Profiles__Mapping **map_ptrs;
};

static void msg_free(struct msg *m)
{
	free(m->samples);
	free(m->sample_ptrs);
	free(m->labels);
	free(m->label_ptrs);
	free(m->line_ptrs);
	free(m->loc_ptrs);
	free(m->fn_ptrs);
	free(m->map_ptrs);
}

static void set_type(Perftools__Profiles__ValueType *t, int64_t type, int64_t unit)
{
	perftools__profiles__value_type__init(t);
	t->type = type;
	t->unit = unit;
}

static void set_label(Perftools__Profiles__Label *l, int64_t key, int64_t str, int64_t num)
{
	perftools__profiles__label__init(l);
	l->key = key;
	l->str = str;
	l->num = num;
}

/* Sample S's message: its values, locations and four labels. */
static void set_sample(struct pprof *p, struct msg *m, size_t i, const int64_t keys[NR_LABELS])
{
	Perftools__Profiles__Sample *out = &m->samples[i];
	Perftools__Profiles__Label *l = &m->labels[i * NR_LABELS];
	struct psample *s = &p->samples[i];

	perftools__profiles__sample__init(out);
	out->n_location_id = s->n;
	out->location_id = s->locs;
	out->n_value = NR_VALUES;
	out->value = s->value;
	set_label(&l[0], keys[0], s->thread, 0);
	set_label(&l[1], keys[1], 0, s->tid);
	set_label(&l[2], keys[2], s->process, 0);
	set_label(&l[3], keys[3], 0, s->pid);
	for (size_t j = 0; j < NR_LABELS; j++)
		m->label_ptrs[i * NR_LABELS + j] = &l[j];
	out->n_label = NR_LABELS;
	out->label = &m->label_ptrs[i * NR_LABELS];
	m->sample_ptrs[i] = out;
}

/* The strings the header needs, interned before the table is handed over. */
static int header_strings(struct pprof *p, int64_t s[8])
{
	static const char *const names[8] = {
		"off-cpu", "nanoseconds", "samples", "count", "thread", "tid", "process", "pid",
	};

	for (size_t i = 0; i < 8; i++)
		if ((s[i] = str_index(p, names[i])) < 0)
			return -1;
	return 0;
}

/* Files before [kernel.kallsyms] and [vdso]: pprof takes mapping[0] for the main binary. */
static void set_mappings(struct pprof *p, struct msg *m)
{
	size_t n = 0;

	for (int pseudo = 0; pseudo < 2; pseudo++)
		for (size_t i = 0; i < p->nr_maps; i++)
			if ((p->strs[p->maps[i].filename][0] == '[') == pseudo)
				m->map_ptrs[n++] = &p->maps[i];
}

static int alloc_msg(struct pprof *p, struct msg *m)
{
	size_t ns = p->nr_samples ? p->nr_samples : 1;

	m->samples = calloc(ns, sizeof(*m->samples));
	m->sample_ptrs = calloc(ns, sizeof(*m->sample_ptrs));
	m->labels = calloc(ns * NR_LABELS, sizeof(*m->labels));
	m->label_ptrs = calloc(ns * NR_LABELS, sizeof(*m->label_ptrs));
	m->line_ptrs = calloc(p->nr_locs + 1, sizeof(*m->line_ptrs));
	m->loc_ptrs = calloc(p->nr_locs + 1, sizeof(*m->loc_ptrs));
	m->fn_ptrs = calloc(p->nr_fns + 1, sizeof(*m->fn_ptrs));
	m->map_ptrs = calloc(p->nr_maps + 1, sizeof(*m->map_ptrs));
	if (!m->samples || !m->sample_ptrs || !m->labels || !m->label_ptrs || !m->line_ptrs ||
	    !m->loc_ptrs || !m->fn_ptrs || !m->map_ptrs)
		return -1;
	return 0;
}

/* Sample types, period, default type, time and comments. */
static void set_header(struct pprof *p, struct msg *m, const int64_t s[8])
{
	Perftools__Profiles__Profile *prof = &m->prof;

	perftools__profiles__profile__init(prof);
	set_type(&m->types[VALUE_NS], s[0], s[1]);
	set_type(&m->types[VALUE_COUNT], s[2], s[3]);
	for (size_t i = 0; i < NR_VALUES; i++)
		m->type_ptrs[i] = &m->types[i];
	prof->n_sample_type = NR_VALUES;
	prof->sample_type = m->type_ptrs;
	prof->default_sample_type = s[0];
	set_type(&m->period_type, s[0], s[1]);
	prof->period_type = &m->period_type;
	prof->period = 1;
	prof->time_nanos = p->time;
	prof->duration_nanos = p->duration;
	prof->n_comment = p->nr_comments;
	prof->comment = p->comments;
}

static int build_msg(struct pprof *p, struct msg *m)
{
	Perftools__Profiles__Profile *prof = &m->prof;
	int64_t s[8], keys[NR_LABELS];

	if (header_strings(p, s) || alloc_msg(p, m))
		return -1;
	set_header(p, m, s);
	memcpy(keys, s + 4, sizeof(keys));
	for (size_t i = 0; i < p->nr_samples; i++)
		set_sample(p, m, i, keys);
	prof->n_sample = p->nr_samples;
	prof->sample = m->sample_ptrs;
	for (size_t i = 0; i < p->nr_locs; i++) {
		m->line_ptrs[i] = &p->lines[i];
		p->locs[i].n_line = 1;
		p->locs[i].line = &m->line_ptrs[i];
		m->loc_ptrs[i] = &p->locs[i];
	}
	prof->n_location = p->nr_locs;
	prof->location = m->loc_ptrs;
	for (size_t i = 0; i < p->nr_fns; i++)
		m->fn_ptrs[i] = &p->fns[i];
	prof->n_function = p->nr_fns;
	prof->function = m->fn_ptrs;
	set_mappings(p, m);
	prof->n_mapping = p->nr_maps;
	prof->mapping = m->map_ptrs;
	prof->n_string_table = p->nr_strs;
	prof->string_table = p->strs;
	return 0;
}

/* protobuf-c's output, appended to the gzip stream as it is packed. */
struct gz_buffer {
	ProtobufCBuffer base;
	gzFile gz;
	bool failed;
};

static void gz_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	struct gz_buffer *g = (struct gz_buffer *)b;

	while (len && !g->failed) {
		unsigned int chunk = len > (1u << 30) ? 1u << 30 : len;

		g->failed = gzwrite(g->gz, data, chunk) != (int)chunk;
		data += chunk;
		len -= chunk;
	}
}

int pprof_write(struct pprof *p, const char *path)
{
	struct gz_buffer out = { .base = { .append = gz_append } };
	struct msg m = { 0 };
	int err, saved;

	if (build_msg(p, &m)) {
		msg_free(&m);
		errno = ENOMEM;
		return -1;
	}
	errno = 0;
	out.gz = gzopen(path, "wb");
	if (!out.gz) {
		msg_free(&m);
		if (!errno)
			errno = ENOMEM;
		return -1;
	}
	perftools__profiles__profile__pack_to_buffer(&m.prof, &out.base);
	saved = errno;
	err = gzclose(out.gz);
	msg_free(&m);
	if (out.failed || err != Z_OK) {
		/* Z_ERRNO leaves the cause in errno; a zlib error has none. */
		errno = err == Z_ERRNO ? errno : saved ? saved : EIO;
		return -1;
	}
	return 0;
}

void pprof_free(struct pprof *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nr_strs; i++)
		free(p->strs[i]);
	for (size_t i = 0; i < p->nr_samples; i++)
		free(p->samples[i].locs);
	free(p->strs);
	str_map_free(&p->str_ids, NULL);
	u64_map_free(&p->fn_ids, NULL);
	u64_map_free(&p->loc_ids, NULL);
	u64_map_free(&p->map_ids, NULL);
	u64_map_free(&p->build_ids, NULL);
	free(p->fns);
	free(p->locs);
	free(p->lines);
	free(p->maps);
	free(p->samples);
	free(p->comments);
	free(p);
}
