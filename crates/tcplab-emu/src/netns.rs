//! The emulator's network namespaces: names, creation, configuration, removal, and the
//! reclaiming of those left behind by an owner that died (SIGKILL).
//!
//! Safety rules (docs/emulation.md, "Safety"):
//! - Every namespace is named `tcplab-<owner pid>-<index>-<host>`. Nothing else is ever
//!   created, configured or deleted: `ip` is only ever run with `-n NAME` for a NAME
//!   this process created (`Namespaces::ip`), and sysctls are written only by a thread
//!   that has entered such a namespace and checked it is not the one it started in.
//! - The root namespace's interfaces, addresses and routes are never touched: TUN
//!   devices are created inside the host namespaces and the emulator process reaches
//!   them only through their file descriptors.
//! - A namespace is owned by the process whose pid is in its name. On start, the
//!   namespaces of owners that no longer run `tcplab-emu` are deleted
//!   (`reclaim_stale`); those of live owners are left alone, so two emulations at once
//!   never collide.
//! - `Namespaces` deletes what it created when dropped (normal exit, error, panic
//!   unwinding, and the signal path, which returns normally).
//!
//! Namespaces are created and deleted with iproute2's `ip netns add/del`, which keeps
//! a bind mount under /run/netns (`ip-netns(8)`).

use std::fs::File;
use std::io::{self, Write};
use std::process::{Command, Stdio};

/// Prefix of every name the emulator creates.
pub const PREFIX: &str = "tcplab-";
/// The emulator's process name (`/proc/PID/comm`), used to tell a live owner.
pub const COMM: &str = "tcplab-emu";
const RUN_NETNS: &str = "/run/netns";

/// The namespace name of host `index` (`host` sanitised to `[A-Za-z0-9_-]`, at most 24 chars).
pub fn ns_name(pid: u32, index: usize, host: &str) -> String {
    let clean: String = host
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .take(24)
        .collect();
    format!("{PREFIX}{pid}-{index}-{clean}")
}

/// The owner pid in a name made by `ns_name`, if it is one.
pub fn owner_of(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(PREFIX)?;
    let (pid, tail) = rest.split_once('-')?;
    if tail.is_empty() {
        return None;
    }
    pid.parse().ok()
}

/// Namespaces of the emulator found under /run/netns: (name, owner pid).
pub fn list_ours() -> Vec<(String, u32)> {
    let mut out = Vec::new();
    if let Ok(dir) = std::fs::read_dir(RUN_NETNS) {
        for e in dir.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if let Some(pid) = owner_of(&name) {
                out.push((name, pid));
            }
        }
    }
    out.sort();
    out
}

/// Deletes the namespaces whose owner is dead (no process with that pid runs
/// `tcplab-emu`); returns their names.
pub fn reclaim_stale() -> Vec<String> {
    let me = std::process::id();
    let mut gone = Vec::new();
    for (name, pid) in list_ours() {
        if pid == me || crate::sys::process_is(pid, COMM) {
            continue;
        }
        if delete(&name).is_ok() {
            gone.push(name);
        }
    }
    gone
}

fn delete(name: &str) -> io::Result<()> {
    assert!(owner_of(name).is_some(), "refusing to delete a namespace not named by the emulator: {name}");
    let out = Command::new("ip").args(["netns", "del", name]).stdin(Stdio::null()).output()?;
    if out.status.success() {
        Ok(())
    } else {
        Err(io::Error::other(format!("ip netns del {name}: {}", String::from_utf8_lossy(&out.stderr).trim())))
    }
}

/// The namespaces this process created; deleted on `teardown` or drop.
#[derive(Default)]
pub struct Namespaces {
    names: Vec<String>,
}

impl Namespaces {
    pub fn new() -> Self {
        Namespaces::default()
    }

    /// Creates the namespace `name` (which must carry this process's pid) and opens it.
    pub fn create(&mut self, name: &str) -> io::Result<File> {
        assert_eq!(owner_of(name), Some(std::process::id()), "namespace names carry this process's pid: {name}");
        // Registered before creation, so a half-made namespace is still removed.
        self.names.push(name.to_string());
        let out = Command::new("ip").args(["netns", "add", name]).stdin(Stdio::null()).output()?;
        if !out.status.success() {
            return Err(io::Error::other(format!("ip netns add {name}: {}", String::from_utf8_lossy(&out.stderr).trim())));
        }
        File::open(format!("{RUN_NETNS}/{name}"))
    }

    /// Runs iproute2 commands (one per line, `ip -batch` syntax) inside namespace
    /// `name`, which must be one of ours.
    pub fn ip(&self, name: &str, commands: &[String]) -> io::Result<()> {
        assert!(self.names.iter().any(|n| n == name), "ip commands only run in the emulator's own namespaces: {name}");
        let mut child = Command::new("ip")
            .args(["-n", name, "-batch", "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()?;
        {
            let mut stdin = child.stdin.take().expect("piped");
            for c in commands {
                writeln!(stdin, "{c}")?;
            }
        }
        let out = child.wait_with_output()?;
        if out.status.success() {
            Ok(())
        } else {
            Err(io::Error::other(format!(
                "ip -n {name} -batch: {} (commands: {})",
                String::from_utf8_lossy(&out.stderr).trim(),
                commands.join("; ")
            )))
        }
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Deletes every namespace created (the TUN devices, addresses and routes inside go
    /// with them once their file descriptors are closed). Returns the failures.
    pub fn teardown(&mut self) -> Vec<String> {
        let mut errors = Vec::new();
        for name in self.names.drain(..).rev() {
            if std::path::Path::new(&format!("{RUN_NETNS}/{name}")).exists() {
                if let Err(e) = delete(&name) {
                    errors.push(e.to_string());
                }
            }
        }
        errors
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        for e in self.teardown() {
            eprintln!("tcplab-emu: clean-up: {e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_the_owner() {
        let n = ns_name(4242, 3, "s0/evil name");
        assert_eq!(n, "tcplab-4242-3-s0_evil_name");
        assert_eq!(owner_of(&n), Some(4242));
        assert_eq!(owner_of("tcplab-x-1"), None);
        assert_eq!(owner_of("other-4242-1"), None);
        assert_eq!(owner_of("tcplab-4242-"), None);
    }
}
