//! Independent, stable random streams per component.
//!
//! A scenario has one root seed. Every component that draws random numbers (a synthetic trace, a
//! link's loss process, its jitter, a flow's start-up randomness) derives its own stream from the
//! root seed and a *label* naming the component, so adding a flow, or a link, never changes the
//! draws of an unrelated component (issue 2: "seeded random streams per component").
//!
//! Convention for labels: the key path of what draws the numbers, with the component's name,
//! e.g. `links.down.trace`, `links.down.loss`, `links.down.jitter`, `flows.reno.1`. Labels are
//! free text; they only need to be distinct and stable.

/// The seed of the random stream labelled `label` under the scenario's root seed.
///
/// `stream_seed(root, label) = splitmix64(root XOR fnv1a64(label))`: FNV-1a (64-bit) turns the
/// label into a well-spread word, and SplitMix64's finaliser (Steele, Lea & Flood 2014, as used to
/// seed xoshiro) mixes it with the root so nearby roots and labels give unrelated seeds. The
/// function is part of the results' reproducibility: changing it changes every run's draws.
pub fn stream_seed(root: u64, label: &str) -> u64 {
    splitmix64(root ^ fnv1a64(label.as_bytes()))
}

/// FNV-1a, 64-bit (offset basis 0xcbf29ce484222325, prime 0x100000001b3).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes.iter().fold(OFFSET_BASIS, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(PRIME)
    })
}

/// One SplitMix64 step: the golden-ratio increment followed by the finaliser.
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_published_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn splitmix64_matches_reference() {
        // First outputs of the reference SplitMix64 generator seeded with 0 (state += golden ratio
        // before each output), as in Vigna's splitmix64.c.
        assert_eq!(splitmix64(0), 0xe220_a839_7b1d_cdaf);
        assert_eq!(splitmix64(0x9e37_79b9_7f4a_7c15), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn streams_are_stable_and_distinct() {
        let a = stream_seed(1, "links.down.trace");
        assert_eq!(a, stream_seed(1, "links.down.trace"));
        assert_ne!(a, stream_seed(2, "links.down.trace"));
        assert_ne!(a, stream_seed(1, "links.up.trace"));
        assert_ne!(stream_seed(0, ""), 0);
    }
}
