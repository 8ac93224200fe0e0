//! The bad-input corpus (`tests/data/bad-input.json`): hostile and careless `drop7` command
//! lines, standard inputs and files, each with its expected outcome, run by the shared runner
//! (`corpus`: schema and rules), with the damaged model files the cases name made here.

use std::path::Path;

use ntuple::layout::Layout;
use ntuple::model;
use ntuple::tables::{OPTIMISTIC_TOTAL, Tables};

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Model files every case may name as `$MODELS/...` (small layout: 120 MB of weights, most
/// of the fixtures compressed to almost nothing).
fn make_models(d: &Path) {
    let layout = Layout::parse("win23,phase=none").unwrap();
    let t = Tables::new(layout, OPTIMISTIC_TOTAL, false).unwrap();
    for (i, v) in [(0u64, 1.5f32), (77, -2.0), (4_000_000, 0.25)] {
        t.set_weight(i, v);
    }
    // intact: plain with its sidecar, and compressed
    model::save(&t, &d.join("good.bin"), false).unwrap();
    model::save(&t, &d.join("good.bin.zst"), false).unwrap();
    let bytes = std::fs::read(d.join("good.bin")).unwrap();
    let header = 8 + 4 + "win23,phase=none".len() + 8 + 1;
    // the brief's case: copied without its sidecar, one byte changed in the middle
    let mut flipped = bytes.clone();
    flipped[header + bytes.len() / 2 / 4 * 4 + 2] ^= 0x40;
    std::fs::write(d.join("flipped.bin"), &flipped).unwrap();
    // compressed, and changed before compression (decompresses cleanly)
    let mut changed = bytes.clone();
    changed[header + 4 * 1_000_000] ^= 1;
    std::fs::write(
        d.join("changed.bin.zst"),
        zstd::encode_all(&changed[..], 3).unwrap(),
    )
    .unwrap();
    // cut inside the weights; and inside the checksum
    std::fs::write(d.join("truncated.bin"), &bytes[..header + 4000]).unwrap();
    std::fs::write(
        d.join("cut-checksum.bin.zst"),
        zstd::encode_all(&bytes[..bytes.len() - 5], 3).unwrap(),
    )
    .unwrap();
    // trailing bytes
    let mut longer = bytes.clone();
    longer.extend_from_slice(b"\n");
    std::fs::write(
        d.join("trailing.bin.zst"),
        zstd::encode_all(&longer[..], 3).unwrap(),
    )
    .unwrap();
    // intact, but a sidecar that names another file's hash
    std::fs::write(
        d.join("stale.bin.zst"),
        std::fs::read(d.join("good.bin.zst")).unwrap(),
    )
    .unwrap();
    std::fs::write(
        d.join("stale.bin.zst.sha256"),
        format!("{}  stale.bin.zst\n", "ab".repeat(32)),
    )
    .unwrap();
    // D7NTUP01 (before 2026-12-01): no checksum; with and without its sidecar
    let mut v1 = bytes[..bytes.len() - 32].to_vec();
    v1[..8].copy_from_slice(b"D7NTUP01");
    let v1z = zstd::encode_all(&v1[..], 3).unwrap();
    std::fs::write(d.join("old.bin.zst"), &v1z).unwrap();
    std::fs::write(
        d.join("old.bin.zst.sha256"),
        format!("{}  old.bin.zst\n", sha256_hex(&v1z)),
    )
    .unwrap();
    std::fs::write(d.join("old-nosidecar.bin.zst"), &v1z).unwrap();
    // another layout (refused by `model average` beside good.bin.zst)
    let other = Tables::new(
        Layout::parse("win32,phase=none").unwrap(),
        OPTIMISTIC_TOTAL,
        false,
    )
    .unwrap();
    model::save(&other, &d.join("win32.bin.zst"), false).unwrap();
    // NaN and infinite weights
    let nan = Tables::new(
        Layout::parse("win23,phase=none").unwrap(),
        OPTIMISTIC_TOTAL,
        false,
    )
    .unwrap();
    for i in 10..1010 {
        nan.set_weight(i, f32::NAN);
    }
    nan.set_weight(2000, f32::INFINITY);
    model::save(&nan, &d.join("nan.bin.zst"), false).unwrap();
    for w in &nan.weights {
        w.store(f32::NAN.to_bits(), std::sync::atomic::Ordering::Relaxed);
    }
    model::save(&nan, &d.join("all-nan.bin.zst"), false).unwrap();
}

#[test]
fn every_bad_input_has_its_expected_outcome() {
    let models = tempfile::Builder::new()
        .prefix("drop7-bad-input-models-")
        .tempdir()
        .unwrap();
    make_models(models.path());
    // DROP7_BIN: run the corpus against another build (say, one from before a fix).
    let bin = std::env::var("DROP7_BIN").unwrap_or(crate::common::DROP7.into());
    corpus::Runner {
        bin: bin.into(),
        vars: vec![("$MODELS".into(), models.path().display().to_string())],
        env_remove: [
            "DROP7_MODEL",
            "DROP7_LEDGER",
            "SLURM_ARRAY_TASK_ID",
            "SLURM_ARRAY_TASK_COUNT",
            "SLURM_ARRAY_TASK_MIN",
        ]
        .map(String::from)
        .to_vec(),
        // two at a time: most are refusals in milliseconds; model loads take a moment
        workers: 2,
        min_cases: 100,
        ..Default::default()
    }
    .run_file(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/bad-input.json").as_ref());
}
