#!/usr/bin/env python3
"""Compares offcpu's CFI table of an ELF file (`test_cfi dump FILE`) with
binutils' own interpretation of the same CFI (`readelf
--debug-dump=frames-interp FILE`): at every row readelf prints, the CFA rule,
the return address rule and the frame pointer rule must agree.

  cfi_check.py DUMP READELF_OUTPUT ARCH [MIN_ROWS]   ARCH: x86_64, arm64, s390x, riscv64
Prints one summary line; exit 1 on any mismatch or when fewer than MIN_ROWS
(default 1000) rows were compared.
"""
import bisect
import re
import sys

# readelf's register column names: stack pointer, frame pointer, return address.
REGS = {
    "x86_64": ("rsp", "rbp", "ra"),
    "arm64": ("sp", "x29", "ra"),
    "s390x": ("r15", "r11", "ra"),
    "riscv64": ("sp", "s0", "ra"),
}


def load_dump(path):
    pcs, rows = [], []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            pc, kind, base, cfa, ra, ra_off, fp, fp_off = line.split()
            pcs.append(int(pc, 16))
            rows.append((kind, base, int(cfa), ra, int(ra_off), fp, int(fp_off)))
    return pcs, rows


def parse_readelf(path):
    """Yields (pc_lo, pc_hi, [(loc, {column: rule})]) per FDE; an FDE without
    a table of its own gets its CIE's initial row."""
    cies, cur, fdes = {}, None, []
    header = None
    entry = re.compile(r"^([0-9a-f]+) [0-9a-f]+ ([0-9a-f]+) (CIE|FDE)(?: cie=([0-9a-f]+) pc=([0-9a-f]+)\.\.([0-9a-f]+))?")
    with open(path) as f:
        for line in f:
            m = entry.match(line)
            if m:
                if m.group(3) == "CIE":
                    cur = {"rows": []}
                    cies[int(m.group(1), 16)] = cur
                else:
                    cur = {"rows": [], "cie": int(m.group(4), 16),
                           "lo": int(m.group(5), 16), "hi": int(m.group(6), 16)}
                    fdes.append(cur)
                header = None
                continue
            # "r3 (rbx)": a register rule names the register in two words.
            parts = re.sub(r"(\w+) \(\w+\)", r"\1", line).split()
            if not parts:
                header = None  # a blank line ends an entry's table
            if not parts or cur is None:
                continue
            if parts[0] == "LOC":
                header = parts[1:]
            elif header and re.fullmatch(r"[0-9a-f]{8,16}", parts[0]):
                cur["rows"].append((int(parts[0], 16), dict(zip(header, parts[1:]))))
    for fde in fdes:
        rows = fde["rows"]
        if not rows:
            cie = cies.get(fde["cie"], {"rows": []})["rows"]
            rows = [(fde["lo"], cie[0][1])] if cie else []
        yield fde["lo"], fde["hi"], rows


def expected_matches(cols, row, regs):
    sp, fp, ra = regs
    kind, base, cfa, ra_rule, ra_off, fp_rule, fp_off = row
    want_cfa = cols.get("CFA", "")
    if kind == "gap":
        return False
    if kind == "signal":
        # Signal trampolines: readelf shows their expressions; offcpu marks
        # the row as a signal frame and does not unwind through it.
        return want_cfa == "exp"
    m = re.fullmatch(r"(\w+)\+(-?\d+)", want_cfa)
    if not m or m.group(1) not in (sp, fp):
        # An expression, or a CFA based on another register (setcontext).
        return kind == "expr"
    if kind == "expr":
        # A simple CFA, but RA or FP given by an expression.
        return any(not re.fullmatch(r"u|s|c[+-]\d+", cols.get(r, "u")) for r in (ra, fp))
    if (m.group(1), int(m.group(2))) != ({"sp": sp, "fp": fp}[base], cfa):
        return False
    want_ra = cols.get(ra, "u")
    if want_ra == "u":
        # readelf prints "u" for both "still in the link register" and
        # "undefined" (outermost frame).
        if not (kind == "end" or ra_rule in ("same", "undef")):
            return False
    elif want_ra != "c%+d" % ra_off or ra_rule != "cfa" or kind != "normal":
        return False
    want_fp = cols.get(fp, "u")
    if want_fp in ("u", "s"):
        return fp_rule in ("same", "undef")
    return want_fp == "c%+d" % fp_off and fp_rule == "cfa"


def main():
    dump, readelf, arch = sys.argv[1:4]
    min_rows = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
    regs = REGS[arch]
    pcs, rows = load_dump(dump)
    checked = bad = fdes = gaps = 0
    entries = list(parse_readelf(readelf))
    starts = {lo for lo, _, _ in entries}
    for lo, hi, table in entries:
        fdes += 1
        for loc, cols in table:
            i = bisect.bisect_right(pcs, loc) - 1
            row = rows[i] if i >= 0 else ("gap", "-", 0, "same", 0, "same", 0)
            checked += 1
            if not expected_matches(cols, row, regs):
                bad += 1
                if bad <= 5:
                    print("mismatch at %x: readelf %s, offcpu %s" % (loc, cols, row))
        # Past the FDE's end: a gap unless another FDE starts there.
        if hi not in starts:
            i = bisect.bisect_right(pcs, hi) - 1
            gaps += 1
            if i < 0 or rows[i][0] != "gap":
                bad += 1
                if bad <= 5:
                    print("no gap after FDE %x..%x" % (lo, hi))
    print("%s: %d FDEs, %d rows and %d gaps compared, %d mismatches" % (arch, fdes, checked, gaps, bad))
    return 1 if bad or checked < min_rows else 0


if __name__ == "__main__":
    sys.exit(main())
