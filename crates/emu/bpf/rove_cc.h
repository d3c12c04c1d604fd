/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every rove eBPF congestion control shares: the kernel's types (vmlinux.h, dumped from
 * this kernel's BTF by the build), the tcp_sock accessors of include/net/tcp.h and
 * include/net/inet_connection_sock.h, and the kernel functions a BPF tcp_congestion_ops may call
 * (kfuncs registered by net/ipv4/bpf_tcp_ca.c: tcp_reno_*, tcp_slow_start, tcp_cong_avoid_ai).
 *
 * Each algorithm is one file NAME.bpf.c defining one struct_ops map `rove_NAME` whose
 * tcp_congestion_ops .name is rove's `cc` name, so `TCP_CONGESTION "NAME"` selects it.
 * Programs are GPL: the kfuncs above are exported to GPL programs only.
 */
#ifndef ROVE_CC_H
#define ROVE_CC_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

/* CONFIG_HZ of the running kernel (libbpf reads /proc/config.gz): every jiffies constant. */
extern unsigned int CONFIG_HZ __kconfig;

#define TCP_INFINITE_SSTHRESH 0x7fffffff /* include/net/tcp.h */
#define USEC_PER_SEC 1000000U
#define USEC_PER_MSEC 1000U

#define min_t(type, a, b) ((type)(a) < (type)(b) ? (type)(a) : (type)(b))
#define max_t(type, a, b) ((type)(a) > (type)(b) ? (type)(a) : (type)(b))

static __always_inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct inet_connection_sock *inet_csk(const struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

static __always_inline void *inet_csk_ca(const struct sock *sk)
{
	return (void *)inet_csk(sk)->icsk_ca_priv;
}

static __always_inline __u32 tcp_snd_cwnd(const struct tcp_sock *tp)
{
	return tp->snd_cwnd;
}

static __always_inline void tcp_snd_cwnd_set(struct tcp_sock *tp, __u32 val)
{
	tp->snd_cwnd = val;
}

static __always_inline bool tcp_in_slow_start(const struct tcp_sock *tp)
{
	return tp->snd_cwnd < tp->snd_ssthresh;
}

/* before()/after() of include/net/tcp.h: sequence-number comparison modulo 2^32. */
static __always_inline bool before(__u32 seq1, __u32 seq2)
{
	return (__s32)(seq1 - seq2) < 0;
}
#define after(seq2, seq1) before(seq1, seq2)

/* tcp_is_cwnd_limited (include/net/tcp.h, 6.x). */
static __always_inline bool tcp_is_cwnd_limited(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if (tp->is_cwnd_limited)
		return true;
	/* In slow start, let cwnd grow to twice what was ACKed. */
	if (tcp_in_slow_start(tp))
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return false;
}

/* tcp_in_cwnd_reduction and tcp_current_ssthresh (include/net/tcp.h). */
static __always_inline bool tcp_in_cwnd_reduction(const struct sock *sk)
{
	return ((1 << TCP_CA_CWR) | (1 << TCP_CA_Recovery)) & (1 << inet_csk(sk)->icsk_ca_state);
}

static __always_inline __u32 tcp_current_ssthresh(const struct sock *sk)
{
	const struct tcp_sock *tp = tcp_sk(sk);

	if (tcp_in_cwnd_reduction(sk))
		return tp->snd_ssthresh;
	return max_t(__u32, tp->snd_ssthresh, (tp->snd_cwnd >> 1) + (tp->snd_cwnd >> 2));
}

/* tcp_jiffies32: the low 32 bits of jiffies (include/net/tcp.h). */
static __always_inline __u32 tcp_jiffies32(void)
{
	return (__u32)bpf_jiffies64();
}

/*
 * usecs_to_jiffies for the HZ values that divide 10^6 (100, 250, 1000: include/linux/jiffies.h,
 * _usecs_to_jiffies rounds up); other HZ values are refused at load time by the loader's check
 * of CONFIG_HZ, see rove_hz_supported.
 */
static __always_inline __u32 usecs_to_jiffies(__u32 us)
{
	__u32 per = USEC_PER_SEC / CONFIG_HZ;
	return (us + per - 1) / per;
}

extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;
extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked) __ksym;

#endif
