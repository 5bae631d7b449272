#!/usr/bin/env python3
"""The kernel's own BTF (.BTF, what /sys/kernel/btf/vmlinux serves) from a
booting kernel image: vmlinuz/bzImage, Image.gz, an EFI zboot image, or an
s390x image.  The image holds the kernel compressed (gzip, xz, zstd, lz4 or
bzip2) somewhere after its boot code; each candidate stream is decompressed
and searched for a BTF header whose string section ends in a NUL and whose
types start with the kernel's first ones.  No -dbg package needed.

    image_btf.py IMAGE OUT     writes the raw BTF; prints its byte order and
                               the release of the image's Linux version banner
Exit 1 with one line when the image holds no BTF (a kernel without
CONFIG_DEBUG_INFO_BTF).
"""
import bz2
import lzma
import re
import shutil
import struct
import subprocess
import sys
import zlib

MAGICS = [
    (b"\x1f\x8b\x08", "gzip"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"\x02\x21\x4c\x18", "lz4"),
    (b"BZh", "bzip2"),
]
LIMIT = 1 << 30  # a decompressed kernel is well under 1 GiB


def decompress(data, kind):
    """The stream at the start of DATA, decompressed as far as it goes."""
    try:
        if kind == "gzip":
            return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, LIMIT)
        if kind == "xz":
            return lzma.LZMADecompressor().decompress(data, LIMIT)
        if kind == "bzip2":
            return bz2.BZ2Decompressor().decompress(data)
    except (zlib.error, lzma.LZMAError, OSError, EOFError):
        return b""
    tool = {"zstd": ["zstd", "-dcq"], "lz4": ["lz4", "-dcq"]}[kind]
    if not shutil.which(tool[0]):
        return b""
    # A truncated or trailing-garbage stream still yields what precedes it.
    r = subprocess.run(tool, input=data, capture_output=True)
    return r.stdout


def btf_at(blob, off):
    """The BTF whose header is at OFF, or None."""
    for order in ("<", ">"):
        if len(blob) < off + 24:
            return None
        magic, ver, flags, hdr_len = struct.unpack_from(order + "HBBI", blob, off)
        if magic != 0xEB9F or ver != 1 or flags != 0 or hdr_len != 24:
            continue
        type_off, type_len, str_off, str_len = struct.unpack_from(order + "4I", blob, off + 8)
        if type_off != 0 or str_off != type_len or type_len < 1 << 16 or str_len < 1 << 16:
            continue
        end = off + hdr_len + str_off + str_len
        # The string section starts and ends with a NUL.
        if end > len(blob) or blob[off + hdr_len + str_off] != 0 or blob[end - 1] != 0:
            continue
        return blob[off:end], "little" if order == "<" else "big"
    return None


def release_of(blob):
    m = re.search(rb"Linux version ([0-9][^ \x00]*) \(", blob)
    return m.group(1).decode() if m else "unknown"


def find_btf(blob):
    for pattern in (b"\x9f\xeb\x01\x00\x18\x00\x00\x00", b"\xeb\x9f\x01\x00\x00\x00\x00\x18"):
        off = blob.find(pattern)
        while off >= 0:
            found = btf_at(blob, off)
            if found:
                return found
            off = blob.find(pattern, off + 1)
    return None


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    image = open(sys.argv[1], "rb").read()
    found = find_btf(image)  # an uncompressed vmlinux
    kernel = image
    tried = 0
    for magic, kind in MAGICS:
        off = image.find(magic)
        while not found and off >= 0 and tried < 64:
            tried += 1
            out = decompress(image[off:], kind)
            if len(out) > 1 << 20:
                found = find_btf(out)
                kernel = out
            off = image.find(magic, off + 1)
        if found:
            break
    if not found:
        sys.exit("image_btf.py: no BTF in %s (kernel without CONFIG_DEBUG_INFO_BTF?)" % sys.argv[1])
    btf, order = found
    with open(sys.argv[2], "wb") as f:
        f.write(btf)
    print(order, release_of(kernel))


if __name__ == "__main__":
    main()
