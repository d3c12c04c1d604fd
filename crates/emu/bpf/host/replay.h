/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One recorded hook call (crates/tcp/src/cc/record.rs), in a form free of kernel and libc
 * types, shared by replay.c (parsing, comparing: libc) and sock.c (the fake tcp_sock and the
 * struct_ops calls: vmlinux.h).
 */
#ifndef ROVE_REPLAY_H
#define ROVE_REPLAY_H

#define RV_MAX_SOCKS 16

/* Every integer field of a line, as X(name). */
#define RV_FIELDS(X)                                                                         \
	X(n) X(sk) X(acked) X(ack) X(pkts_acked) X(rtt_us) X(in_flight) X(event) X(new_state) \
	X(flags) X(now_ns) X(tcp_mstamp) X(jiffies) X(lsndtime) X(snd_cwnd) X(ssthresh) X(cnt) \
	X(clamp) X(snd_una) X(snd_nxt) X(high_seq) X(srtt_us) X(mdev_us) X(packets_out)       \
	X(sacked_out) X(lost_out) X(retrans_out) X(delivered) X(lost) X(is_cwnd_limited)      \
	X(max_packets_out) X(pacing_rate) X(pacing_needed) X(mss) X(ca_state) X(prior_cwnd) X(prior_ssthresh) X(app_limited) X(min_rtt_us) X(delivered_mstamp)  \
	X(wstamp_ns) X(out_cwnd) X(out_ssthresh) X(out_cnt) X(out_pacing_rate) X(ret) X(enter_cwr) X(rs_prior_delivered)      \
	X(rs_prior_mstamp) X(rs_delivered) X(rs_interval_us) X(rs_snd_interval_us)            \
	X(rs_rcv_interval_us) X(rs_rtt_us) X(rs_acked_sacked) X(rs_losses)                    \
	X(rs_prior_in_flight) X(rs_is_app_limited) X(rs_is_retrans) X(rs_tx_in_flight)        \
	X(rs_prior_lost) X(rs_lost) X(tx_delivered) X(tx_lost) X(tx_in_flight) X(tx_is_app_limited)

struct rv_line {
	char hook[24];
#define RV_DECLARE(name) long long name;
	RV_FIELDS(RV_DECLARE)
#undef RV_DECLARE
};

/* What a hook call left in the socket. */
struct rv_out {
	unsigned int cwnd, ssthresh, cnt, ret;
	unsigned long long pacing_rate;
	int called; /* the ops has the hook (else the kernel would not call anything) */
};

/* sock.c */
void rv_sock_load(int sk, const struct rv_line *l, int mptcp);
void rv_call(int sk, const struct rv_line *l, struct rv_out *out);
void rv_sock_read(int sk, struct rv_out *out);
const char *rv_ops_name(void);
/* Writes a socket's per-flow parameters into the port's map; 0, or -1 if it has none. */
int rv_sock_params(int sk, const unsigned int *values, unsigned long count);

/* The environment the helpers read (env.c). */
extern unsigned long long rv_now_ns;
extern unsigned int rv_jiffies;
extern int rv_current_sk;
void rv_prandom_set(int sk, const unsigned int *values, unsigned long count);

#endif
