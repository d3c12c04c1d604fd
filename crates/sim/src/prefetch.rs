//! A cache prefetch hint: asks the CPU to bring a value into the cache without waiting for it.
//!
//! The engine uses it where it knows what it will touch a few events ahead and that memory is
//! likely cold: the packet a link delivers next (with tens of thousands of packets in flight,
//! at 10 Gbit/s, the arena is larger than the cache, and a packet was last touched a path delay
//! before it arrives) and a lane's next entries. It is a hint only: it changes no result, and
//! on other architectures it does nothing.

/// Prefetches every 64-byte cache line `value` spans into all cache levels.
#[inline(always)]
pub fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let first = (value as *const T).cast::<i8>();
        let size = std::mem::size_of::<T>();
        if size == 0 {
            return;
        }
        // Every line from the first byte's to the last byte's (a 120-byte packet spans two or
        // three lines, depending on where it starts): one hint every 64 bytes and one at the
        // last byte. The count is a constant of `T`, so the loop unrolls to bare prefetches.
        // SAFETY (both): a prefetch never faults and reads nothing into the program; the
        // addresses are inside `value`.
        for k in 0..size.div_ceil(64) {
            unsafe { _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(64 * k)) };
        }
        unsafe { _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(size - 1)) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
