// SPDX-License-Identifier: GPL-2.0
/*
 * BBR v2 ("v2alpha", Google's tcp_bbr2.c) as a BPF tcp_congestion_ops named "bbr2": the
 * algorithm and every difference from the original are in bbr2_common.h. Its parameters are
 * tcp_bbr2.c's module defaults, every BBRv2+ piece off (the simulator's "bbr2").
 */
#include "bbr2_common.h"

char _license[] SEC("license") = "GPL";

static __always_inline void bbr2_load_params(struct sock *sk, struct bbr2_params *p)
{
	bbr2_default_params(p);
}

BBR2_STRUCT_OPS(rove_bbr2, "bbr2");
