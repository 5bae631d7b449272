#!/bin/bash
# Break-it cases: each applies one small, deliberate bug to a copy of the
# repository, builds the copy, runs the tests that must catch it and expects
# every one of them red.  A case whose tests stay green (a "survivor"), or
# whose change no longer applies to the code, fails the run.  Not part of
# `make test` (it builds and records once per case): `make mutants`.
#
#   tests/mutants.sh [CASE...]      all cases, or the named ones
# Environment: MUTANT_CELL, the QEMU cell the QEMU cases run on (s390x-6.1:
# the cell with the fewest checks, no user stacks there).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
CELL=${MUTANT_CELL:-s390x-6.1}
LOG=${MUTANT_LOG:-$ROOT/build/mutants}
mkdir -p "$LOG"

# name | file | perl substitution (-0777: the whole file) | tests to turn red
# (The builds use -Werror: a case keeps what it disables referenced.)
# Tests: a tests/run.sh pattern, qemu (the cell above) or qemu:CELL.
CASES=(
	"switch-size-as-kib|src/record/rotation.c|s/\t\treturn bytes >= r->o->switch_bytes;/\t\treturn bytes >> 10 >= r->o->switch_bytes;/|rotate"
	"size-queue-uncounted|src/record/rotation.c|s/\tsize = p\.bytes \+ p\.queued;/\tsize = p.bytes;/|rotate"
	"trigger-after-ms|src/record/cli.c|s/\to->trigger_after_ns = v \* 1e9;/\to->trigger_after_ns = v * 1e6;/|flight"
	"trigger-pid-by-tid|src/record/collector.c|s/ id_list_has\(pids, pid\);/ id_list_has(pids, tid);/|flight"
	"capped-unfollowed|src/record/collector.c|s/(\t\tc->st\.flight_capped\+\+;\n)\tevict_aged\(ctx, rec\);\n/\$1/|flight"
	"time-short|bpf/offcpu_common.bpf.h|s/(\t\*delta = \*now - s->ts;\n)/\$1\t*delta -= *delta \/ 12;\n/|record report variants qemu"
	"time-long|bpf/offcpu_common.bpf.h|s/(\t\*delta = \*now - s->ts;\n)/\$1\t*delta += *delta \/ 12;\n/|record report variants qemu"
	"dropped-thread|bpf/offcpu_common.bpf.h|s/(\tif \(!block_ends\(s, now, &delta\)\)\n\t\treturn;\n)/\$1\tif (tid % 3 == 1)\n\t\treturn;\n/|record qemu"
	"no-build-ids|src/record/collector.c|s/\n\tadd_build_ids\(c\);\n/\n\t(void)add_build_ids;\n/|report"
	"leak-in-svg|src/report/output_svg.c|s/(\nstatic int add_flame\([^)]*\)\n\{\n)/\$1\tchar *volatile leak = malloc(64);\n\n\t(void)leak;\n/|asan"
	"no-final-flush|src/record/collector.c|s/(int collector_finish\(.*?)\n\tflush\(c, UINT64_MAX\);\n/\$1\n/s|record"
	"crashed-workload|tests/workload/blocker.c|s/(\n\t\tblocker_main_join\(&m->fn\[1\]\);\n)/\$1\t\t*(volatile int *)0 = 0;\n/|record qemu"
	"no-end-scan|src/record/collector.c|s/ blocked_scan_end\(c->ld, c->end, add_blocked, c, &c->st\.blocked_ran\)/ (0 \&\& blocked_scan_end(c->ld, c->end, add_blocked, c, \&c->st.blocked_ran))/|blocked qemu"
	"no-start-scan|src/record/blocked.c|s/return run_iter\(l->scan_start, count_start, st, poll, poll_ctx\);/return 0 \&\& run_iter(l->scan_start, count_start, st, poll, poll_ctx);/|blocked"
	"empty-workload-output|tests/workload/blocker.c|s/\n\tprint_truth\(\);\n/\n\t(void)print_truth;\n/|record qemu"
	"pprof-dropped-sample|src/report/pprof.c|s/\n\tp->nr_samples\+\+;\n/\n\tp->nr_samples += p->nr_samples % 7 != 3;\n/|pprof"
	"pprof-ns-as-count|src/report/pprof.c|s/\[VALUE_NS\] = ns, \[VALUE_COUNT\] = count/[VALUE_NS] = count, [VALUE_COUNT] = ns/|pprof"
	"status-not-blanked|src/record/status.c|s/(\nvoid status_end\(struct status \*s\)\n\{\n)/\$1\tif (s)\n\t\treturn;\n/|pprof"
	"no-waker-at-switch-in|bpf/offcpu_wakers.bpf.h|s/\tif \(!\(s->waker\.flags & OFFCPU_WAKER_SEEN\)\) \{/\tif (s->waker.flags + 1) {/|wakers"
	"no-proc-pid-root|src/record/mapped_files.c|s/(\nstatic bool ns_path\([^\n]*\n\{\n)/\$1\treturn false;\n/|container"
	"no-build-id-check|src/symbols/symbolize.c|s/\n\tif \(!d->want_len\)\n\t\treturn true;\n/\n\treturn true;\n/|container report"
	"max-block-ignored|bpf/offcpu_common.bpf.h|s/return \*delta >= cfg\.min_ns && \*delta <= cfg\.max_ns;/return *delta >= cfg.min_ns;/|record"
	"min-block-ignored|bpf/offcpu_common.bpf.h|s/return \*delta >= cfg\.min_ns && \*delta <= cfg\.max_ns;/return *delta <= cfg.max_ns;/|record"
	"state-ignored|bpf/offcpu.bpf.c|s/if \(!\(state & cfg\.state_mask\)\) \{/if (!(state \& 3)) {/|variants"
	"blocked-period-long|src/record/collector.c|s/\.time = c->end, \.period = period,/.time = c->end, .period = period * 17 \/ 16,/|blocked"
	"dwarf-ids-kept|src/record/stacks.c|s/\t\tif \(r->state != RETIRED_DRAINING\) \{/\t\tif (r->state != RETIRED_DRAINING + 1) {/|flight"
	"summed-trigger-ignored|src/record/collector.c|s/\n\tsum_trigger\(c, k, v\);\n/\n\t(void)sum_trigger;\n/|flight"
	"followed-forever|src/record/task_events.c|s/\t\tu32_map_del\(&te->pids\.m, f->pid\);\n/\t\t;\n/|flight"
	"waker-tid-is-pid|bpf/offcpu_wakers.bpf.h|s/\tw->tid = \(__u32\)pid_tgid;/\tw->tid = pid_tgid >> 32;/|wakers"
	"cpu-filter-ignored|bpf/offcpu_common.bpf.h|s/\tif \(cfg\.filter_cpu\) \{/\tif (cfg.filter_cpu \&\& 0) {/|record"
	"thresh-ignored|bpf/offcpu_common.bpf.h|s/\tif \(delta >= cfg\.thresh_ns\)\n\t\tsend_event/\tif (delta >= cfg.thresh_ns * 100)\n\t\tsend_event/|record"
	"max-stack-ignored|src/record/cli.c|s/\to->max_stack = v;/\to->max_stack = 64;/|record"
	"tp-idle-as-s|bpf/offcpu_tp.bpf.c|s/\t\tstate = OFFCPU_TASK_UNINTERRUPTIBLE;/\t\tstate = OFFCPU_TASK_INTERRUPTIBLE;/|variants"
	"dwarf-buffer-ignored|src/record/cli.c|s/\to->dwarf_buffer = v << 20;/\to->dwarf_buffer = 4u << 20;/|knobs"
	"unwind-tables-ignored|src/record/cli.c|s/\to->unwind_tables = v << 20;/\to->unwind_tables = 32u << 20;/|knobs"
	"perf-pair-prev-switch|src/record/switch_events.c|s/\tswitch_in\(sw, r->next_tid, time, r->cpu\);/\tswitch_in(sw, r->next_tid, sw->last_switch[r->cpu] ? sw->last_switch[r->cpu] : time, r->cpu);/|perfbackend"
	"perf-state-ignored|src/record/switch_events.c|s/if \(!\(state & o->state_mask\) \x7c\x7c/if (!(state \& 3) \x7c\x7c/|perfbackend"
	"perf-lost-not-counted|src/record/switch_events.c|s/sw->counters\[STAT_PERF_LOST\] \+= perf_ring_read/(void)perf_ring_read/|perfbackend"
	"perf-thresh-ignored|src/record/switch_events.c|s/\tif \(delta >= sw->o->thresh_ns\) \{/\tif (delta >= sw->o->thresh_ns * 100) {/|perfbackend"
	"perf-swevent-preempt-as-block|src/record/switch_events.c|s/\t\tif \(!\(w->header\.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT\)\)\n/\t\tif (w->header.misc + 1)\n/|perfbackend"
	"perf-swevent-exit-as-block|src/record/switch_events.c|s/\tif \(last_switch\(sw, r\) \x7c\x7c !r->starts\)/\tif ((0 \&\& last_switch(sw, r)) \x7c\x7c !r->starts)/|perfbackend"
	"perf-swevent-state-kept|src/record/loader.c|s/ \x7c\x7c check_state\(o, p\)\)/ \x7c\x7c (0 \&\& check_state(o, p)))/|perfbackend"
	"perf-swevent-no-stacks|src/record/switch_events.c|s/\tif \(hd->r\.starts\)\n\t\tname_stacks/\tif (0)\n\t\tname_stacks/|perfbackend"
	"perf-max-block-ignored|src/record/switch_events.c|s/if \(delta < sw->o->min_block_ns \x7c\x7c delta > sw->o->max_block_ns\)/if (delta < sw->o->min_block_ns)/|perfbackend"
	"unwind-in-kernel-falls-back|src/record/cli.c|s/\tif \(o->unwind_in_kernel\)\n\t\treturn o->unwind_verify/\tif (o->unwind_in_kernel \&\& 0)\n\t\treturn o->unwind_verify/|perfbackend kunwind"
	"kwalk-s390x-sp|bpf/offcpu_unwind.bpf.h|s/#define KU_SP_OF_CFA\t\(-160\)/#define KU_SP_OF_CFA\t(-152)/|qemu"
	"kwalk-no-riscv|src/unwind/ktables.c|s/#define KT_MACHINE EM_RISCV/#define KT_MACHINE EM_S390/|qemu:riscv64-6.12"
	"kwalk-armhf-thumb|bpf/offcpu_unwind.bpf.h|s/#define KU_PC_MASK\t\(~1ull\)/#define KU_PC_MASK\t(~0ull)/|qemu:armhf-6.12"
	"kwalk-ra-off|bpf/offcpu_unwind.bpf.h|s/cfa \+ \(__s64\)r->ra_off, &ra\)/cfa + (__s64)r->ra_off + 4, &ra)/|qemu:armhf-6.12"
	"kwalk-pc-only|bpf/offcpu_unwind.bpf.h|s/\t\tif \(i >= n && i < \(int\)max\)\n/\t\tif (i >= 1 \&\& i < (int)max)\n/|qemu:x86_64-6.12"
	"report-pid-is-tid|src/report/aggregate.c|s/id_list_has\(&r->o\.pids, s->pid\)/id_list_has(\&r->o.pids, s->tid)/|report"
	"comm-thread-only|src/report/aggregate.c|s/in_list\(r->o\.comms, proc\)/(0 \&\& in_list(r->o.comms, proc))/|report"
	"more-stacks-counts-shown|src/report/output.c|s/fmt_time\(rest, t, sizeof\(t\)\), r->total \? 100\.0 \* rest \/ r->total : 0\)/fmt_time(r->total - rest, t, sizeof(t)), r->total ? 100.0 * (r->total - rest) \/ r->total : 0)/|report"
	"more-stacks-number-shown|src/report/output.c|s/(shows all[^\"]*\"), hidden,/\$1, shown,/|report"
	"verify-always-equal|src/record/stacks.c|s/\treturn a == b /\treturn 1 /|unit"
	"extab-bound-one-word-past|src/unwind/ehabi.c|s/\(x->size - off\) \/ 4 - 1 < more/(x->size - off) \/ 4 < more/|unit"
	"softirq-as-irq|src/record/wakers.c|s/WAKER_SOFTIRQ \}/WAKER_IRQ }/g|wakers"
	"thresh-as-us|src/record/cli.c|s/o->thresh_ns = v \* 1000000;/o->thresh_ns = v * 1000;/|record"
	"freq-ignored|src/record/cli.c|s/\to->freq = v;/\to->freq = 199;/|record"
	"trigger-after-ignored|src/record/cli.c|s/o->trigger_after_ns = v \* 1e9;/o->trigger_after_ns = 1e9;/|flight"
	"perf-waker-tid-is-pid|src/record/switch_wakers.c|s/\.w = \{ \.pid = s->pid, \.tid = s->tid,/.w = { .pid = s->pid, .tid = s->pid,/|perfbackend"
)

# A copy of the working tree (tracked files as they are now) with the
# builds, so that make rebuilds only what the case changes.
copy_tree() {	# DIR
	mkdir -p "$1"
	(cd "$ROOT" && git ls-files -z | xargs -0 tar -cf - 2>/dev/null) | tar -C "$1" -xf - || return 1
	mkdir -p "$1/build"
	for d in x86_64 arm64 s390x riscv64 bpf gen asan unit host; do
		[ -d "$ROOT/build/$d" ] && cp -a "$ROOT/build/$d" "$1/build/"
	done
	return 0
}

run_case() {	# NAME FILE SUBST TESTS
	local name=$1 file=$2 subst=$3 tests=$4 dir t cell red=0 green=""
	dir=$(mktemp -d "${TMPDIR:-/tmp}/offcpu-mutant-$name.XXXXXX")
	copy_tree "$dir" || { echo "ERROR $name: cannot copy the tree"; return 1; }
	cp "$dir/$file" "$dir/$file.orig"
	perl -0777 -pi -e "$subst" "$dir/$file"
	if cmp -s "$dir/$file" "$dir/$file.orig"; then
		echo "ERROR $name: the change no longer applies to $file (update tests/mutants.sh)"
		rm -rf "$dir"
		return 1
	fi
	rm "$dir/$file.orig"
	if ! (cd "$dir" && nice make -s all workloads asan >"$LOG/$name.build" 2>&1); then
		echo "ERROR $name: the mutant does not build: $(tail -n 2 "$LOG/$name.build" | tr '\n' ' ')"
		rm -rf "$dir"
		return 1
	fi
	for t in $tests; do
		if [ "$t" = qemu ] || [[ $t == qemu:* ]]; then
			cell=${t#qemu:}
			[ "$t" = qemu ] && cell=$CELL
			(cd "$dir" && qemu-tests/run.sh "$cell") >"$LOG/$name.$t.log" 2>&1
		else
			(cd "$dir" && tests/run.sh "$t") >"$LOG/$name.$t.log" 2>&1
		fi
		if [ $? -ne 0 ]; then
			red=$((red + 1))
			echo "  $name: $t red: $(grep -m1 '^FAIL' "$LOG/$name.$t.log" | cut -c1-160)"
		else
			green+=" $t"
		fi
	done
	rm -rf "$dir"
	if [ -n "$green" ]; then
		echo "SURVIVED $name: green in$green (logs: $LOG/$name.*)"
		return 1
	fi
	echo "KILLED $name: red in all $red"
}

want=" $* "
survivors=0 n=0
for c in "${CASES[@]}"; do
	IFS='|' read -r name file subst tests <<<"$c"
	[ $# -gt 0 ] && [[ $want != *" $name "* ]] && continue
	n=$((n + 1))
	run_case "$name" "$file" "$subst" "$tests" || survivors=$((survivors + 1))
done
echo "$((n - survivors)) of $n break-it cases caught"
[ "$survivors" -eq 0 ] && [ "$n" -gt 0 ]
