// SPDX-License-Identifier: GPL-2.0
/*
 * TCP Westwood+ for a stock kernel: net/ipv4/tcp_westwood.c (Linux 6.x) as a BPF
 * tcp_congestion_ops. The same algorithm as rove's simulator port
 * (crates/tcp/src/cc/westwood.rs, which documents it); differences from the C original:
 * - tcp_jiffies32 is read with bpf_jiffies64() (the same counter);
 * - get_info (the INET_DIAG_VEGASINFO export) is not provided: BPF struct_ops cannot fill it;
 * - the struct is rove_westwood's own layout of the same fields (it lives in icsk_ca_priv).
 */
#include "rove_cc.h"

char _license[] SEC("license") = "GPL";

struct westwood {
	__u32 bw_ns_est;  /* first, lightly filtered bandwidth estimate (bytes per jiffy) */
	__u32 bw_est;     /* bandwidth estimate (bytes per jiffy) */
	__u32 rtt_win_sx; /* start of the current sampling window (jiffies) */
	__u32 bk;         /* bytes acked in the current window */
	__u32 snd_una;    /* snd_una at the last ACK */
	__u32 cumul_ack;
	__u32 accounted;  /* bytes counted for duplicate ACKs not yet covered */
	__u32 rtt;        /* last RTT sample (jiffies) */
	__u32 rtt_min;    /* minimum RTT (jiffies) */
	__u8 first_ack;
	__u8 reset_rtt_min;
};

/* tcp_westwood.c: TCP_WESTWOOD_RTT_MIN = HZ/20 (50 ms), TCP_WESTWOOD_INIT_RTT = 20*HZ. */
#define RTT_MIN_J (CONFIG_HZ / 20)
#define INIT_RTT_J (20 * CONFIG_HZ)

SEC("struct_ops")
void BPF_PROG(westwood_init, struct sock *sk)
{
	struct westwood *w = inet_csk_ca(sk);

	w->bk = 0;
	w->bw_ns_est = 0;
	w->bw_est = 0;
	w->accounted = 0;
	w->cumul_ack = 0;
	w->reset_rtt_min = 1;
	w->rtt_min = w->rtt = INIT_RTT_J;
	w->rtt_win_sx = tcp_jiffies32();
	w->snd_una = tcp_sk(sk)->snd_una;
	w->first_ack = 1;
}

/* westwood_do_filter: a 7/8 low-pass filter. */
static __always_inline __u32 lowpass(__u32 a, __u32 b)
{
	return ((7 * a) + b) >> 3;
}

static __always_inline void update_window(struct sock *sk, struct westwood *w)
{
	__s32 delta = tcp_jiffies32() - w->rtt_win_sx;

	/* The first ACK sets the reference snd_una (the first sample would count the SYN). */
	if (w->first_ack) {
		w->snd_una = tcp_sk(sk)->snd_una;
		w->first_ack = 0;
	}
	/* A sample per RTT, over at least 50 ms; shorter windows keep accumulating. */
	if (w->rtt && delta > max_t(__u32, w->rtt, RTT_MIN_J)) {
		__u32 sample = w->bk / (__u32)delta;

		if (w->bw_ns_est == 0 && w->bw_est == 0) {
			w->bw_ns_est = sample;
			w->bw_est = sample;
		} else {
			w->bw_ns_est = lowpass(w->bw_ns_est, sample);
			w->bw_est = lowpass(w->bw_est, w->bw_ns_est);
		}
		w->bk = 0;
		w->rtt_win_sx = tcp_jiffies32();
	}
}

static __always_inline void update_rtt_min(struct westwood *w)
{
	if (w->reset_rtt_min) {
		w->rtt_min = w->rtt;
		w->reset_rtt_min = 0;
	} else {
		w->rtt_min = min_t(__u32, w->rtt, w->rtt_min);
	}
}

/* westwood_acked_count: bytes a slow-path ACK acknowledges, a duplicate counting one MSS. */
static __always_inline __u32 acked_count(struct sock *sk, struct westwood *w)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	w->cumul_ack = tp->snd_una - w->snd_una;
	if (!w->cumul_ack) {
		w->accounted += tp->mss_cache;
		w->cumul_ack = tp->mss_cache;
	}
	if (w->cumul_ack > tp->mss_cache) {
		if (w->accounted >= w->cumul_ack) {
			w->accounted -= w->cumul_ack;
			w->cumul_ack = tp->mss_cache;
		} else {
			w->cumul_ack -= w->accounted;
			w->accounted = 0;
		}
	}
	w->snd_una = tp->snd_una;
	return w->cumul_ack;
}

/* tcp_westwood_bw_rttmin: the window that fills the pipe at bw_est with an empty queue. */
static __always_inline __u32 bw_rttmin(const struct sock *sk, const struct westwood *w)
{
	return max_t(__u32, (w->bw_est * w->rtt_min) / tcp_sk(sk)->mss_cache, 2);
}

SEC("struct_ops")
void BPF_PROG(westwood_ack, struct sock *sk, __u32 ack_flags)
{
	struct westwood *w = inet_csk_ca(sk);

	update_window(sk, w);
	if (ack_flags & CA_ACK_SLOWPATH) {
		w->bk += acked_count(sk, w);
	} else { /* westwood_fast_bw */
		w->bk += tcp_sk(sk)->snd_una - w->snd_una;
		w->snd_una = tcp_sk(sk)->snd_una;
	}
	update_rtt_min(w);
}

SEC("struct_ops")
void BPF_PROG(westwood_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct westwood *w = inet_csk_ca(sk);

	if (sample->rtt_us > 0)
		w->rtt = usecs_to_jiffies(sample->rtt_us);
}

SEC("struct_ops")
void BPF_PROG(westwood_event, struct sock *sk, enum tcp_ca_event event)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct westwood *w = inet_csk_ca(sk);

	switch (event) {
	case CA_EVENT_COMPLETE_CWR:
		tcp_snd_cwnd_set(tp, bw_rttmin(sk, w));
		tp->snd_ssthresh = tcp_snd_cwnd(tp);
		break;
	case CA_EVENT_LOSS:
		tp->snd_ssthresh = bw_rttmin(sk, w);
		w->reset_rtt_min = 1; /* take rtt_min from the next sample */
		break;
	default:
		break;
	}
}

SEC("struct_ops")
__u32 BPF_PROG(westwood_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
void BPF_PROG(westwood_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(westwood_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops rove_westwood = {
	.init = (void *)westwood_init,
	.ssthresh = (void *)westwood_ssthresh,
	.cong_avoid = (void *)westwood_cong_avoid,
	.undo_cwnd = (void *)westwood_undo_cwnd,
	.cwnd_event = (void *)westwood_event,
	.in_ack_event = (void *)westwood_ack,
	.pkts_acked = (void *)westwood_pkts_acked,
	.name = "westwood",
};
