#!/usr/bin/env python3
"""kconfig_check.py FRAGMENT CONFIG: every option FRAGMENT sets has that value
in CONFIG (after olddefconfig), and every one it unsets is unset.  kconfig
drops an option whose dependencies are missing without a word; a kernel
built from such a config would be another kernel than the cell claims."""
import re
import sys


def options(path):
    out = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            m = re.match(r'^(CONFIG_\w+)=(.*)$', line)
            if m:
                out[m.group(1)] = m.group(2)
                continue
            m = re.match(r'^# (CONFIG_\w+) is not set$', line)
            if m:
                out[m.group(1)] = None
    return out


def main():
    want, have = options(sys.argv[1]), options(sys.argv[2])
    bad = [f'{k}: wanted {v or "unset"}, got {have.get(k) or "unset"}'
           for k, v in want.items() if have.get(k) != v]
    for b in bad:
        print(f'kconfig_check: {b} (not set in the built config)', file=sys.stderr)
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
