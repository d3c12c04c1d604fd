// SPDX-License-Identifier: GPL-2.0
/*
 * C2TCP (Abbasloo et al., IFIP Networking 2018 / IEEE JSAC 2019) for a stock kernel: the
 * authors' v2.2 patch (c2tcp_pkts_acked in net/ipv4/tcp_cubic.c of their Linux 4.13.1 tree,
 * github.com/Soheil-ab/C2TCP) over the running kernel's own CUBIC, whose hooks BPF programs may
 * call as kfuncs (tcp_cubic.c registers cubictcp_* for struct_ops). The algorithm of rove's
 * simulator port crates/tcp/src/cc/c2tcp.rs (which documents it, CoDel arithmetic included).
 *
 * C2TCP's state follows CUBIC's struct bictcp in icsk_ca_priv (64 + 32 of 104 bytes), so CUBIC's
 * kfuncs see their own layout and the 1 s discard after an epoch start reads CUBIC's own
 * epoch_start (the simulator mirrors it). Differences from the patch:
 * - the cut cannot write tp->prior_ssthresh (not writable from BPF): an undo after a C2TCP cut
 *   restores less than the patch's;
 * - alpha is the patch's default 2 (TCP_C2TCP_ALPHA_INIT 200), fixed at build time; the
 *   setpoint and interval are alpha·⌊minRTT_ms⌋;
 * - the clock is bpf_ktime_get_ns() (the patch's ktime_get_ns()); no INET_DIAG export;
 * - first_above_time and next_time are u64 where the patch's u32 overflow in the last 103 s of
 *   every 73.3 min of uptime (time_to_us), as in the simulator's port.
 */
#include "rove_cc.h"

char _license[] SEC("license") = "GPL";

#define CODEL_SHIFT 10         /* include/net/codel.h: codel_time_t = ns >> 10 */
#define REC_INV_SQRT_SHIFT 16  /* 32 - 16 bits of rec_inv_sqrt */
#define C2TCP_X_SCALE 100      /* alpha in 1/100 */
#define C2TCP_ALPHA 200        /* TCP_C2TCP_ALPHA_INIT */

extern void cubictcp_init(struct sock *sk) __ksym;
extern __u32 cubictcp_recalc_ssthresh(struct sock *sk) __ksym;
extern void cubictcp_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern void cubictcp_state(struct sock *sk, __u8 new_state) __ksym;
extern void cubictcp_cwnd_event(struct sock *sk, enum tcp_ca_event event) __ksym;
extern void cubictcp_acked(struct sock *sk, const struct ack_sample *sample) __ksym;

struct c2tcp {
	struct bictcp cubic;     /* CUBIC's own state, first: its kfuncs use inet_csk_ca() */
	__u32 min_urtt;          /* min RTT (us), 0: none */
	__u64 first_above_time;  /* us; 0: not above the setpoint (u64: see time_to_us) */
	__u64 next_time;         /* us */
	__u32 cnt_rtt;           /* n: cuts in this episode + 1 */
	__u16 rec_inv_sqrt;      /* 1/sqrt(n) in 1/65536 */
};

static __always_inline __u32 ms2time(__u64 ms)
{
	return (ms * 1000000) >> CODEL_SHIFT;
}

/* In 64 bits where the patch's u32 fields overflow once the codel clock passes 2^32*1000/1024
 * (the last 103 s of every 73.3 min of uptime): read back, next_time then lay ~103 s ahead and
 * C2TCP made no cut (measured: a CI run in that window ran as plain CUBIC, mean RTT 149.9 ms). */
static __always_inline __u64 time_to_us(__u32 t)
{
	return ((__u64)t << CODEL_SHIFT) / 1000;
}

/* The patch's Newton_step: rec_inv_sqrt ~ 1/sqrt(cnt). */
static __always_inline __u16 newton_step(__u16 rec_inv_sqrt, __u32 cnt)
{
	__u32 invsqrt = (__u32)rec_inv_sqrt << REC_INV_SQRT_SHIFT;
	__u32 invsqrt2 = ((__u64)invsqrt * invsqrt) >> 32;
	__u64 val = (3ULL << 32) - ((__u64)cnt * invsqrt2);

	val >>= 2;
	val = (val * invsqrt) >> (32 - 2 + 1);
	return val >> REC_INV_SQRT_SHIFT;
}

/* control_law: t + interval * rec_inv_sqrt (reciprocal_scale). */
static __always_inline __u32 control_law(__u32 t, __u32 interval, __u16 rec_inv_sqrt)
{
	__u32 scale = (__u32)rec_inv_sqrt << REC_INV_SQRT_SHIFT;

	return t + (__u32)(((__u64)interval * scale) >> 32);
}

static __always_inline void c2tcp_pkts_acked(struct sock *sk, struct c2tcp *ca, __u32 rtt_us)
{
	struct tcp_sock *tp = tcp_sk(sk);
	__u32 setpoint_ms, setpoint, interval, now, rtt, next;

	if (ca->min_urtt == 0 || ca->min_urtt > rtt_us)
		ca->min_urtt = rtt_us;
	setpoint_ms = (ca->min_urtt / 1000) * C2TCP_ALPHA / C2TCP_X_SCALE;
	setpoint = ms2time(setpoint_ms);
	interval = setpoint;
	now = bpf_ktime_get_ns() >> CODEL_SHIFT;
	rtt = ms2time(rtt_us / 1000);
	next = ms2time(ca->next_time / 1000);
	if ((__s32)(setpoint - rtt) >= 0) {
		/* Below the setpoint: the episode ends; an extra additive increase. */
		__u32 rtt_ms = rtt_us / 1000;

		ca->first_above_time = 0;
		ca->cnt_rtt = 1;
		tp->snd_cwnd_cnt += setpoint_ms / (rtt_ms ? rtt_ms : 1);
		if (tp->snd_cwnd_cnt >= tp->snd_cwnd) {
			__u32 delta = tp->snd_cwnd_cnt / tp->snd_cwnd;

			tp->snd_cwnd_cnt -= delta * tp->snd_cwnd;
			tcp_snd_cwnd_set(tp, min_t(__u32, tp->snd_cwnd + delta, tp->snd_cwnd_clamp));
		}
	} else if (ca->first_above_time == 0) {
		ca->first_above_time = time_to_us(now + interval);
		ca->next_time = ca->first_above_time;
		ca->cnt_rtt = 1;
		ca->rec_inv_sqrt = newton_step(0xffff, ca->cnt_rtt);
	} else if ((__s32)(now - next) > 0) {
		/* Above the setpoint a whole interval: cut to one packet, as CoDel drops. */
		ca->next_time = time_to_us(control_law(now, interval, ca->rec_inv_sqrt));
		ca->cnt_rtt++;
		ca->rec_inv_sqrt = newton_step(ca->rec_inv_sqrt, ca->cnt_rtt);
		tp->snd_ssthresh = cubictcp_recalc_ssthresh(sk);
		tcp_snd_cwnd_set(tp, 1);
		tp->snd_cwnd_cnt = 0;
	}
}

SEC("struct_ops")
void BPF_PROG(c2tcp_init, struct sock *sk)
{
	struct c2tcp *ca = inet_csk_ca(sk);

	cubictcp_init(sk);
	ca->min_urtt = 0;
	ca->first_above_time = 0;
	ca->next_time = 0;
	ca->cnt_rtt = 1;
	ca->rec_inv_sqrt = 0;
}

SEC("struct_ops")
void BPF_PROG(c2tcp_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct c2tcp *ca = inet_csk_ca(sk);
	__s32 rtt_us = sample->rtt_us;

	cubictcp_acked(sk, sample);
	if (rtt_us < 0)
		return;
	/* bictcp_acked: discard delay samples within 1 s (HZ jiffies) of an epoch's start. */
	if (ca->cubic.epoch_start && (__s32)(tcp_jiffies32() - ca->cubic.epoch_start) < (__s32)CONFIG_HZ)
		return;
	c2tcp_pkts_acked(sk, ca, rtt_us);
}

SEC("struct_ops")
__u32 BPF_PROG(c2tcp_ssthresh, struct sock *sk)
{
	return cubictcp_recalc_ssthresh(sk);
}

SEC("struct_ops")
void BPF_PROG(c2tcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	cubictcp_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
void BPF_PROG(c2tcp_state, struct sock *sk, __u8 new_state)
{
	cubictcp_state(sk, new_state);
}

SEC("struct_ops")
void BPF_PROG(c2tcp_cwnd_event, struct sock *sk, enum tcp_ca_event event)
{
	cubictcp_cwnd_event(sk, event);
}

SEC("struct_ops")
__u32 BPF_PROG(c2tcp_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops rove_c2tcp = {
	.init = (void *)c2tcp_init,
	.ssthresh = (void *)c2tcp_ssthresh,
	.cong_avoid = (void *)c2tcp_cong_avoid,
	.set_state = (void *)c2tcp_state,
	.undo_cwnd = (void *)c2tcp_undo_cwnd,
	.cwnd_event = (void *)c2tcp_cwnd_event,
	.pkts_acked = (void *)c2tcp_acked,
	.name = "c2tcp",
};
