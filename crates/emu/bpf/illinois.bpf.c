// SPDX-License-Identifier: GPL-2.0
/*
 * TCP Illinois for a stock kernel: net/ipv4/tcp_illinois.c (Linux 6.x) as a BPF
 * tcp_congestion_ops, the algorithm of rove's simulator port crates/tcp/src/cc/illinois.rs
 * (which documents it). Differences from the C original: win_thresh and theta are the module
 * parameters' defaults (15, 5), fixed at build time; the u64/u32 divisions are BPF's native
 * ones (the kernel's do_div gives the same quotient); no get_info.
 */
#include "rove_cc.h"

char _license[] SEC("license") = "GPL";

/* tcp_illinois.c: alpha in 1/128 (ALPHA_SHIFT 7), beta in 1/64 (BETA_SHIFT 6). */
#define ALPHA_SHIFT 7
#define ALPHA_SCALE (1u << ALPHA_SHIFT)
#define ALPHA_MIN ((3 * ALPHA_SCALE) / 10) /* ~0.3 */
#define ALPHA_MAX (10 * ALPHA_SCALE)       /* 10.0 */
#define ALPHA_BASE ALPHA_SCALE             /* 1.0 */
#define RTT_MAX (0xffffffffu / ALPHA_MAX)   /* 3.3 s: keeps the alpha arithmetic in u32 */
#define BETA_SHIFT 6
#define BETA_SCALE (1u << BETA_SHIFT)
#define BETA_MIN (BETA_SCALE / 8) /* 0.125 */
#define BETA_MAX (BETA_SCALE / 2) /* 0.5 */
#define BETA_BASE BETA_MAX
#define WIN_THRESH 15 /* module parameter win_thresh */
#define THETA 5       /* module parameter theta: good RTTs before alpha returns to max */

struct illinois {
	__u64 sum_rtt;  /* sum of the RTT samples in the last RTT (us) */
	__u16 cnt_rtt;  /* their count */
	__u32 base_rtt; /* minimum RTT (us) */
	__u32 max_rtt;  /* maximum RTT (us) */
	__u32 end_seq;  /* right edge of the current RTT */
	__u32 alpha;    /* additive increase, 1/128 packets per RTT */
	__u32 beta;     /* multiplicative decrease, 1/64 */
	__u16 acked;    /* packets acked by the current ACK */
	__u8 rtt_above; /* the average delay went above d1 */
	__u8 rtt_low;   /* RTTs below d1 since */
};

static __always_inline void rtt_reset(struct sock *sk, struct illinois *ca)
{
	ca->end_seq = tcp_sk(sk)->snd_nxt;
	ca->cnt_rtt = 0;
	ca->sum_rtt = 0;
}

SEC("struct_ops")
void BPF_PROG(illinois_init, struct sock *sk)
{
	struct illinois *ca = inet_csk_ca(sk);

	ca->alpha = ALPHA_MAX;
	ca->beta = BETA_BASE;
	ca->base_rtt = 0x7fffffff;
	ca->max_rtt = 0;
	ca->acked = 0;
	ca->rtt_low = 0;
	ca->rtt_above = 0;
	rtt_reset(sk, ca);
}

SEC("struct_ops")
void BPF_PROG(illinois_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct illinois *ca = inet_csk_ca(sk);
	__s32 rtt_us = sample->rtt_us;

	ca->acked = sample->pkts_acked;
	if (rtt_us < 0) /* a duplicate ACK: no sample */
		return;
	if (rtt_us > (__s32)RTT_MAX)
		rtt_us = RTT_MAX;
	if (ca->base_rtt > (__u32)rtt_us)
		ca->base_rtt = rtt_us;
	if (ca->max_rtt < (__u32)rtt_us)
		ca->max_rtt = rtt_us;
	++ca->cnt_rtt;
	ca->sum_rtt += rtt_us;
}

/* alpha(da, dm): ALPHA_MAX in the low-delay zone (after THETA good RTTs), else falling
 * hyperbolically to ALPHA_MIN at the maximum delay. */
static __always_inline __u32 illinois_alpha(struct illinois *ca, __u32 da, __u32 dm)
{
	__u32 d1 = dm / 100;

	if (da <= d1) {
		if (!ca->rtt_above)
			return ALPHA_MAX;
		if (++ca->rtt_low < THETA)
			return ca->alpha;
		ca->rtt_low = 0;
		ca->rtt_above = 0;
		return ALPHA_MAX;
	}
	ca->rtt_above = 1;
	dm -= d1;
	da -= d1;
	return (dm * ALPHA_MAX) / (dm + (da * (ALPHA_MAX - ALPHA_MIN)) / ALPHA_MIN);
}

/* beta(da, dm): BETA_MIN below d2 = dm/10, BETA_MAX above d3 = 8dm/10, linear between. */
static __always_inline __u32 illinois_beta(__u32 da, __u32 dm)
{
	__u32 d2 = dm / 10, d3;

	if (da <= d2)
		return BETA_MIN;
	d3 = (8 * dm) / 10;
	if (da >= d3 || d3 <= d2)
		return BETA_MAX;
	return (BETA_MIN * d3 - BETA_MAX * d2 + (BETA_MAX - BETA_MIN) * da) / (d3 - d2);
}

static __always_inline void update_params(struct sock *sk, struct illinois *ca)
{
	if (tcp_sk(sk)->snd_cwnd < WIN_THRESH) {
		ca->alpha = ALPHA_BASE;
		ca->beta = BETA_BASE;
	} else if (ca->cnt_rtt > 0) {
		__u32 dm = ca->max_rtt - ca->base_rtt;
		__u32 da = (__u32)(ca->sum_rtt / ca->cnt_rtt) - ca->base_rtt;

		ca->alpha = illinois_alpha(ca, da, dm);
		ca->beta = illinois_beta(da, dm);
	}
	rtt_reset(sk, ca);
}

SEC("struct_ops")
void BPF_PROG(illinois_state, struct sock *sk, __u8 new_state)
{
	struct illinois *ca = inet_csk_ca(sk);

	if (new_state == TCP_CA_Loss) {
		ca->alpha = ALPHA_BASE;
		ca->beta = BETA_BASE;
		ca->rtt_low = 0;
		ca->rtt_above = 0;
		rtt_reset(sk, ca);
	}
}

SEC("struct_ops")
void BPF_PROG(illinois_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct illinois *ca = inet_csk_ca(sk);

	if (after(ack, ca->end_seq))
		update_params(sk, ca);
	if (!tcp_is_cwnd_limited(sk)) /* RFC 2861 */
		return;
	if (tcp_in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
	} else {
		__u32 delta;

		/* cwnd += alpha/cwnd per ACK, counted in snd_cwnd_cnt. */
		tp->snd_cwnd_cnt += ca->acked;
		ca->acked = 1;
		delta = (tp->snd_cwnd_cnt * ca->alpha) >> ALPHA_SHIFT;
		if (delta >= tp->snd_cwnd) {
			tcp_snd_cwnd_set(tp, min_t(__u32, tp->snd_cwnd + delta / tp->snd_cwnd,
						   (__u32)tp->snd_cwnd_clamp));
			tp->snd_cwnd_cnt = 0;
		}
	}
}

SEC("struct_ops")
__u32 BPF_PROG(illinois_ssthresh, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct illinois *ca = inet_csk_ca(sk);
	__u32 decr = (tp->snd_cwnd * ca->beta) >> BETA_SHIFT;

	return max_t(__u32, tp->snd_cwnd - decr, 2U);
}

SEC("struct_ops")
__u32 BPF_PROG(illinois_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops rove_illinois = {
	.init = (void *)illinois_init,
	.ssthresh = (void *)illinois_ssthresh,
	.undo_cwnd = (void *)illinois_undo_cwnd,
	.cong_avoid = (void *)illinois_cong_avoid,
	.set_state = (void *)illinois_state,
	.pkts_acked = (void *)illinois_acked,
	.name = "illinois",
};
