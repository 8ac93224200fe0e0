//! Extraction as byte shuffles: every pattern of every family is a base-10 number of at most
//! eight digits, each digit one cell (docs/design/drop7-SPEC.md §7). So the board's 49 cells are unpacked once
//! into a 64-byte vector, and eight patterns at a time are built by one byte permutation
//! (`vpermb`, which picks each pattern's cells in digit order) and three multiply-adds that
//! fold the digits in base 10: pairs (×1, ×10), then pairs of pairs (×1, ×100), then the two
//! halves (×1, ×10⁴). The storage stride (5 in a conditioned family) rides along in the
//! first weights, and the placement/rise-clock offsets are one add. Mirroring is a second
//! set of permutations rather than a mirrored board.
//!
//! Needs AVX-512 with VBMI (Ice Lake and later, Zen 4 and later); [`super::active_into`]
//! falls back to the AVX2 or portable extraction elsewhere, and tests check that all three
//! give the same indices.

#[cfg(test)]
use crate::layout::Layout;
#[cfg(test)]
use crate::layout::plan::cell_byte;

/// The kernel's arithmetic lane by lane in plain integers, from the same groups: lets the
/// tests check the recipes on CPUs without VBMI.
#[cfg(test)]
pub(super) fn interpret(
    layout: &Layout,
    board: &drop7::board::Board,
    moves_remaining: u8,
) -> Vec<u64> {
    let mut cells = [0u8; 64];
    for c in 0..7 {
        for r in 0..7 {
            cells[cell_byte(r, c) as usize] = board.cell(r, c);
        }
    }
    let mirror = board.mirror_is_smaller() as usize;
    let phase = super::phase_index(moves_remaining) as usize;
    let fill = layout.fill.bucket(board) * layout.bucket_entries;
    let mut out = Vec::new();
    for g in &layout.groups {
        for lane in 0..8 {
            let byte = |k: usize| {
                let i = 8 * lane + k;
                cells[g.perm[mirror][i] as usize] as i64 * g.weights[i] as i64
            };
            let pair = |k: usize| byte(2 * k) + byte(2 * k + 1);
            let (lo, hi) = (pair(0) + 100 * pair(1), pair(2) + 100 * pair(3));
            out.push((lo + 10_000 * hi) as u64 + g.place[phase][lane] + fill);
        }
    }
    out.truncate(layout.active());
    out
}

#[cfg(target_arch = "x86_64")]
pub(super) mod kernel {
    use std::arch::x86_64::*;

    use drop7::board::Board;

    use super::super::{Active, phase_index};
    use crate::layout::Layout;

    /// Shift control for `vpmultishiftqb`: lanes 0–3 take the eight nibbles of the low
    /// column word of their 64-bit lane, lanes 4–7 those of the high one.
    const CONTROL: [u8; 64] = {
        let mut t = [0u8; 64];
        let mut i = 0;
        while i < 64 {
            let (lane, j) = (i / 8, i % 8);
            t[i] = (4 * j + if lane < 4 { 0 } else { 32 }) as u8;
            i += 1;
        }
        t
    };

    /// [`super::super::active_into`] for CPUs with AVX-512 VBMI.
    #[target_feature(enable = "avx512f,avx512bw,avx512vbmi")]
    pub(in crate::features) fn active(
        layout: &Layout,
        board: &Board,
        moves_remaining: u8,
        out: &mut Active,
    ) {
        let w = board.cols.map(u64::from);
        let pairs = [
            w[0] | w[1] << 32,
            w[2] | w[3] << 32,
            w[4] | w[5] << 32,
            w[6],
        ];
        let data: __m512i = bytemuck::cast([pairs, pairs]);
        let control: __m512i = bytemuck::cast(CONTROL);
        let cells = _mm512_and_si512(
            _mm512_multishift_epi64_epi8(control, data),
            _mm512_set1_epi8(0x0F),
        );
        let mirror = board.mirror_is_smaller() as usize;
        let phase = phase_index(moves_remaining) as usize;
        let fill = _mm512_set1_epi64((layout.fill.bucket(board) * layout.bucket_entries) as i64);
        // i16 pairs (×1, ×100) → i32
        let hundred = _mm512_set1_epi32(100 << 16 | 1);
        let low = _mm512_set1_epi64(0xFFFF_FFFF);
        let ten_thousand = _mm512_set1_epi64(10_000);
        let n = layout.active();
        assert!(8 * layout.groups.len() <= out.idx.len());
        for (g, group) in layout.groups.iter().enumerate() {
            let perm: __m512i = bytemuck::cast(group.perm[mirror]);
            let weights: __m512i = bytemuck::cast(group.weights);
            let place: __m512i = bytemuck::cast(group.place[phase]);
            let d = _mm512_permutexvar_epi8(perm, cells);
            let d2 = _mm512_maddubs_epi16(d, weights);
            let d4 = _mm512_madd_epi16(d2, hundred);
            let pattern = _mm512_add_epi64(
                _mm512_and_si512(d4, low),
                _mm512_mul_epu32(_mm512_srli_epi64::<32>(d4), ten_thousand),
            );
            let idx: [u64; 8] =
                bytemuck::cast(_mm512_add_epi64(_mm512_add_epi64(pattern, place), fill));
            // whole groups: the lanes past the last entry are scratch (see INDEX_CAPACITY)
            out.idx[8 * g..][..8].copy_from_slice(&idx);
        }
        out.len = n;
    }
}
