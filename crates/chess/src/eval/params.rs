//! Every weight of the evaluation, generated at build time from
//! `data/chess/eval-params.txt` (see `crates/chess/build.rs`): one constant per parameter,
//! plus the flat list ([`VALUES`], [`NAMES`], [`id`]) that the trace and the tuner index.
//!
//! Constants, not a table read at run time: tuned weights cost the engine nothing.

use super::S;

include!(concat!(env!("OUT_DIR"), "/eval_params.rs"));

/// `(index in VALUES, value)` of a parameter entry: `p!(DOUBLED)`, `p!(PASSED_BY_RANK[r])`,
/// `p!(PST[piece][sq])`. Index and value come from the same generated name, so an evaluation
/// term and its trace coefficient cannot refer to different weights.
macro_rules! p {
    ($name:ident) => {
        ($crate::eval::params::id::$name, $crate::eval::params::$name)
    };
    ($name:ident [$i:expr]) => {{
        let i = $i;
        (
            $crate::eval::params::id::$name + i,
            $crate::eval::params::$name[i],
        )
    }};
    ($name:ident [$i:expr] [$j:expr]) => {{
        let (i, j) = ($i, $j);
        let row = $crate::eval::params::$name[0].len();
        (
            $crate::eval::params::id::$name + i * row + j,
            $crate::eval::params::$name[i][j],
        )
    }};
}
pub(crate) use p;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flat_list_indexes_the_constants() {
        assert_eq!(NAMES.len(), COUNT);
        assert_eq!(p!(PST[1][28]), (id::PST + 64 + 28, PST[1][28]));
        assert_eq!(VALUES[id::PST + 64 + 28], PST[1][28]);
        assert_eq!(NAMES[id::PASSED_BY_RANK + 6], "PASSED_BY_RANK[6]");
        assert_eq!(VALUES[id::TEMPO], TEMPO);
        assert_eq!(NAMES[COUNT - 1], "TEMPO");
        // Names are unique.
        let mut n = NAMES.to_vec();
        n.sort_unstable();
        n.dedup();
        assert_eq!(n.len(), COUNT);
    }
}
