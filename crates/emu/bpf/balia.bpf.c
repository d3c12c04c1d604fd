// SPDX-License-Identifier: GPL-2.0
/*
 * BALIA (Balanced Linked Adaptation; Peng, Walid, Hwang, Low, IEEE/ACM ToN 24(1), 2016, Eq. 14)
 * for upstream MPTCP, which has no coupled congestion control (multipath-tcp.org's
 * mptcp_balia.c died with its 4.19 fork). The algorithm of rove's simulator port
 * crates/tcp/src/cc/coupled/balia.rs (which documents it): with x_k = w_k/rtt_k over the
 * connection's subflows that have an RTT sample and alpha_r = max_k x_k / x_r,
 *
 *     per ACK on r:  one packet every ai = floor(10·(Σx)²·w_r / ((x_r + M)·(4·x_r + M))) acked
 *                    (1/ai = (x_r/rtt_r)/(Σx)² · (1+α_r)/2 · (4+α_r)/5, M = max_k x_k)
 *     per loss on r: ssthresh = max(w_r − floor(floor(w_r/2) · min(α_r, 1.5)), 2)
 *
 * and Reno for a subflow alone (or a plain TCP socket). In slow start a coupled subflow drops
 * the leftover of tcp_slow_start as the kernel's mptcp_balia_cong_avoid does; a lone one keeps
 * it (Reno). The subflows share their windows and RTTs as mptcp_coupled.h describes.
 *
 * Differences from the simulator's port (which computes in floating point):
 * - Fixed point: x_k = (w_k << 32) / srtt_k (srtt in us), scaled down together below 2^31;
 *   ai = 10·w_r·A·B with A = Σx/(x_r + M) and B = Σx/(4·x_r + M) each in 2^-28 and their
 *   product in 2^-32, truncated; the decrease floor(floor(w_r/2)·M/x_r) (or ·3/2) by integer
 *   division. ai can differ by one from the real-number value within about 1e-8 of an integer
 *   (the simulator allows 1e-12).
 * - Those of mptcp_coupled.h (equal MSS, at most 8 coupled subflows, lock-free reads).
 */
#include "mptcp_coupled.h"

char _license[] SEC("license") = "GPL";

#define RATE_SHIFT 32  /* x_k = (w_k << 32) / srtt_k, then scaled down together (below) */
#define RATE_MAX (1ULL << 31)
#define RATIO_SHIFT 28 /* Σx/(x_r + M) and Σx/(4·x_r + M), each at most 8 */

struct rates {
	__u64 me, max, sum;
};

/* x_r, max_k x_k and Σ x_k over the subflows that count, scaled down by one power of two until
 * Σ x_k < 2^31 (so the products below fit in 64 bits); false when `me` does not count or is
 * alone (then BALIA is Reno). */
static __always_inline bool rates_of(struct coupled_conn *c, __u32 me, struct rates *r)
{
	__u32 i, n = 0;

	r->me = r->max = r->sum = 0;
	if (me >= COUPLED_SUBFLOWS || !counts(c, me))
		return false;
	for (i = 0; i < COUPLED_SUBFLOWS; i++) {
		__u32 rtt = c->srtt_us[i];
		__u64 x;

		if (!counts(c, i) || !rtt)
			continue;
		x = ((__u64)c->cwnd[i] << RATE_SHIFT) / rtt;
		if (i == me)
			r->me = x;
		if (x > r->max)
			r->max = x;
		r->sum += x;
		n++;
	}
	for (i = 0; i < 64 && r->sum >= RATE_MAX; i++) {
		r->me >>= 1;
		r->max >>= 1;
		r->sum >>= 1;
	}
	return n > 1 && r->me > 0;
}

/* ai: packets acked per one-packet increase of the subflow with window `cwnd`:
 * 10·w·(Σx/(x_r + M))·(Σx/(4·x_r + M)), each ratio in 2^-28, the product kept in 2^-32. */
static __always_inline __u32 acks_per_increment(struct rates *r, __u32 cwnd)
{
	__u64 a = (r->sum << RATIO_SHIFT) / (r->me + r->max);
	__u64 b = (r->sum << RATIO_SHIFT) / (4 * r->me + r->max);
	__u64 ab = (a * b) >> (2 * RATIO_SHIFT - 32);
	__u64 ai = (10 * (__u64)cwnd * ab) >> 32;

	if (ai > 0xffffffffULL)
		ai = 0xffffffffULL;
	return max_t(__u32, 1U, (__u32)ai);
}

/* floor(floor(w/2) · min(α_r, 1.5)), α_r = M / x_r, by integer division. */
static __always_inline __u32 decrease(struct rates *r, __u32 cwnd)
{
	__u64 half = cwnd >> 1;

	if (2 * r->max >= 3 * r->me)
		return (__u32)((3 * half) >> 1);
	return (__u32)(half * r->max / r->me);
}

SEC("struct_ops")
void BPF_PROG(balia_init, struct sock *sk)
{
	coupled_init(sk, inet_csk_ca(sk));
}

SEC("struct_ops")
void BPF_PROG(balia_release, struct sock *sk)
{
	coupled_release(inet_csk_ca(sk));
}

SEC("struct_ops")
void BPF_PROG(balia_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct coupled *ca = inet_csk_ca(sk);
	struct coupled_conn *c = conn_of(ca);
	struct rates r = {};
	bool coupled;

	if (!tcp_is_cwnd_limited(sk))
		return;
	publish(sk, ca, c);
	coupled = c && rates_of(c, ca->slot, &r);
	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked || coupled) {
			publish(sk, ca, c);
			return;
		}
	}
	tcp_cong_avoid_ai(tp, coupled ? acks_per_increment(&r, tp->snd_cwnd) : tp->snd_cwnd,
			  acked);
	publish(sk, ca, c);
}

SEC("struct_ops")
void BPF_PROG(balia_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct coupled *ca = inet_csk_ca(sk);

	publish(sk, ca, conn_of(ca));
}

SEC("struct_ops")
__u32 BPF_PROG(balia_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct coupled *ca = inet_csk_ca(sk);
	struct coupled_conn *c = conn_of(ca);
	struct rates r = {};
	__u32 cwnd = tp->snd_cwnd, md;

	publish(sk, ca, c);
	if (!c || !rates_of(c, ca->slot, &r))
		return tcp_reno_ssthresh(sk);
	md = decrease(&r, cwnd);
	return cwnd > md + 2 ? cwnd - md : 2;
}

SEC("struct_ops")
__u32 BPF_PROG(balia_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops rove_balia = {
	.init = (void *)balia_init,
	.release = (void *)balia_release,
	.ssthresh = (void *)balia_ssthresh,
	.cong_avoid = (void *)balia_cong_avoid,
	.pkts_acked = (void *)balia_pkts_acked,
	.undo_cwnd = (void *)balia_undo_cwnd,
	.name = "balia",
};
