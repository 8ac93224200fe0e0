//! Drive the real `actuary` binary with python-chess (tests/uci_session.py): self-play games
//! at a fast time control, `stop` during `go infinite`, malformed input.
//! python-chess is required: CI installs it (`pip install chess`); without it this FAILS.

use std::process::Command;

use crate::common::ACTUARY;

#[test]
fn python_chess_uci_session() {
    let _cpu = crate::common::alone();
    let probe = Command::new("python3")
        .args(["-c", "import chess, chess.engine"])
        .output();
    match probe {
        Ok(o) if o.status.success() => {}
        Ok(o) => panic!(
            "python-chess is not installed (pip install chess); this test needs it.\n{}",
            String::from_utf8_lossy(&o.stderr)
        ),
        Err(e) => panic!("python3 not found ({e}); this test needs python3 with python-chess"),
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/uci_session.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(ACTUARY)
        .output()
        .expect("run uci_session.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "uci_session.py failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("ALL OK"), "{stdout}\n{stderr}");
}
