#!/usr/bin/env python3
"""Pack minimal BTF files into the archive embedded in offcpu.

  archive.py OUT UNAME_M [FILE:RELEASE ...]

Format (all integers little-endian, whatever the target; see btf/README.md):
  header   8 bytes magic "OCBTFAR1", u32 version (1), u32 count
  entries  count x { char arch[16]; char release[64]; u32 raw_size;
                     u32 comp_size; u64 offset }      (offset from file start)
  blobs    zlib streams (RFC 1950), one per entry
"""
import struct
import sys
import zlib

MAGIC = b'OCBTFAR1'
ENTRY = struct.Struct('<16s64sIIQ')


def main():
    out, arch, specs = sys.argv[1], sys.argv[2], sys.argv[3:]
    entries, blobs = [], []
    off = 16 + ENTRY.size * len(specs)
    for spec in specs:
        path, release = spec.rsplit(':', 1)
        raw = open(path, 'rb').read()
        if raw[:2] not in (b'\x9f\xeb', b'\xeb\x9f'):
            sys.exit(f'archive.py: {path}: not a raw BTF file')
        if len(arch) >= 16 or len(release) >= 64:
            sys.exit(f'archive.py: {release}: name too long')
        comp = zlib.compress(raw, 9)
        entries.append(ENTRY.pack(arch.encode(), release.encode(), len(raw), len(comp), off))
        blobs.append(comp)
        off += len(comp)
    with open(out, 'wb') as f:
        f.write(MAGIC + struct.pack('<II', 1, len(specs)))
        for e in entries:
            f.write(e)
        for b in blobs:
            f.write(b)


if __name__ == '__main__':
    main()
