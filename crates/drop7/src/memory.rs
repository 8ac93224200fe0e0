//! How much memory this process may still take, so that a large allocation (a search's
//! transposition table here, n-tuple tables in `ntuple`) is refused with a message saying how
//! much is needed and free, instead of the process being killed part way. Linux only (it
//! reads `/proc` and the cgroup files); where nothing can be read nothing is known and
//! nothing is refused.

/// Bytes kept free beyond an allocation for the rest of the process and the OS: 1 GiB.
pub const HEADROOM: u64 = 1 << 30;

/// Memory this process may still take, in bytes (None where unknown): `MemAvailable` from
/// /proc/meminfo, lowered to what the cgroup's limit leaves (a container or a Slurm job sees
/// the host's MemAvailable but is killed at its own limit; issue 36) and to the address space
/// left under `RLIMIT_AS` (`ulimit -v`, where an allocation beyond it fails outright).
pub fn available_memory() -> Option<u64> {
    [meminfo_and_cgroup(), address_space_left()]
        .into_iter()
        .flatten()
        .min()
}

/// The memory available when `need` bytes and [`HEADROOM`] do not fit in it (for the
/// refusal's message); `None` when they fit, or when nothing is known.
pub fn shortfall(need: u64) -> Option<u64> {
    available_memory().filter(|&free| !fits(need, free))
}

/// Whether `need` bytes and [`HEADROOM`] fit in `free` bytes.
pub fn fits(need: u64, free: u64) -> bool {
    need.checked_add(HEADROOM).is_some_and(|n| n <= free)
}

/// The address space left under the soft `RLIMIT_AS`: the limit from /proc/self/limits less
/// the process's `VmSize` (None when unlimited or unreadable).
fn address_space_left() -> Option<u64> {
    let soft = address_space_limit(&std::fs::read_to_string("/proc/self/limits").ok()?)?;
    let size = vm_size(&std::fs::read_to_string("/proc/self/status").ok()?)?;
    Some(soft.saturating_sub(size))
}

/// The soft limit of `Max address space` in the text of /proc/self/limits, in bytes
/// (`Max address space  <soft> <hard> bytes`; None when "unlimited", which does not parse).
fn address_space_limit(limits: &str) -> Option<u64> {
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// `VmSize` in the text of /proc/self/status, in bytes (the file gives kB).
fn vm_size(status: &str) -> Option<u64> {
    kilobytes_field(status, "VmSize:")
}

/// `MemAvailable` in the text of /proc/meminfo, in bytes (the file gives kB).
fn mem_available(meminfo: &str) -> Option<u64> {
    kilobytes_field(meminfo, "MemAvailable:")
}

/// The value of the line starting with `key` in a `/proc` file of `key  <n> kB` lines, in
/// bytes.
fn kilobytes_field(text: &str, key: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// MemAvailable, lowered to what the cgroup's limit leaves (v2, then v1).
fn meminfo_and_cgroup() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| mem_available(&text));
    let read =
        |path: &str| -> Option<u64> { std::fs::read_to_string(path).ok()?.trim().parse().ok() };
    // cgroup v2, then v1 (an unlimited v2 limit reads "max", which does not parse).
    let cgroup = [
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
        (
            "/sys/fs/cgroup/memory/memory.limit_in_bytes",
            "/sys/fs/cgroup/memory/memory.usage_in_bytes",
        ),
    ]
    .into_iter()
    .find_map(|(limit, usage)| Some(read(limit)?.saturating_sub(read(usage)?)));
    match (meminfo, cgroup) {
        (Some(m), Some(c)) => Some(m.min(c)),
        (m, c) => m.or(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fields are read from the files' own layouts (copied from a Linux machine), in
    /// bytes; a limit of "unlimited" and a missing line are unknown, not zero.
    #[test]
    fn proc_files_are_read_in_bytes() {
        let meminfo = "MemTotal:        8040524 kB\nMemFree:          301244 kB\nMemAvailable:    5123456 kB\nBuffers:          120000 kB\n";
        assert_eq!(mem_available(meminfo), Some(5_246_418_944));
        assert_eq!(mem_available("MemTotal: 8040524 kB\n"), None);
        let status =
            "Name:\tdrop7\nVmPeak:\t  20480 kB\nVmSize:\t   10240 kB\nVmRSS:\t    4096 kB\n";
        assert_eq!(vm_size(status), Some(10_485_760));
        let limited = "Limit                     Soft Limit           Hard Limit           Units     \nMax stack size            8388608              unlimited            bytes     \nMax address space         2048000000           unlimited            bytes     \n";
        assert_eq!(address_space_limit(limited), Some(2_048_000_000));
        let unlimited =
            "Max address space         unlimited            unlimited            bytes     \n";
        assert_eq!(address_space_limit(unlimited), None);
    }

    /// An allocation fits only with a whole GiB to spare.
    #[test]
    fn an_allocation_fits_with_its_headroom() {
        assert!(fits(0, 1_073_741_824));
        assert!(!fits(1, 1_073_741_824));
        assert!(fits(3_221_225_472, 4_294_967_296));
        assert!(!fits(3_221_225_473, 4_294_967_296));
        assert!(!fits(u64::MAX, u64::MAX));
    }
}
