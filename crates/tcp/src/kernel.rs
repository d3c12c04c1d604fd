//! The kernel this crate follows, as configured on rove's machines: Linux 6.18 built with
//! `CONFIG_HZ_250=y` (`/boot/config-*` of these machines, and Debian's default). Every
//! algorithm reads its clock granularity from here, so a run models one kernel, not a mix.
//!
//! Linux keeps coarse timestamps in jiffies (`tcp_jiffies32`, a wrapping u32 counting `HZ` ticks
//! per second from `INITIAL_JIFFIES`, five minutes before zero) and fine ones in microseconds
//! (`tcp_mstamp`). The congestion control algorithms use jiffies for their long timers:
//! CUBIC's epoch, BBR's and BBRv2's min-RTT filter stamps and PROBE_RTT deadline. At HZ = 250 a
//! jiffy is 4 ms, so a 200 ms PROBE_RTT lasts 51 jiffies (204 ms) before `after()` lets it end,
//! and a min-RTT sample ages in 4 ms steps.

use rove_sim::Nanos;

/// CONFIG_HZ of the kernel modelled (include/linux/jiffies.h `HZ`).
pub const HZ: u32 = 250;

/// The CONFIG_HZ values a kernel can be built with (kernel/Kconfig.hz), for parameters that let
/// a user model another kernel.
pub const HZ_CHOICES: [u32; 4] = [100, 250, 300, 1000];

/// include/linux/jiffies.h: INITIAL_JIFFIES = -300·HZ, so that jiffies wrap five minutes after
/// boot and wrap-around bugs show early. Seconds before time 0.
const INITIAL_JIFFIES_S: u32 = 300;

/// `tcp_jiffies32` at `now` for a kernel of `hz`: ticks since time 0, from INITIAL_JIFFIES,
/// wrapping.
#[inline]
pub fn jiffies_at(now: Nanos, hz: u32) -> u32 {
    // 64-bit arithmetic while `now·hz` fits (for 213 days at HZ=1000), else 128-bit: the same
    // quotient either way; this runs on every ACK.
    let ticks = match now.checked_mul(hz as u64) {
        Some(x) => (x / 1_000_000_000) as u32,
        None => (now as u128 * hz as u128 / 1_000_000_000) as u32,
    };
    ticks.wrapping_add((hz * INITIAL_JIFFIES_S).wrapping_neg())
}

/// `tcp_jiffies32` at `now` on the kernel modelled.
#[inline]
pub fn jiffies(now: Nanos) -> u32 {
    jiffies_at(now, HZ)
}

/// msecs_to_jiffies: rounds up (a timeout never ends early).
#[inline]
pub fn msecs_to_jiffies_at(ms: u32, hz: u32) -> u32 {
    ((ms as u64 * hz as u64).div_ceil(1000)).min(u32::MAX as u64) as u32
}

/// msecs_to_jiffies on the kernel modelled.
#[inline]
pub fn msecs_to_jiffies(ms: u32) -> u32 {
    msecs_to_jiffies_at(ms, HZ)
}

/// usecs_to_jiffies: rounds up.
#[inline]
pub fn usecs_to_jiffies_at(us: u32, hz: u32) -> u64 {
    (us as u64 * hz as u64).div_ceil(1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;
    const MS: Nanos = 1_000_000;
    const S: Nanos = 1_000 * MS;

    #[test]
    fn jiffies_start_five_minutes_before_zero_and_tick_every_4ms() {
        assert_eq!(HZ, 250);
        assert_eq!(jiffies(0), (-75_000i32) as u32);
        assert_eq!(jiffies(300 * S), 0);
        assert_eq!(jiffies(300 * S + 3 * MS), 0);
        assert_eq!(jiffies(300 * S + 4 * MS), 1);
        assert_eq!(jiffies_at(300 * S + 5 * MS, 1000), 5);
    }

    /// Past the point where now·HZ overflows 64 bits (u64::MAX / 1000 ns at HZ=1000, 213
    /// days) the 128-bit path takes over with the same result: 2^62 ns is 4,611,686,018,427
    /// ticks, 3,186,109,819 in 32 bits, 3,185,809,819 after INITIAL_JIFFIES (-300,000); the
    /// last 64-bit time and the first 128-bit one are both 18,446,744,073 ticks.
    #[test]
    fn jiffies_past_the_64_bit_edge() {
        assert_eq!(jiffies_at(1u64 << 62, 1000), 3_185_809_819);
        let edge = u64::MAX / 1000;
        assert!(edge.checked_mul(1000).is_some() && (edge + 1).checked_mul(1000).is_none());
        assert_eq!(jiffies_at(edge, 1000), 1_266_574_889);
        assert_eq!(jiffies_at(edge + 1, 1000), 1_266_574_889);
    }

    #[test]
    fn conversions_round_up_as_the_kernel_does() {
        assert_eq!(msecs_to_jiffies(200), 50);
        assert_eq!(msecs_to_jiffies(201), 51);
        assert_eq!(msecs_to_jiffies(1), 1);
        assert_eq!(msecs_to_jiffies_at(200, 1000), 200);
        assert_eq!(usecs_to_jiffies_at(4001, 250), 2);
        assert_eq!(usecs_to_jiffies_at(4000, 250), 1);
    }
}
