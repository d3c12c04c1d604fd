// SPDX-License-Identifier: GPL-2.0
/*
 * A host harness of olia.bpf.c's fixed point (tests/test_bpf_replay.py,
 * test_olia_fixed_point_is_the_exact_increase): the port compiled as in the replay, its α_r and
 * its counter increment evaluated on connections read from stdin, one per line:
 *
 *     N ME ACKED  (CWND SSTHRESH IN_RECOVERY SRTT_US L_BYTES) × N
 *
 * printing "ALPHA INCREMENT" per line (ALPHA as olia_alpha returns it: 1/a for a > 0, -1/-a for
 * a < 0, 0), for the test to compare with the exact rational values.
 */
#include "olia.bpf.c"

int scanf(const char *fmt, ...);
int printf(const char *fmt, ...);

int main(void)
{
	static struct coupled_conn c;
	unsigned int n, me, acked, i;

	while (scanf("%u %u %u", &n, &me, &acked) == 3) {
		__builtin_memset(&c, 0, sizeof(c));
		for (i = 0; i < n && i < COUPLED_SUBFLOWS; i++) {
			if (scanf("%u %u %u %u %u", &c.cwnd[i], &c.ssthresh[i], &c.in_recovery[i],
				  &c.srtt_us[i], &c.inter_loss_bytes[i]) != 5)
				return 2;
			c.sk[i] = 1000 + i;
		}
		printf("%lld %lld\n", (long long)olia_alpha(&c, me),
		       (long long)increment(&c, me, c.srtt_us[me], c.cwnd[me] ? c.cwnd[me] : 1,
					    acked));
	}
	return 0;
}
