// SPDX-License-Identifier: GPL-2.0
/*
 * What a recording tells on stderr: at the start, how stacks are unwound and
 * what the flight recorder keeps; with -v a line per file as it closes; and
 * the end-of-run summary, perf's style: what was written, every drop by
 * cause, and with -v the stack cache, the unwinding and the spilled stacks.
 */
#include <stdio.h>

#include "record/summary.h"
#include "unwind/unwind.h"

static double percent(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * part / whole : 0;
}

/* -v: how much the user stack cache saved, and in verify mode how well it guessed. */
static void print_stack_cache(const struct offcpu_opts *o, const uint64_t *n)
{
	uint64_t walked = n[STAT_USTACK_WALKED], reused = n[STAT_USTACK_REUSED];

	if (o->stack_cache == STACK_CACHE_VERIFY) {
		fprintf(stderr, "[ offcpu: stack cache (verify): %llu of %llu user stacks reusable "
			"(%.1f %%), %llu of those wrong (%.3f %%) ]\n",
			(unsigned long long)reused, (unsigned long long)walked,
			percent(reused, walked), (unsigned long long)n[STAT_USTACK_WRONG],
			percent(n[STAT_USTACK_WRONG], reused));
		return;
	}
	fprintf(stderr, "[ offcpu: stack cache: %llu user stacks reused, %llu walked (%.1f %% reused) ]\n",
		(unsigned long long)reused, (unsigned long long)walked,
		percent(reused, reused + walked));
}

/* -v with --call-graph dwarf: the copies and how their unwinding ended. */
static void print_unwind(const uint64_t *n, const struct unwind_counts *u)
{
	fprintf(stderr, "[ offcpu: user stack copies: %llu sent, %llu shortened at the stack's end, "
		"%llu unreadable ]\n", (unsigned long long)n[STAT_UCOPY_SENT],
		(unsigned long long)n[STAT_UCOPY_SHORT], (unsigned long long)n[STAT_UCOPY_UNREADABLE]);
	fprintf(stderr, "[ offcpu: CFI: %llu files read, %.1f MiB of rows; %llu files without; "
		"%llu lookups over the --unwind-tables budget ]\n",
		(unsigned long long)u->files, u->table_bytes / 1048576.0,
		(unsigned long long)u->no_table, (unsigned long long)u->over_budget);
	fprintf(stderr, "[ offcpu: CFI from separate debug files: %llu files read, %llu steps "
		"where a file's own tables have none ]\n", (unsigned long long)u->debug_files,
		(unsigned long long)u->debug_rows);
	for (int i = 0; i < UNWIND_NR; i++)
		fprintf(stderr, "[ offcpu: user stacks unwound, %s: %llu ]\n", unwind_end_names[i],
			(unsigned long long)u->end[i]);
	fprintf(stderr, "[ offcpu: maps kept at a fork or exec: %llu; processes unwound with "
		"those at their first copy after it (alive or gone, /proc/PID/maps not read): %llu ]\n",
		(unsigned long long)u->views, (unsigned long long)u->views_used);
	/* Cut for want of tables: what the user can add to the build. */
	if (u->cut_no_table)
		fprintf(stderr, "[ offcpu: %llu user stacks cut at code without unwind tables: %s ]\n",
			(unsigned long long)u->cut_no_table, unwind_cut_hint(u->machine));
	if (u->end[UNWIND_NO_CFI] > u->cut_no_table)
		fprintf(stderr, "[ offcpu: %llu user stacks cut elsewhere: a pc in no file, rules a "
			"row cannot hold, or a function its library marks as without table "
			"(Debian's armhf libc: start_thread, epoll_wait, pthread_mutex_lock, which "
			"its debug file, libc6-dbg, covers; the outermost _start and clone's "
			"thread_start have CFI nowhere) ]\n",
			(unsigned long long)(u->end[UNWIND_NO_CFI] - u->cut_no_table));
}

/*
 * -v: what the tables that follow the recording's threads hold at its end,
 * and held at most: an exit takes its thread out of each (a test's churn
 * of short-lived threads checks they come back down).
 */
static void print_tables(const struct collector_stats *st)
{
	const struct stacks_tables *t = &st->tables;

	if (t->ids_peak || t->procs)
		fprintf(stderr, "[ offcpu: tables at the end: %zu dwarf stack ids (most %zu), "
			"%zu distinct unwound stacks (most %zu), %zu threads in the stack cache "
			"(most %zu), %zu processes' maps in the unwinder ]\n", t->ids, t->ids_peak,
			t->stacks, t->stacks_peak, t->cached, t->cached_peak, t->procs);
	if (st->kernel_cut)
		fprintf(stderr, "[ offcpu: kernel stacks cut at %s ]\n", st->kernel_cut);
	if (st->waker_ranges)
		fprintf(stderr, "[ offcpu: --wakers: interrupt functions' ranges %s ]\n",
			st->waker_ranges);
	if (st->followed)
		fprintf(stderr, "[ offcpu: processes followed at the end: %zu ]\n", st->followed);
	if (st->live_threads || st->live_procs)
		fprintf(stderr, "[ offcpu: live at the end (named in a new file): %zu threads, "
			"%zu processes ]\n", st->live_threads, st->live_procs);
}

/*
 * Blocks of --trigger-block that found the ring buffer full: summed in the
 * kernel, a trigger only when alone in their sum.  Those lost as triggers
 * are said, not just in the drops' "long blocks summed".
 */
static void print_triggers_summed(const struct collector_stats *st)
{
	uint64_t n = st->counters[STAT_TRIGGER_SUMMED], found = st->flight_from_sums;
	uint64_t lost = n > found ? n - found : 0;

	fprintf(stderr, "[ offcpu: flight recorder: %llu block%s of --trigger-block or more found the "
		"ring buffer full: %llu still seen as a trigger (alone in its sum), %llu trigger%s "
		"lost (summed with other blocks of the thread) ]\n", (unsigned long long)n,
		n == 1 ? "" : "s", (unsigned long long)(n - lost), (unsigned long long)lost,
		lost == 1 ? "" : "s");
}

/*
 * Where user stacks came from: unwound in the kernel, copied (and unwound
 * here), or walked by frame pointer (the ring was full, or no registers).
 * verify's copies of walked stacks are not counted as copied: their
 * blocks carry the walked stacks.
 */
static void print_kunwind(const uint64_t *n, const struct collector_stats *st)
{
	const struct ktables_counts *k = st->ktables;
	static const char *const miss[] = {
		"process not loaded", "pc in no loaded mapping", "file's rows not loaded",
		"row it cannot follow", "stack word unreadable", "sp went backwards",
		"spill map full",
	};
	uint64_t fp = n[DROP_UCOPY] + n[DROP_UREGS], v = st->verify_copies;
	uint64_t copied = n[STAT_UCOPY_SENT] > v ? n[STAT_UCOPY_SENT] - v : 0;
	uint64_t all = n[STAT_KUNWIND_OK] + copied + fp;

	fprintf(stderr, "[ offcpu: user stacks: %llu unwound in the kernel, %llu copied, %llu by "
		"frame pointer (%.2f %%), %llu reused from the stack cache",
		(unsigned long long)n[STAT_KUNWIND_OK], (unsigned long long)copied,
		(unsigned long long)fp, all ? 100.0 * fp / all : 0.0,
		(unsigned long long)n[STAT_USTACK_REUSED]);
	if (v)
		fprintf(stderr, "; %llu walked stacks also copied to compare (verify)",
			(unsigned long long)v);
	fprintf(stderr, " ]\n");
	fprintf(stderr, "[ offcpu: kernel unwinding missed, copied instead:");
	for (int i = 0; i < (int)(sizeof(miss) / sizeof(miss[0])); i++)
		fprintf(stderr, "%s %s %llu", i ? "," : "", miss[i],
			(unsigned long long)n[STAT_KUNWIND_NO_PROC + i]);
	fprintf(stderr, " ]\n[ offcpu: kernel unwinding rows: %llu files (%llu rows, %.1f MiB of "
		"%.1f), %llu without usable CFI, %llu over a quarter of --unwind-rows, %llu given back, "
		"%llu put off; %llu requests, %llu copied stacks looked at (%llu not: queue full), "
		"%llu process loads, %llu inherited at fork, %.1f ms ]\n",
		(unsigned long long)k->files, (unsigned long long)k->rows,
		k->rows * sizeof(struct offcpu_krow) / 1048576.0,
		k->rows_max * sizeof(struct offcpu_krow) / 1048576.0,
		(unsigned long long)k->no_rows, (unsigned long long)k->too_large,
		(unsigned long long)k->evicted, (unsigned long long)k->deferred,
		(unsigned long long)k->requests, (unsigned long long)k->learned,
		(unsigned long long)k->learn_dropped,
		(unsigned long long)k->procs, (unsigned long long)n[STAT_KUNWIND_FORKED],
		k->load_ns / 1e6);
	if (k->compared)
		fprintf(stderr, "[ offcpu: kernel unwinding (verify): %llu walked stacks compared with "
			"their copies unwound here, %llu of those differ ]\n",
			(unsigned long long)k->compared, (unsigned long long)k->differed);
	if (k->differed)
		fprintf(stderr, "[ offcpu: kernel unwinding (verify): %llu walks ended first, %llu "
			"copies ended first, %llu parted; the first: %u walked frames, %u from the "
			"copy, from frame %u: walked %#llx, copy %#llx ]\n",
			(unsigned long long)k->walk_shorter, (unsigned long long)k->copy_shorter,
			(unsigned long long)(k->differed - k->walk_shorter - k->copy_shorter),
			k->first_kn, k->first_un, k->first_at, (unsigned long long)k->first_kip,
			(unsigned long long)k->first_uip);
}

/* --flight-recorder: the files written and why, what the window held and lost. */
static void print_flight_summary(const struct offcpu_opts *o, const struct collector_stats *st,
				 const struct rotation *rot)
{
	if (rot->files)
		fprintf(stderr, "[ offcpu: flight recorder: wrote %.3f MB in %llu file%s, %s to %s "
			"(%llu samples; %llu by a trigger, %llu by SIGUSR2) ]\n", st->bytes / 1048576.0,
			(unsigned long long)rot->files, rot->files > 1 ? "s" : "", rot->first, rot->last,
			(unsigned long long)st->samples, (unsigned long long)rot->triggered,
			(unsigned long long)rot->signalled);
	else
		fprintf(stderr, "[ offcpu: flight recorder: no file written (no trigger, no SIGUSR2) ]\n");
	if (st->flight_merged)
		fprintf(stderr, "[ offcpu: flight recorder: %llu triggers, %llu of them inside a file "
			"already waited for ]\n", (unsigned long long)st->flight_triggers,
			(unsigned long long)st->flight_merged);
	if (st->counters[STAT_TRIGGER_SUMMED])
		print_triggers_summed(st);
	if (st->flight_capped)
		fprintf(stderr, "[ offcpu: flight recorder: %llu of %llu samples pushed out of the window "
			"by its %.3f MiB before their %.3f s (raise SIZE: --flight-recorder SECS,SIZE) ]\n",
			(unsigned long long)st->flight_capped, (unsigned long long)st->flight_seen,
			o->flight_bytes / 1048576.0, o->flight_ns / 1e9);
	if (o->verbose)
		fprintf(stderr, "[ offcpu: flight recorder: window peak %.3f MiB of %.3f MiB; %.3f MiB "
			"held at the end, not written ]\n", st->flight_peak / 1048576.0,
			o->flight_bytes / 1048576.0, rot->ended_unwritten / 1048576.0);
}

void summary_print(const struct offcpu_opts *o, const struct plan *pl,
		   const struct collector_stats *st, uint64_t missed,
		   const struct rotation *rot)
{
	static const char *const what[DROP_MAX] = {
		[DROP_USTACK] = "user stacks not recorded (stack maps full: raise --stack-entries)",
		[DROP_KSTACK] = "kernel stacks not recorded (stack maps full: raise --stack-entries)",
		[DROP_SUMS] = "short blocks lost (sums map full)",
		[DROP_RINGBUF] = "long blocks summed with the short ones (ring buffer full)",
		[DROP_STORAGE] = "blocks not tracked (per-thread storage full)",
		[DROP_FILTER] = "forked processes not followed (pid filter full)",
		[DROP_KTHREADS] = "kernel threads not recognised, their blocks recorded (kthreads map full)",
		[DROP_UNSEEN] = "blocks lost: their switch-in was not seen (the thread switched out again first)",
		[DROP_UCOPY] = "user stacks walked by frame pointer, not copied (ring buffer full: its reader was behind; raise --dwarf-buffer, or lower --nice)",
		[DROP_UREGS] = "user stacks walked by frame pointer, not copied (no user registers at the top of the thread's kernel stack)",
		[DROP_SWITCH] = "context switches lost (the kernel walker's tail call back to its switch program failed)",
	};
	const uint64_t *n = st->counters;
	uint64_t lost = collector_lost(st);

	if (o->flight_ns)
		print_flight_summary(o, st, rot);
	else if (rot->files > 1)
		fprintf(stderr, "[ offcpu: Captured and wrote %.3f MB in %llu files, %s to %s "
			"(%llu samples, %llu lost) ]\n", st->bytes / 1048576.0,
			(unsigned long long)rot->files, rot->first, rot->last,
			(unsigned long long)st->samples, (unsigned long long)lost);
	else
		fprintf(stderr, "[ offcpu: Captured and wrote %.3f MB %s (%llu samples, %llu lost) ]\n",
			st->bytes / 1048576.0, rot->files ? rot->last : o->output,
			(unsigned long long)st->samples, (unsigned long long)lost);
	if (rot->removed)
		fprintf(stderr, "[ offcpu: removed the %llu oldest files (--switch-max-files %u): "
			"%zu kept, %s to %s ]\n", (unsigned long long)rot->removed, o->switch_max_files,
			rot->nr_kept, rot->kept[0], rot->last);
	if (rot->max_size_hit)
		fprintf(stderr, "[ offcpu: stopped: %s reached --max-size (%.3f MB) ]\n",
			rot->files ? rot->last : o->output, o->max_size / 1048576.0);
	for (int i = 0; i < DROP_MAX; i++)
		if (n[i])
			fprintf(stderr, "[ offcpu: %llu %s ]\n", (unsigned long long)n[i], what[i]);
	if (n[STAT_PERF_LOST])
		fprintf(stderr, "[ offcpu: %llu perf records lost (perf backend: a switch ring was full, "
			"its reader behind): blocks missing or ended late; raise --dwarf-buffer, or "
			"lower --nice ]\n", (unsigned long long)n[STAT_PERF_LOST]);
	if (n[STAT_USTACK_UNKNOWN])
		fprintf(stderr, "[ offcpu: %llu samples without their user stack: its id named "
			"nothing known any more (a bug: please report it) ]\n",
			(unsigned long long)n[STAT_USTACK_UNKNOWN]);
	if (n[STAT_UNSEEN_ENDED])
		fprintf(stderr, "[ offcpu: %llu blocks whose switch-in had no sched_switch event, "
			"ended from their thread's CPU time (tp,hash: at the CPU's last switch seen) ]\n",
			(unsigned long long)n[STAT_UNSEEN_ENDED]);
	if (o->verbose && pl->stack_cache)
		print_stack_cache(o, n);
	if (o->verbose && st->unwind)
		print_unwind(n, st->unwind);
	if (o->verbose)
		print_tables(st);
	if (o->verbose && st->ktables)
		print_kunwind(n, st);
	if (o->verbose && (n[STAT_USTACK_SPILLED] || n[STAT_KSTACK_SPILLED]))
		fprintf(stderr, "[ offcpu: stacks keyed by their frames: %llu user and %llu kernel ]\n",
			(unsigned long long)n[STAT_USTACK_SPILLED],
			(unsigned long long)n[STAT_KSTACK_SPILLED]);
	if (o->wakers && n[STAT_WAKER_NONE])
		fprintf(stderr, "[ offcpu: %llu blocks (of the short ones summed, each long one) "
			"ended with no wakeup seen: their waker is [no-wakeup-seen] ]\n",
			(unsigned long long)n[STAT_WAKER_NONE]);
	if (o->wakers && o->verbose && n[STAT_WAKER_NO_USTACK])
		fprintf(stderr, "[ offcpu: %llu wakers' user stacks not recorded (maps full, or the "
			"task an interrupt found had none) ]\n",
			(unsigned long long)n[STAT_WAKER_NO_USTACK]);
	if (o->wakers && n[STAT_WAKER_MARKED_TASK])
		fprintf(stderr, "[ offcpu: %llu task wakers without their user stack: an interrupt "
			"marker was set, their kernel stack shows none (a bug: please report it) ]\n",
			(unsigned long long)n[STAT_WAKER_MARKED_TASK]);
	if (st->blocked_threads)
		fprintf(stderr, "[ offcpu: %llu threads still blocked at the end: %.3f s (event offcpu-blocked) ]\n",
			(unsigned long long)st->blocked_threads, st->blocked_ns / 1e9);
	if (st->blocked_ran)
		fprintf(stderr, "[ offcpu: %llu threads not blocked at the end, though no switch-in "
			"was seen: no offcpu-blocked sample ]\n", (unsigned long long)st->blocked_ran);
	if (st->lost_oncpu)
		fprintf(stderr, "[ offcpu: %llu on-CPU samples lost (their stack copies filled the ring) ]\n",
			(unsigned long long)st->lost_oncpu);
	if (st->lost_task_events)
		fprintf(stderr, "[ offcpu: %llu task events lost (process names/maps may be missing) ]\n",
			(unsigned long long)st->lost_task_events);
	if (missed)
		fprintf(stderr, "[ offcpu: %llu program runs skipped by the kernel (another BPF program "
			"or map operation on the CPU): blocks may be missing ]\n",
			(unsigned long long)missed);
}

void summary_unwinding(const struct offcpu_opts *o, const struct plan *pl)
{
	if (pl->dwarf) {
		if (o->verbose && pl->kunwind)
			fprintf(stderr, "user stacks: unwound with CFI in the kernel, from rows loaded "
				"per file (a stack it cannot walk: copied, %u bytes)\n", o->copy_bytes);
		else if (o->verbose)
			fprintf(stderr, "user stacks: copied (%u bytes) and unwound with CFI (not in "
				"the kernel: %s)\n", o->copy_bytes, pl->no_kunwind);
		else if (o->unwind_in_kernel && !pl->kunwind)
			fprintf(stderr, "offcpu: user stacks copied, not unwound in the kernel: %s\n",
				pl->no_kunwind);
	} else if (o->ustack && (o->verbose || o->unwind == UNWIND_DWARF)) {
		fprintf(stderr, "%suser stacks: frame pointers (no CFI unwinding: %s)\n",
			o->verbose ? "" : "offcpu: ", pl->no_dwarf);
	}
}

void summary_flight(const struct offcpu_opts *o)
{
	fprintf(stderr, "flight recorder: the last %.3f s, at most %.1f MiB of records in memory "
		"(allocated once; the time-order queue counts too); a file at SIGUSR2",
		o->flight_ns / 1e9, o->flight_bytes / 1048576.0);
	if (o->trigger_ns)
		fprintf(stderr, " or %.3f s after a block of %llu ms or more ends%s%s",
			o->trigger_after_ns / 1e9, (unsigned long long)(o->trigger_ns / 1000000),
			o->trigger_comm ? " in " : "", o->trigger_comm ? o->trigger_comm : "");
	fprintf(stderr, "\n");
	if (o->thresh_lowered)
		fprintf(stderr, "flight recorder: --off-cpu-thresh lowered to %llu ms, so that each "
			"block that triggers is sent on its own\n",
			(unsigned long long)(o->thresh_ns / 1000000));
}

void summary_file(const char *name, const struct collector_file *f, const char *why)
{
	fprintf(stderr, "[ offcpu: wrote %s: %.3f MB, %llu samples, %llu lost, %.3f s",
		name, f->bytes / 1048576.0, (unsigned long long)f->samples,
		(unsigned long long)f->lost, f->start ? (f->end - f->start) / 1e9 : 0);
	if (f->blocked_threads)
		fprintf(stderr, ", %llu threads blocked at its end: %.3f s (offcpu-blocked)",
			(unsigned long long)f->blocked_threads, f->blocked_ns / 1e9);
	fprintf(stderr, "%s%s ]\n", why ? ", " : "", why ? why : "");
}
