// SPDX-License-Identifier: GPL-2.0
/*
 * Host tool of tests/t_btf.sh: does a (minimal) BTF satisfy a BPF object's
 * CO-RE relocations, without root and without loading?  It runs libbpf's own
 * relocation logic (bpf_core_calc_relo_insn, the function bpftool's
 * min_core_btf uses) against the BTF, so a result here is what libbpf would
 * patch into the program.  Objects of either byte order are read.
 *
 *   btf_check relos OBJ                 list the object's CO-RE relocations
 *   btf_check check OBJ BTF [FULL]      exit 1 if BTF does not satisfy OBJ
 *   btf_check list ARCHIVE              btf_archive_list()
 *   btf_check find ARCHIVE MACHINE RELEASE OUT
 *                                       btf_archive_find(): exit 0 found
 *                                       (written to OUT), 1 absent, 2 error
 *   btf_check corrupt ARCHIVE MACHINE RELEASE
 *                                       every truncation must be an error,
 *                                       every flipped byte must not crash
 *                                       (built with ASan/UBSan)
 *
 * check: with FULL (the kernel's whole BTF), every relocation must resolve
 * against BTF exactly as against FULL.  Without it, every *required*
 * relocation must resolve: all but existence checks, accesses through
 * ___flavour types and accesses the object guards with an existence check of
 * the same field (those fail on some kernels by design).
 *
 * Built against the host libbpf.a and its internal headers (libbpf source),
 * like bpftool.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "libbpf_internal.h"
#include "relo_core.h"

#include "record/btf_archive.h"

struct relo {
	const char *sec;
	const struct bpf_core_relo *r;
	int idx;
};

struct object {
	struct btf *btf;
	struct btf_ext *ext;
	struct relo *relos;
	int n;
};

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN)
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static int open_object(const char *path, struct object *o)
{
	const struct btf_ext_info *seg;
	const struct btf_ext_info_sec *sec;
	const struct bpf_core_relo *r;
	unsigned int i;

	memset(o, 0, sizeof(*o));
	o->btf = btf__parse(path, &o->ext);
	if (!o->btf) {
		fprintf(stderr, "btf_check: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!o->ext)
		return 0;	/* no .BTF.ext: nothing to relocate */
	seg = &o->ext->core_relo_info;
	for_each_btf_ext_sec(seg, sec) {
		for_each_btf_ext_rec(seg, sec, i, r) {
			struct relo *n = realloc(o->relos, (o->n + 1) * sizeof(*n));

			if (!n)
				return -1;
			o->relos = n;
			n[o->n].sec = btf__name_by_offset(o->btf, sec->sec_name_off);
			n[o->n].r = r;
			n[o->n].idx = i;
			o->n++;
		}
	}
	return 0;
}

static void close_object(struct object *o)
{
	free(o->relos);
	btf_ext__free(o->ext);
	btf__free(o->btf);
}

static const char *kind_str(enum bpf_core_relo_kind k)
{
	static const char *const names[] = {
		"byte_off", "byte_sz", "field_exists", "signed", "lshift_u64",
		"rshift_u64", "local_type_id", "target_type_id", "type_exists",
		"type_size", "enumval_exists", "enumval_value", "type_matches",
	};

	return (unsigned int)k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

static bool is_exists(enum bpf_core_relo_kind k)
{
	return k == BPF_CORE_FIELD_EXISTS || k == BPF_CORE_TYPE_EXISTS ||
	       k == BPF_CORE_ENUMVAL_EXISTS || k == BPF_CORE_TYPE_MATCHES;
}

/* "task_struct.pid", "task_struct___old.state", "foo[2].bar", "enum x::Y" */
static void describe(const struct object *o, const struct relo *x, char *buf, size_t len)
{
	struct bpf_core_spec spec;
	const struct btf_type *t = btf__type_by_id(o->btf, x->r->type_id);
	bool enumval = x->r->kind == BPF_CORE_ENUMVAL_EXISTS ||
		       x->r->kind == BPF_CORE_ENUMVAL_VALUE;
	size_t n;

	n = snprintf(buf, len, "%s", t ? btf__name_by_offset(o->btf, t->name_off) : "?");
	if (bpf_core_parse_spec(x->sec, o->btf, x->r, &spec))
		return;
	for (int i = 1; i < spec.len && n < len; i++) {
		if (spec.spec[i].name)
			n += snprintf(buf + n, len - n, "%s%s",
				      enumval ? "::" : ".",
				      spec.spec[i].name);
		else
			n += snprintf(buf + n, len - n, "[%u]", spec.spec[i].idx);
	}
}

static int calc(const struct object *o, const struct relo *x, const struct btf *targ,
		struct bpf_core_relo_res *res)
{
	struct bpf_core_spec specs[3] = {};
	struct bpf_core_cand_list cands = {};
	struct bpf_core_cand local = { .btf = o->btf, .id = x->r->type_id };
	const struct btf_type *t = btf__type_by_id(o->btf, x->r->type_id);
	const char *name;
	int err;

	memset(res, 0, sizeof(*res));
	if (!t)
		return -EINVAL;
	name = btf__name_by_offset(o->btf, t->name_off);
	if (x->r->kind != BPF_CORE_TYPE_ID_LOCAL) {
		err = bpf_core_add_cands(&local, bpf_core_essential_name_len(name),
					 targ, "vmlinux", 1, &cands);
		if (err)
			return err;
	}
	err = bpf_core_calc_relo_insn(x->sec, x->r, x->idx, o->btf, &cands, specs, res);
	free(cands.cands);
	return err;
}

/* An access the object itself guards with an existence check of the same spec. */
static bool guarded(const struct object *o, const struct relo *x)
{
	const char *acc = btf__name_by_offset(o->btf, x->r->access_str_off);

	for (int i = 0; i < o->n; i++) {
		const struct bpf_core_relo *r = o->relos[i].r;

		if (is_exists(r->kind) && r->type_id == x->r->type_id &&
		    !strcmp(btf__name_by_offset(o->btf, r->access_str_off), acc))
			return true;
	}
	return false;
}

static bool optional(const struct object *o, const struct relo *x)
{
	const struct btf_type *t = btf__type_by_id(o->btf, x->r->type_id);
	const char *name = t ? btf__name_by_offset(o->btf, t->name_off) : "";

	return is_exists(x->r->kind) || strstr(name, "___") || guarded(o, x);
}

static int cmd_relos(const char *path)
{
	struct object o;
	char what[256];

	if (open_object(path, &o)) {
		close_object(&o);
		return 2;
	}
	for (int i = 0; i < o.n; i++) {
		describe(&o, &o.relos[i], what, sizeof(what));
		printf("%s %s\n", kind_str(o.relos[i].r->kind), what);
	}
	close_object(&o);
	return 0;
}

static struct btf *parse_btf(const char *path)
{
	struct btf *btf = btf__parse(path, NULL);

	if (!btf)
		fprintf(stderr, "btf_check: %s: %s\n", path, strerror(errno));
	return btf;
}

/* One relocation against BTF (and FULL): 0 fine, 1 not satisfied. */
static int check_one(const struct object *o, const struct relo *x,
		     const struct btf *btf, const struct btf *full)
{
	struct bpf_core_relo_res res, want;
	char what[256];

	describe(o, x, what, sizeof(what));
	if (calc(o, x, btf, &res)) {
		printf("FAIL %s %s: cannot relocate\n", kind_str(x->r->kind), what);
		return 1;
	}
	if (full) {
		if (calc(o, x, full, &want)) {
			printf("FAIL %s %s: cannot relocate against the full BTF\n",
			       kind_str(x->r->kind), what);
			return 1;
		}
		/* A target type ID differs between BTFs by nature. */
		if (res.poison != want.poison ||
		    (x->r->kind != BPF_CORE_TYPE_ID_TARGET && !res.poison &&
		     res.new_val != want.new_val)) {
			printf("FAIL %s %s: %s%llu, the full BTF gives %s%llu\n",
			       kind_str(x->r->kind), what, res.poison ? "missing " : "",
			       (unsigned long long)res.new_val,
			       want.poison ? "missing " : "",
			       (unsigned long long)want.new_val);
			return 1;
		}
	} else if (res.poison && !optional(o, x)) {
		printf("FAIL %s %s: missing\n", kind_str(x->r->kind), what);
		return 1;
	}
	printf("ok   %s %s = %s%llu\n", kind_str(x->r->kind), what,
	       res.poison ? "missing " : "", (unsigned long long)res.new_val);
	return 0;
}

static int cmd_check(const char *obj, const char *btf_path, const char *full_path)
{
	struct btf *btf = NULL, *full = NULL;
	struct object o;
	int bad = 0, rc = 2;

	if (open_object(obj, &o) || !(btf = parse_btf(btf_path)))
		goto out;
	if (full_path && !(full = parse_btf(full_path)))
		goto out;
	if (o.n == 0) {
		fprintf(stderr, "btf_check: %s has no CO-RE relocations\n", obj);
		goto out;
	}
	for (int i = 0; i < o.n; i++)
		bad += check_one(&o, &o.relos[i], btf, full);
	printf("%d of %d relocations not satisfied by %s\n", bad, o.n, btf_path);
	rc = bad ? 1 : 0;
out:
	btf__free(full);
	btf__free(btf);
	close_object(&o);
	return rc;
}

static void *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		goto out;
	buf = malloc(n ? n : 1);
	if (buf && fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	*len = n;
out:
	if (!buf)
		fprintf(stderr, "btf_check: %s: %s\n", path, strerror(errno));
	if (f)
		fclose(f);
	return buf;
}

static int cmd_find(const char *ar_path, const char *machine, const char *release,
		    const char *out)
{
	char err[256] = "";
	size_t len, btf_len;
	void *ar = slurp(ar_path, &len), *btf;
	FILE *f;
	int r;

	if (!ar)
		return 2;
	r = btf_archive_find(ar, len, machine, release, &btf, &btf_len, err, sizeof(err));
	free(ar);
	if (r < 0) {
		fprintf(stderr, "btf_check: %s: %s\n", ar_path, err);
		return 2;
	}
	if (r == 0)
		return 1;
	f = fopen(out, "wb");
	r = !f || fwrite(btf, 1, btf_len, f) != btf_len;
	if ((f && fclose(f)) || r) {
		fprintf(stderr, "btf_check: %s: %s\n", out, strerror(errno));
		r = 2;
	}
	free(btf);
	return r;
}

static int cmd_list(const char *ar_path)
{
	size_t len;
	void *ar = slurp(ar_path, &len);
	int n;

	if (!ar)
		return 2;
	n = btf_archive_list(ar, len, stdout);
	free(ar);
	return n < 0 ? 2 : 0;
}

/* Exact-size copy, so ASan sees a read past the end. */
static int find_in_copy(const char *ar, size_t len, const char *machine, const char *release)
{
	char *copy = malloc(len ? len : 1), err[256];
	void *btf = NULL;
	size_t btf_len = 0;
	int r;

	if (!copy)
		abort();
	memcpy(copy, ar, len);
	r = btf_archive_find(copy, len, machine, release, &btf, &btf_len, err, sizeof(err));
	if (r == 1)
		free(btf);
	if (r < 0 && !err[0])
		r = -2;	/* an error must say why */
	free(copy);
	return r;
}

static int cmd_corrupt(const char *ar_path, const char *machine, const char *release)
{
	size_t len;
	char *ar = slurp(ar_path, &len);
	int bad = 0, errors = 0;

	if (!ar)
		return 2;
	if (find_in_copy(ar, len, machine, release) != 1) {
		fprintf(stderr, "btf_check: %s %s not in %s\n", machine, release, ar_path);
		free(ar);
		return 2;
	}
	/* Length 0 is a binary built without BTF: "not found". */
	for (size_t n = 1; n < len; n++) {
		if (find_in_copy(ar, n, machine, release) != -1) {
			printf("FAIL truncated to %zu bytes: not an error\n", n);
			bad++;
		}
	}
	for (size_t i = 0; i < len; i++) {
		for (int bit = 0; bit < 8; bit++) {
			int r;

			ar[i] ^= 1 << bit;
			r = find_in_copy(ar, len, machine, release);
			ar[i] ^= 1 << bit;
			if (r == -2) {
				printf("FAIL bit %d of byte %zu: error without a message\n", bit, i);
				bad++;
			}
			errors += r == -1;
		}
	}
	printf("%zu truncations, %zu flipped bits (%d errors), %d failures\n",
	       len - 1, len * 8, errors, bad);
	free(ar);
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	libbpf_set_print(quiet_print);
	if (!strcmp(cmd, "relos") && argc == 3)
		return cmd_relos(argv[2]);
	if (!strcmp(cmd, "check") && (argc == 4 || argc == 5))
		return cmd_check(argv[2], argv[3], argc == 5 ? argv[4] : NULL);
	if (!strcmp(cmd, "list") && argc == 3)
		return cmd_list(argv[2]);
	if (!strcmp(cmd, "find") && argc == 6)
		return cmd_find(argv[2], argv[3], argv[4], argv[5]);
	if (!strcmp(cmd, "corrupt") && argc == 5)
		return cmd_corrupt(argv[2], argv[3], argv[4]);
	fprintf(stderr, "usage: btf_check relos OBJ | check OBJ BTF [FULL] | list ARCHIVE |\n"
			"       find ARCHIVE MACHINE RELEASE OUT | corrupt ARCHIVE MACHINE RELEASE\n");
	return 2;
}
