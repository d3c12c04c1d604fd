// SPDX-License-Identifier: GPL-2.0
/*
 * The fake sockets of the host replay: a real `struct tcp_sock` (this kernel's layout, from
 * vmlinux.h) per recorded socket, loaded from a line's BEFORE snapshot, and the hook called
 * through the port's struct_ops table ROVE_OPS (-DROVE_OPS=rove_NAME). Only the fields a
 * tcp_sock carries are set; the algorithm's private state (icsk_ca_priv) is the port's own and
 * evolves from init on.
 */
#include "rove_cc.h"
#include "replay.h"

extern struct tcp_congestion_ops ROVE_OPS;

static struct tcp_sock socks[RV_MAX_SOCKS];
/* The MPTCP connection every recorded subflow belongs to (the coupled ports read ->conn). */
static struct mptcp_subflow_context subflow_ctx[RV_MAX_SOCKS];
static char fake_conn;
/* The network namespace of every socket, and each socket's destination address (socket i:
 * i + 1): the key of a port's per-flow parameter map (bbr2plus.bpf.c rove_b2p_params). */
static struct net fake_net = { .ns = { .inum = 4026531840U } };
/* That map, in the ports that have it (the host build's maps are plain globals). */
extern char rove_b2p_params __attribute__((weak));
long rove_map_update(void *map, const void *key, const void *value, unsigned long key_size,
		     unsigned long value_size, unsigned long long flags);

int rv_sock_params(int i, const unsigned int *values, unsigned long count)
{
	struct {
		__u32 netns_ino, daddr;
	} key = { fake_net.ns.inum, (__u32)i + 1 };

	if (!&rove_b2p_params)
		return -1;
	return rove_map_update(&rove_b2p_params, &key, values, sizeof(key),
			       count * sizeof(*values), 0) ? -1 : 0;
}

const char *rv_ops_name(void)
{
	return ROVE_OPS.name;
}

void rv_sock_load(int i, const struct rv_line *l, int mptcp)
{
	struct tcp_sock *tp = &socks[i];
	struct inet_connection_sock *icsk = &tp->inet_conn;

	rv_now_ns = l->now_ns;
	rv_jiffies = l->jiffies;
	rv_current_sk = i;
	tp->tcp_mstamp = l->tcp_mstamp;
	tp->lsndtime = l->lsndtime;
	tp->snd_cwnd = l->snd_cwnd;
	tp->snd_ssthresh = l->ssthresh;
	tp->snd_cwnd_cnt = l->cnt;
	tp->snd_cwnd_clamp = l->clamp;
	tp->snd_una = l->snd_una;
	tp->snd_nxt = l->snd_nxt;
	tp->high_seq = l->high_seq;
	tp->srtt_us = l->srtt_us;
	tp->mdev_us = l->mdev_us;
	tp->packets_out = l->packets_out;
	tp->sacked_out = l->sacked_out;
	tp->lost_out = l->lost_out;
	tp->retrans_out = l->retrans_out;
	tp->delivered = l->delivered;
	tp->lost = l->lost;
	tp->is_cwnd_limited = l->is_cwnd_limited;
	tp->max_packets_out = l->max_packets_out;
	tp->mss_cache = l->mss;
	tp->prior_cwnd = l->prior_cwnd;
	tp->prior_ssthresh = l->prior_ssthresh;
	tp->app_limited = l->app_limited;
	tp->rtt_min.s[0].v = l->min_rtt_us; /* tcp_min_rtt() = minmax_get(&tp->rtt_min) */
	tp->delivered_mstamp = l->delivered_mstamp;
	tp->tcp_clock_cache = l->now_ns;
	tp->tcp_wstamp_ns = l->wstamp_ns;
	icsk->icsk_ca_state = l->ca_state;
	tp->inet_conn.icsk_inet.sk.sk_pacing_rate = l->pacing_rate;
	tp->inet_conn.icsk_inet.sk.sk_pacing_status = l->pacing_needed ? SK_PACING_NEEDED : SK_PACING_NONE;
	/* The simulator's CUBIC models sk_gso_max_size as 65536 (cubic.rs gso_max_size default). */
	tp->inet_conn.icsk_inet.sk.sk_gso_max_size = 65536;
	/* The simulator's BBR family: sk_pacing_shift 10 (bbr.rs PACING_SHIFT, the kernel's
	 * default), no SO_MAX_PACING_RATE. */
	tp->inet_conn.icsk_inet.sk.sk_pacing_shift = 10;
	tp->inet_conn.icsk_inet.sk.sk_max_pacing_rate = ~0UL;
	tp->inet_conn.icsk_inet.sk.__sk_common.skc_net.net = &fake_net;
	tp->inet_conn.icsk_inet.sk.__sk_common.skc_daddr = (__u32)i + 1;
	if (mptcp) {
		tp->is_mptcp = 1;
		subflow_ctx[i].conn = (struct sock *)&fake_conn;
		icsk->icsk_ulp_data = &subflow_ctx[i];
	}
}

void rv_sock_read(int i, struct rv_out *out)
{
	out->cwnd = socks[i].snd_cwnd;
	out->ssthresh = socks[i].snd_ssthresh;
	out->cnt = socks[i].snd_cwnd_cnt;
	out->pacing_rate = socks[i].inet_conn.icsk_inet.sk.sk_pacing_rate;
}

void rv_call(int i, const struct rv_line *l, struct rv_out *out)
{
	struct sock *sk = (struct sock *)&socks[i];
	const char *h = l->hook;
	const struct tcp_congestion_ops *ops = &ROVE_OPS;

	out->ret = 0;
	out->called = 0;
	if (!__builtin_strcmp(h, "init")) {
		__builtin_memset(socks[i].inet_conn.icsk_ca_priv, 0,
				 sizeof(socks[i].inet_conn.icsk_ca_priv));
		if (ops->init) {
			ops->init(sk);
			out->called = 1;
		}
	} else if (!__builtin_strcmp(h, "release")) {
		if (ops->release) {
			ops->release(sk);
			out->called = 1;
		}
	} else if (!__builtin_strcmp(h, "ssthresh")) {
		out->ret = ops->ssthresh(sk);
		out->called = 1;
	} else if (!__builtin_strcmp(h, "undo_cwnd")) {
		out->ret = ops->undo_cwnd(sk);
		out->called = 1;
	} else if (!__builtin_strcmp(h, "cong_avoid")) {
		if (ops->cong_avoid) {
			ops->cong_avoid(sk, l->ack, l->acked);
			out->called = 1;
		}
	} else if (!__builtin_strcmp(h, "cong_control")) {
		struct rate_sample rs = {
			.prior_mstamp = l->rs_prior_mstamp,
			.prior_delivered = l->rs_prior_delivered,
			.delivered = l->rs_delivered,
			.interval_us = l->rs_interval_us,
			.snd_interval_us = l->rs_snd_interval_us,
			.rcv_interval_us = l->rs_rcv_interval_us,
			.rtt_us = l->rs_rtt_us,
			.losses = l->rs_losses,
			.acked_sacked = l->rs_acked_sacked,
			.prior_in_flight = l->rs_prior_in_flight,
			.is_app_limited = l->rs_is_app_limited,
			.is_retrans = l->rs_is_retrans,
		};
		if (ops->cong_control) {
			/* 6.x: cong_control(sk, ack, flag, rs); flag is not recorded (0). */
			ops->cong_control(sk, l->ack, 0, &rs);
			out->called = 1;
		}
	} else if (!__builtin_strcmp(h, "set_state")) {
		if (ops->set_state) {
			ops->set_state(sk, l->new_state);
			out->called = 1;
		}
	} else if (!__builtin_strcmp(h, "cwnd_event")) {
		if (ops->cwnd_event) {
			ops->cwnd_event(sk, (enum tcp_ca_event)l->event);
			out->called = 1;
		}
	} else if (!__builtin_strcmp(h, "pkts_acked")) {
		struct ack_sample s = {
			.pkts_acked = l->pkts_acked,
			.rtt_us = l->rtt_us,
			.in_flight = l->in_flight,
		};
		if (ops->pkts_acked) {
			ops->pkts_acked(sk, &s);
			out->called = 1;
		}
	} else if (!__builtin_strcmp(h, "in_ack_event")) {
		if (ops->in_ack_event) {
			ops->in_ack_event(sk, l->flags);
			out->called = 1;
		}
	}
	rv_sock_read(i, out);
}
