// SPDX-License-Identifier: GPL-2.0
/*
 * TCP Veno for a stock kernel: net/ipv4/tcp_veno.c (Linux 6.x) as a BPF tcp_congestion_ops,
 * the algorithm of rove's simulator port crates/tcp/src/cc/veno.rs (which documents it).
 * Differences from the C original: none in the arithmetic; no get_info.
 */
#include "rove_cc.h"

char _license[] SEC("license") = "GPL";

/* tcp_veno.c: V_PARAM_SHIFT = 1, beta = 3 << V_PARAM_SHIFT (3 packets, in halves). */
#define V_PARAM_SHIFT 1
#define VENO_BETA (3 << V_PARAM_SHIFT)

struct veno {
	__u8 doing_veno_now;
	__u16 cnt_rtt;  /* RTT samples seen */
	__u32 min_rtt;  /* minimum RTT in the last RTT (us) */
	__u32 base_rtt; /* minimum of all samples (us) */
	__u32 inc;      /* in the congestive state: grow on every other RTT */
	__u32 diff;     /* backlog estimate, in half packets */
};

static __always_inline void veno_enable(struct veno *v)
{
	v->doing_veno_now = 1;
	v->min_rtt = 0x7fffffff;
}

static __always_inline void veno_reset(struct veno *v)
{
	v->base_rtt = 0x7fffffff;
	v->inc = 1;
	veno_enable(v);
}

SEC("struct_ops")
void BPF_PROG(veno_init, struct sock *sk)
{
	veno_reset(inet_csk_ca(sk));
}

SEC("struct_ops")
void BPF_PROG(veno_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct veno *v = inet_csk_ca(sk);
	__u32 vrtt;

	if (sample->rtt_us < 0)
		return;
	vrtt = sample->rtt_us + 1;
	if (vrtt < v->base_rtt)
		v->base_rtt = vrtt;
	v->min_rtt = min_t(__u32, v->min_rtt, vrtt);
	v->cnt_rtt++;
}

SEC("struct_ops")
void BPF_PROG(veno_state, struct sock *sk, __u8 ca_state)
{
	struct veno *v = inet_csk_ca(sk);

	if (ca_state == TCP_CA_Open)
		veno_enable(v);
	else
		v->doing_veno_now = 0;
}

SEC("struct_ops")
void BPF_PROG(veno_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	if (event == CA_EVENT_CWND_RESTART || event == CA_EVENT_TX_START)
		veno_reset(inet_csk_ca(sk));
}

SEC("struct_ops")
void BPF_PROG(veno_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct veno *v = inet_csk_ca(sk);

	if (!v->doing_veno_now) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	if (!tcp_is_cwnd_limited(sk)) /* application-limited */
		return;
	if (v->cnt_rtt <= 2) {
		tcp_reno_cong_avoid(sk, ack, acked);
	} else {
		__u64 target_cwnd = ((__u64)tp->snd_cwnd * v->base_rtt) << V_PARAM_SHIFT;

		target_cwnd /= v->min_rtt;
		v->diff = (tp->snd_cwnd << V_PARAM_SHIFT) - target_cwnd;

		if (tcp_in_slow_start(tp)) {
			acked = tcp_slow_start(tp, acked);
			if (!acked)
				goto done;
		}
		if (v->diff < VENO_BETA) {
			/* Non-congestive state: one packet per RTT. */
			tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked);
		} else if (tp->snd_cwnd_cnt >= tp->snd_cwnd) {
			/* Congestive state: one packet every other RTT. */
			if (v->inc && tp->snd_cwnd < tp->snd_cwnd_clamp) {
				tcp_snd_cwnd_set(tp, tp->snd_cwnd + 1);
				v->inc = 0;
			} else {
				v->inc = 1;
			}
			tp->snd_cwnd_cnt = 0;
		} else {
			tp->snd_cwnd_cnt += acked;
		}
done:
		if (tp->snd_cwnd < 2)
			tcp_snd_cwnd_set(tp, 2);
		else if (tp->snd_cwnd > tp->snd_cwnd_clamp)
			tcp_snd_cwnd_set(tp, tp->snd_cwnd_clamp);
	}
	v->min_rtt = 0x7fffffff; /* the kernel keeps cnt_rtt (its reset is commented out) */
}

SEC("struct_ops")
__u32 BPF_PROG(veno_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);
	struct veno *v = inet_csk_ca(sk);

	if (v->diff < VENO_BETA) /* non-congestive: a random loss, cut by 1/5 */
		return max_t(__u32, tp->snd_cwnd * 4 / 5, 2U);
	return max_t(__u32, tp->snd_cwnd >> 1U, 2U); /* congestive: halve */
}

SEC("struct_ops")
__u32 BPF_PROG(veno_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops rove_veno = {
	.init = (void *)veno_init,
	.ssthresh = (void *)veno_ssthresh,
	.undo_cwnd = (void *)veno_undo_cwnd,
	.cong_avoid = (void *)veno_cong_avoid,
	.pkts_acked = (void *)veno_pkts_acked,
	.set_state = (void *)veno_state,
	.cwnd_event = (void *)veno_cwnd_event,
	.name = "veno",
};
