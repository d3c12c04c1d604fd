// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel functions the ports call as kfuncs, for the host replay: net/ipv4/tcp_cong.c
 * (Linux 6.x) tcp_slow_start, tcp_cong_avoid_ai, tcp_reno_cong_avoid, tcp_reno_ssthresh,
 * tcp_reno_undo_cwnd, line for line, and the bpf_rdonly_cast kfunc (a plain cast here).
 * Differences: tcp_snd_cwnd_set's WARN_ON_ONCE on a non-positive cwnd is left out.
 */
#include "rove_cc.h"

__u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked)
{
	__u32 cwnd = min_t(__u32, tcp_snd_cwnd(tp) + acked, tp->snd_ssthresh);

	acked -= cwnd - tcp_snd_cwnd(tp);
	tcp_snd_cwnd_set(tp, min_t(__u32, cwnd, tp->snd_cwnd_clamp));
	return acked;
}

void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked)
{
	/* If credits accumulated at a higher w, apply them gently now. */
	if (tp->snd_cwnd_cnt >= w) {
		tp->snd_cwnd_cnt = 0;
		tcp_snd_cwnd_set(tp, tcp_snd_cwnd(tp) + 1);
	}
	tp->snd_cwnd_cnt += acked;
	if (tp->snd_cwnd_cnt >= w) {
		__u32 delta = tp->snd_cwnd_cnt / w;

		tp->snd_cwnd_cnt -= delta * w;
		tcp_snd_cwnd_set(tp, tcp_snd_cwnd(tp) + delta);
	}
	tcp_snd_cwnd_set(tp, min_t(__u32, tcp_snd_cwnd(tp), tp->snd_cwnd_clamp));
}

void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (!tcp_is_cwnd_limited(sk))
		return;
	/* In "safe" area, increase. */
	if (tcp_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	/* In dangerous area, increase slowly. */
	tcp_cong_avoid_ai(tp, tcp_snd_cwnd(tp), acked);
}

__u32 tcp_reno_ssthresh(struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	return max_t(__u32, tcp_snd_cwnd(tp) >> 1U, 2U);
}

__u32 tcp_reno_undo_cwnd(struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	return max_t(__u32, tcp_snd_cwnd(tp), tp->prior_cwnd);
}

void *bpf_rdonly_cast(const void *obj, __u32 btf_id)
{
	return (void *)obj;
}
