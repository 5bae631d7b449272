# SPDX-License-Identifier: GPL-2.0
# Sourced by the toolchain scripts (build.sh, symlibs.sh, protobuf.sh) after
# they set HERE, ROOT, TARGET and LOG_NAME: reading make fragments and the
# target's board file.  Each script's stamp digests this file too, so a
# change here rebuilds what it built.

# mk_var FILE NAME: NAME's value in a make fragment (NAME := value).
mk_var() { awk -v k="$2" '$1 == k { sub(/^[^=]*=[ \t]*/, ""); print; exit }' "$1"; }
board_var() { mk_var "$ROOT/board/$TARGET.mk" "$1"; }
log() { echo "$LOG_NAME[$TARGET]: $*" >&2; }

# A board target needs its board file; host needs none.
if [ "$TARGET" != host ] && [ ! -e "$ROOT/board/$TARGET.mk" ]; then
	log "no board/$TARGET.mk"
	exit 1
fi
