//! Fitting the evaluation to games: the hand evaluation's weights ([`tune`]) and the network
//! ([`nettrain`]), both from the self-play corpus, both resumable.

pub mod nettrain;
pub mod tune;
