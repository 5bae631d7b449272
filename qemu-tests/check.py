#!/usr/bin/env python3
"""Host-side checks of one matrix cell, beyond tests/perf_check.py.

  check.py stacks FILE [--symfs DIR]
      what the guest kernel could walk, as read by Debian's perf script:
      one line 'user=<share of samples with user frames> umax=<deepest user
      stack> kmax=<deepest kernel stack> samples=<n>'.
  check.py folded FOLDED WORKLOAD [--threads] [--tol 0.10]
      the on-device `offcpu report -T --folded` output against the
      workload's `path <function> <ns> <count>` lines: the time of the stacks
      holding <function> (--threads: of the thread that runs only that path)
      within TOL, and kernel frames resolved on the device.

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
	by_func = defaultdict(int)
	by_thread = defaultdict(int)
	kernel_named = 0
	for line in open(a.folded):
		stack, _, us = line.rstrip('\n').rpartition(' ')
		if not stack or not us.isdigit():
			continue
		frames = stack.split(';')
		ns = int(us) * 1000
		# -T names a thread 'comm-pid/tid'.
		by_thread[frames[0].rsplit('-', 1)[0]] += ns
		for f in set(frames[1:]):
			by_func[f] += ns
		kernel_named += any(f.endswith('_[k]') and not f.startswith('[unknown]')
				    for f in frames[1:])
	if not by_thread:
		sys.exit('no folded stacks')
	bad = []
	for line in open(a.workload):
		p = line.split()
		if len(p) != 4 or p[0] != 'path':
			continue
		fn, want = p[1], int(p[2])
		if a.threads:
			if fn not in perf_check.THREAD_OF:
				continue
			what = perf_check.THREAD_OF[fn]
			got = by_thread.get(what, 0)
		else:
			what, got = fn, by_func.get(fn, 0)
		ok = want > 0 and abs(got - want) <= a.tol * want
		print(f'{what}: workload {want / 1e6:.1f} ms, report {got / 1e6:.1f} ms'
		      f' ({"ok" if ok else "MISMATCH"})')
		if not ok:
			bad.append(f'{what} {got / 1e6:.1f} ms vs {want / 1e6:.1f} ms')
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
	f.add_argument('--threads', action='store_true')
	f.add_argument('--tol', type=float, default=0.10)
	f.set_defaults(fn=cmd_folded)
	a = ap.parse_args()
	a.fn(a)


if __name__ == '__main__':
	main()
