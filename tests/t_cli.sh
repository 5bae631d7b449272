#!/bin/bash
# Command line: help, version, and one clear line plus a non-zero exit for
# each kind of bad input; an existing perf.data is never touched by a failure.
source "$(dirname "$0")/lib.sh"

[ -x "$OFFCPU" ] || { fail cli "$OFFCPU not built"; exit 0; }

"$OFFCPU" --help >"$WORK/help" 2>&1 && grep -q -- '--off-cpu-thresh' "$WORK/help" \
	&& pass cli-help || fail cli-help "no usage text"
# --version exits 1 when the libbpf linked in is not the one it names
# (t_toolchain checks that one against the toolchain's libbpf.version).
"$OFFCPU" --version >"$WORK/ver" 2>&1 && grep -q 'offcpu .*libbpf [0-9]' "$WORK/ver" \
	&& pass cli-version || fail cli-version "$(tr '\n' ' ' < "$WORK/ver")"

# expect_error NAME PATTERN ARGS...: offcpu ARGS in $WORK/cwd, checked by
# one_line_error as cli-error-NAME.  $WRAP, if set, runs offcpu (seccomp_run
# MODE, setpriv ...).
expect_error() {
	local name=$1 pat=$2
	shift 2
	# shellcheck disable=SC2086
	(cd "$WORK/cwd" && one_line_error "cli-error-$name" "$pat" ${WRAP:-} "$OFFCPU" "$@") </dev/null
}

mkdir -p "$WORK/cwd"
echo keep >"$WORK/cwd/perf.data"
expect_error unknown-option "unknown option '--frobnicate'" --frobnicate
expect_error bad-number "invalid --duration 'abc'" -d abc
expect_error zero-duration "invalid --duration '0'.*greater than 0" -d 0
expect_error negative-duration "invalid --duration '-1'" -d -1
expect_error bad-thresh "invalid --off-cpu-thresh 'x'" --off-cpu-thresh x
expect_error bad-state "invalid --state 'X'" --state X
expect_error bad-pid "invalid --pid 'foo'" -p foo
expect_error bad-cpu-range "invalid --cpu '3-1'" -C 3-1
expect_error missing-value "option '-o' needs a value" -o
expect_error unknown-command "unknown command 'frob'" frob
expect_error pid-and-cmd "exclude each other" -p 1 -- true
expect_error max-stack "invalid --max-stack '500'" --max-stack 500
expect_error stack-cache "invalid --stack-cache 'maybe'" --stack-cache maybe -d 1
expect_error stack-entries "invalid --stack-entries '0'" --stack-entries 0 -d 1
grep -qx keep "$WORK/cwd/perf.data" && pass cli-error-keeps-perf-data \
	|| fail cli-error-keeps-perf-data "perf.data was changed"

if [ "$(id -u)" = 0 ]; then
	expect_error no-such-pid "no such process: 999999" -p 999999 -d 1
	expect_error no-such-tid "no such thread: 999999" -t 999999 -d 1
	expect_error output-dir "cannot write .*: is a directory" -o "$WORK" -d 1
	expect_error output-unwritable "cannot create /nonexistent/x.data" -o /nonexistent/x.data -d 1
	expect_error not-executable "cannot execute '/nonexistent/cmd'" -o "$WORK/x.data" -- /nonexistent/cmd
	expect_error btf-missing "--btf /nonexistent.btf: no such file" --variant raw_tp,hash --btf /nonexistent.btf -d 1 -o "$WORK/y.data"
	expect_error no-such-cpu "--cpu: CPU 999 does not exist" -C 0,999 -d 1 -o "$WORK/y.data"
	# libbpf's own "failed to get EHDR" line only with -v.
	expect_error btf-junk "--btf /etc/passwd: not a BTF" --variant raw_tp,hash --btf /etc/passwd -d 1 -o "$WORK/y.data"
	grep -qx keep "$WORK/cwd/perf.data" && pass cli-runtime-error-keeps-perf-data \
		|| fail cli-runtime-error-keeps-perf-data "perf.data was changed"
	ls "$WORK"/*.tmp.* >/dev/null 2>&1 && fail cli-no-temp-left "temporary file left behind" \
		|| pass cli-no-temp-left
else
	skip cli-runtime-errors "needs root"
fi

# Not root and without CAP_BPF/CAP_PERFMON: one line saying so.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	WRAP="setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all" \
		expect_error not-root "run as root or with CAP_BPF and CAP_PERFMON" -d 1 -o /tmp/offcpu-nobody.data
fi

# kill -9: no half-written file under the output name; an old one survives.
if [ "$(id -u)" = 0 ]; then
	mkdir -p "$WORK/k9"
	echo old >"$WORK/k9/perf.data"
	"$OFFCPU" -o "$WORK/k9/perf.data" >/dev/null 2>&1 &
	op=$!
	sleep 1.5
	kill -9 $op
	wait $op 2>/dev/null
	if grep -qx old "$WORK/k9/perf.data"; then
		pass cli-kill-9-keeps-output
	else
		fail cli-kill-9-keeps-output "perf.data was replaced or damaged"
	fi
fi

# A kernel without bpf() or without the sched_switch tracepoint, made real
# for offcpu by a seccomp filter (tests/seccomp_run.c), with --backend bpf
# (auto records with perf events there: t_perfbackend): one line naming
# what is missing, a non-zero exit, no file written, an old perf.data untouched.
SECCOMP_RUN=${SECCOMP_RUN:-$ROOT/build/x86_64/seccomp_run}
if [ "$(id -u)" != 0 ]; then
	skip cli-error-no-kernel-support "needs root"
elif [ ! -x "$SECCOMP_RUN" ]; then
	fail cli-error-no-kernel-support "$SECCOMP_RUN not built (make workloads)"
elif ! "$SECCOMP_RUN" nobpf true 2>"$WORK/err"; then
	skip cli-error-no-kernel-support "no seccomp: $(head -c 200 "$WORK/err")"
else
	for c in "nobpf|no bpf\(\) system call" "notp|no sched:sched_switch tracepoint"; do
		mode=${c%%|*} pat=${c#*|}
		rm -rf "$WORK/sc" && mkdir -p "$WORK/sc" && echo keep >"$WORK/sc/perf.data"
		WRAP="$SECCOMP_RUN $mode"
		expect_error "$mode-record" "$pat" --backend bpf -d 1 -o "$WORK/sc/perf.data"
		expect_error "$mode-cmd" "$pat" --backend bpf -o "$WORK/sc/perf.data" -- true
		expect_error "$mode-probe" "$pat" probe --backend bpf
		WRAP=
		if grep -qx keep "$WORK/sc/perf.data" && [ "$(ls "$WORK/sc")" = perf.data ]; then
			pass "cli-error-$mode-no-file-written"
		else
			fail "cli-error-$mode-no-file-written" "$(ls "$WORK/sc" | tr '\n' ' ')"
		fi
	done
fi
