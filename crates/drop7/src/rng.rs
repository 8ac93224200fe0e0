//! The reference simulator's random primitives and its seed → game mapping (docs/design/drop7-SPEC.md §3).
//!
//! Everything is arithmetic mod 2³². The constants are ASCII domain tags ("NEXT", "REVL",
//! "TRAC") so that the disc stream, the reveal streams and the trace policy never overlap.

/// Domain tag of the headless disc stream, ASCII "NEXT".
pub const DOMAIN_NEXT: u32 = 0x4e45_5854;
/// Domain tag of the per-move reveal stream, ASCII "REVL".
pub const DOMAIN_REVEAL: u32 = 0x5245_564c;
/// Domain tag of the reference trace policy's action stream, ASCII "TRAC".
pub const DOMAIN_TRACE: u32 = 0x5452_4143;
/// Golden-ratio increment used to separate move numbers in the disc stream.
pub const GOLDEN: u32 = 0x9e37_79b9;
/// Murmur3 constant used to separate move numbers in the reveal stream.
pub const MURMUR_C: u32 = 0x85eb_ca6b;

/// A 32-bit finalising hash (the "lowbias32" mixer).
#[inline]
pub const fn mix32(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    x
}

/// Map 32 random bits to a disc 1..=7 exactly as the reference does: `((b·7) >> 32) + 1`.
#[inline]
pub const fn disc_from_bits(bits: u32) -> u8 {
    (((bits as u64 * 7) >> 32) + 1) as u8
}

/// Mulberry32, the reference's small generator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mulberry32 {
    state: u32,
}

impl Mulberry32 {
    pub const fn new(seed: u32) -> Self {
        Self { state: seed }
    }

    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        self.state = self.state.wrapping_add(0x6d2b_79f5);
        let mut z = self.state;
        z = (z ^ (z >> 15)).wrapping_mul(z | 1);
        z ^= z.wrapping_add((z ^ (z >> 7)).wrapping_mul(z | 61));
        z ^ (z >> 14)
    }

    /// One disc 1..=7.
    #[inline]
    pub fn next_disc(&mut self) -> u8 {
        disc_from_bits(self.next_u32())
    }
}

/// The 32 bits behind `disc(seed, m)`.
#[inline]
pub const fn headless_disc_bits(seed: u32, moves_played: u32) -> u32 {
    mix32(seed ^ moves_played.wrapping_add(1).wrapping_mul(GOLDEN) ^ DOMAIN_NEXT)
}

/// The disc dropped on the move played from `moves_played = m` of game `seed`. It depends
/// only on (seed, m), so every policy sees the same disc sequence.
#[inline]
pub const fn headless_disc(seed: u32, moves_played: u32) -> u8 {
    disc_from_bits(headless_disc_bits(seed, moves_played))
}

/// The seed of the reveal stream for the move played from `moves_played = m` (a fresh
/// Mulberry32 per move).
#[inline]
pub const fn reveal_seed(seed: u32, moves_played: u32) -> u32 {
    mix32(seed ^ moves_played.wrapping_add(1).wrapping_mul(MURMUR_C) ^ DOMAIN_REVEAL)
}

pub use crate::seeds::{parse_seed, seed_hex};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_examples() {
        assert_eq!(mix32(1), 0x688990c0);
        let mut m = Mulberry32::new(1);
        assert_eq!(
            [m.next_u32(), m.next_u32(), m.next_u32()],
            [0xa087eaf3, 0x00b349c9, 0x8706c4eb]
        );
        let discs: Vec<u8> = (0..10).map(|m| headless_disc(0, m)).collect();
        assert_eq!(discs, [5, 1, 1, 3, 3, 1, 1, 5, 4, 2]);
        let discs: Vec<u8> = (0..20).map(|m| headless_disc(0xa52f2140, m)).collect();
        assert_eq!(
            discs,
            [7, 2, 2, 7, 4, 7, 5, 7, 7, 1, 7, 2, 3, 5, 3, 1, 3, 4, 1, 3]
        );
        assert_eq!(reveal_seed(0xa52f2140, 0), 0x6522da64);
    }
}
