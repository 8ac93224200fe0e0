//! The laboratory's data: calibration position pools ([`pool`]), self-play games
//! ([`datagen`]: the command and its text mode; [`selfplay`]: the corpus mode) and the corpus
//! they grow ([`corpus`]: its chunks, manifest and loaders; [`merge`]: corpora played apart,
//! a job array's tasks, entered into one).

pub mod corpus;
pub mod datagen;
pub mod merge;
pub mod pool;
pub mod selfplay;
