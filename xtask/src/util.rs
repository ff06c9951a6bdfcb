//! Small helpers shared by the other modules.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

pub type Res<T> = Result<T, String>;

/// Exit status when something could not be built or started.
pub const EXIT_ERROR: u8 = 1;
/// Exit status on a usage error.
pub const EXIT_USAGE: u8 = 2;
/// The guest did not finish in time.
pub const EXIT_TIMEOUT: u8 = 124;
/// The kernel panicked.
pub const EXIT_PANIC: u8 = 125;
/// QEMU exited without the kernel's poweroff line.
pub const EXIT_NO_POWEROFF: u8 = 126;

/// The workspace root (the parent of this crate's directory).
pub fn repo_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

pub fn target_dir(root: &Path) -> PathBuf {
    root.join("target")
}

/// The `cargo` that started us, so nested builds use the same toolchain.
pub fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// Adds context to I/O errors.
pub trait Context<T> {
    fn ctx(self, what: impl FnOnce() -> String) -> Res<T>;
}

impl<T, E: std::fmt::Display> Context<T> for Result<T, E> {
    fn ctx(self, what: impl FnOnce() -> String) -> Res<T> {
        self.map_err(|e| format!("{}: {e}", what()))
    }
}

/// Describes a command for messages.
pub fn show(cmd: &Command) -> String {
    let prog = Path::new(cmd.get_program());
    let mut s = prog
        .file_name()
        .unwrap_or(prog.as_os_str())
        .to_string_lossy()
        .into_owned();
    for a in cmd.get_args() {
        s.push(' ');
        s.push_str(&a.to_string_lossy());
    }
    s
}

/// Runs `cmd` with inherited stdio; fails unless it exits successfully.
pub fn run_inherit(cmd: &mut Command) -> Res<()> {
    let status = cmd.status().ctx(|| format!("cannot run `{}`", show(cmd)))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{}` failed ({status})", show(cmd)))
    }
}

/// Runs `cmd` with stdout and stderr merged into one captured string.
pub fn run_captured(cmd: &mut Command) -> Res<(ExitStatus, String)> {
    let (mut reader, writer) = std::io::pipe().ctx(|| "cannot create a pipe".into())?;
    let writer2 = writer
        .try_clone()
        .ctx(|| "cannot duplicate a pipe".into())?;
    cmd.stdin(Stdio::null()).stdout(writer).stderr(writer2);
    let mut child = cmd.spawn().ctx(|| format!("cannot run `{}`", show(cmd)))?;
    // Drop our copies of the write end, or the read below never sees EOF.
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    let mut bytes = Vec::new();
    let read = reader.read_to_end(&mut bytes);
    let status = child
        .wait()
        .ctx(|| format!("waiting for `{}`", show(cmd)))?;
    read.ctx(|| format!("reading output of `{}`", show(cmd)))?;
    Ok((status, String::from_utf8_lossy(&bytes).into_owned()))
}

/// Like [`run_captured`], but a failure carries the tail of the output.
pub fn run_quiet(cmd: &mut Command) -> Res<String> {
    let (status, out) = run_captured(cmd)?;
    if status.success() {
        Ok(out)
    } else {
        Err(format!(
            "`{}` failed ({status}):\n{}",
            show(cmd),
            tail(&out, 25)
        ))
    }
}

/// The last `n` lines of `s`.
pub fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Whether `prog` can be found on `PATH`.
pub fn on_path(prog: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(prog).is_file()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_takes_last_lines() {
        assert_eq!(tail("a\nb\nc\n", 2), "b\nc");
        assert_eq!(tail("a", 5), "a");
        assert_eq!(tail("", 3), "");
    }

    #[test]
    fn captured_merges_streams() {
        let (status, out) =
            run_captured(Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]))
                .unwrap();
        assert_eq!(status.code(), Some(3));
        assert!(out.contains("out\n") && out.contains("err\n"), "{out}");
        let err = run_quiet(Command::new("sh").args(["-c", "echo boom; false"])).unwrap_err();
        assert!(err.contains("boom"), "{err}");
    }

    #[test]
    fn repo_root_has_workspace_manifest() {
        assert!(repo_root().join("Cargo.toml").is_file());
        assert!(repo_root().join("xtask").is_dir());
    }
}
