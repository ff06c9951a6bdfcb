//! Booting the kernel in QEMU and watching the serial console for the
//! kernel's exit protocol.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::scan::{self, Line};
use crate::util::{self, Context, Res};

pub const QEMU: &str = "qemu-system-x86_64";
/// How long QEMU may keep running after the kernel announced the end.
const GRACE: Duration = Duration::from_secs(10);
const POLL: Duration = Duration::from_millis(50);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Console {
    /// The terminal drives the guest; its output is shown live.
    Interactive,
    /// One command; output shown live, stdin not connected.
    Command,
    /// Output only collected (tests).
    Capture,
}

pub struct Boot<'a> {
    pub kernel: &'a Path,
    pub initrd: &'a Path,
    pub append: &'a [String],
    pub timeout: Option<Duration>,
    pub console: Console,
    /// A progress watchdog: QEMU is killed when no line passes it for a while.
    pub watch: Option<Watch<'a>>,
    /// Raw images attached as virtio-blk disks, in order (`/dev/vda`, ...).
    pub disks: &'a [PathBuf],
    /// A virtio-net NIC on QEMU user networking (`None`: QEMU's default NIC).
    pub net: Option<&'a Net>,
}

/// QEMU user networking (slirp) behind a virtio-net NIC: the guest is
/// 10.0.2.15/24, the gateway 10.0.2.2 (which is the host's loopback),
/// DNS 10.0.2.3.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Net {
    /// TCP forwards (host port, guest port); the host side listens on
    /// 127.0.0.1 only.
    pub forwards: Vec<(u16, u16)>,
}

/// The kernel command line that configures eth0 for QEMU user networking
/// (Linux's `ip=client::gateway:netmask::device:autoconf`).
pub const NET_CMDLINE: &str = "ip=10.0.2.15::10.0.2.2:255.255.255.0::eth0:off";

/// QEMU arguments for `net`: one user-mode netdev with its forwards and a
/// virtio-net PCI function on it (which also replaces QEMU's default NIC).
pub fn net_args(net: &Net) -> Vec<OsString> {
    let mut netdev = String::from("user,id=n0");
    for (host, guest) in &net.forwards {
        netdev.push_str(&format!(",hostfwd=tcp:127.0.0.1:{host}-:{guest}"));
    }
    ["-netdev", &netdev, "-device", "virtio-net-pci,netdev=n0"]
        .iter()
        .map(OsString::from)
        .collect()
}

/// Counts a hang when the guest goes `quiet` long without a line for which
/// `is_progress` holds.
pub struct Watch<'a> {
    pub is_progress: &'a dyn Fn(&str) -> bool,
    pub quiet: Duration,
}

/// How a boot ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The kernel printed `trellis: poweroff status=N`.
    Poweroff(u8),
    /// The kernel printed a `trellis: KERNEL PANIC` line (the line).
    Panic(String),
    Timeout(Duration),
    /// The progress watchdog fired: no progress line for this long.
    NoProgress(Duration),
    /// QEMU ended without a poweroff line (its exit status, if it had one).
    NoPoweroff(Option<i32>),
}

impl Outcome {
    pub fn exit_code(&self) -> u8 {
        match self {
            Outcome::Poweroff(n) => *n,
            Outcome::Timeout(_) | Outcome::NoProgress(_) => util::EXIT_TIMEOUT,
            Outcome::Panic(_) => util::EXIT_PANIC,
            Outcome::NoPoweroff(_) => util::EXIT_NO_POWEROFF,
        }
    }

    /// A message explaining an abnormal end, `None` for a poweroff.
    pub fn problem(&self) -> Option<String> {
        match self {
            Outcome::Poweroff(_) => None,
            Outcome::Panic(line) => Some(format!("kernel panic: {}", line.trim())),
            Outcome::Timeout(t) => Some(format!(
                "timed out after {} s; QEMU was killed",
                t.as_secs()
            )),
            Outcome::NoProgress(t) => Some(format!(
                "no progress for {} s; QEMU was killed",
                t.as_secs()
            )),
            Outcome::NoPoweroff(status) => Some(format!(
                "QEMU exited ({}) without a `trellis: poweroff` line",
                match status {
                    Some(c) => format!("status {c}"),
                    None => "killed by a signal".into(),
                }
            )),
        }
    }
}

pub struct BootResult {
    pub outcome: Outcome,
    /// Every line QEMU printed on stdout (without `\n`).
    pub lines: Vec<String>,
    /// QEMU's stderr, in `Capture` mode.
    pub stderr: String,
}

/// `console=ttyS0` followed by the `--append` arguments.
pub fn cmdline(append: &[String]) -> String {
    let mut s = String::from("console=ttyS0");
    for a in append.iter().filter(|a| !a.trim().is_empty()) {
        s.push(' ');
        s.push_str(a.trim());
    }
    s
}

pub fn qemu_args(kernel: &Path, initrd: &Path, cmdline: &str) -> Vec<OsString> {
    let mut v: Vec<OsString> = [
        "-machine",
        "q35",
        "-cpu",
        "qemu64,+smep,+smap",
        "-m",
        "512M",
        "-nographic",
        "-no-reboot",
        "-kernel",
    ]
    .iter()
    .map(OsString::from)
    .collect();
    v.push(kernel.into());
    v.push("-initrd".into());
    v.push(initrd.into());
    v.push("-append".into());
    v.push(cmdline.into());
    v.push("-device".into());
    v.push("isa-debug-exit,iobase=0xf4,iosize=0x04".into());
    v
}

/// The PCI slot of the first `--disk`; the next disks take the following
/// slots. Explicit, increasing addresses keep the enumeration order (and so
/// the names `vda`, `vdb`, ...) equal to the command-line order. q35 puts
/// its own devices (VGA, NIC) in the low slots and the LPC/SATA/SMBus
/// functions in 0x1f, so 0x10.. is free.
pub const DISK_FIRST_SLOT: usize = 0x10;
/// Slots 0x10..=0x1e.
pub const MAX_DISKS: usize = 0x1f - DISK_FIRST_SLOT;

/// QEMU arguments attaching each image as a virtio-blk PCI disk
/// (`-drive file=IMG,if=none,id=dN,format=raw -device
/// virtio-blk-pci,drive=dN,addr=SLOT`).
pub fn disk_args(disks: &[PathBuf]) -> Vec<OsString> {
    let mut v = Vec::new();
    for (i, img) in disks.iter().enumerate() {
        // QEMU's option syntax doubles a comma inside a value.
        let file = img.to_string_lossy().replace(',', ",,");
        v.push("-drive".into());
        v.push(format!("file={file},if=none,id=d{i},format=raw").into());
        v.push("-device".into());
        v.push(format!("virtio-blk-pci,drive=d{i},addr={:#x}", DISK_FIRST_SLOT + i).into());
    }
    v
}

/// Checks that each `--disk` image exists and is a regular file, and that
/// there are not more than the free PCI slots.
pub fn check_disks(disks: &[PathBuf]) -> Res<()> {
    if disks.len() > MAX_DISKS {
        return Err(format!("at most {MAX_DISKS} disks (got {})", disks.len()));
    }
    for d in disks {
        let meta = std::fs::metadata(d).ctx(|| format!("disk image {}", d.display()))?;
        if !meta.is_file() {
            return Err(format!("disk image {} is not a regular file", d.display()));
        }
    }
    Ok(())
}

enum Event {
    Line(String),
    Eof,
}

/// Boots, relays or collects the serial output, and calls `on_line` for
/// each complete line. Returns once QEMU has exited.
pub fn boot(b: &Boot, on_line: &mut dyn FnMut(&str)) -> Res<BootResult> {
    if !util::on_path(QEMU) {
        return Err(format!("{QEMU} not found; run scripts/setup.sh"));
    }
    check_disks(b.disks)?;
    let mut cmd = Command::new(QEMU);
    cmd.args(qemu_args(b.kernel, b.initrd, &cmdline(b.append)))
        .args(disk_args(b.disks))
        .args(b.net.map(net_args).unwrap_or_default())
        .stdout(Stdio::piped());
    match b.console {
        Console::Interactive => cmd.stdin(Stdio::inherit()).stderr(Stdio::inherit()),
        Console::Command => cmd.stdin(Stdio::null()).stderr(Stdio::inherit()),
        Console::Capture => cmd.stdin(Stdio::null()).stderr(Stdio::piped()),
    };
    let mut child = cmd
        .spawn()
        .ctx(|| format!("cannot start `{}`", util::show(&cmd)))?;
    let stdout = child.stdout.take().ok_or("no QEMU stdout")?;
    let relay = b.console != Console::Capture;
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || read_serial(stdout, relay, tx));
    let stderr_reader = child.stderr.take().map(|mut e| {
        std::thread::spawn(move || {
            let mut s = Vec::new();
            let _ = e.read_to_end(&mut s);
            String::from_utf8_lossy(&s).into_owned()
        })
    });

    let start = Instant::now();
    let mut lines = Vec::new();
    let (mut poweroff, mut panic) = (None, None);
    let mut ended_at: Option<Instant> = None;
    let mut timed_out = false;
    let mut stalled = false;
    let mut last_progress = Instant::now();
    let mut status: Option<ExitStatus> = None;
    let mut eof = false;
    let mut exited_at: Option<Instant> = None;
    loop {
        let event = if eof {
            std::thread::sleep(POLL);
            Err(RecvTimeoutError::Disconnected)
        } else {
            rx.recv_timeout(POLL)
        };
        match event {
            Ok(Event::Line(line)) => {
                match scan::classify(&line) {
                    Line::Poweroff { status, .. } if poweroff.is_none() => {
                        poweroff = Some(status);
                        ended_at.get_or_insert_with(Instant::now);
                    }
                    Line::Panic if panic.is_none() => {
                        panic = Some(line.clone());
                        ended_at.get_or_insert_with(Instant::now);
                    }
                    _ => {}
                }
                if b.watch.as_ref().is_some_and(|w| (w.is_progress)(&line)) {
                    last_progress = Instant::now();
                }
                on_line(&line);
                lines.push(line);
            }
            Ok(Event::Eof) | Err(RecvTimeoutError::Disconnected) => eof = true,
            Err(RecvTimeoutError::Timeout) => {}
        }
        if status.is_none() {
            status = child.try_wait().ctx(|| "waiting for QEMU".into())?;
            if status.is_some() {
                exited_at = Some(Instant::now());
            }
        }
        if let Some(at) = exited_at {
            // Drain what QEMU wrote before exiting; don't wait forever on a
            // pipe some other process may have inherited.
            if eof || at.elapsed() > Duration::from_secs(2) {
                break;
            }
            continue;
        }
        let overdue = b.timeout.is_some_and(|t| start.elapsed() > t);
        let quiet = ended_at.is_none()
            && b.watch
                .as_ref()
                .is_some_and(|w| last_progress.elapsed() > w.quiet);
        let lingering = ended_at.is_some_and(|t| t.elapsed() > GRACE);
        if overdue || lingering || quiet {
            timed_out |= overdue && ended_at.is_none();
            stalled |= quiet && !overdue;
            if lingering {
                eprintln!(
                    "xtask: warning: QEMU kept running after the kernel's last words; killing it"
                );
            }
            status = Some(terminate(&mut child)?);
            exited_at = Some(Instant::now());
        }
    }
    if eof {
        let _ = reader.join();
    }
    let stderr = stderr_reader
        .and_then(|h| h.join().ok())
        .unwrap_or_default();
    let outcome = if let Some(line) = panic {
        Outcome::Panic(line)
    } else if let Some(n) = poweroff {
        Outcome::Poweroff(n)
    } else if timed_out {
        Outcome::Timeout(b.timeout.unwrap_or_default())
    } else if stalled {
        Outcome::NoProgress(b.watch.as_ref().map(|w| w.quiet).unwrap_or_default())
    } else {
        Outcome::NoPoweroff(status.and_then(|s| s.code()))
    };
    Ok(BootResult {
        outcome,
        lines,
        stderr,
    })
}

/// Reads QEMU's stdout, relaying bytes to our stdout as they arrive when
/// `relay` is set (prompts have no newline), and sends complete lines.
fn read_serial(mut from: impl Read, relay: bool, tx: mpsc::Sender<Event>) {
    let mut buf = [0u8; 4096];
    let mut pending: Vec<u8> = Vec::new();
    let mut out = std::io::stdout();
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        if relay {
            let _ = out.write_all(&buf[..n]);
            let _ = out.flush();
        }
        pending.extend_from_slice(&buf[..n]);
        while let Some(i) = pending.iter().position(|&b| b == b'\n') {
            let rest = pending.split_off(i + 1);
            let line = std::mem::replace(&mut pending, rest);
            let _ = tx.send(Event::Line(line_text(&line)));
        }
    }
    if !pending.is_empty() {
        let _ = tx.send(Event::Line(line_text(&pending)));
    }
    let _ = tx.send(Event::Eof);
}

fn line_text(raw: &[u8]) -> String {
    let s = String::from_utf8_lossy(raw);
    s.trim_end_matches(['\n', '\r']).to_string()
}

/// Asks QEMU to quit (SIGTERM lets it restore the terminal), then kills it.
fn terminate(child: &mut Child) -> Res<ExitStatus> {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .stderr(Stdio::null())
        .status();
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        if let Some(s) = child.try_wait().ctx(|| "waiting for QEMU".into())? {
            return Ok(s);
        }
        std::thread::sleep(POLL);
    }
    let _ = child.kill();
    child.wait().ctx(|| "waiting for QEMU".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line() {
        assert_eq!(cmdline(&[]), "console=ttyS0");
        assert_eq!(
            cmdline(&["loglevel=7 ".into(), "".into(), "quiet".into()]),
            "console=ttyS0 loglevel=7 quiet"
        );
        let args = qemu_args(Path::new("k.sym"), Path::new("i.cpio"), "console=ttyS0");
        let args: Vec<String> = args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let joined = args.join(" ");
        assert!(joined.starts_with("-machine q35 -cpu qemu64,+smep,+smap -m 512M -nographic"));
        assert!(joined.contains("-kernel k.sym -initrd i.cpio -append console=ttyS0"));
        assert!(joined.ends_with("-device isa-debug-exit,iobase=0xf4,iosize=0x04"));
        assert!(!joined.contains("kvm"));
    }

    #[test]
    fn disks_in_order_at_increasing_slots() {
        assert!(disk_args(&[]).is_empty());
        let args = disk_args(&[PathBuf::from("/a/x.img"), PathBuf::from("b,c.img")]);
        let args: Vec<String> = args
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args,
            [
                "-drive",
                "file=/a/x.img,if=none,id=d0,format=raw",
                "-device",
                "virtio-blk-pci,drive=d0,addr=0x10",
                "-drive",
                "file=b,,c.img,if=none,id=d1,format=raw",
                "-device",
                "virtio-blk-pci,drive=d1,addr=0x11",
            ]
        );
        assert!(check_disks(&[PathBuf::from("/nonexistent/disk.img")]).is_err());
        assert!(check_disks(&[PathBuf::from("/")]).is_err());
        let many = vec![PathBuf::from("/dev/null"); MAX_DISKS + 1];
        assert!(check_disks(&many).unwrap_err().contains("at most"));
    }

    #[test]
    fn user_networking_with_loopback_forwards() {
        let show = |n: &Net| -> Vec<String> {
            net_args(n)
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(
            show(&Net::default()),
            [
                "-netdev",
                "user,id=n0",
                "-device",
                "virtio-net-pci,netdev=n0"
            ]
        );
        let n = Net {
            forwards: vec![(8080, 80), (2222, 22)],
        };
        assert_eq!(
            show(&n)[1],
            "user,id=n0,hostfwd=tcp:127.0.0.1:8080-:80,hostfwd=tcp:127.0.0.1:2222-:22"
        );
    }

    #[test]
    fn exit_codes() {
        assert_eq!(Outcome::Poweroff(0).exit_code(), 0);
        assert_eq!(Outcome::Poweroff(42).exit_code(), 42);
        assert_eq!(Outcome::Timeout(Duration::from_secs(1)).exit_code(), 124);
        assert_eq!(Outcome::Panic("x".into()).exit_code(), 125);
        assert_eq!(Outcome::NoPoweroff(Some(1)).exit_code(), 126);
        assert!(Outcome::Poweroff(3).problem().is_none());
        assert!(
            Outcome::NoPoweroff(None)
                .problem()
                .unwrap()
                .contains("signal")
        );
    }

    #[test]
    fn serial_reader_splits_lines() {
        let (tx, rx) = mpsc::channel();
        let data: &[u8] = b"a\r\nbb\n\ntrellis: poweroff status=1";
        read_serial(data, false, tx);
        let got: Vec<String> = rx
            .iter()
            .filter_map(|e| match e {
                Event::Line(l) => Some(l),
                Event::Eof => None,
            })
            .collect();
        assert_eq!(got, ["a", "bb", "", "trellis: poweroff status=1"]);
    }
}
