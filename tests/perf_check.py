#!/usr/bin/env python3
"""Read a perf.data with Debian's real `perf script` and check it.

  perf_check.py compare FILE WORKLOAD_OUT [--tol 0.10] [--pid PID] [--symfs DIR]
      every `path <function> <ns> <count>` line of the workload's output must
      match the off-CPU time perf attributes to <function> within TOL.
  perf_check.py summary FILE [--symfs DIR]      print what perf sees, as JSON
  perf_check.py report FILE                     perf report must run without warnings
  perf_check.py has FILE [--comm C] [--func F] [--min-ms X] [--max-ms Y]
      the offcpu-time samples of command C (all by default) whose callchain
      holds F: at least one, and their time within [X, Y] ms

Exit status 0 on success; on failure one line saying what differed.
"""
import argparse
import json
import re
import subprocess
import sys
from collections import defaultdict

HEAD = re.compile(r'^(?P<comm>.+?)\s+(?P<pid>-?\d+)/(?P<tid>-?\d+)\s+'
                  r'(?:\[(?P<cpu>\d+)\]\s+)?(?P<time>\d+\.\d+):\s+'
                  r'(?P<period>\d+)\s+(?P<event>\S+?):')
FRAME = re.compile(r'^\s+(?P<ip>[0-9a-f]+)\s+(?P<sym>\S+)(?:\s+\((?P<dso>.*)\))?')


def perf_script(path, symfs=None, extra=()):
    cmd = ['perf', 'script', '-i', path, '-F',
           'comm,pid,tid,cpu,time,period,event,ip,sym,dso', '--ns']
    if symfs:
        cmd += ['--symfs', symfs]
    cmd += list(extra)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        sys.exit(f'perf script failed ({p.returncode}): {p.stderr.strip()[:300]}')
    return p.stdout, p.stderr


def parse(text):
    """Yields dicts: comm, pid, tid, period, event, frames [(sym, dso)]."""
    cur = None
    for line in text.splitlines():
        if not line.strip():
            if cur:
                yield cur
            cur = None
            continue
        m = HEAD.match(line)
        if m and not line[0].isspace():
            if cur:
                yield cur
            cur = dict(comm=m['comm'].strip(), pid=int(m['pid']), tid=int(m['tid']),
                       period=int(m['period']), event=m['event'],
                       time=float(m['time']), frames=[])
            continue
        f = FRAME.match(line)
        if f and cur is not None:
            sym = re.sub(r'\+0x[0-9a-f]+$', '', f['sym'])
            cur['frames'].append((sym, f['dso'] or ''))
    if cur:
        yield cur


def summarize(samples, pid=None):
    s = dict(samples=0, total=0, by_func=defaultdict(int), by_comm=defaultdict(int),
             by_pid=defaultdict(int), unknown_comm=0, events=defaultdict(int), kernel_funcs=set())
    for x in samples:
        if pid is not None and x['pid'] != pid:
            continue
        s['samples'] += 1
        s['events'][x['event']] += 1
        if x['event'] != 'offcpu-time':
            continue
        s['total'] += x['period']
        s['by_comm'][x['comm']] += x['period']
        s['by_pid'][x['pid']] += x['period']
        if x['comm'].startswith(':') or x['comm'] == '[unknown]':
            s['unknown_comm'] += 1
        for sym in {f[0] for f in x['frames']}:
            s['by_func'][sym] += x['period']
        for sym, dso in x['frames']:
            if 'kernel' in dso:
                s['kernel_funcs'].add(sym)
    return s


def cmd_compare(a):
    out, err = perf_script(a.file, a.symfs)
    s = summarize(parse(out), a.pid)
    if s['unknown_comm']:
        sys.exit(f"{s['unknown_comm']} samples without a command name")
    bad = []
    n = 0
    for line in open(a.workload):
        p = line.split()
        if len(p) != 4 or p[0] != 'path':
            continue
        n += 1
        fn, want = p[1], int(p[2])
        got = s['by_func'].get(fn, 0)
        ok = want > 0 and abs(got - want) <= a.tol * want
        print(f'{fn}: workload {want / 1e6:.1f} ms, perf {got / 1e6:.1f} ms'
              f' ({"ok" if ok else "MISMATCH"})')
        if not ok:
            bad.append(f'{fn} {got / 1e6:.1f} ms vs {want / 1e6:.1f} ms')
    if not n:
        sys.exit('no path lines in the workload output')
    for k in a.kernel_func or []:
        if k not in s['kernel_funcs']:
            bad.append(f'kernel function {k} not in any callchain')
    if bad:
        sys.exit('; '.join(bad))


# Threads of the blocker workload that do nothing but one kind of blocking.
THREAD_OF = {'blocker_nanosleep': 'bl-sleep', 'blocker_pipe_read': 'bl-piperd',
             'blocker_long_sleep': 'bl-long'}


def cmd_threads(a):
    """Where the kernel cannot walk user stacks: per-thread totals."""
    out, err = perf_script(a.file, a.symfs)
    s = summarize(parse(out), a.pid)
    bad = []
    for line in open(a.workload):
        p = line.split()
        if len(p) != 4 or p[0] != 'path' or p[1] not in THREAD_OF:
            continue
        comm, want = THREAD_OF[p[1]], int(p[2])
        got = s['by_comm'].get(comm, 0)
        ok = want > 0 and abs(got - want) <= a.tol * want
        print(f'{comm} ({p[1]}): workload {want / 1e6:.1f} ms, perf {got / 1e6:.1f} ms'
              f' ({"ok" if ok else "MISMATCH"})')
        if not ok:
            bad.append(f'{comm} {got / 1e6:.1f} ms vs {want / 1e6:.1f} ms')
    if bad:
        sys.exit('; '.join(bad))


def cmd_summary(a):
    out, err = perf_script(a.file, a.symfs)
    s = summarize(parse(out), a.pid)
    s['top_funcs'] = sorted(s['by_func'].items(), key=lambda kv: -kv[1])
    s['kernel_funcs'] = sorted(s['kernel_funcs'])[:30]
    print(json.dumps(s, indent=1, default=dict))


def cmd_report(a):
    p = subprocess.run(['perf', 'report', '-i', a.file, '--stdio'],
                       capture_output=True, text=True)
    if p.returncode:
        sys.exit(f'perf report failed ({p.returncode}): {p.stderr.strip()[:300]}')
    warn = [l for l in p.stderr.splitlines() if l.strip()]
    if warn:
        sys.exit('perf report printed: ' + ' | '.join(warn[:3]))
    if 'offcpu-time' not in p.stdout:
        sys.exit('perf report does not show the offcpu-time event')


def cmd_has(a):
    out, err = perf_script(a.file, a.symfs)
    n = total = 0
    for x in parse(out):
        if x['event'] != 'offcpu-time' or (a.comm and x['comm'] != a.comm):
            continue
        if a.func and a.func not in {f[0] for f in x['frames']}:
            continue
        n += 1
        total += x['period']
    what = f"{a.comm or 'any command'}{' in ' + a.func if a.func else ''}"
    ms = total / 1e6
    print(f'{what}: {n} samples, {ms:.1f} ms')
    if not n:
        sys.exit(f'no offcpu-time samples of {what}')
    if a.min_ms is not None and ms < a.min_ms or a.max_ms is not None and ms > a.max_ms:
        sys.exit(f'{what}: {ms:.1f} ms, not within [{a.min_ms}, {a.max_ms}] ms')


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest='cmd', required=True)
    c = sub.add_parser('compare')
    c.add_argument('file')
    c.add_argument('workload')
    c.add_argument('--tol', type=float, default=0.10)
    c.add_argument('--pid', type=int)
    c.add_argument('--symfs')
    c.add_argument('--kernel-func', action='append')
    c.set_defaults(fn=cmd_compare)
    t = sub.add_parser('threads')
    t.add_argument('file')
    t.add_argument('workload')
    t.add_argument('--tol', type=float, default=0.10)
    t.add_argument('--pid', type=int)
    t.add_argument('--symfs')
    t.set_defaults(fn=cmd_threads)
    s = sub.add_parser('summary')
    s.add_argument('file')
    s.add_argument('--pid', type=int)
    s.add_argument('--symfs')
    s.set_defaults(fn=cmd_summary)
    r = sub.add_parser('report')
    r.add_argument('file')
    r.set_defaults(fn=cmd_report)
    h = sub.add_parser('has')
    h.add_argument('file')
    h.add_argument('--comm')
    h.add_argument('--func')
    h.add_argument('--min-ms', type=float)
    h.add_argument('--max-ms', type=float)
    h.add_argument('--symfs')
    h.set_defaults(fn=cmd_has)
    a = ap.parse_args()
    a.fn(a)


if __name__ == '__main__':
    main()
