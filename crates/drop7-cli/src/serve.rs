//! `drop7 serve`: argument mapping over `drop7_serve`.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

use clap::Args;

use crate::args::ModelArg;

#[derive(Args)]
pub struct ServeArgs {
    /// Results directory to browse: `play` results files, screen directories and reports,
    /// training runs (progress.jsonl), figures. Nothing outside it is ever read.
    #[arg(long, default_value = ".", value_name = "DIR")]
    dir: PathBuf,
    /// TCP port; 0 picks a free one (the address is printed on stdout).
    #[arg(long, allow_negative_numbers = true, default_value_t = 8077)]
    port: u16,
    /// Address to listen on. The default serves this machine only; another address exposes
    /// the results directory to the network.
    #[arg(long, default_value = "127.0.0.1", value_name = "IP")]
    bind: IpAddr,
    #[command(flatten)]
    model: ModelArg,
}

pub fn serve(a: ServeArgs) -> anyhow::Result<()> {
    let cfg = drop7_serve::Config {
        dir: a.dir,
        addr: SocketAddr::new(a.bind, a.port),
        model: a.model.model,
    };
    let mut printed = Ok(());
    drop7_serve::run(cfg, |bound, dir| {
        let host = match bound.ip() {
            IpAddr::V6(ip) => format!("[{ip}]"),
            IpAddr::V4(ip) => ip.to_string(),
        };
        printed = crate::output::print_line(&format!(
            "drop7 serve: http://{host}:{}/ (results: {})",
            bound.port(),
            dir.display()
        ));
        if !bound.ip().is_loopback() {
            eprintln!(
                "note: listening on {bound}: anyone who can reach it can read {}",
                dir.display()
            );
        }
    })?;
    printed
}
