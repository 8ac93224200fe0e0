//! actuary's chess engine: board adapter, tiered evaluation, alpha-beta search, UCI, and the
//! engine's own checks (`bench`, `perft`, EPD `suite`). The laboratory that measures and
//! calibrates it (`chess-lab`) drives the search through [`search::Probe`], whose engine
//! implementation ([`search::NoProbe`]) compiles away.
// No unsafe code, except the network's SIMD kernels (`nnue::simd`: AVX2 and AVX-512 paths,
// the CPU checked once, when the first net is loaded), which call `#[target_feature]`
// functions, and the hash table's prefetch and huge-page hint (`search::tt`).
#![deny(unsafe_code)]

pub mod bench;
pub mod board;
pub mod datafile;
pub mod eval;
pub mod nnue;
pub mod perft;
pub mod search;
pub mod suite;
pub mod uci;

/// Run the engine: the UCI protocol on stdin/stdout until `quit` or end of input. With
/// `lab_options` its `uci` answer also lists the laboratory's options.
pub fn run(lab_options: bool) {
    if lab_options {
        uci::Engine::with_lab_options().run_stdin();
    } else {
        uci::Engine::new().run_stdin();
    }
}
