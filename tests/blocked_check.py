#!/usr/bin/env python3
"""Threads still blocked at the end of a recording (issue 15), checked in
perf script's view and in `offcpu report`'s section of their own.

  blocked_check.py FILE STUCK_OUT [--early-window S] [--offcpu BIN] [--tol T]
                   [--symfs DIR] [--report-text FILE] [--early none|kernel]
                   [--no-user-stacks]

STUCK_OUT holds the stuck workload's lines "<name> <tid> <monotonic ns>",
written just before each of its threads blocked for good.  Each of st-early
and st-late must have one offcpu-blocked sample (perf script) and one entry
in the report's "still blocked at the end" section, whose time is within TOL
(10 %; t_blocked.sh gives the host's) of the expected window and whose stack names stuck_<early|late>_read.
The window ends at the sample's time (the end of the recording) and starts
where the thread blocked, or at the recording's start: --early-window S
gives st-early's window when it blocked before the recording (with
--early-slack X: any length from S to S + X).

For the QEMU matrix: --symfs for perf script, --report-text the guest's own
report instead of running one here; --early none: the kernel cannot see
threads asleep at the start (st-early must have no sample), --early kernel:
it sees them with their kernel stack only (its time is checked, its stack
must reach pipe_read); --no-user-stacks: the kernel walks none (s390x before
6.7), so stacks must reach pipe_read instead of the user function.

Exit status 0 on success; on failure one line saying what differed.
"""
import argparse
import re
import subprocess
import sys

sys.path.insert(0, __file__.rsplit('/', 1)[0])
from perf_check import parse, perf_script  # noqa: E402

FUNCS = {'st-early': 'stuck_early_read', 'st-late': 'stuck_late_read'}


def blocked_at(path):
    out = {}
    for line in open(path):
        f = line.split()
        if len(f) == 3 and f[0] in FUNCS:
            out[f[0]] = (int(f[1]), int(f[2]))
    missing = set(FUNCS) - set(out)
    if missing:
        sys.exit(f'the workload never blocked: {sorted(missing)}')
    return out


def within(got, want, tol):
    return abs(got - want) <= tol * want


def window(name, end, ts, a):
    """A thread's time blocked inside the recording, to END (s): from when it
    blocked (TS, ns), or, for st-early with --early-window, the recording's
    length.  st-late must block after the recording started."""
    if name == 'st-early' and a.early_window:
        return a.early_window
    return end - ts / 1e9


def within_window(name, got, want, a):
    """GOT within TOL of WANT; st-early's window with --early-slack is any
    length from WANT to WANT + the slack (-d ends at a poll after it)."""
    if name == 'st-early' and a.early_window and a.early_slack:
        return want * (1 - a.tol) <= got <= (want + a.early_slack) * (1 + a.tol)
    return within(got, want, a.tol)


def names_function(name, syms, a, kernel_names=True):
    """Whether the stack SYMS names what NAME blocked in, as far as it can:
    without user stacks its kernel function, unless KERNEL_NAMES are not
    known here (perf script of a guest's file: no guest kallsyms), where
    any kernel stack will do."""
    if a.no_user_stacks or (name == 'st-early' and a.early == 'kernel'):
        if not kernel_names:
            return len(syms) > 0
        return any(s.endswith('pipe_read') for s in syms)
    return FUNCS[name] in syms


def check_perf(path, blocked, a):
    text, _ = perf_script(path, a.symfs)
    samples = [s for s in parse(text) if s['event'] == 'offcpu-blocked']
    end = None
    for name, (tid, ts) in sorted(blocked.items(), key=lambda x: x[0] == 'st-early'):
        mine = [s for s in samples if s['tid'] == tid]
        if name == 'st-early' and a.early == 'none':
            if mine:
                sys.exit(f'perf script: {name} has a sample, though the kernel cannot see it')
            continue
        if len(mine) != 1:
            sys.exit(f'perf script: {len(mine)} offcpu-blocked samples of {name}/{tid}, '
                     f'want 1 ({len(samples)} in all)')
        s = mine[0]
        end = s['time']
        want = window(name, end, ts, a)
        got = s['period'] / 1e9
        print(f'perf script: {name} {got:.4f} s, want {want:.4f} s ({100 * (got / want - 1):+.2f} %)')
        if not within_window(name, got, want, a):
            sys.exit(f'perf script: {name} blocked {got:.3f} s, want {want:.3f} s '
                     f'(+-{a.tol:.0%})')
        syms = [f[0] for f in s['frames']]
        if not names_function(name, syms, a, kernel_names=not a.symfs):
            sys.exit(f'perf script: {name}: its stack does not name its function: {syms}')
    return end


ENTRY = re.compile(r'^\s+(?P<t>[\d.]+) (?P<unit>s|ms|us)\s+(?P<comm>\S+)/(?P<tid>\d+) \(process ')


def seconds(t, unit):
    return float(t) * {'s': 1, 'ms': 1e-3, 'us': 1e-6}[unit]


def report_section(a):
    if a.report_text:
        text = open(a.report_text).read()
    else:
        p = subprocess.run([a.offcpu, 'report', '-n', '0', '-i', a.data], capture_output=True,
                           text=True)
        if p.returncode:
            sys.exit(f'offcpu report failed ({p.returncode}): {p.stderr.strip()[:300]}')
        text = p.stdout
    lines = text.splitlines()
    head = [i for i, l in enumerate(lines) if l.startswith('# still blocked at the end: ')]
    if len(head) != 1:
        sys.exit('offcpu report: no "still blocked at the end" section')
    m = re.match(r'# still blocked at the end: (\d+) threads, ([\d.]+) (s|ms|us)$',
                 lines[head[0]])
    if not m:
        sys.exit(f'offcpu report: bad section head: {lines[head[0]]}')
    entries, cur = {}, None
    for line in lines[head[0] + 1:]:
        e = ENTRY.match(line)
        if e:
            cur = entries[int(e['tid'])] = dict(comm=e['comm'], secs=seconds(e['t'], e['unit']),
                                                frames=[])
        elif line.strip() and cur is not None and not line.startswith('#'):
            cur['frames'].append(line.strip())
    if int(m[1]) != len(entries):
        sys.exit(f'offcpu report: the section says {m[1]} threads and lists {len(entries)}')
    total = sum(e['secs'] for e in entries.values())
    if not within(seconds(m[2], m[3]), total, 0.001):
        sys.exit(f'offcpu report: the section says {m[2]} {m[3]}, its threads add up to {total:.3f} s')
    return entries


def check_report(blocked, end, a):
    entries = report_section(a)
    for name, (tid, ts) in blocked.items():
        e = entries.get(tid)
        if name == 'st-early' and a.early == 'none':
            if e:
                sys.exit(f'offcpu report: {name} listed, though the kernel cannot see it')
            continue
        if not e:
            sys.exit(f'offcpu report: {name}/{tid} not in the still-blocked section')
        want = window(name, end, ts, a)
        print(f'offcpu report: {name} {e["secs"]:.4f} s, want {want:.4f} s ({100 * (e["secs"] / want - 1):+.2f} %)')
        if not within_window(name, e['secs'], want, a):
            sys.exit(f'offcpu report: {name} blocked {e["secs"]:.3f} s, want {want:.3f} s')
        frames = [f.removesuffix(' [k]') for f in e['frames']]
        if not names_function(name, frames, a):
            sys.exit(f'offcpu report: {name}: its stack does not name its function: {frames}')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('data')
    ap.add_argument('stuck_out')
    ap.add_argument('--early-window', type=float)
    ap.add_argument('--offcpu', default='offcpu')
    # 10 %: the QEMU matrix's (qemu-tests/check.py); t_blocked gives the
    # host's, measured (HOST_TOL there).
    ap.add_argument('--tol', type=float, default=0.10)
    ap.add_argument('--early-slack', type=float, default=0)
    ap.add_argument('--symfs')
    ap.add_argument('--report-text')
    ap.add_argument('--early', choices=['none', 'kernel', 'full'], default='full')
    ap.add_argument('--no-user-stacks', action='store_true')
    a = ap.parse_args()
    blocked = blocked_at(a.stuck_out)
    end = check_perf(a.data, blocked, a)
    check_report(blocked, end, a)


if __name__ == '__main__':
    main()
