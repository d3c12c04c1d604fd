/* SPDX-License-Identifier: GPL-2.0 */
/*
 * 128-bit unsigned integers for BPF programs, which have no 128-bit type the BPF backend can
 * multiply or divide (clang turns a 128-bit multiply into a libcall the verifier refuses). Used
 * where a port needs an exact product of two 64-bit values or a quotient with more than 64
 * significant bits (olia.bpf.c). Every function is branch-light and loop-bounded.
 */
#ifndef ROVE_U128_H
#define ROVE_U128_H

struct u128 {
	__u64 hi, lo;
};

static __always_inline struct u128 u128_of(__u64 hi, __u64 lo)
{
	struct u128 r = { hi, lo };

	return r;
}

/* a · b, exact (four 32 × 32-bit products). */
static __always_inline struct u128 u128_mul(__u64 a, __u64 b)
{
	__u64 a0 = (__u32)a, a1 = a >> 32, b0 = (__u32)b, b1 = b >> 32;
	__u64 p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
	__u64 mid = (p00 >> 32) + (__u32)p01 + (__u32)p10;

	return u128_of(p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32), (mid << 32) | (__u32)p00);
}

static __always_inline struct u128 u128_add(struct u128 a, struct u128 b)
{
	__u64 lo = a.lo + b.lo;

	return u128_of(a.hi + b.hi + (lo < a.lo), lo);
}

/* a < b, a == b */
static __always_inline bool u128_lt(struct u128 a, struct u128 b)
{
	return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo);
}

static __always_inline bool u128_eq(struct u128 a, struct u128 b)
{
	return a.hi == b.hi && a.lo == b.lo;
}

/* a << s for 0 <= s < 128 (bits shifted out are lost). */
static __always_inline struct u128 u128_shl(struct u128 a, __u32 s)
{
	if (s >= 128)
		return u128_of(0, 0);
	if (s >= 64)
		return u128_of(a.lo << (s - 64), 0);
	if (s == 0)
		return a;
	return u128_of((a.hi << s) | (a.lo >> (64 - s)), a.lo << s);
}

/* a >> s for 0 <= s < 128. */
static __always_inline struct u128 u128_shr(struct u128 a, __u32 s)
{
	if (s >= 128)
		return u128_of(0, 0);
	if (s >= 64)
		return u128_of(0, a.hi >> (s - 64));
	if (s == 0)
		return a;
	return u128_of(a.hi >> s, (a.lo >> s) | (a.hi << (64 - s)));
}

/* Number of significant bits of a (0 for 0). */
static __always_inline __u32 u64_bits(__u64 x)
{
	__u32 n = 0;

	if (x >> 32) { n += 32; x >>= 32; }
	if (x >> 16) { n += 16; x >>= 16; }
	if (x >> 8) { n += 8; x >>= 8; }
	if (x >> 4) { n += 4; x >>= 4; }
	if (x >> 2) { n += 2; x >>= 2; }
	if (x >> 1) { n += 1; x >>= 1; }
	return n + (__u32)x;
}

static __always_inline __u32 u128_bits(struct u128 a)
{
	return a.hi ? 64 + u64_bits(a.hi) : u64_bits(a.lo);
}

/*
 * (n · 2^64) / d and its 64-bit fractional part for d < 2^32, n < d: the two 32-bit digits of
 * the quotient by long division (each step divides a value below 2^64).
 */
static __always_inline __u64 u64_frac_div32(__u64 n, __u64 d)
{
	__u64 x = n << 32, q1 = x / d;

	x = (x - q1 * d) << 32;
	return (q1 << 32) | (x / d);
}

/*
 * floor(a / d) when it is below 2^64, by restoring long division (64 steps); ~0 when it is not
 * (a.hi >= d) or d is 0.
 */
static __always_inline __u64 u128_div64(struct u128 a, __u64 d)
{
	__u64 rem = a.hi, lo = a.lo, q = 0;
	int i;

	if (!d || rem >= d)
		return ~0ULL;
	for (i = 0; i < 64; i++) {
		__u64 top = rem >> 63;

		rem = (rem << 1) | (lo >> 63);
		lo <<= 1;
		q <<= 1;
		if (top || rem >= d) {
			rem -= d;
			q |= 1;
		}
	}
	return q;
}

#endif /* ROVE_U128_H */
