//! Assembling the initramfs: busybox, /etc, the user-space tests, `--add`
//! files and the command to run.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use crate::args::AddSpec;
use crate::builder::UserBuild;
use crate::cpio;
use crate::util::{Context, Res, run_quiet};

pub const BUSYBOX: &str = "/bin/busybox";
pub const ARGV_PATH: &str = "/.trellis/argv";
/// Where the syscall fuzzer (user/fuzz) is installed.
pub const FUZZ: &str = "/sbin/fuzz";

const DIRS: &[(&str, u32)] = &[
    ("bin", 0o755),
    ("sbin", 0o755),
    ("etc", 0o755),
    ("tmp", 0o1777),
    ("dev", 0o755),
    ("proc", 0o755),
    ("root", 0o700),
    ("tests", 0o755),
    ("usr", 0o755),
    ("usr/bin", 0o755),
    ("usr/sbin", 0o755),
];

pub struct Spec<'a> {
    pub user: Option<&'a UserBuild>,
    pub adds: &'a [AddSpec],
    /// The command after `--`, stored NUL-separated in `/.trellis/argv`.
    pub argv: Option<&'a [String]>,
}

pub struct Stats {
    pub entries: usize,
    pub bytes: usize,
}

#[derive(Debug, PartialEq, Eq)]
enum Node {
    Dir(u32),
    File(u32, Vec<u8>),
    Symlink(String),
}

/// The file tree, keyed by path without the leading `/`. Sorted order puts
/// every directory before its contents.
#[derive(Default)]
struct Tree {
    nodes: BTreeMap<String, Node>,
}

/// `/a//b/` -> `a/b`; rejects `..` and the root itself.
fn norm(path: &str) -> Res<String> {
    let parts: Vec<&str> = path
        .split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect();
    if parts.is_empty() || parts.contains(&"..") {
        return Err(format!("invalid path in the initramfs: `{path}`"));
    }
    Ok(parts.join("/"))
}

impl Tree {
    fn dir(&mut self, path: &str, perm: u32) -> Res<()> {
        self.put(path, Node::Dir(perm))
    }

    /// Inserts `node`, creating missing parent directories (mode 0755).
    fn put(&mut self, path: &str, node: Node) -> Res<()> {
        let path = norm(path)?;
        let mut at = 0;
        while let Some(i) = path[at..].find('/') {
            let parent = &path[..at + i];
            match self.nodes.get(parent) {
                None => {
                    self.nodes.insert(parent.to_string(), Node::Dir(0o755));
                }
                Some(Node::Dir(_)) => {}
                Some(_) => return Err(format!("/{path}: /{parent} is not a directory")),
            }
            at += i + 1;
        }
        let is_dir = matches!(node, Node::Dir(_));
        if !is_dir && matches!(self.nodes.get(&path), Some(Node::Dir(_))) {
            let prefix = format!("{path}/");
            if self.nodes.keys().any(|k| k.starts_with(&prefix)) {
                return Err(format!("cannot replace non-empty directory /{path}"));
            }
        }
        self.nodes.insert(path, node);
        Ok(())
    }

    /// Copies a host file, symlink or directory (recursively) to `guest`.
    fn add_host(&mut self, host: &Path, guest: &str) -> Res<()> {
        let meta =
            std::fs::symlink_metadata(host).ctx(|| format!("cannot read {}", host.display()))?;
        let perm = meta.permissions().mode() & 0o7777;
        let ft = meta.file_type();
        if ft.is_symlink() {
            let target =
                std::fs::read_link(host).ctx(|| format!("cannot read link {}", host.display()))?;
            self.put(guest, Node::Symlink(target.to_string_lossy().into_owned()))
        } else if ft.is_dir() {
            self.dir(guest, perm)?;
            let mut entries: Vec<_> = std::fs::read_dir(host)
                .ctx(|| format!("cannot list {}", host.display()))?
                .collect::<Result<_, _>>()
                .ctx(|| format!("cannot list {}", host.display()))?;
            entries.sort_by_key(|e| e.file_name());
            for e in entries {
                let name = e.file_name();
                let child = format!("{guest}/{}", name.to_string_lossy());
                self.add_host(&e.path(), &child)?;
            }
            Ok(())
        } else if ft.is_file() {
            let data = std::fs::read(host).ctx(|| format!("cannot read {}", host.display()))?;
            self.put(guest, Node::File(perm, data))
        } else {
            eprintln!(
                "xtask: warning: skipping {} (not a file, directory or symlink)",
                host.display()
            );
            Ok(())
        }
    }

    fn to_cpio(&self) -> (Vec<u8>, usize) {
        let mut w = cpio::Writer::new();
        for (path, node) in &self.nodes {
            match node {
                Node::Dir(perm) => w.dir(path, *perm),
                Node::File(perm, data) => w.file(path, *perm, data),
                Node::Symlink(target) => w.symlink(path, target),
            }
        }
        let n = w.entries();
        (w.finish(), n)
    }
}

/// Whether an ELF image requests a program interpreter (is dynamically linked).
pub fn has_interp(elf: &[u8]) -> Res<bool> {
    const PT_INTERP: u32 = 3;
    if elf.len() < 64 || &elf[..4] != b"\x7fELF" || elf[4] != 2 || elf[5] != 1 {
        return Err("not a 64-bit little-endian ELF file".into());
    }
    let u16_at = |o: usize| u16::from_le_bytes([elf[o], elf[o + 1]]) as usize;
    let phoff = u64::from_le_bytes(elf[0x20..0x28].try_into().unwrap_or([0; 8])) as usize;
    let (phentsize, phnum) = (u16_at(0x36), u16_at(0x38));
    for i in 0..phnum {
        let at = phoff + i * phentsize;
        let Some(p_type) = elf.get(at..at + 4) else {
            return Err("truncated program headers".into());
        };
        if u32::from_le_bytes(p_type.try_into().unwrap_or([0; 4])) == PT_INTERP {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Reads the host's busybox and makes sure it is statically linked.
fn read_busybox() -> Res<Vec<u8>> {
    let data = std::fs::read(BUSYBOX)
        .ctx(|| format!("cannot read {BUSYBOX} (install busybox-static: scripts/setup.sh)"))?;
    match has_interp(&data) {
        Ok(false) => Ok(data),
        Ok(true) => Err(format!(
            "{BUSYBOX} is dynamically linked; it would not run in the guest. \
             Install the static build: apt-get install busybox-static"
        )),
        Err(e) => Err(format!("{BUSYBOX}: {e}")),
    }
}

/// The applet paths (`bin/ls`, `usr/bin/wc`, ...) from `busybox --list-full`.
pub fn applets() -> Res<Vec<String>> {
    let out = run_quiet(Command::new(BUSYBOX).arg("--list-full"))?;
    Ok(out
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect())
}

/// The `/.trellis/argv` contents: each argument followed by a NUL byte.
pub fn argv_blob(argv: &[String]) -> Vec<u8> {
    let mut out = Vec::new();
    for a in argv {
        out.extend_from_slice(a.as_bytes());
        out.push(0);
    }
    out
}

fn assemble(spec: &Spec) -> Res<Tree> {
    let mut t = Tree::default();
    for (dir, perm) in DIRS {
        t.dir(dir, *perm)?;
    }
    t.put(BUSYBOX, Node::File(0o755, read_busybox()?))?;
    for applet in applets()? {
        if norm(&applet)? != norm(BUSYBOX)? {
            t.put(&applet, Node::Symlink(BUSYBOX.into()))?;
        }
    }
    t.put(
        "/etc/passwd",
        Node::File(0o644, b"root:x:0:0:root:/root:/bin/sh\n".to_vec()),
    )?;
    t.put("/etc/group", Node::File(0o644, b"root:x:0:\n".to_vec()))?;
    // Name service without a network: getaddrinfo reads these (glibc
    // consults nsswitch.conf first; musl reads hosts directly).
    t.put(
        "/etc/hosts",
        Node::File(0o644, b"127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n".to_vec()),
    )?;
    t.put(
        "/etc/nsswitch.conf",
        Node::File(0o644, b"passwd: files\ngroup: files\nhosts: files dns\n".to_vec()),
    )?;
    if let Some(user) = spec.user {
        add_user(&mut t, user)?;
    }
    for add in spec.adds {
        t.add_host(&add.host, &add.guest)
            .map_err(|e| format!("--add {}:{}: {e}", add.host.display(), add.guest))?;
    }
    if let Some(argv) = spec.argv {
        t.put(ARGV_PATH, Node::File(0o644, argv_blob(argv)))?;
    }
    Ok(t)
}

fn add_user(t: &mut Tree, user: &UserBuild) -> Res<()> {
    match std::fs::read_dir(&user.tests) {
        Ok(rd) => {
            for e in rd {
                let e = e.ctx(|| format!("cannot list {}", user.tests.display()))?;
                let guest = format!("/tests/{}", e.file_name().to_string_lossy());
                t.add_host(&e.path(), &guest)?;
            }
        }
        Err(_) => eprintln!(
            "xtask: warning: {} does not exist; no user-space tests",
            user.tests.display()
        ),
    }
    if user.runner.is_file() {
        t.add_host(&user.runner, "/sbin/test-runner")?;
    } else {
        eprintln!(
            "xtask: warning: {} does not exist; no /sbin/test-runner",
            user.runner.display()
        );
    }
    if user.fuzz.is_file() {
        t.add_host(&user.fuzz, FUZZ)?;
    }
    if let Ok(rd) = std::fs::read_dir(&user.dyn_progs) {
        for e in rd {
            let e = e.ctx(|| format!("cannot list {}", user.dyn_progs.display()))?;
            t.add_host(&e.path(), &format!("/dyn/{}", e.file_name().to_string_lossy()))?;
        }
        add_dynamic_linkers(t)?;
    }
    Ok(())
}

/// The host's dynamic linkers and glibc's libc, at the paths programs
/// built on the host name them (each a file here: the host's may be a
/// symlink to another directory).
const DYNAMIC_LINKERS: &[&str] = &[
    "/lib/ld-musl-x86_64.so.1",
    "/lib64/ld-linux-x86-64.so.2",
    "/lib/x86_64-linux-gnu/libc.so.6",
];

fn add_dynamic_linkers(t: &mut Tree) -> Res<()> {
    for path in DYNAMIC_LINKERS {
        let real = std::fs::canonicalize(path)
            .ctx(|| format!("cannot find {path} (musl-tools and libc6 provide it: scripts/setup.sh)"))?;
        t.add_host(&real, path)?;
    }
    Ok(())
}

/// Builds the archive described by `spec` and writes it to `out`.
pub fn write(spec: &Spec, out: &Path) -> Res<Stats> {
    let (bytes, entries) = assemble(spec)?.to_cpio();
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).ctx(|| format!("cannot create {}", dir.display()))?;
    }
    std::fs::write(out, &bytes).ctx(|| format!("cannot write {}", out.display()))?;
    Ok(Stats {
        entries,
        bytes: bytes.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpio::tests::parse;
    use crate::cpio::{S_IFDIR, S_IFLNK, S_IFREG};

    #[test]
    fn paths_are_normalised() {
        assert_eq!(norm("/a//b/").unwrap(), "a/b");
        assert_eq!(norm("./x").unwrap(), "x");
        assert!(norm("/").is_err());
        assert!(norm("/a/../b").is_err());
    }

    #[test]
    fn parents_come_first_and_conflicts_are_caught() {
        let mut t = Tree::default();
        t.put("/x/y/z", Node::File(0o600, b"z".to_vec())).unwrap();
        t.put("/x-y", Node::Symlink("/x".into())).unwrap();
        assert!(t.put("/x/y/z/w", Node::Dir(0o755)).is_err());
        assert!(t.put("/x", Node::File(0o644, vec![])).is_err());
        let (bytes, n) = t.to_cpio();
        assert_eq!(n, 4);
        let m = parse(&bytes);
        let names: Vec<&str> = m.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["x", "x-y", "x/y", "x/y/z"]);
        assert_eq!(m[0].mode, S_IFDIR | 0o755);
        assert_eq!(m[3].mode, S_IFREG | 0o600);
    }

    #[test]
    fn host_dirs_are_copied_with_modes_and_links() {
        let dir = std::env::temp_dir().join(format!("xtask-initramfs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("sub/run.sh"), b"#!/bin/sh\n").unwrap();
        std::fs::set_permissions(dir.join("sub/run.sh"), PermissionsExt::from_mode(0o750)).unwrap();
        std::os::unix::fs::symlink("sub/run.sh", dir.join("link")).unwrap();
        let mut t = Tree::default();
        t.add_host(&dir, "/opt/pkg").unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            t.nodes.get("opt/pkg/sub/run.sh"),
            Some(&Node::File(0o750, b"#!/bin/sh\n".to_vec()))
        );
        assert_eq!(
            t.nodes.get("opt/pkg/link"),
            Some(&Node::Symlink("sub/run.sh".into()))
        );
        assert_eq!(t.nodes.get("opt"), Some(&Node::Dir(0o755)));
    }

    #[test]
    fn argv_is_nul_terminated() {
        let argv = ["/bin/sh".to_string(), "-c".into(), "exit 3".into()];
        assert_eq!(argv_blob(&argv), b"/bin/sh\0-c\0exit 3\0");
    }

    #[test]
    fn elf_interp_detection() {
        let mut elf = vec![0u8; 64 + 56 * 2];
        elf[..6].copy_from_slice(b"\x7fELF\x02\x01");
        elf[0x20] = 64; // e_phoff
        elf[0x36] = 56; // e_phentsize
        elf[0x38] = 2; // e_phnum
        elf[64] = 1; // PT_LOAD
        assert!(!has_interp(&elf).unwrap());
        elf[64 + 56] = 3; // PT_INTERP
        assert!(has_interp(&elf).unwrap());
        assert!(has_interp(b"#!/bin/sh").is_err());
        if let Ok(sh) = std::fs::read("/bin/sh") {
            // The host's shell is dynamically linked on Debian.
            assert!(has_interp(&sh).unwrap_or(true));
        }
    }

    #[test]
    fn full_archive_when_busybox_is_installed() {
        if read_busybox().is_err() {
            eprintln!("no static {BUSYBOX}; skipping");
            return;
        }
        let argv = ["/bin/echo".to_string(), "hi".into()];
        let spec = Spec {
            user: None,
            adds: &[],
            argv: Some(&argv),
        };
        let (bytes, _) = assemble(&spec).unwrap().to_cpio();
        let m = parse(&bytes);
        let get = |n: &str| {
            m.iter()
                .find(|m| m.name == n)
                .unwrap_or_else(|| panic!("{n}"))
        };
        assert_eq!(get("tmp").mode, S_IFDIR | 0o1777);
        assert_eq!(get("bin/busybox").mode, S_IFREG | 0o755);
        assert_eq!(get("bin/ls").mode, S_IFLNK | 0o777);
        assert_eq!(get("bin/ls").data, b"/bin/busybox");
        assert_eq!(get("etc/passwd").data, b"root:x:0:0:root:/root:/bin/sh\n");
        assert_eq!(get("etc/group").data, b"root:x:0:\n");
        assert_eq!(get(".trellis/argv").data, b"/bin/echo\0hi\0");
        for d in [
            "usr/bin", "usr/sbin", "proc", "dev", "root", "tests", "sbin",
        ] {
            assert_eq!(get(d).mode & S_IFDIR, S_IFDIR, "{d}");
        }
    }
}
