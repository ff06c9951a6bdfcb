//! `cargo xtask bench`: boots Trellis and Debian's Linux kernel with the same
//! benchmark initramfs (`user/bench`) in the same QEMU configuration, and
//! compares the two. `--smoke` runs each benchmark once on Trellis only.
//!
//! Passes: `icount` (`-icount shift=0,sleep=off`: guest time is the
//! instruction count, so figures are deterministic) and `wall` (plain TCG,
//! guest time follows the host clock).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::args::{AddSpec, Options};
use crate::bench_report::{self, KernelRun, Pass, Report};
use crate::test::{BootEnv, Reporter};
use crate::util::{Context, Res, run_quiet, target_dir};
use crate::{builder, initramfs, mkimage, qemu};

/// The Debian meta-package naming the current cloud kernel.
const LINUX_META: &str = "linux-image-cloud-amd64";
/// Per-boot limits: a full run on either kernel takes several minutes on
/// an idle machine (the fs_* rows write and read hundreds of MiB through a
/// virtio-blk disk), and several times that when the host's cores are
/// shared: a 20-minute limit cut a 56-row icount boot of Linux short at
/// row 17 with the load average at 13 on 2 cores. So the limit grows with
/// the rows: FULL_TIMEOUT plus ROW_TIMEOUT per row.
const FULL_TIMEOUT: Duration = Duration::from_secs(600);
const ROW_TIMEOUT: Duration = Duration::from_secs(90);

/// The per-boot limit for `rows` rows.
pub(crate) fn boot_timeout(rows: usize) -> Duration {
    FULL_TIMEOUT + ROW_TIMEOUT * rows as u32
}

/// How many rows a boot runs: those named, else the whole list.
pub(crate) fn row_count(build: &Path, rows: &[String]) -> usize {
    if !rows.is_empty() {
        return rows.len();
    }
    std::fs::read_to_string(build.join("list")).map_or(64, |l| l.lines().count())
}
const SMOKE_TIMEOUT: Duration = Duration::from_secs(180);
/// How long QEMU may run on after `BENCH-END` or the kernel's last words.
pub(crate) const LINGER: Duration = Duration::from_secs(8);

/// Rows whose time is mostly waiting for the virtio-blk disk (the host
/// serves each request in host time). In the icount pass their figures
/// measure neither kernel's disk path: while a request is in flight
/// Trellis polls (`frame::task::IoPending`), so a wait costs the
/// instructions polled until the host finishes, and Linux halts, so under
/// `-icount sleep=off` its clock jumps to the next timer deadline, however
/// far (Linux's fs_fsync was 2.4 s, 17.6 s and 0.58 s per call in three
/// runs of the same kernel; fs_rand_read_4k 4.8, 61.6 and 10.4 ms). Both
/// depend on the host, not on the instructions, and a ratio between a
/// poll and a clock jump is meaningless (fs_fsync 5149x). So the icount
/// pass still shows these rows and their ratios, in parentheses, but
/// leaves them out of its geometric mean and says so; the wall pass, where
/// guest time is host time, counts them. The crash rows and blk_recovery
/// are Trellis-only (no ratio) and listed for the same reason.
pub const DEVICE_BOUND: &[&str] = &[
    "fs_seq_write_cold",
    "fs_seq_read_cold",
    "fs_rand_read_4k",
    "fs_fsync",
    "fs_seq_read_crash",
    "fs_seq_write_crash",
    "blk_recovery",
];

/// Whether `row` is one of the [`DEVICE_BOUND`] rows.
pub fn is_device_bound(row: &str) -> bool {
    DEVICE_BOUND.contains(&row)
}

/// One benchmark's outcome on one kernel.
#[derive(Debug, Clone, PartialEq)]
pub enum Sample {
    /// A measurement: ns per operation, or MB/s.
    Value(f64, Unit),
    /// The kernel lacks what it needs (the benchmark said `missing`).
    Missing(String),
    /// It ran and failed (`error`), crashed, or never finished.
    Failed(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Ns,
    MBps,
}

impl Unit {
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Ns => "ns",
            Unit::MBps => "MB/s",
        }
    }
}

/// What the driver printed during one boot.
#[derive(Debug, Default)]
pub struct Transcript {
    /// In the order the benchmarks started.
    pub samples: Vec<(String, Sample)>,
    /// CLOCK_BOOTTIME at the start of /init, in ns.
    pub boot_ns: Option<u64>,
    /// Host time from QEMU's start to the `BENCH-BOOT` line.
    pub to_init: Option<Duration>,
    pub ended: bool,
}

/// Parses the driver's output (see user/bench/init.c). `how_it_ended`
/// explains benchmarks that started but never finished.
pub fn parse(lines: &[(Duration, String)], how_it_ended: &str) -> Transcript {
    let mut t = Transcript::default();
    let mut started: Vec<String> = Vec::new();
    let mut results: BTreeMap<String, Sample> = BTreeMap::new();
    let mut exits: BTreeMap<String, String> = BTreeMap::new();
    for (at, raw) in lines {
        // Kernel messages may share the serial line; the protocol words
        // start a line of their own.
        let line = raw.trim_end_matches('\r');
        let Some(pos) = line.find("BENCH") else {
            continue;
        };
        let mut words = line[pos..].split_whitespace();
        match words.next() {
            Some("BENCH-BOOT") => {
                t.boot_ns = words.next().and_then(|w| w.parse().ok());
                t.to_init = Some(*at);
            }
            Some("BENCH-START") => {
                if let Some(name) = words.next() {
                    started.push(name.to_string());
                }
            }
            Some("BENCH-EXIT") => {
                if let Some(name) = words.next() {
                    exits.insert(name.to_string(), words.collect::<Vec<_>>().join(" "));
                }
            }
            Some("BENCH-END") => t.ended = true,
            Some("BENCH") => {
                let (Some(name), Some(what)) = (words.next(), words.next()) else {
                    continue;
                };
                let rest = words.collect::<Vec<_>>().join(" ");
                let sample = match what {
                    "missing" => Sample::Missing(rest),
                    "error" => Sample::Failed(rest),
                    v => match (v.parse::<f64>(), rest.as_str()) {
                        (Ok(x), "ns") if x.is_finite() && x > 0.0 => Sample::Value(x, Unit::Ns),
                        (Ok(x), "MB/s") if x.is_finite() && x > 0.0 => Sample::Value(x, Unit::MBps),
                        _ => Sample::Failed(format!("unparsable result `{}`", &line[pos..])),
                    },
                };
                results.insert(name.to_string(), sample);
            }
            _ => {}
        }
    }
    for name in started {
        let exit = exits.get(&name);
        let sample = match (results.remove(&name), exit.map(String::as_str)) {
            (Some(s), Some("exit 0") | Some("exit 1")) => s,
            (Some(_), Some(how)) | (None, Some(how)) if how.starts_with("signal") => {
                Sample::Failed(format!("crashed ({how})"))
            }
            (Some(s), _) => s,
            (None, Some(how)) => Sample::Failed(format!("no result line ({how})")),
            (None, None) => Sample::Failed(format!("did not finish: {how_it_ended}")),
        };
        t.samples.push((name, sample));
    }
    t
}

/// One QEMU boot of the benchmark initramfs.
pub(crate) struct Guest<'a> {
    pub kernel: &'a Path,
    pub initrd: &'a Path,
    pub cmdline: String,
    pub icount: bool,
    pub timeout: Duration,
    pub log: PathBuf,
    /// A fresh copy of this image is attached as the virtio-blk disk.
    pub disk: Option<&'a Path>,
    /// More QEMU arguments (the profiler's `-plugin`).
    pub extra: Vec<OsString>,
}

/// A QEMU started for a [`Guest`]: the child, its serial lines as they
/// arrive (with the time since the start), and when it started.
pub(crate) struct Spawned {
    pub child: std::process::Child,
    pub lines: mpsc::Receiver<(Duration, String)>,
    pub start: Instant,
}

/// Starts QEMU for `g` (a fresh copy of its disk first); with `input`, the
/// guest's console reads from a pipe the caller writes to
/// (`child.stdin`), else from nothing.
pub(crate) fn spawn(g: &Guest, input: bool) -> Res<Spawned> {
    let mut args: Vec<OsString> = qemu::qemu_args(g.kernel, g.initrd, &g.cmdline);
    args.extend(["-smp", "1"].map(OsString::from));
    args.extend(g.extra.iter().cloned());
    if let Some(template) = g.disk {
        // Every boot starts from the same empty file system.
        let disk = g.log.with_extension("img");
        std::fs::copy(template, &disk).ctx(|| format!("cannot copy {}", template.display()))?;
        args.extend(qemu::disk_args(&[disk]));
    }
    if g.icount {
        args.extend(["-icount", "shift=0,sleep=off"].map(OsString::from));
    }
    let mut cmd = Command::new(qemu::QEMU);
    cmd.args(&args)
        .stdin(if input { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let start = Instant::now();
    let mut child = cmd.spawn().ctx(|| format!("cannot start {}", qemu::QEMU))?;
    let stdout = child.stdout.take().ok_or("no QEMU stdout")?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).split(b'\n') {
            let Ok(line) = line else { break };
            let text = String::from_utf8_lossy(&line).into_owned();
            if tx.send((start.elapsed(), text)).is_err() {
                break;
            }
        }
    });
    Ok(Spawned {
        child,
        lines: rx,
        start,
    })
}

/// Whether a console line is the last thing a boot says: the driver's
/// end, a power-off, or a panic.
pub(crate) fn last_words(line: &str) -> bool {
    line.contains("BENCH-END")
        || line.contains("trellis: poweroff")
        || line.contains("KERNEL PANIC")
        || line.contains("Kernel panic")
}

/// Writes a boot's console lines to `log`.
pub(crate) fn write_log(log: &Path, lines: &[(Duration, String)]) -> Res<()> {
    let text: Vec<&str> = lines.iter().map(|(_, l)| l.as_str()).collect();
    if let Some(dir) = log.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    std::fs::write(log, text.join("\n") + "\n").ctx(|| format!("cannot write {}", log.display()))
}

/// Boots, collects the serial lines with their arrival time, and stops at
/// `BENCH-END` (QEMU is given a moment to power off), a kernel's last
/// words, or the timeout. Returns the lines and how the boot ended.
pub(crate) fn boot(g: &Guest) -> Res<(Vec<(Duration, String)>, String)> {
    let Spawned {
        mut child,
        lines: rx,
        start,
    } = spawn(g, false)?;
    let mut lines = Vec::new();
    let mut finished_at: Option<Instant> = None;
    let mut ended = String::from("QEMU exited");
    loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok((at, line)) => {
                if last_words(&line) && finished_at.is_none() {
                    finished_at = Some(Instant::now());
                    if !line.contains("BENCH-END") {
                        ended = format!("the kernel stopped: {}", line.trim());
                    }
                }
                lines.push((at, line));
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if child.try_wait().ok().flatten().is_some() {
            // Drain what is left in the pipe.
            while let Ok(item) = rx.recv_timeout(Duration::from_millis(200)) {
                lines.push(item);
            }
            break;
        }
        if finished_at.is_some_and(|t| t.elapsed() > LINGER) {
            break;
        }
        if start.elapsed() > g.timeout {
            ended = format!("timed out after {} s", g.timeout.as_secs());
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    write_log(&g.log, &lines)?;
    Ok((lines, ended))
}

/// `make -C user/bench BUILD=target/user/bench`; returns the build dir.
pub fn build_programs(root: &Path) -> Res<PathBuf> {
    let build = target_dir(root).join("user/bench");
    let mut cmd = Command::new("make");
    cmd.current_dir(root)
        .args(["-C", "user/bench"])
        .arg(format!("BUILD={}", build.display()));
    run_quiet(&mut cmd)?;
    Ok(build)
}

/// Checks `rows` against the benchmark list of a build: a misspelt row
/// would otherwise be skipped by /init and the whole suite run.
pub(crate) fn check_rows(build: &Path, rows: &[String]) -> Res<()> {
    let list = std::fs::read_to_string(build.join("list"))
        .ctx(|| "cannot read the benchmark list".into())?;
    match rows.iter().find(|r| !list.lines().any(|l| l == r.as_str())) {
        Some(r) => Err(format!(
            "no benchmark named `{r}` (see {})",
            build.join("list").display()
        )),
        None => Ok(()),
    }
}

/// The size of the benchmark disk (the fs_* rows write a 64 MiB file).
const DISK_MIB: u64 = 256;

/// An empty ext2 file system (4 KiB blocks) for the fs_* rows; each boot
/// gets a fresh copy of it.
pub(crate) fn disk_template(root: &Path) -> Res<PathBuf> {
    let dir = target_dir(root).join("bench");
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).ctx(|| format!("cannot create {}", empty.display()))?;
    let img = dir.join("disk-template.img");
    // Built aside and renamed into place: another bench run in this tree
    // (--profile, --smoke) may be copying the current one.
    let tmp = dir.join(format!("disk-template.img.{}", std::process::id()));
    mkimage::make(&empty, &tmp, Some(DISK_MIB), 4096)?;
    std::fs::rename(&tmp, &img).ctx(|| format!("cannot rename {}", tmp.display()))?;
    Ok(img)
}

/// Writes the benchmark initramfs: busybox (for `/bin/sh`), /bench and
/// /init; `argv` is what Trellis runs. `modules` (Linux's virtio-blk
/// modules, in load order) go to /bench/mod as `NN-name.ko`.
pub(crate) fn write_initramfs(
    root: &Path,
    build: &Path,
    argv: &[String],
    name: &str,
    modules: &[PathBuf],
) -> Res<PathBuf> {
    let mut adds = vec![
        AddSpec {
            host: build.to_path_buf(),
            guest: "/bench".into(),
        },
        AddSpec {
            host: build.join("init"),
            guest: "/init".into(),
        },
    ];
    for (i, m) in modules.iter().enumerate() {
        let file = m.file_name().unwrap_or_default().to_string_lossy();
        adds.push(AddSpec {
            host: m.clone(),
            guest: format!("/bench/mod/{i:02}-{file}"),
        });
    }
    adds.extend(dyn_programs(root));
    let spec = initramfs::Spec {
        user: None,
        adds: &adds,
        argv: Some(argv),
    };
    let out = target_dir(root).join("bench").join(name);
    initramfs::write(&spec, &out)?;
    Ok(out)
}

/// The host's dynamically linked programs the fork_exec_dyn_true,
/// bash_c_true and python3_pass rows run.
const DYN_PROGRAMS: &[&str] = &["/usr/bin/true", "/usr/bin/bash", "/usr/bin/python3.11"];

/// Prints the files of the modules `python3.11 -c pass` has loaded, and
/// their compiled copies.
const PY_STARTUP_FILES: &str = "import sys, os, importlib.util as u
for m in list(sys.modules.values()):
    f = getattr(m, '__file__', None)
    if f:
        print(f)
        if f.endswith('.py') and os.path.exists(u.cache_from_source(f)):
            print(u.cache_from_source(f))
";

/// [`DYN_PROGRAMS`] with the libraries `ldd` names and the Python modules
/// a bare start-up imports, at their host paths (symbolic links resolved
/// into files); nothing when the host lacks them, and the rows then report
/// `missing`.
fn dyn_programs(root: &Path) -> Vec<AddSpec> {
    let files = || -> Res<Vec<AddSpec>> {
        let mut files = std::collections::BTreeSet::new();
        for p in DYN_PROGRAMS {
            files.insert(PathBuf::from(p));
            files.extend(crate::test_debian::ldd(Path::new(p))?);
        }
        let py = run_quiet(Command::new(DYN_PROGRAMS[2]).args(["-c", PY_STARTUP_FILES]))?;
        files.extend(py.lines().filter(|l| l.starts_with('/')).map(PathBuf::from));
        let mut adds: Vec<AddSpec> = files
            .into_iter()
            .map(|f| AddSpec {
                host: std::fs::canonicalize(&f).unwrap_or_else(|_| f.clone()),
                guest: f.to_string_lossy().into_owned(),
            })
            .collect();
        // Python looks for its extension-module directory at start-up.
        let empty = target_dir(root).join("bench/empty-dir");
        std::fs::create_dir_all(&empty).ctx(|| format!("cannot create {}", empty.display()))?;
        adds.push(AddSpec {
            host: empty,
            guest: "/usr/lib/python3.11/lib-dynload".into(),
        });
        Ok(adds)
    };
    files().unwrap_or_else(|e| {
        eprintln!("xtask: bench: no dynamic programs in the image: {e}");
        Vec::new()
    })
}

/// The unpacked Debian cloud kernel under `target/linux`, downloading it
/// with `apt-get download` the first time.
pub fn linux_kernel(root: &Path) -> Res<PathBuf> {
    let dir = target_dir(root).join("linux");
    if let Some(k) = find_vmlinuz(&dir.join("root/boot")) {
        return Ok(k);
    }
    std::fs::create_dir_all(&dir).ctx(|| format!("cannot create {}", dir.display()))?;
    eprintln!("xtask: fetching {LINUX_META} with apt-get download");
    let download = |pkg: &str| -> Res<PathBuf> {
        run_quiet(
            Command::new("apt-get")
                .current_dir(&dir)
                .args(["download", pkg]),
        )?;
        std::fs::read_dir(&dir)
            .ctx(|| format!("cannot list {}", dir.display()))?
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(&format!("{pkg}_")))
            })
            .ok_or_else(|| format!("apt-get download {pkg} left no .deb"))
    };
    let meta = download(LINUX_META)?;
    let depends = run_quiet(Command::new("dpkg-deb").arg("-f").arg(&meta).arg("Depends"))?;
    let image = depends
        .split(',')
        .map(|d| d.split_whitespace().next().unwrap_or(""))
        .find(|d| d.starts_with("linux-image-"))
        .ok_or_else(|| format!("{LINUX_META} depends on no linux-image: `{depends}`"))?
        .to_string();
    let deb = download(&image)?;
    run_quiet(
        Command::new("dpkg-deb")
            .arg("-x")
            .arg(&deb)
            .arg(dir.join("root")),
    )?;
    find_vmlinuz(&dir.join("root/boot")).ok_or_else(|| format!("{image} holds no boot/vmlinuz-*"))
}

/// What the Debian cloud kernel needs to see a virtio-blk disk and is
/// built as a module: the virtio PCI transport and the block driver
/// (ext4, which also mounts ext2, is built in: `CONFIG_EXT4_FS=y`,
/// `CONFIG_EXT4_USE_FOR_EXT2=y`).
const LINUX_MODULES: &[&str] = &["virtio_pci", "virtio_blk"];

/// The `.ko` files of [`LINUX_MODULES`] and of everything they depend on
/// (the `depends=` entry of each module's `.modinfo`), dependencies first.
pub fn linux_modules(root: &Path) -> Res<Vec<PathBuf>> {
    let base = target_dir(root).join("linux/root/lib/modules");
    let mut files: BTreeMap<String, PathBuf> = BTreeMap::new();
    let mut stack = vec![base.clone()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Some(stem) = p.file_name().and_then(|n| n.to_str()?.strip_suffix(".ko")) {
                files.insert(stem.replace('-', "_"), p);
            }
        }
    }
    let mut order: Vec<PathBuf> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    fn visit(
        name: &str,
        files: &BTreeMap<String, PathBuf>,
        seen: &mut Vec<String>,
        order: &mut Vec<PathBuf>,
    ) -> Res<()> {
        let name = name.replace('-', "_");
        if seen.contains(&name) {
            return Ok(());
        }
        seen.push(name.clone());
        let path = files
            .get(&name)
            .ok_or_else(|| format!("Linux module {name}.ko not found"))?;
        let bytes = std::fs::read(path).ctx(|| format!("cannot read {}", path.display()))?;
        for dep in modinfo_depends(&bytes) {
            visit(&dep, files, seen, order)?;
        }
        order.push(path.clone());
        Ok(())
    }
    for m in LINUX_MODULES {
        visit(m, &files, &mut seen, &mut order)?;
    }
    Ok(order)
}

/// The modules named by a `.ko` file's `depends=a,b` modinfo string.
fn modinfo_depends(ko: &[u8]) -> Vec<String> {
    const KEY: &[u8] = b"\0depends=";
    let Some(at) = ko.windows(KEY.len()).position(|w| w == KEY) else {
        return Vec::new();
    };
    let rest = &ko[at + KEY.len()..];
    let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    String::from_utf8_lossy(&rest[..end])
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

pub(crate) fn find_vmlinuz(boot: &Path) -> Option<PathBuf> {
    std::fs::read_dir(boot)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("vmlinuz-"))
        })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Os {
    Linux,
    Trellis,
}

fn run_kernel(
    os: Os,
    kernel: &Path,
    initrd: &Path,
    disk: &Path,
    pass: Pass,
    root: &Path,
    rows: &[String],
    timeout: Duration,
) -> Res<KernelRun> {
    let (label, cmdline) = match os {
        Os::Linux if !rows.is_empty() => (
            "linux",
            format!("console=ttyS0 quiet rdinit=/init -- {}", rows.join(" ")),
        ),
        Os::Linux => ("linux", "console=ttyS0 quiet rdinit=/init".to_string()),
        Os::Trellis => ("trellis", qemu::cmdline(&[])),
    };
    eprintln!("xtask: bench: {label}, {} pass", pass.as_str());
    let g = Guest {
        kernel,
        initrd,
        cmdline,
        icount: pass == Pass::Icount,
        timeout,
        log: target_dir(root)
            .join("bench")
            .join(format!("{label}-{}.log", pass.as_str())),
        disk: Some(disk),
        extra: Vec::new(),
    };
    let started = Instant::now();
    let (lines, ended) = boot(&g)?;
    let t = parse(&lines, &ended);
    let problem = (!t.ended).then(|| format!("{ended} (log: {})", g.log.display()));
    Ok(KernelRun {
        samples: t.samples,
        boot_ns: t.boot_ns,
        to_init: t.to_init,
        total: started.elapsed(),
        problem,
    })
}

/// The icount pass: one boot per kernel with all the rows (its figures
/// do not depend on the host's load).
#[allow(clippy::too_many_arguments)]
fn icount_pass(
    root: &Path,
    report: &mut Report,
    linux: Option<&Path>,
    trellis: &Path,
    initrd: &Path,
    disk: &Path,
    rows: &[String],
    timeout: Duration,
) -> Res<()> {
    let pass = Pass::Icount;
    let lin = match linux {
        Some(k) => Some(run_kernel(
            Os::Linux,
            k,
            initrd,
            disk,
            pass,
            root,
            rows,
            timeout,
        )?),
        None => None,
    };
    let tre = run_kernel(
        Os::Trellis,
        trellis,
        initrd,
        disk,
        pass,
        root,
        rows,
        timeout,
    )?;
    report.add(pass, lin, tre);
    Ok(())
}

/// The full comparison.
pub fn run(root: &Path, opts: &Options) -> Res<u8> {
    if opts.smoke {
        return smoke_cli(root, opts);
    }
    if opts.profile {
        return crate::bench_profile::run(root, opts);
    }
    let build = build_programs(root)?;
    let release = Options {
        release: true,
        kernel: opts.kernel.clone(),
        ..Options::default()
    };
    let trellis = builder::kernel_for_boot(root, &release, false)?;
    let linux = match linux_kernel(root) {
        Ok(k) => Some(k),
        Err(e) => {
            eprintln!("xtask: warning: no Linux kernel to compare with: {e}");
            None
        }
    };
    let modules = match &linux {
        Some(_) => linux_modules(root)?,
        None => Vec::new(),
    };
    let disk = disk_template(root)?;
    // Only some rows (`--rows A,B` or `bench NAME...`): Trellis reads
    // /init's arguments from the initramfs, Linux passes what follows `--`
    // on its command line to init.
    let rows: Vec<String> = opts
        .rows
        .iter()
        .chain(opts.positional.iter())
        .cloned()
        .collect();
    check_rows(&build, &rows)?;
    let timeout = boot_timeout(row_count(&build, &rows));
    let argv: Vec<String> = std::iter::once("/init".to_string())
        .chain(rows.iter().cloned())
        .collect();
    let initrd = write_initramfs(root, &build, &argv, "initramfs.cpio", &modules)?;
    let mut report = Report::new(linux.as_deref(), &trellis);
    if opts.no_icount && rows.is_empty() {
        return Err(
            "`--no-icount` only with `--rows`: a whole run writes both passes to docs/perf".into(),
        );
    }
    if !opts.no_icount {
        icount_pass(
            root,
            &mut report,
            linux.as_deref(),
            &trellis,
            &initrd,
            &disk,
            &rows,
            timeout,
        )?;
    }
    if !opts.no_wall {
        // The wall pass: both kernels booted in command mode, taking turns
        // row by row (crate::bench_wall).
        let argv = ["/init".to_string(), "-c".to_string()];
        let wall_initrd = write_initramfs(root, &build, &argv, "initramfs-wall.cpio", &modules)?;
        let rounds = opts.rounds.unwrap_or(crate::bench_wall::ROUNDS);
        let (lin, tre, per_row) = crate::bench_wall::run(
            root,
            &build,
            linux.as_deref().map(|k| (k, wall_initrd.as_path())),
            (&trellis, &wall_initrd),
            &disk,
            &rows,
            rounds,
        )?;
        report.add_rounds(Pass::Wall, lin, tre, per_row);
    }
    print!("{}", report.render_text());
    if !rows.is_empty() {
        // Kept aside for reading (the wall pass's rounds and costs).
        let json = target_dir(root).join("bench/partial.json");
        let _ = std::fs::write(&json, report.render_json());
        eprintln!(
            "xtask: a partial run: docs/perf/ left alone (JSON: {})",
            json.display()
        );
        return Ok(0);
    }
    let written = bench_report::write_docs(root, &report)?;
    for p in written {
        eprintln!("xtask: wrote {}", p.display());
    }
    Ok(0)
}

/// The verdict of one smoke sample: PASS, SKIP for missing, FAIL otherwise.
fn record_smoke(r: &mut Reporter, name: &str, s: &Sample) {
    let test = format!("bench:smoke:{name}");
    match s {
        Sample::Value(..) => r.pass(&test),
        Sample::Missing(why) => r.skip(&test, format!("missing: {why}")),
        Sample::Failed(why) => r.fail(&test, why.clone()),
    }
}

/// Boots `kernel` once with every benchmark in smoke mode and records one
/// verdict per benchmark.
fn smoke_boot(root: &Path, kernel: &Path, r: &mut Reporter) -> Res<()> {
    let build = build_programs(root)?;
    let names: Vec<String> = std::fs::read_to_string(build.join("list"))
        .ctx(|| "cannot read the benchmark list".into())?
        .lines()
        .map(str::to_string)
        .collect();
    let argv = ["/init".to_string(), "-s".to_string()];
    let initrd = write_initramfs(root, &build, &argv, "initramfs-smoke.cpio", &[])?;
    let log = target_dir(root).join("bench/trellis-smoke.log");
    let disk = disk_template(root)?;
    let g = Guest {
        kernel,
        initrd: &initrd,
        cmdline: qemu::cmdline(&[]),
        icount: false,
        // One iteration per row, but some rows set up 500 files.
        timeout: SMOKE_TIMEOUT + Duration::from_secs(5) * names.len() as u32,
        log: log.clone(),
        disk: Some(&disk),
        extra: Vec::new(),
    };
    let (lines, ended) = boot(&g)?;
    let t = parse(&lines, &ended);
    for name in &names {
        match t.samples.iter().find(|(n, _)| n == name) {
            Some((_, s)) => record_smoke(r, name, s),
            None => r.fail(
                &format!("bench:smoke:{name}"),
                format!("never started: {ended} (log: {})", log.display()),
            ),
        }
    }
    Ok(())
}

/// `cargo xtask test` layer: smoke mode on the test kernel.
pub fn smoke_layer(env: Option<&BootEnv>, r: &mut Reporter) {
    let Some(env) = env else {
        r.skip("bench:smoke", "the kernel did not build");
        return;
    };
    eprintln!("xtask: bench smoke run");
    if let Err(e) = smoke_boot(&env.root, &env.kernel, r) {
        r.fail("bench:smoke", e);
    }
}

/// `cargo xtask bench --smoke`.
fn smoke_cli(root: &Path, opts: &Options) -> Res<u8> {
    let kernel = builder::kernel_for_boot(root, opts, false)?;
    let mut r = Reporter::default();
    smoke_boot(root, &kernel, &mut r)?;
    println!("{}", r.summary());
    Ok(if r.failed > 0 { 1 } else { 0 })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<(Duration, String)> {
        text.lines()
            .enumerate()
            .map(|(i, l)| (Duration::from_millis(i as u64), l.to_string()))
            .collect()
    }

    #[test]
    fn transcript_parsing() {
        let t = parse(
            &lines(
                "SeaBIOS\nBENCH-BOOT 1500\n\
                 BENCH-START a\nBENCH a 12.5 ns\nBENCH-EXIT a exit 0\n\
                 BENCH-START b\n[ 1.0] noise BENCH b 800.00 MB/s\nBENCH-EXIT b exit 0\n\
                 BENCH-START c\nBENCH c missing pipe: Function not implemented\nBENCH-EXIT c exit 0\n\
                 BENCH-START d\nBENCH-EXIT d signal 11\n\
                 BENCH-START e\nBENCH e error stat: No such file\nBENCH-EXIT e exit 1\n\
                 BENCH-START f\n",
            ),
            "timed out",
        );
        assert_eq!(t.boot_ns, Some(1500));
        assert_eq!(t.to_init, Some(Duration::from_millis(1)));
        assert!(!t.ended);
        let get = |n: &str| t.samples.iter().find(|(k, _)| k == n).unwrap().1.clone();
        assert_eq!(get("a"), Sample::Value(12.5, Unit::Ns));
        assert_eq!(get("b"), Sample::Value(800.0, Unit::MBps));
        assert_eq!(
            get("c"),
            Sample::Missing("pipe: Function not implemented".into())
        );
        assert_eq!(get("d"), Sample::Failed("crashed (signal 11)".into()));
        assert_eq!(get("e"), Sample::Failed("stat: No such file".into()));
        assert_eq!(get("f"), Sample::Failed("did not finish: timed out".into()));
        let names: Vec<&str> = t.samples.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["a", "b", "c", "d", "e", "f"]);
    }

    #[test]
    fn modinfo_dependencies() {
        let ko = b"\x7fELF..\0license=GPL\0depends=virtio_ring,virtio\0intree=Y\0";
        assert_eq!(modinfo_depends(ko), ["virtio_ring", "virtio"]);
        assert!(modinfo_depends(b"\0depends=\0name=x\0").is_empty());
        assert!(modinfo_depends(b"no modinfo").is_empty());
    }

    #[test]
    fn timeouts_grow_with_rows() {
        assert_eq!(boot_timeout(0), FULL_TIMEOUT);
        assert_eq!(boot_timeout(56), Duration::from_secs(600 + 56 * 90));
        let dir = std::env::temp_dir().join(format!("bench-rows-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("list"), "a\nb\nc\n").unwrap();
        assert_eq!(row_count(&dir, &[]), 3);
        assert_eq!(row_count(&dir, &["b".to_string()]), 1);
        assert!(check_rows(&dir, &["a".into(), "c".into()]).is_ok());
        assert!(check_rows(&dir, &["a".into(), "typo".into()]).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn smoke_verdicts() {
        let mut r = Reporter::default();
        record_smoke(&mut r, "a", &Sample::Value(1.0, Unit::Ns));
        record_smoke(&mut r, "b", &Sample::Missing("ENOSYS".into()));
        record_smoke(&mut r, "c", &Sample::Failed("crashed".into()));
        assert_eq!((r.passed, r.skipped, r.failed), (1, 1, 1));
    }
}
