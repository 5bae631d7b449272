#!/usr/bin/env python3
"""Compares offcpu's EHABI rows (test_ehabi dump FILE) with binutils'
decoding of the same tables (readelf -u FILE), interpreted here on their
own: each entry's instructions, as readelf prints them, run on a virtual
sp to the row the unwinder must get.  Every entry readelf lists must have
its row, equal; the dump may add one gap row past the last entry (the end
of the executable segment).

    ehabi_check.py DUMP READELF MIN_ENTRIES
"""
import re
import sys

ENTRY = re.compile(r'^0x([0-9a-f]+)(?: <[^>]*>)?: (.*)$')
OP = re.compile(r'^\s+((?:0x[0-9a-f]{2} ?)+)\s+(.*)$')


def row_of(ops):
    """The row of one entry's instructions [(first byte, text)]."""
    base, off, saved, bad = 'sp', 0, {}, False
    for byte, text in ops:
        m = re.match(r'vsp = vsp ([+-]) (\d+)$', text)
        if text == 'finish':
            break
        if text == 'refuse to unwind':
            return 'gap'
        if m:
            off += int(m.group(2)) * (1 if m.group(1) == '+' else -1)
        elif re.match(r'vsp = r(\d+)$', text):
            if text != 'vsp = r7' or saved:
                bad = True
            base, off = 'r7', 0
        elif re.match(r'pop \{[rD]', text):
            for item in text[5:-1].split(', '):
                d = re.match(r'D(\d+)(?:-D(\d+))?$', item)
                if d:
                    last = int(d.group(2) or d.group(1))
                    off += 8 * (last - int(d.group(1)) + 1)
                    # FSTMFDX (0xb3, 0xb8-0xbf) stores one more word.
                    off += 4 if byte == 0xb3 or 0xb8 <= byte <= 0xbf else 0
                    continue
                reg = int(item[1:])
                bad |= reg == 13
                saved.setdefault(reg, off)
                off += 4
        else:
            bad = True
    if bad:
        return 'expr'
    ra = 15 if 15 in saved else 14

    def rule(reg):
        return 'cfa%+d' % (saved[reg] - off) if reg in saved else 'same+0'
    return 'normal %s%+d ra=%s fp=%s' % (base, off, rule(ra), rule(7))


def readelf_rows(path):
    """Rows by pc; entries of a personality readelf cannot name (a stripped
    file's __gcc_personality_v0) have no instructions printed: left out."""
    rows, cur, generic = {}, None, set()
    for line in open(path):
        if 'Personality routine' in line and cur is not None and not cur:
            generic.add(pc)
        m = ENTRY.match(line)
        if m:
            cur = None
            pc, what = int(m.group(1), 16), m.group(2)
            if '[cantunwind]' in what:
                rows[pc] = 'gap'
            else:
                cur = rows[pc] = []
            continue
        o = OP.match(line)
        if o and cur is not None:
            cur.append((int(o.group(1).split()[0], 16), o.group(2).strip()))
    return {pc: (r if isinstance(r, str) else row_of(r)) for pc, r in rows.items()
            if pc not in generic}, generic


def main():
    dump, readelf, minimum = sys.argv[1], sys.argv[2], int(sys.argv[3])
    ours = {}
    for line in open(dump):
        pc, rest = line.rstrip('\n').split(' ', 1)
        ours[int(pc, 16)] = rest
    theirs, generic = readelf_rows(readelf)
    bad = [(pc, want, ours.get(pc)) for pc, want in sorted(theirs.items())
           if ours.get(pc) != want]
    extra = [pc for pc in ours if pc not in theirs and pc not in generic]
    for pc, want, got in bad[:5]:
        print('%x: readelf says %s, offcpu %s' % (pc, want, got))
    kinds = {}
    for r in theirs.values():
        kinds[r.split()[0]] = kinds.get(r.split()[0], 0) + 1
    print('%d entries (%s), %d differ, %d rows readelf lacks, %d it does not decode' % (
        len(theirs), ', '.join('%d %s' % (n, k) for k, n in sorted(kinds.items())),
        len(bad), len(extra), len(generic)))
    ok = not bad and len(theirs) >= minimum and len(extra) <= 1 and \
        all(ours[pc] == 'gap' and pc > max(theirs) for pc in extra)
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
