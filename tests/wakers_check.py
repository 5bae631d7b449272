#!/usr/bin/env python3
"""Who woke the blocker's threads (offcpu --wakers), from
`offcpu report --wakers --folded -T`: 'thread-pid/tid;sleeper root;...;leaf;--;
waker leaf;...;waker root;waker name MICROSECONDS'.

For each (thread, blocking function of its own, expected waker), at least
MIN_SHARE of that function's off-CPU time must be attributed to a waker named
so whose frames hold the expected function (with --no-user, for kernels that
walk no user stacks, the name alone; with --irq-for-timer, for kernels whose
BPF kernel stacks end in the program (armhf), where only preempt_count tells
an interrupt, '[irq]' counts for '[timer]' too).  --expect
THREAD:FUNCTION:KERNEL_FUNCTION:WAKER:FRAME (repeated) replaces the blocker's
list (FRAME empty: the name alone).  --unseen-ok (the perf backend): time
whose waking the kernel never emitted ('[no-wakeup-seen]', counted by the
recording) is left out and shown, not judged; some time must be left to
judge.  Exit 1 with the shares otherwise."""
import sys

MIN_SHARE = 0.90
# thread, its blocking function, the kernel function it blocks in (a part of
# its name, for --no-user), waker name, a frame the waker's stack must hold
EXPECT = [
    ("bl-piperd", "blocker_pipe_read", "pipe_read", "bl-pipewr", "blocker_pipe_write"),
    ("bl-mutexw", "blocker_mutex_wait", "futex_wait", "bl-mutexh", "unlock_mutex"),
    ("bl-sleep", "blocker_nanosleep", "nanosleep", "[timer]", None),
]


def blocked_in(sleeper, fn, kfn, no_user):
    if no_user:
        return any(kfn in f for f in sleeper if f.endswith("_[k]"))
    return fn in sleeper


def parse(path):
    rows = []
    with open(path) as f:
        for line in f:
            stack, _, val = line.rstrip("\n").rpartition(" ")
            frames = stack.split(";")
            if "--" not in frames:
                sys.exit(f"wakers_check: no '--' separator in: {line[:200]}")
            i = frames.index("--")
            rows.append((frames[0].rsplit("-", 1)[0], frames[1:i], frames[i + 1:], int(val)))
    return rows


def expectations(argv):
    """The --expect rows of ARGV (and ARGV without them), else EXPECT."""
    rest, rows = [], []
    it = iter(argv)
    for x in it:
        if x != "--expect":
            rest.append(x)
            continue
        f = next(it, "").split(":")
        if len(f) != 5 or not all(f[:4]):
            sys.exit("wakers_check: --expect THREAD:FUNCTION:KERNEL_FUNCTION:WAKER:FRAME")
        rows.append((f[0], f[1], f[2], f[3], f[4] or None))
    return rest, rows or EXPECT


def main():
    opts = {"--no-user", "--irq-for-timer", "--unseen-ok"}
    argv, expect = expectations(sys.argv[1:])
    args = [x for x in argv if x not in opts]
    no_user = "--no-user" in argv
    irq_for_timer = "--irq-for-timer" in argv
    unseen_ok = "--unseen-ok" in argv
    if len(args) != 1:
        sys.exit("usage: wakers_check.py FOLDED [--no-user] [--irq-for-timer] [--unseen-ok] [--expect ...]")
    rows = parse(args[0])
    bad = []
    for thread, fn, kfn, waker, frame in expect:
        total = good = 0
        who = {}
        for t, sleeper, w, us in rows:
            if t != thread or not blocked_in(sleeper, fn, kfn, no_user):
                continue
            who[w[-1]] = who.get(w[-1], 0) + us
            if unseen_ok and w[-1] == "[no-wakeup-seen]":
                continue
            total += us
            named = w[-1] == waker or (irq_for_timer and waker == "[timer]" and w[-1] == "[irq]")
            if named and (frame is None or no_user or frame in w[:-1]):
                good += us
        share = good / total if total else 0
        line = f"{thread} {fn}: {share:.1%} of {total} us by {waker}" + \
            (f" through {frame}" if frame else "") + f" (wakers: {who})"
        print(line)
        if unseen_ok and who.get("[no-wakeup-seen]"):
            line += f", {who['[no-wakeup-seen]']} us with no waking seen left out"
        if share < MIN_SHARE:
            bad.append(line)
    if bad:
        print("wakers_check: below %d %%: %s" % (MIN_SHARE * 100, "; ".join(bad)))
        sys.exit(1)


main()
