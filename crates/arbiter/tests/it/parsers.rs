//! Property tests of the arbiter's parsers: any input is answered without a panic, and what
//! parses prints back to the same value (time control, `--engine` fields, `--sprt` words,
//! book lines).

use std::path::Path;

use arbiter::book::{Book, game_over, parse_line};
use arbiter::engine::{EngineField, EngineSpec};
use arbiter::game::{Adjudication, Limit};
use arbiter::rules::{STARTPOS, legal_moves, parse_position};
use arbiter::sprt::{SprtParam, from_params};
use proptest::prelude::*;

/// Text made of the characters a FEN is made of, so that parsing gets past the first field.
fn fenish() -> impl Strategy<Value = String> {
    proptest::string::string_regex(
        "[pnbrqkPNBRQK1-8/]{8,70} [wb] (-|K?Q?k?q?) (-|[a-h][36]) [0-9]{1,3} [0-9]{1,5}",
    )
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn time_controls(s in "\\PC{0,24}", base in 1u64..=86_400_000, inc in 0u64..=3_600_000) {
        if let Ok(l) = Limit::parse_tc(&s) {
            let Limit::Clock { base_ms, inc_ms } = l else { panic!("{l:?}") };
            prop_assert!((1..=86_400_000).contains(&base_ms) && inc_ms <= 3_600_000);
            prop_assert_eq!(Limit::parse_tc(&l.pgn_tag()), Ok(l));
        }
        let l = Limit::Clock { base_ms: base, inc_ms: inc };
        prop_assert_eq!(Limit::parse_tc(&l.pgn_tag()), Ok(l));
        let _ = Limit::parse_tc(&format!("{base}e-3+{inc}e-3"));
    }

    #[test]
    fn engine_fields(s in "\\PC{0,40}", any in ".{0,40}", name in "[^\\p{Cc}]{1,20}",
                     value in "[^\\p{Cc}]{0,20}") {
        for w in [&s, &any] {
            if let Ok(f) = w.parse::<EngineField>() {
                prop_assert_eq!(f.to_string().parse::<EngineField>(), Ok(f.clone()));
                prop_assert_eq!(&f.to_string(), w);
            }
        }
        let fields = [
            EngineField::Name(name.clone()),
            EngineField::Cmd(format!("./{name}")),
            EngineField::Arg(any.clone()),
            EngineField::Option(name.replace('=', "-"), value.clone()),
        ];
        for f in &fields {
            prop_assert_eq!(f.to_string().parse::<EngineField>(), Ok(f.clone()));
        }
        let words: Vec<String> = fields.iter().map(ToString::to_string).collect();
        let spec = EngineSpec::parse(&words).unwrap();
        prop_assert_eq!(spec.name, name);
        let _ = EngineSpec::parse(&[s.clone(), any.clone()]);
    }

    #[test]
    fn sprt_words(words in proptest::collection::vec("(elo0|elo1|alpha|beta|x)=\\PC{0,12}", 0..5),
                  noise in "\\PC{0,20}", x in -2000.0f64..2000.0, p in 0.0f64..1.0) {
        let mut parsed = Vec::new();
        for w in words.iter().chain([&noise]) {
            if let Ok(param) = w.parse::<SprtParam>() {
                prop_assert_eq!(param.to_string().parse::<SprtParam>(), Ok(param));
                parsed.push(param);
            }
        }
        if let Ok(s) = from_params(&parsed) {
            prop_assert!(s.elo0 < s.elo1 && s.alpha + s.beta < 1.0);
            prop_assert!(s.alpha > 0.0 && s.beta > 0.0);
        }
        for param in [SprtParam::Elo0(x), SprtParam::Elo1(x), SprtParam::Alpha(p), SprtParam::Beta(p)] {
            let back = param.to_string().parse::<SprtParam>();
            if x.abs() <= 1000.0 && p > 0.0 {
                prop_assert_eq!(back, Ok(param));
            }
        }
    }

    #[test]
    fn book_lines(s in "\\PC{0,90}", f in fenish(), bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        for line in [&s, &f] {
            if let Ok(Some(b)) = parse_line(line) {
                let _ = game_over(&b);
                prop_assert_eq!(parse_line(&b.to_string()).ok().flatten(), Some(b.clone()));
            }
        }
        let _ = Book::parse(&bytes, Path::new("x.epd"));
        let _ = Book::parse(format!("{s}\n{f}\n").as_bytes(), Path::new("x.epd"));
        let _ = s.parse::<Adjudication>();
    }

    #[test]
    fn positions_from_playouts_round_trip(seed in any::<u64>(), plies in 0usize..120) {
        let mut b = parse_position(STARTPOS).unwrap();
        let mut x = seed;
        for _ in 0..plies {
            let moves = legal_moves(&b);
            if moves.is_empty() {
                break;
            }
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            b.play(moves[(x >> 33) as usize % moves.len()]);
        }
        let fen = b.to_string();
        prop_assert_eq!(parse_line(&fen).unwrap(), Some(b.clone()));
        // As an EPD line (four fields and an opcode): the same position, clocks reset.
        let four: Vec<&str> = fen.split(' ').take(4).collect();
        let epd = parse_line(&format!("{} bm e4; id \"x\";", four.join(" "))).unwrap().unwrap();
        prop_assert_eq!(epd.hash(), b.hash());
        let book = Book::parse(format!("{fen}\n").as_bytes(), Path::new("x.epd"));
        prop_assert_eq!(book.is_ok(), game_over(&b).is_none());
    }
}
