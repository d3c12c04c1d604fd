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

SEC(".struct_ops")
struct tcp_congestion_ops rove_bbr2 = {
	.cong_control = (void *)bbr2_cong_control,
	.init = (void *)bbr2_init,
	.release = (void *)bbr2_release,
	.ssthresh = (void *)bbr2_ssthresh,
	.undo_cwnd = (void *)bbr2_undo_cwnd,
	.cwnd_event = (void *)bbr2_cwnd_event,
	.set_state = (void *)bbr2_set_state,
	.min_tso_segs = (void *)bbr2_min_tso_segs,
	.sndbuf_expand = (void *)bbr2_sndbuf_expand,
	.name = "bbr2",
};
