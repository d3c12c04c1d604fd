// SPDX-License-Identifier: GPL-2.0
/*
 * The handoff algorithm: sets a socket's cwnd and ssthresh on init from per-socket storage, so a
 * window handoff (seed-002 Eq. 6.3, or a fixed window) is real on the kernel side, where no
 * socket option sets cwnd. The kernel backend's client switches a socket to "handoff" right
 * after writing the target into rove_handoff_w (an sk_storage map, keyed by the socket's fd
 * from user space), then at once to the algorithm it hands over to; that algorithm's init
 * keeps the window (reno, cubic, bbr and rove's ports leave snd_cwnd alone). Between the two
 * switches the socket is Reno, for no ACK at all in practice.
 */
#include "rove_cc.h"

char _license[] SEC("license") = "GPL";

struct handoff_target {
	__u32 cwnd;     /* packets; 0 keeps the current value */
	__u32 ssthresh; /* packets; 0 keeps the current value */
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct handoff_target);
} rove_handoff_w SEC(".maps");

SEC("struct_ops")
void BPF_PROG(handoff_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct handoff_target *t = bpf_sk_storage_get(&rove_handoff_w, sk, 0, 0);

	if (!t)
		return;
	if (t->cwnd)
		tcp_snd_cwnd_set(tp, min_t(__u32, t->cwnd, tp->snd_cwnd_clamp));
	if (t->ssthresh)
		tp->snd_ssthresh = t->ssthresh;
	bpf_sk_storage_delete(&rove_handoff_w, sk);
}

SEC("struct_ops")
__u32 BPF_PROG(handoff_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
void BPF_PROG(handoff_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(handoff_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops rove_handoff = {
	.init = (void *)handoff_init,
	.ssthresh = (void *)handoff_ssthresh,
	.cong_avoid = (void *)handoff_cong_avoid,
	.undo_cwnd = (void *)handoff_undo_cwnd,
	.name = "handoff",
};
