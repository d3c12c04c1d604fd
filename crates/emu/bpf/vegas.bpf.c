// SPDX-License-Identifier: GPL-2.0
/*
 * TCP Vegas for a stock kernel: net/ipv4/tcp_vegas.c (Linux 6.x) as a BPF tcp_congestion_ops,
 * the algorithm of rove's simulator port crates/tcp/src/cc/vegas.rs (which documents it).
 * Differences from the C original: alpha, beta and gamma are the module parameters' defaults
 * (2, 4, 1), fixed at build time (the kernel's are module parameters, set for all sockets);
 * no get_info.
 */
#include "rove_cc.h"

char _license[] SEC("license") = "GPL";

/* tcp_vegas.c module parameters: alpha = 2, beta = 4, gamma = 1 (packets). */
#define VEGAS_ALPHA 2
#define VEGAS_BETA 4
#define VEGAS_GAMMA 1

struct vegas {
	__u32 beg_snd_nxt;  /* right edge during the last RTT */
	__u32 beg_snd_una;  /* left edge during the last RTT */
	__u32 beg_snd_cwnd; /* cwnd then */
	__u8 doing_vegas_now;
	__u16 cnt_rtt;      /* RTT samples in the last RTT */
	__u32 min_rtt;      /* their minimum (us) */
	__u32 base_rtt;     /* minimum of all samples (us) */
};

static __always_inline void vegas_enable(struct sock *sk)
{
	struct vegas *v = inet_csk_ca(sk);

	v->doing_vegas_now = 1;
	v->beg_snd_nxt = tcp_sk(sk)->snd_nxt;
	v->cnt_rtt = 0;
	v->min_rtt = 0x7fffffff;
}

static __always_inline void vegas_reset(struct sock *sk)
{
	struct vegas *v = inet_csk_ca(sk);

	v->base_rtt = 0x7fffffff;
	vegas_enable(sk);
}

SEC("struct_ops")
void BPF_PROG(vegas_init, struct sock *sk)
{
	vegas_reset(sk);
}

SEC("struct_ops")
void BPF_PROG(vegas_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct vegas *v = inet_csk_ca(sk);
	__u32 vrtt;

	if (sample->rtt_us < 0)
		return;
	vrtt = sample->rtt_us + 1; /* never a zero RTT */
	if (vrtt < v->base_rtt)
		v->base_rtt = vrtt;
	v->min_rtt = min_t(__u32, v->min_rtt, vrtt);
	v->cnt_rtt++;
}

SEC("struct_ops")
void BPF_PROG(vegas_state, struct sock *sk, __u8 ca_state)
{
	struct vegas *v = inet_csk_ca(sk);

	if (ca_state == TCP_CA_Open)
		vegas_enable(sk);
	else
		v->doing_vegas_now = 0;
}

SEC("struct_ops")
void BPF_PROG(vegas_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	if (event == CA_EVENT_CWND_RESTART || event == CA_EVENT_TX_START)
		vegas_reset(sk);
}

static __always_inline __u32 vegas_ssthresh_of(const struct tcp_sock *tp)
{
	return min_t(__u32, tp->snd_ssthresh, tp->snd_cwnd);
}

SEC("struct_ops")
void BPF_PROG(vegas_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct vegas *v = inet_csk_ca(sk);

	if (!v->doing_vegas_now) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	if (after(ack, v->beg_snd_nxt)) {
		/* Once per RTT. */
		v->beg_snd_nxt = tp->snd_nxt;
		/* Two samples or fewer are probably delayed ACKs only: behave like Reno. */
		if (v->cnt_rtt <= 2) {
			tcp_reno_cong_avoid(sk, ack, acked);
		} else {
			__u32 rtt = v->min_rtt, diff;
			__u64 target_cwnd;

			/* The window the actual rate needs at the base RTT, and the difference
			 * ("Diff", in packets queued). */
			target_cwnd = (__u64)tp->snd_cwnd * v->base_rtt / rtt;
			diff = tp->snd_cwnd * (rtt - v->base_rtt) / v->base_rtt;

			if (diff > VEGAS_GAMMA && tcp_in_slow_start(tp)) {
				/* Too fast: leave slow start at the actual rate (+1 for truncation). */
				tcp_snd_cwnd_set(tp, min_t(__u32, tp->snd_cwnd, (__u32)target_cwnd + 1));
				tp->snd_ssthresh = vegas_ssthresh_of(tp);
			} else if (tcp_in_slow_start(tp)) {
				tcp_slow_start(tp, acked);
			} else if (diff > VEGAS_BETA) {
				tcp_snd_cwnd_set(tp, tp->snd_cwnd - 1);
				tp->snd_ssthresh = vegas_ssthresh_of(tp);
			} else if (diff < VEGAS_ALPHA) {
				tcp_snd_cwnd_set(tp, tp->snd_cwnd + 1);
			}
			if (tp->snd_cwnd < 2)
				tcp_snd_cwnd_set(tp, 2);
			else if (tp->snd_cwnd > tp->snd_cwnd_clamp)
				tcp_snd_cwnd_set(tp, tp->snd_cwnd_clamp);
			tp->snd_ssthresh = tcp_current_ssthresh(sk);
		}
		/* A clean slate for the next RTT. */
		v->cnt_rtt = 0;
		v->min_rtt = 0x7fffffff;
	} else if (tcp_in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
	}
}

SEC("struct_ops")
__u32 BPF_PROG(vegas_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(vegas_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops rove_vegas = {
	.init = (void *)vegas_init,
	.ssthresh = (void *)vegas_ssthresh,
	.undo_cwnd = (void *)vegas_undo_cwnd,
	.cong_avoid = (void *)vegas_cong_avoid,
	.pkts_acked = (void *)vegas_pkts_acked,
	.set_state = (void *)vegas_state,
	.cwnd_event = (void *)vegas_cwnd_event,
	.name = "vegas",
};
