//! Joining corpora played apart: `actuary corpus-merge --into DIR SRC...` enters the closed
//! chunks of other corpora (a Slurm job array's task directories, each a series of game ids
//! of its own) into one corpus, every chunk checked and every refusal made before the first
//! write, the chunks copied whole in order of first game id so that ids still grow from
//! chunk to chunk.
//!
//! It is kept apart from [`crate::data::corpus`], which holds the format, the writer and the
//! loader that every trainer reads: merging is one step of a Slurm job array (its dependent
//! job, the one that writes the main corpus), and none of it is needed to read a corpus. It
//! knows nothing of the record layout: it copies chunk bytes as they are, and takes the
//! writer's lock, the manifest lines and the chunks' descriptions from `corpus`.

use crate::data::corpus::{
    CorpusError, MANIFEST, ManifestEntry, append_manifest_line, check_entry, chunk_name,
    describe_chunk, hex, io, lock_dir, next_seq, part_path, read_bytes, read_manifest,
    unlisted_chunks,
};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Why `actuary corpus-merge` refused. Every chunk is checked and every refusal made before
/// the first write, so a refusal leaves the target as it was.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// A manifest could not be read, or the target could not be written.
    #[error(transparent)]
    Corpus(#[from] CorpusError),
    /// A source chunk that does not parse whole (a torn or corrupt record), whose SHA-256 or
    /// any other field differs from its manifest line, or that holds no game.
    #[error("damaged chunk, not merged: {source}")]
    Damaged {
        #[source]
        source: CorpusError,
    },
    /// The target has a part being written. Closed later, it would get a chunk number above
    /// the merged chunks but smaller game ids, and ids must grow from chunk to chunk.
    #[error("{}: has a part being written (current.part); close it first (`actuary datagen --corpus {} --close`), then merge", dir.display(), dir.display())]
    TargetPart { dir: PathBuf },
    /// A source whose lock is held: a datagen is still writing it.
    #[error("{}: a datagen is still writing it (it is locked); merge a job array's tasks after they finish", dir.display())]
    SourceBusy { dir: PathBuf },
    /// A source that is the target itself.
    #[error("{}: is the target (--into) too", dir.display())]
    SourceIsTarget { dir: PathBuf },
    /// The same chunk (same SHA-256) twice among the sources: a corpus given twice, or a
    /// chunk copied from one to another. Entering both would count its games twice.
    #[error("{}: the same chunk as {} (sha256 {sha256}): a corpus given twice, or a copied chunk", chunk.display(), other.display())]
    Duplicate {
        chunk: PathBuf,
        other: PathBuf,
        sha256: String,
    },
    /// Two chunks share game ids: the same id would be two games (and the hold-out split,
    /// which is by id, would split neither).
    #[error("{}: game ids {first}..={last} overlap {}'s {other_first}..={other_last}", chunk.display(), other.display())]
    Overlap {
        chunk: PathBuf,
        first: u64,
        last: u64,
        other: PathBuf,
        other_first: u64,
        other_last: u64,
    },
    /// A new chunk with ids at or below the target's largest: entered, it would break "ids
    /// only grow from chunk to chunk", which
    /// [`first_game_of_chunk`](crate::data::corpus::first_game_of_chunk) relies on.
    #[error("{}: game ids {first}..={last} are not all above {}'s largest id {largest}; ids only grow from chunk to chunk (`train-net --from-chunk` relies on it), so merge a job array's tasks after they finish, into a corpus whose ids are all below theirs (`datagen --first-id` above its largest)", chunk.display(), dir.display())]
    Below {
        chunk: PathBuf,
        first: u64,
        last: u64,
        dir: PathBuf,
        largest: u64,
    },
}

/// A source chunk that passed the checks: its path and its own description (the manifest
/// line it agrees with).
#[derive(Clone, Debug)]
pub struct MergeSource {
    pub path: PathBuf,
    pub entry: ManifestEntry,
}

/// What a merge did.
#[derive(Debug, Default)]
pub struct MergeReport {
    /// The chunks entered, in order: each source chunk and its new line in the target.
    pub entered: Vec<(PathBuf, ManifestEntry)>,
    /// Source chunks the target held already (same SHA-256), with the target's name for each.
    pub skipped: Vec<(PathBuf, String)>,
    /// What was left alone or repaired, one sentence each: a source's part being written
    /// (never taken), a source's chunk its manifest does not list (not taken), a target
    /// chunk its manifest did not list (entered, as a writer would).
    pub notes: Vec<String>,
}

/// `actuary corpus-merge --into DIR SRC...`: enter the closed chunks of the source corpora
/// into `dir`, holding `dir`'s writer lock (no datagen writes it meanwhile) and each source's
/// (none starts on it). Everything is checked before the first write; then the new chunks are
/// copied in order of first game id, each under `dir`'s next chunk name with its manifest
/// line. A chunk `dir` holds already (same SHA-256) is skipped, not refused: a merge stopped
/// halfway (a kill, a full disk) is finished by running the same command again.
pub fn merge_corpora(dir: &Path, sources: &[PathBuf]) -> Result<MergeReport, MergeError> {
    let _lock = lock_dir(dir)?;
    let target = std::fs::canonicalize(dir).map_err(io(dir))?;
    let (mut have, unlisted) = target_chunks(dir)?;
    let mut notes = Vec::new();
    let mut found = Vec::new();
    // Held to the end: a datagen started on a source now is refused until the merge is done.
    let mut source_locks = Vec::new();
    let mut seen = Vec::new();
    for src in sources {
        let canonical = std::fs::canonicalize(src).ok();
        if canonical.as_ref() == Some(&target) {
            return Err(MergeError::SourceIsTarget { dir: src.clone() });
        }
        // A source given twice is locked once (a second lock would be refused by the first);
        // its chunks are then refused as duplicates.
        if canonical.is_none() || !seen.contains(&canonical) {
            source_locks.push(source_lock(src)?);
        }
        seen.push(canonical);
        found.extend(source_chunks(src, &mut notes)?);
    }
    have.extend(unlisted.iter().cloned());
    let (take, skipped) = plan_merge(dir, &have, found)?;
    // Nothing is written before this line.
    for e in &unlisted {
        append_manifest_line(dir, e)?;
        notes.push(format!(
            "{}: was not in the manifest (a writer stopped before listing it); entered",
            dir.join(&e.chunk).display()
        ));
    }
    let entered = copy_chunks(dir, have, take)?;
    drop(source_locks);
    Ok(MergeReport {
        entered,
        skipped,
        notes,
    })
}

/// The target's chunks: its manifest's lines, and (described, checked against them) the
/// closed chunks it does not list yet, which the merge enters first as a writer opening the
/// directory would. A part being written is refused ([`MergeError::TargetPart`]).
fn target_chunks(dir: &Path) -> Result<(Vec<ManifestEntry>, Vec<ManifestEntry>), MergeError> {
    if part_path(dir).exists() {
        return Err(MergeError::TargetPart {
            dir: dir.to_owned(),
        });
    }
    let listed = read_manifest(dir)?;
    let mut all = listed.clone();
    let mut unlisted = Vec::new();
    for n in unlisted_chunks(dir, &listed)? {
        let path = dir.join(&n);
        let e = describe_chunk(&path)?;
        check_entry(&e, &all).map_err(|why| CorpusError::Invalid { path, why })?;
        all.push(e.clone());
        unlisted.push(e);
    }
    Ok((listed, unlisted))
}

/// Hold a source's writer lock if it has one: a source that a datagen is writing is refused.
/// The lock file is only opened for reading (a finished task's directory may be read-only);
/// on a file system without locks there is nothing to hold.
fn source_lock(src: &Path) -> Result<Option<std::fs::File>, MergeError> {
    let path = src.join(".lock");
    let f = match fileio::open(&path) {
        Ok(f) => f,
        Err(e) => {
            let e = e.into_io();
            if e.kind() == std::io::ErrorKind::NotFound {
                return Ok(None);
            }
            return Err(io(&path)(e).into());
        }
    };
    match f.try_lock() {
        Ok(()) => Ok(Some(f)),
        Err(std::fs::TryLockError::WouldBlock) => Err(MergeError::SourceBusy {
            dir: src.to_owned(),
        }),
        Err(std::fs::TryLockError::Error(_)) => Ok(None),
    }
}

/// A source corpus's listed chunks, each checked ([`verified_chunk`]). Its part being written
/// and the chunks its manifest does not list are left alone, with a note saying so: they are
/// unfinished, and taking them would enter games the source's own writer may still enter.
fn source_chunks(src: &Path, notes: &mut Vec<String>) -> Result<Vec<MergeSource>, MergeError> {
    if !src.join(MANIFEST).is_file() {
        return Err(CorpusError::NotACorpus {
            path: src.to_owned(),
        }
        .into());
    }
    let entries = read_manifest(src)?;
    let part = part_path(src);
    if part.exists() {
        notes.push(format!(
            "{}: unfinished (a part being written), not taken; resume its datagen or close it (`actuary datagen --corpus {} --close`), then merge again",
            part.display(),
            src.display()
        ));
    }
    for n in unlisted_chunks(src, &entries)? {
        notes.push(format!(
            "{}: not in {}'s manifest (its writer stopped before listing it), not taken; `actuary datagen --corpus {} --close` enters it",
            src.join(&n).display(),
            src.display(),
            src.display()
        ));
    }
    entries.iter().map(|e| verified_chunk(src, e)).collect()
}

/// A source chunk checked against its manifest line before anything is written: it parses
/// whole (a torn last record is refused), holds a game, its SHA-256 is the line's, and so is
/// every other field (`core_seconds` to a rounding: a float read back from JSON).
fn verified_chunk(src: &Path, line: &ManifestEntry) -> Result<MergeSource, MergeError> {
    let path = src.join(&line.chunk);
    let damaged = |source: CorpusError| MergeError::Damaged { source };
    let found = describe_chunk(&path).map_err(damaged)?;
    if found.sha256 != line.sha256 {
        return Err(damaged(CorpusError::Checksum {
            path,
            found: found.sha256,
            want: line.sha256.clone(),
        }));
    }
    let why = if found.games == 0 {
        Some("holds no game".to_owned())
    } else if !same_description(&found, line) {
        Some(format!(
            "holds {} games, {} positions, ids {}..={}, {} bytes, commit {}; its manifest line says {} games, {} positions, ids {}..={}, {} bytes, commit {} (or other settings or seconds)",
            found.games,
            found.positions,
            found.first_game,
            found.last_game,
            found.bytes,
            found.commit,
            line.games,
            line.positions,
            line.first_game,
            line.last_game,
            line.bytes,
            line.commit
        ))
    } else {
        None
    };
    match why {
        Some(why) => Err(damaged(CorpusError::Invalid { path, why })),
        None => Ok(MergeSource { path, entry: found }),
    }
}

/// Two descriptions of one chunk agree (the name aside).
fn same_description(a: &ManifestEntry, b: &ManifestEntry) -> bool {
    let counts = |e: &ManifestEntry| (e.bytes, e.games, e.positions, e.first_game, e.last_game);
    counts(a) == counts(b)
        && a.commit == b.commit
        && a.settings == b.settings
        && (a.core_seconds - b.core_seconds).abs() <= 1e-6 * a.core_seconds.abs().max(1.0)
}

/// Do two chunks' id ranges meet?
fn overlap(a: &ManifestEntry, b: &ManifestEntry) -> bool {
    a.first_game <= b.last_game && b.first_game <= a.last_game
}

/// A merge's plan: the chunks to enter, in order, and the source chunks skipped (their path
/// and the name of the target's copy).
type MergePlan = (Vec<MergeSource>, Vec<(PathBuf, String)>);

/// Which source chunks to enter, sorted by first game id, and which the target holds already
/// (same SHA-256: skipped, so a re-run after a merge stopped halfway finishes it); or the
/// first refusal: a chunk given twice, ids shared with the target or another source, ids not
/// above the target's largest. `have` is every chunk of the target.
fn plan_merge(
    dir: &Path,
    have: &[ManifestEntry],
    found: Vec<MergeSource>,
) -> Result<MergePlan, MergeError> {
    let largest = have.iter().map(|e| e.last_game).max();
    let mut take: Vec<MergeSource> = Vec::new();
    let mut skipped = Vec::new();
    for s in found {
        if let Some(h) = have.iter().find(|h| h.sha256 == s.entry.sha256) {
            skipped.push((s.path, h.chunk.clone()));
            continue;
        }
        let e = &s.entry;
        if let Some(t) = take.iter().find(|t| t.entry.sha256 == e.sha256) {
            return Err(MergeError::Duplicate {
                chunk: s.path.clone(),
                other: t.path.clone(),
                sha256: e.sha256.clone(),
            });
        }
        let clash = (have.iter().map(|h| (dir.join(&h.chunk), h)))
            .chain(take.iter().map(|t| (t.path.clone(), &t.entry)))
            .find(|(_, o)| overlap(o, e));
        if let Some((other, o)) = clash {
            return Err(MergeError::Overlap {
                chunk: s.path.clone(),
                first: e.first_game,
                last: e.last_game,
                other,
                other_first: o.first_game,
                other_last: o.last_game,
            });
        }
        if let Some(largest) = largest.filter(|&l| e.first_game <= l) {
            return Err(MergeError::Below {
                chunk: s.path.clone(),
                first: e.first_game,
                last: e.last_game,
                dir: dir.to_owned(),
                largest,
            });
        }
        take.push(s);
    }
    take.sort_by_key(|s| s.entry.first_game);
    Ok((take, skipped))
}

/// Copy each chunk to `dir`'s next chunk name and append its manifest line, in order. The
/// bytes are read again and must still have the checked SHA-256 (a chunk changed since is
/// refused); the copy goes to a temporary file, flushed and renamed, so `dir` never holds a
/// partial chunk. A stop between the rename and the line leaves an unlisted chunk, which the
/// next merge or writer enters.
fn copy_chunks(
    dir: &Path,
    mut have: Vec<ManifestEntry>,
    take: Vec<MergeSource>,
) -> Result<Vec<(PathBuf, ManifestEntry)>, MergeError> {
    let mut entered = Vec::with_capacity(take.len());
    for s in take {
        let name = chunk_name(next_seq(&have));
        let dest = dir.join(&name);
        if dest.exists() {
            // every chunk file of `dir` is listed by now: a new one appeared meanwhile
            let exists = std::io::Error::from(std::io::ErrorKind::AlreadyExists);
            return Err(io(&dest)(exists).into());
        }
        let bytes = read_bytes(&s.path)?;
        let found = hex(&Sha256::digest(&bytes));
        if found != s.entry.sha256 {
            return Err(MergeError::Damaged {
                source: CorpusError::Checksum {
                    path: s.path,
                    found,
                    want: s.entry.sha256,
                },
            });
        }
        fileio::write_atomic(&dest, &bytes).map_err(|e| io(&dest)(e.into_io()))?;
        let e = ManifestEntry {
            chunk: name,
            ..s.entry
        };
        append_manifest_line(dir, &e)?;
        have.push(e.clone());
        entered.push((s.path, e));
    }
    Ok(entered)
}

/// `actuary corpus-merge --into DIR SRC...`: a subcommand of its own beside `corpus`, not a
/// mode of it: `actuary corpus DIR` only reads and checks, and scripts call it that way; this
/// one writes DIR. Hyphenated like `perft-suite` and `train-net`, it is listed next to
/// `corpus` in `actuary --help`.
#[derive(Debug, clap::Args)]
pub struct CorpusMergeArgs {
    /// The corpus the chunks are entered into (made if absent), e.g. data/chess/selfplay.
    /// Its writer lock is held meanwhile, so no datagen writes it; a part being written in it
    /// is refused (close it first with `actuary datagen --corpus DIR --close`).
    #[arg(long, value_name = "DIR")]
    pub into: PathBuf,
    /// Corpus directories whose closed chunks are entered (a job array's task directories,
    /// each written by `actuary datagen --corpus SRC --first-id N`). Each chunk listed in a
    /// source's manifest must parse whole and agree with its line (SHA-256 and every count);
    /// a chunk given twice, game ids shared with DIR or another chunk, or ids not above DIR's
    /// largest are refused with nothing written. A chunk DIR holds already (same SHA-256) is
    /// skipped, so a merge that stopped halfway is finished by running it again. A source's
    /// current.part is unfinished and never taken.
    #[arg(value_name = "SRC", required = true)]
    pub sources: Vec<PathBuf>,
}

impl CorpusMergeArgs {
    /// One line per chunk entered or skipped and per note, then a summary, on stdout.
    pub fn run(&self) -> Result<std::process::ExitCode, crate::LabError> {
        let r = merge_corpora(&self.into, &self.sources)?;
        let dir = self.into.display();
        for n in &r.notes {
            println!("note: {n}");
        }
        for (src, name) in &r.skipped {
            println!("{}: already in {dir} as {name}; skipped", src.display());
        }
        for (src, e) in &r.entered {
            println!(
                "{} -> {dir}/{}: {} games, ids {}..={}, {} positions, sha256 {}",
                src.display(),
                e.chunk,
                e.games,
                e.first_game,
                e.last_game,
                e.positions,
                e.sha256
            );
        }
        let games: u64 = r.entered.iter().map(|(_, e)| e.games).sum();
        let positions: u64 = r.entered.iter().map(|(_, e)| e.positions).sum();
        println!(
            "{dir}: entered {} chunks ({games} games, {positions} positions), skipped {} already there",
            r.entered.len(),
            r.skipped.len()
        );
        Ok(std::process::ExitCode::SUCCESS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::corpus::tests::{game, settings};
    use crate::data::corpus::{CorpusWriter, Filter, LoadCounts, Loader, first_game_of_chunk};

    /// A corpus at `dir` made by the writer: one closed chunk per id list, game `i` of
    /// 3 + i mod 5 plies.
    fn corpus_of(dir: &Path, chunks: &[&[u64]]) {
        let mut w = CorpusWriter::open(dir, settings(), "t").unwrap();
        for ids in chunks {
            for &i in *ids {
                w.push(&game(i, 3 + (i % 5) as usize)).unwrap();
            }
            w.close_part().unwrap().unwrap();
        }
    }

    /// Every file of `dir` but the lock, with its bytes: what a refused merge must not change.
    fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
        let mut v: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap())
            .filter(|e| e.file_name() != ".lock")
            .map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                (name, std::fs::read(e.path()).unwrap())
            })
            .collect();
        v.sort();
        v
    }

    fn ids_and_names(dir: &Path) -> Vec<(String, u64, u64)> {
        read_manifest(dir)
            .unwrap()
            .into_iter()
            .map(|e| (e.chunk, e.first_game, e.last_game))
            .collect()
    }

    /// Every position the loader reads from `dir` (no filter): the game ids, and the counts.
    fn loaded(dir: &Path) -> (Vec<u64>, LoadCounts) {
        let l = Loader {
            filter: Filter::ALL,
            holdout_percent: 0.0,
        };
        let mut ids = std::collections::BTreeSet::new();
        let c = l.for_each(dir, |s, _| {
            ids.insert(s.game);
        });
        (ids.into_iter().collect(), c.unwrap())
    }

    /// Issue 67: a job array's task corpora entered into the main one, in id order whatever
    /// the order they are given in, byte for byte, readable by the loader and the writer.
    #[test]
    fn merge_enters_task_chunks_in_id_order_and_the_loader_reads_them() {
        let d = tempfile::tempdir().unwrap();
        let main = d.path().join("main");
        let (a, b) = (d.path().join("task-0"), d.path().join("task-1"));
        corpus_of(&main, &[&[0, 1]]);
        corpus_of(&a, &[&[11, 10], &[12]]);
        corpus_of(&b, &[&[20, 22, 21]]);
        let r = merge_corpora(&main, &[b.clone(), a.clone()]).unwrap();
        let entered: Vec<_> = r
            .entered
            .iter()
            .map(|(src, e)| (src.clone(), e.chunk.clone()))
            .collect();
        let name = |n: &str| n.to_owned();
        assert_eq!(
            entered,
            vec![
                (a.join("chunk-000001.bin"), name("chunk-000002.bin")),
                (a.join("chunk-000002.bin"), name("chunk-000003.bin")),
                (b.join("chunk-000001.bin"), name("chunk-000004.bin")),
            ]
        );
        assert!(r.skipped.is_empty() && r.notes.is_empty());
        assert_eq!(
            ids_and_names(&main),
            vec![
                (name("chunk-000001.bin"), 0, 1),
                (name("chunk-000002.bin"), 10, 11),
                (name("chunk-000003.bin"), 12, 12),
                (name("chunk-000004.bin"), 20, 22),
            ]
        );
        assert_eq!(
            std::fs::read(main.join("chunk-000004.bin")).unwrap(),
            std::fs::read(b.join("chunk-000001.bin")).unwrap()
        );
        let (ids, c) = loaded(&main);
        assert_eq!(ids, [0, 1, 10, 11, 12, 20, 21, 22]);
        assert_eq!((c.chunks, c.games), (4, 8));
        // game i has 3 + i mod 5 plies: 3+4 + 3+4+5 + 3+4+5
        assert_eq!(c.positions, 31);
        assert_eq!(first_game_of_chunk(&main, 4).unwrap(), 20);
        // A writer opening the merged corpus continues after the largest id.
        assert_eq!(
            CorpusWriter::open(&main, settings(), "t")
                .unwrap()
                .next_id(),
            23
        );
        // Run again: every chunk is there already, skipped; nothing is written.
        let before = snapshot(&main);
        let r = merge_corpora(&main, &[a.clone(), b.clone()]).unwrap();
        assert!(r.entered.is_empty());
        let skipped: Vec<_> = r.skipped.iter().map(|(_, n)| n.as_str()).collect();
        assert_eq!(
            skipped,
            ["chunk-000002.bin", "chunk-000003.bin", "chunk-000004.bin"]
        );
        assert_eq!(snapshot(&main), before);
    }

    /// A merge killed between copying a chunk and listing it, run again: the copied chunk is
    /// entered (as a writer would enter it), the chunks there already are skipped, and the
    /// rest is merged.
    #[test]
    fn a_merge_stopped_halfway_is_finished_by_running_it_again() {
        let d = tempfile::tempdir().unwrap();
        let main = d.path().join("main");
        let (a, b, c) = (d.path().join("a"), d.path().join("b"), d.path().join("c"));
        corpus_of(&main, &[&[0]]);
        corpus_of(&a, &[&[5, 6]]);
        corpus_of(&b, &[&[7]]);
        corpus_of(&c, &[&[9, 8]]);
        merge_corpora(&main, std::slice::from_ref(&a)).unwrap();
        // b's chunk copied in, its manifest line never written
        std::fs::copy(b.join("chunk-000001.bin"), main.join("chunk-000003.bin")).unwrap();
        let r = merge_corpora(&main, &[a.clone(), b.clone(), c.clone()]).unwrap();
        let skipped: Vec<_> = r.skipped.iter().map(|(_, n)| n.as_str()).collect();
        assert_eq!(skipped, ["chunk-000002.bin", "chunk-000003.bin"]);
        assert_eq!(r.entered.len(), 1);
        assert!(
            r.notes.len() == 1 && r.notes[0].contains("chunk-000003.bin: was not in the manifest"),
            "{:?}",
            r.notes
        );
        let ids: Vec<_> = ids_and_names(&main)
            .into_iter()
            .map(|(_, f, l)| (f, l))
            .collect();
        assert_eq!(ids, [(0, 0), (5, 6), (7, 7), (8, 9)]);
    }

    /// In `d`: `main` (ids 0..=1, 10), a `good` source (20..=21) and one source per refusal;
    /// returns the SHA-256 that `wrong-sha`'s manifest line no longer has.
    fn bad_sources(d: &Path) -> String {
        let p = |n: &str| d.join(n);
        corpus_of(&p("main"), &[&[0, 1], &[10]]);
        corpus_of(&p("good"), &[&[20, 21]]);
        corpus_of(&p("over-main"), &[&[1, 5]]);
        corpus_of(&p("over-good"), &[&[21, 30]]);
        corpus_of(&p("below"), &[&[5]]);
        corpus_of(&p("torn"), &[&[40, 41]]);
        corpus_of(&p("lying"), &[&[50, 51]]);
        corpus_of(&p("wrong-sha"), &[&[60]]);
        corpus_of(&p("copied"), &[&[70]]);
        std::fs::create_dir(p("copy")).unwrap();
        for f in [MANIFEST, "chunk-000001.bin"] {
            std::fs::copy(p("copied").join(f), p("copy").join(f)).unwrap();
        }
        let cut = p("torn").join("chunk-000001.bin");
        let bytes = std::fs::read(&cut).unwrap();
        std::fs::write(&cut, &bytes[..bytes.len() - 10]).unwrap();
        let lying = p("lying").join(MANIFEST);
        let text = std::fs::read_to_string(&lying).unwrap();
        std::fs::write(&lying, text.replace("\"games\":2", "\"games\":1")).unwrap();
        let wrong = p("wrong-sha").join(MANIFEST);
        let text = std::fs::read_to_string(&wrong).unwrap();
        let sha = read_manifest(&p("wrong-sha")).unwrap()[0].sha256.clone();
        std::fs::write(&wrong, text.replace(&sha, &"0".repeat(64))).unwrap();
        sha
    }

    /// Each refusal names the chunk and the reason, and writes nothing, even when the sources
    /// before the bad one are good.
    #[test]
    fn merge_refuses_overlaps_duplicates_damage_and_ids_below_writing_nothing() {
        let d = tempfile::tempdir().unwrap();
        let p = |n: &str| d.path().join(n);
        let main = p("main");
        let sha = bad_sources(d.path());
        let before = snapshot(&main);
        let refused = |bad: &str, says: &[&str]| {
            let e = merge_corpora(&main, &[p("good"), p(bad)])
                .unwrap_err()
                .to_string();
            for s in says {
                assert!(e.contains(s), "{bad}: {e}");
            }
            assert_eq!(snapshot(&main), before, "{bad}: the target changed");
        };
        let chunk = |n: &str| p(n).join("chunk-000001.bin").display().to_string();
        let over_main = format!("{}: game ids 1..=5 overlap ", chunk("over-main"));
        refused(
            "over-main",
            &[over_main.as_str(), "chunk-000001.bin's 0..=1"],
        );
        let over_good = format!("{}: game ids 21..=30 overlap ", chunk("over-good"));
        let good_ids = format!("{}'s 20..=21", chunk("good"));
        refused("over-good", &[over_good.as_str(), good_ids.as_str()]);
        let below = format!("{}: game ids 5..=5 are not all above ", chunk("below"));
        refused(
            "below",
            &[below.as_str(), "largest id 10", "after they finish"],
        );
        let torn = chunk("torn");
        refused(
            "torn",
            &[torn.as_str(), "a closed chunk ends inside a record"],
        );
        let lying = chunk("lying");
        refused("lying", &[lying.as_str(), "its manifest line says 1 games"]);
        let sha_says = format!(
            "{}: sha256 {sha}, the manifest says 000",
            chunk("wrong-sha")
        );
        refused("wrong-sha", &[sha_says.as_str()]);
        refused("good", &["the same chunk as", "a corpus given twice"]);
        let e = merge_corpora(&main, &[p("copied"), p("copy")])
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&format!(
                "{}: the same chunk as {}",
                chunk("copy"),
                chunk("copied")
            )),
            "{e}"
        );
        refused("nothing-here", &["nothing-here: not a corpus directory"]);
        refused("main", &["main: is the target (--into) too"]);
        // Nothing was written by any of them: the good source merges now.
        assert_eq!(snapshot(&main), before);
        merge_corpora(&main, &[p("good")]).unwrap();
        assert_eq!(read_manifest(&main).unwrap().len(), 3);
    }

    /// The target's part being written is refused (closed later, it would number above the
    /// merged chunks with smaller ids); a source's part is left alone with a note; a source a
    /// datagen is writing is refused.
    #[test]
    fn merge_takes_no_part_and_no_source_being_written() {
        let d = tempfile::tempdir().unwrap();
        let (main, src) = (d.path().join("main"), d.path().join("src"));
        corpus_of(&main, &[&[0]]);
        corpus_of(&src, &[&[10]]);
        // src: a killed writer's part with game 11
        let mut w = CorpusWriter::open(&src, settings(), "t").unwrap();
        w.push(&game(11, 4)).unwrap();
        let e = merge_corpora(&main, std::slice::from_ref(&src))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("src: a datagen is still writing it (it is locked)"),
            "{e}"
        );
        drop(w);
        // main: a killed writer's part
        let mut w = CorpusWriter::open(&main, settings(), "t").unwrap();
        w.push(&game(1, 4)).unwrap();
        drop(w);
        let before = snapshot(&main);
        let e = merge_corpora(&main, std::slice::from_ref(&src))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("main: has a part being written (current.part); close it first"),
            "{e}"
        );
        assert_eq!(snapshot(&main), before);
        CorpusWriter::open(&main, settings(), "t")
            .unwrap()
            .close()
            .unwrap()
            .unwrap();
        let r = merge_corpora(&main, std::slice::from_ref(&src)).unwrap();
        assert_eq!(r.entered.len(), 1);
        assert!(
            r.notes.len() == 1 && r.notes[0].contains("current.part: unfinished"),
            "{:?}",
            r.notes
        );
        let ids: Vec<_> = ids_and_names(&main)
            .into_iter()
            .map(|(_, f, l)| (f, l))
            .collect();
        assert_eq!(ids, [(0, 0), (1, 1), (10, 10)]);
    }
}
