#!/bin/bash
# Builds the host replay of the eBPF ports (see replay.c):
#
#   build.sh                     target/bpf/host/replay-NAME for every crates/emu/bpf/NAME.bpf.c
#   build.sh SRC.bpf.c OUT       one replay binary OUT from SRC (e.g. a modified port, in a test)
#   build.sh --harness SRC.c OUT a test harness OUT that #includes a port (olia_increment.c),
#                                linked with the kfuncs and the environment but not the replay
#
# Each port is compiled by the host's clang (x86_64, -O2) against target/bpf/vmlinux.h, with the
# fake bpf/*.h of crates/emu/bpf/host/include first on the include path, and linked with the
# kfuncs (kfuncs.c, cubic.c), the environment (env.c) and the driver (replay.c). Called by
# `make build-bpf-replay`; needs clang and target/bpf/vmlinux.h (`make build-bpf`).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../../../.." && pwd)
B=$ROOT/crates/emu/bpf
H=$B/host
O=$ROOT/target/bpf/host
if ! command -v clang >/dev/null || [ ! -f "$ROOT/target/bpf/vmlinux.h" ]; then
	echo "rove: no clang or target/bpf/vmlinux.h: the eBPF ports' host replay is not built"
	exit 0
fi
mkdir -p "$O"
# vmlinux.h's preserve_access_index is a BPF-only attribute (CO-RE): off on the host.
KCFLAGS="-O2 -Wall -Werror -DBPF_NO_PRESERVE_ACCESS_INDEX -I$H/include -I$ROOT/target/bpf -I$B -I$H"
common() {
	clang $KCFLAGS -c "$H/kfuncs.c" -o "$O/kfuncs.o"
	clang $KCFLAGS -c "$H/cubic.c" -o "$O/cubic.o"
	clang -O2 -Wall -Werror -c "$H/env.c" -o "$O/env.o"
	clang -O2 -Wall -Werror -c "$H/replay.c" -o "$O/replay.o"
}
# link SRC OUT: the port SRC (NAME.bpf.c, struct_ops map rove_NAME) as the replay binary OUT.
link() {
	local src=$1 out=$2 name tmp
	name=$(basename "$src" .bpf.c)
	tmp=$(mktemp -d)
	clang $KCFLAGS -I"$(dirname "$src")" -c "$src" -o "$tmp/port.o"
	clang $KCFLAGS -DROVE_OPS="rove_$name" -c "$H/sock.c" -o "$tmp/sock.o"
	clang "$tmp/port.o" "$tmp/sock.o" "$O/kfuncs.o" "$O/cubic.o" "$O/env.o" "$O/replay.o" \
		-o "$out.tmp"
	mv "$out.tmp" "$out"
	rm -rf "$tmp"
}
common
if [ $# -eq 3 ] && [ "$1" = --harness ]; then
	clang $KCFLAGS "$2" "$O/kfuncs.o" "$O/cubic.o" "$O/env.o" -o "$3.tmp"
	mv "$3.tmp" "$3"
	exit 0
fi
if [ $# -eq 2 ]; then
	link "$1" "$2"
	exit 0
fi
for src in "$B"/*.bpf.c; do
	link "$src" "$O/replay-$(basename "$src" .bpf.c)"
done
