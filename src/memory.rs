//! The command line's default memory limit: three quarters of the memory this process may
//! use, the smaller of the machine's physical memory and its control group's limit, so that a
//! search that would be killed for memory ends `incomplete` instead, and the other models'
//! results still print.

/// The share of the available memory a search may use by default, in percent.
pub const DEFAULT_SHARE: u64 = 75;

/// The memory this process may use, in MiB, and what bounds it (`physical memory`, `the
/// control group's limit`); `None` where the system does not tell.
pub fn available() -> Option<(u64, &'static str)> {
    let physical = physical_mib();
    let group = cgroup_mib();
    match (physical, group) {
        (Some(p), Some(g)) if g < p => Some((g, "the control group's limit")),
        (Some(p), _) => Some((p, "physical memory")),
        (None, Some(g)) => Some((g, "the control group's limit")),
        (None, None) => None,
    }
}

/// The default `--max-memory`, in MiB.
pub fn default_limit() -> Option<u64> {
    available().map(|(mib, _)| mib * DEFAULT_SHARE / 100)
}

fn physical_mib() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib >> 10)
}

/// cgroup v2's `memory.max` of this process's group, else v1's `memory.limit_in_bytes`; an
/// unlimited group (`max`, or v1's huge sentinel) counts as none.
fn cgroup_mib() -> Option<u64> {
    let groups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mut candidates = Vec::new();
    for line in groups.lines() {
        let mut parts = line.splitn(3, ':');
        let (id, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        if id == "0" && controllers.is_empty() {
            candidates.push(format!("/sys/fs/cgroup{path}/memory.max"));
            candidates.push("/sys/fs/cgroup/memory.max".to_string());
        } else if controllers.split(',').any(|c| c == "memory") {
            candidates.push(format!("/sys/fs/cgroup/memory{path}/memory.limit_in_bytes"));
            candidates.push("/sys/fs/cgroup/memory/memory.limit_in_bytes".to_string());
        }
    }
    candidates.iter().find_map(|file| {
        let text = std::fs::read_to_string(file).ok()?;
        let bytes: u64 = text.trim().parse().ok()?;
        // v1 writes "no limit" as a page-rounded i64::MAX.
        (bytes < 1 << 60).then_some(bytes >> 20)
    })
}
