# Sourced by tests/lib.sh and the qemu-tests/ scripts: one variable and one
# function, no files, traps or output, so any script may source it.
BOARD_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# board_var BOARD VAR: VAR of board/BOARD.mk as the Makefile sees it
# (make print-VAR), so a script's board facts cannot drift from the build's.
board_var() { make -s --no-print-directory -C "$BOARD_ROOT" TARGET="$1" "print-$2"; }
