// SPDX-License-Identifier: GPL-2.0
/*
 * LIA (RFC 6356, the Linked Increases Algorithm) for upstream MPTCP: a coupled congestion
 * control the upstream kernel never had (multipath-tcp.org's mptcp_coupled.c died with its
 * 4.19 fork). The algorithm of rove's simulator port crates/tcp/src/cc/coupled/lia.rs (which
 * documents it): slow start and the halving are Reno's; in congestion avoidance a subflow grows
 * by one packet per N packets acked,
 *
 *     N = max(cwnd_i, floor((Σ_k w_k·rtt_b/rtt_k)² / w_b))
 *
 * over the connection's subflows k that have an RTT sample, b the one with the largest
 * w_k/rtt_k² (w in packets, rtt the smoothed RTT): RFC 6356's min(alpha/cwnd_total, 1/cwnd_i)
 * with equal MSS. The subflows share their windows and RTTs as mptcp_coupled.h describes.
 *
 * Differences from the simulator's port:
 * - Fixed point: each term w_k·rtt_b/rtt_k is kept in 1/1024 packet (u64) and N truncated once;
 *   the simulator divides in floating point. N can differ by one near an integer.
 * - Those of mptcp_coupled.h (equal MSS, at most 8 coupled subflows, lock-free reads).
 * - A subflow's entry is refreshed on its own ACKs (cong_avoid, pkts_acked), as in the
 *   simulator.
 */
#include "mptcp_coupled.h"

char _license[] SEC("license") = "GPL";

#define LIA_FRAC 10 /* terms in 1/1024 packet */

SEC("struct_ops")
void BPF_PROG(lia_init, struct sock *sk)
{
	coupled_init(sk, inet_csk_ca(sk));
}

SEC("struct_ops")
void BPF_PROG(lia_release, struct sock *sk)
{
	coupled_release(inet_csk_ca(sk));
}

/* Packets acked per one-packet increase on the subflow in slot `me` (cwnd if alone). */
static __always_inline __u32 acks_per_increment(struct coupled_conn *c, __u32 me, __u32 cwnd)
{
	__u32 b = COUPLED_SUBFLOWS, n = 0, i;
	__u64 s = 0, q;

	/* b: the largest w/rtt² (compared as w_i·rtt_b² > w_b·rtt_i², in u64). */
	for (i = 0; i < COUPLED_SUBFLOWS; i++) {
		if (!counts(c, i))
			continue;
		n++;
		if (b == COUPLED_SUBFLOWS) {
			b = i;
		} else {
			__u64 ri = c->srtt_us[i], rb = c->srtt_us[b & (COUPLED_SUBFLOWS - 1)];

			if ((__u64)c->cwnd[i] * rb * rb > (__u64)c->cwnd[b & (COUPLED_SUBFLOWS - 1)] * ri * ri)
				b = i;
		}
	}
	if (n < 2 || me >= COUPLED_SUBFLOWS || !c->sk[me] || !c->srtt_us[me])
		return cwnd;
	b &= COUPLED_SUBFLOWS - 1;
	for (i = 0; i < COUPLED_SUBFLOWS; i++) {
		if (!counts(c, i))
			continue;
		s += ((__u64)c->cwnd[i] << LIA_FRAC) * c->srtt_us[b] / c->srtt_us[i];
	}
	q = (s * s) / ((__u64)c->cwnd[b] << (2 * LIA_FRAC));
	if (q > 0xffffffffULL)
		q = 0xffffffffULL;
	return max_t(__u32, cwnd, (__u32)q);
}

SEC("struct_ops")
void BPF_PROG(lia_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct coupled *ca = inet_csk_ca(sk);
	struct coupled_conn *c = conn_of(ca);
	__u32 n;

	if (!tcp_is_cwnd_limited(sk))
		return;
	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked) {
			publish(sk, ca, c);
			return;
		}
	}
	publish(sk, ca, c);
	n = c ? acks_per_increment(c, ca->slot, tp->snd_cwnd) : tp->snd_cwnd;
	tcp_cong_avoid_ai(tp, n, acked);
	publish(sk, ca, c);
}

SEC("struct_ops")
void BPF_PROG(lia_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct coupled *ca = inet_csk_ca(sk);

	publish(sk, ca, conn_of(ca));
}

SEC("struct_ops")
__u32 BPF_PROG(lia_ssthresh, struct sock *sk)
{
	struct coupled *ca = inet_csk_ca(sk);

	publish(sk, ca, conn_of(ca));
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(lia_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops rove_lia = {
	.init = (void *)lia_init,
	.release = (void *)lia_release,
	.ssthresh = (void *)lia_ssthresh,
	.cong_avoid = (void *)lia_cong_avoid,
	.pkts_acked = (void *)lia_pkts_acked,
	.undo_cwnd = (void *)lia_undo_cwnd,
	.name = "lia",
};
