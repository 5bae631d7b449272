#!/bin/bash
# fetch-kernel.sh BOARD SUITE: download (once) the Debian kernel a matrix cell
# boots; prints "VMLINUZ<tab>PACKAGE<tab>VERSION".  See fetch.sh.
set -euo pipefail
exec "$(dirname "$0")/fetch.sh" kernel "$@"
