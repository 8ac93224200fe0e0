//! Invariants of the rules that must hold on any reachable-looking board.

use drop7::board::Board;
use drop7::rng::Mulberry32;
use drop7::rules::play_move;
use proptest::prelude::*;

/// Boards with packed columns of random height and random cell codes (1-9).
fn board() -> impl Strategy<Value = Board> {
    proptest::collection::vec((0usize..=7, proptest::collection::vec(1u32..=9, 7)), 7).prop_map(
        |cols| {
            let mut b = Board::default();
            for (c, (h, cells)) in cols.into_iter().enumerate() {
                for (e, v) in cells.into_iter().take(h).enumerate() {
                    b.cols[c] |= v << (4 * e);
                }
            }
            b
        },
    )
}

fn is_packed(b: &Board) -> bool {
    Board::parse(&b.to_string()).is_ok()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn gravity_keeps_columns_packed(b in board(), col in 0usize..7, disc in 1u8..=7, rise in 1u8..=5, seed: u32) {
        let mut after = b;
        if play_move(&mut after, col, disc, rise, &mut Mulberry32::new(seed), &mut ()).is_ok() {
            prop_assert!(is_packed(&after), "{b} -> {after}");
        }
    }

    #[test]
    fn mirror_twice_is_identity(b in board()) {
        prop_assert_eq!(b.mirrored().mirrored(), b);
        let (canon, flipped) = b.canonical();
        prop_assert_eq!(canon.to_string() <= b.to_string(), true);
        prop_assert_eq!(flipped, b.mirrored().to_string() < b.to_string());
    }

    #[test]
    fn mirror_commutes_with_moves_without_reveals(b in board(), col in 0usize..7, disc in 1u8..=7, rise in 1u8..=5, seed: u32) {
        let (mut x, mut y) = (b, b.mirrored());
        let ox = play_move(&mut x, col, disc, rise, &mut Mulberry32::new(seed), &mut ());
        let oy = play_move(&mut y, 6 - col, disc, rise, &mut Mulberry32::new(seed), &mut ());
        match (ox, oy) {
            (Ok(ox), Ok(oy)) => {
                if ox.revealed == 0 {
                    prop_assert_eq!(ox, oy);
                    prop_assert_eq!(x.mirrored(), y);
                }
            }
            (Err(_), Err(_)) => {}
            (a, b) => prop_assert!(false, "legality differs under mirror: {:?} vs {:?}", a, b),
        }
    }
}
