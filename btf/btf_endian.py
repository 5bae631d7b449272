#!/usr/bin/env python3
"""Rewrite a raw BTF file in a given byte order.

  btf_endian.py IN OUT big|little
  btf_endian.py IN               prints the byte order of IN (big/little)

bpftool gen min_core_btf writes BTF in the host's order; a kernel's own BTF
is in the target's order, and ours follows it (libbpf reads either).
Every field of the type section is a 32-bit word (struct btf_type and all the
records that follow it: members, params, enums, arrays, secinfo), so
converting is: swap the header fields and every word of the type section;
the string section is bytes.  This is what libbpf's btf_bswap_* do.
"""
import struct
import sys

MAGIC = 0xEB9F
HDR = '{}HBBIIIII'  # magic version flags hdr_len type_off type_len str_off str_len


def order_of(data):
    if data[:2] == b'\x9f\xeb':
        return '<'
    if data[:2] == b'\xeb\x9f':
        return '>'
    sys.exit('btf_endian.py: not a raw BTF file')


def convert(data, want):
    src = order_of(data)
    size = struct.calcsize(HDR.format(src))
    if len(data) < size:
        sys.exit('btf_endian.py: truncated header')
    magic, ver, flags, hdr_len, t_off, t_len, s_off, s_len = struct.unpack_from(HDR.format(src), data)
    # A longer header has fields this script does not know how to swap.
    if hdr_len != size or t_len % 4 or hdr_len + max(t_off + t_len, s_off + s_len) > len(data):
        sys.exit('btf_endian.py: unsupported or corrupt BTF header')
    out = bytearray(data)
    struct.pack_into(HDR.format(want), out, 0, magic, ver, flags, hdr_len, t_off, t_len, s_off, s_len)
    start = hdr_len + t_off
    n = t_len // 4
    words = struct.unpack_from(f'{src}{n}I', data, start)
    struct.pack_into(f'{want}{n}I', out, start, *words)
    return bytes(out)


def main():
    if len(sys.argv) == 2:
        print('big' if order_of(open(sys.argv[1], 'rb').read()) == '>' else 'little')
        return
    if len(sys.argv) != 4 or sys.argv[3] not in ('big', 'little'):
        sys.exit(__doc__)
    data = open(sys.argv[1], 'rb').read()
    out = convert(data, '>' if sys.argv[3] == 'big' else '<')
    with open(sys.argv[2], 'wb') as f:
        f.write(out)


if __name__ == '__main__':
    main()
