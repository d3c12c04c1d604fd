#!/bin/bash
# Builds the host replay of every eBPF port: target/bpf/host/replay-NAME for each
# crates/emu/bpf/NAME.bpf.c, compiled by the host's clang (x86_64, -O2) against
# target/bpf/vmlinux.h with the fake bpf/*.h of crates/emu/bpf/host/include first on the include
# path (see replay.c). Called by `make build-bpf-replay`; needs clang and target/bpf/vmlinux.h.
set -euo pipefail
cd "$(dirname "$0")/../../../.."
B=crates/emu/bpf
H=$B/host
O=target/bpf/host
if ! command -v clang >/dev/null || [ ! -f target/bpf/vmlinux.h ]; then
	echo "rove: no clang or target/bpf/vmlinux.h: the eBPF ports' host replay is not built"
	exit 0
fi
mkdir -p $O
# vmlinux.h's preserve_access_index is a BPF-only attribute (CO-RE): off on the host.
KCFLAGS="-O2 -Wall -Werror -DBPF_NO_PRESERVE_ACCESS_INDEX -I$H/include -Itarget/bpf -I$B -I$H"
clang $KCFLAGS -c $H/kfuncs.c -o $O/kfuncs.o
clang $KCFLAGS -c $H/cubic.c -o $O/cubic.o
clang -O2 -Wall -Werror -c $H/env.c -o $O/env.o
clang -O2 -Wall -Werror -c $H/replay.c -o $O/replay.o
for src in $B/*.bpf.c; do
	name=$(basename "$src" .bpf.c)
	clang $KCFLAGS -c "$src" -o $O/$name.o
	clang $KCFLAGS -DROVE_OPS=rove_$name -c $H/sock.c -o $O/sock-$name.o
	clang $O/$name.o $O/sock-$name.o $O/kfuncs.o $O/cubic.o $O/env.o $O/replay.o \
		-o $O/replay-$name.tmp
	mv $O/replay-$name.tmp $O/replay-$name
done
