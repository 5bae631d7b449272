#!/usr/bin/env python3
"""Host-side checks of one matrix cell, beyond tests/perf_check.py.

  check.py stacks FILE [--symfs DIR]
      what the guest kernel could walk, as read by Debian's perf script:
      one line 'user=<share of samples with user frames> umax=<deepest user
      stack> kmax=<deepest kernel stack> samples=<n>'.
  check.py folded FOLDED WORKLOAD [--threads-only] [--tol T] [--block-us U]
      the on-device `offcpu report -T --folded` output against the
      workload's own measurements (its `thread` lines): the same checks as
      perf_check.py compare, per thread and function (--threads-only: per
      thread), and kernel frames resolved on the device.

Exit status 0 on success; on failure the last line says what differed.
"""
import argparse
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'tests'))
import perf_check  # noqa: E402


def cmd_stacks(a):
	out, _ = perf_check.perf_script(a.file, a.symfs)
	n = with_user = umax = kmax = 0
	for s in perf_check.parse(out):
		if s['event'] != 'offcpu-time':
			continue
		n += 1
		user = sum(1 for _, dso in s['frames'] if 'kernel' not in dso)
		kernel = len(s['frames']) - user
		with_user += user > 0
		umax = max(umax, user)
		kmax = max(kmax, kernel)
	if not n:
		sys.exit('no offcpu-time samples')
	print(f'user={100 * with_user // n}% umax={umax} kmax={kmax} samples={n}')


def cmd_folded(a):
	"""The same truth checks as perf_check.py compare, on `offcpu report -T
	--folded` output: per thread ('comm-pid/tid' roots) and function."""
	rec = defaultdict(lambda: dict(total=0, funcs=defaultdict(int), comms=set(), n=0))
	kernel_named = n = 0
	try:
		lines = open(a.folded).read().splitlines()
	except OSError as e:
		sys.exit(f'{a.folded}: {e.strerror}')
	for line in lines:
		stack, _, us = line.rpartition(' ')
		if not stack or not us.isdigit():
			continue
		frames = stack.split(';')
		comm, _, ids = frames[0].rpartition('-')
		if '/' not in ids:
			sys.exit(f'not a per-thread (-T) folded line: {line[:80]}')
		e = rec[int(ids.split('/')[1])]
		ns = int(us) * 1000
		n += 1
		e['n'] += 1
		e['total'] += ns
		e['comms'].add(comm)
		for f in set(frames[1:]):
			e['funcs'][f] += ns
		kernel_named += any(f.endswith('_[k]') and not f.startswith('[unknown]')
				    for f in frames[1:])
	if not n:
		sys.exit(f'no folded stacks in {a.folded} ({len(lines)} lines)')
	# Folded times are whole microseconds per stack: one more per stack.
	a.block_us += 1
	bad = perf_check.check_truth(a, rec, n)
	if not kernel_named:
		bad.append('no kernel frame resolved on the device')
	if bad:
		sys.exit('; '.join(bad))


def main():
	ap = argparse.ArgumentParser()
	sub = ap.add_subparsers(dest='cmd', required=True)
	s = sub.add_parser('stacks')
	s.add_argument('file')
	s.add_argument('--symfs')
	s.set_defaults(fn=cmd_stacks)
	f = sub.add_parser('folded')
	f.add_argument('folded')
	f.add_argument('workload')
	f.add_argument('--threads-only', action='store_true')
	f.add_argument('--pid', type=int)
	perf_check.add_tolerances(f)
	f.set_defaults(fn=cmd_folded)
	a = ap.parse_args()
	a.fn(a)


if __name__ == '__main__':
	main()
