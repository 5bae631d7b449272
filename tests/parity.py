#!/usr/bin/env python3
"""Every user frame that Debian's `perf script` names must appear, with the
same name, in `offcpu report --folded --per-thread` of the same perf.data.

  parity.py OFFCPU FILE [--symfs DIR] [--expect COMM:FUNC ...]
            [--except COMM:REASON ...] [--except-frame REGEX:REASON ...]

For each offcpu-time sample perf prints, its user frames (root first) must
equal the user frames of one of offcpu's folded stacks of the same thread,
frame by frame, where perf's `[unknown]` matches anything (offcpu may name
more than perf: MiniDebugInfo, which perf 6.1 does not read).  Folded stacks
write ' ' and ';' inside a name as ':' (the format's separators), so perf's
names are compared after the same mapping.  --except names the commands,
--except-frame the frames (perf's name, a regular expression) whose
differences are explained (the test says why); anything else is printed and
fails.  Prints one summary line.
"""
import argparse
import re
import subprocess
import sys
from collections import defaultdict

HEAD = re.compile(r'^(?P<comm>\S.*?)\s+(?P<tid>-?\d+)\s+(?P<event>\S+?):\s*$')
# The dso may hold parentheses: "(/memfd:x (deleted))".
FRAME = re.compile(r'^\s+(?P<ip>[0-9a-f]+)\s+(?P<sym>.*?)\s+\((?P<dso>.*)\)$')
TID = re.compile(r'-(\d+)/(\d+)$')

def folded_name(s):
    return re.sub(r'[; ]', ':', s)


def perf_samples(path, symfs):
    cmd = ['perf', 'script', '-i', path, '-F', 'comm,tid,event,ip,sym,dso']
    if symfs:
        cmd += ['--symfs', symfs]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        sys.exit(f'perf script failed: {p.stderr.strip()[:300]}')
    cur = None
    for line in p.stdout.splitlines() + ['']:
        m = HEAD.match(line)
        if m and not line[0].isspace():
            cur = dict(tid=int(m['tid']), event=m['event'], frames=[], comm=m['comm'])
            continue
        f = FRAME.match(line)
        if f and cur is not None:
            cur['frames'].append((f['sym'], f['dso']))
        elif not line.strip() and cur is not None:
            if cur['event'] == 'offcpu-time':
                yield cur
            cur = None


def offcpu_stacks(offcpu, path, symfs):
    cmd = [offcpu, 'report', '-i', path, '--folded', '--per-thread']
    if symfs:
        cmd += ['--symfs', symfs]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        sys.exit(f'offcpu report failed: {p.stderr.strip()[:300]}')
    stacks = defaultdict(set)
    for line in p.stdout.splitlines():
        key = line.rsplit(' ', 1)[0].split(';')
        m = TID.search(key[0])
        if not m:
            sys.exit(f'no pid/tid in folded line: {line[:200]}')
        user = tuple(f for f in key[1:] if not f.endswith('_[k]') and f != '[no stack]')
        stacks[int(m[2])].add(user)
    return stacks


def matches(perf, ours, wild):
    return len(perf) == len(ours) and all(p == '[unknown]' or p == o or wild(p)
                                          for p, o in zip(perf, ours))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('offcpu')
    ap.add_argument('file')
    ap.add_argument('--symfs')
    ap.add_argument('--expect', action='append', default=[],
                    help='COMM:FUNC that perf must name (the test must see it)')
    ap.add_argument('--except', dest='excepted', action='append', default=[],
                    help='COMM:REASON, a command whose differences are explained')
    ap.add_argument('--except-frame', dest='frames', action='append', default=[],
                    help='REGEX:REASON, frames perf names that offcpu may not')
    a = ap.parse_args()
    stacks = offcpu_stacks(a.offcpu, a.file, a.symfs)
    named = defaultdict(set)
    checked = frames = 0
    bad = []
    excepted = {e.split(':', 1)[0]: e.split(':', 1)[1] for e in a.excepted}
    seen = defaultdict(int)
    frame_res = [re.compile(f.split(':', 1)[0]) for f in a.frames]
    frames_key = 'frames ' + ', '.join(f.split(':', 1)[0] for f in a.frames)
    excepted[frames_key] = '; '.join(f.split(':', 1)[1] for f in a.frames)

    def wild(name):
        return any(r.search(name) for r in frame_res)
    for s in perf_samples(a.file, a.symfs):
        user = [folded_name(sym) for sym, dso in reversed(s['frames'])
                if not dso.startswith('[kernel')]
        for f in user:
            named[s['comm']].add(f)
        checked += 1
        frames += sum(f != '[unknown]' for f in user)
        ours = stacks.get(s['tid'], ())
        if any(matches(user, o, lambda p: False) for o in ours):
            continue
        if any(matches(user, o, wild) for o in ours):
            seen[frames_key] += 1
            continue
        if s['comm'] in excepted:
            seen[s['comm']] += 1
            continue
        closest = sorted(stacks.get(s['tid'], ()), key=lambda o: -sum(
            x == y for x, y in zip(user, o)))[:1]
        bad.append(f"{s['comm']}/{s['tid']}: perf {';'.join(user)} | offcpu "
                   f"{';'.join(closest[0]) if closest else '(no stack of this thread)'}")
    missing = [e for e in a.expect if e.split(':', 1)[1] not in named.get(e.split(':', 1)[0], ())]
    for b in sorted(set(bad))[:20]:
        print('differs:', b)
    for e in missing:
        print('perf does not name', e)
    for c, n in seen.items():
        print(f'excepted: {n} differing samples of {c}: {excepted[c]}')
    print(f'{checked} samples, {frames} named user frames, {len(set(bad))} differing stacks, '
          f'{len(missing)} expected frames missing, {sum(seen.values())} explained')
    sys.exit(1 if bad or missing or not checked else 0)


if __name__ == '__main__':
    main()
