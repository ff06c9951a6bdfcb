//! The `crash` layer's network cases: TCP transfers between the guest and
//! the host while the virtio-net driver, which runs in a driver domain
//! behind a shadow, is made to crash (docs/domains.md, "virtio-net").
//!
//! - `crash:net-transfer`: a boot with `drivers.crash=virtio-net:1s` runs
//!   `netcrash run` (user/storage/netcrash.c) for [`SECONDS`] guest seconds,
//!   longer (up to three times as long) until [`MIN_CRASHES`] were injected:
//!   round after round, the guest sends [`ROUND_BYTES`] bytes to a server
//!   this module runs on the host's loopback (10.0.2.2 from the guest),
//!   which checks them against the generator, replies with their digest and
//!   as many bytes of its own, which the guest checks. Passes when no
//!   system call failed, every byte matched on both sides, the kernel
//!   injected at least [`MIN_CRASHES`] crashes and recovered, the device
//!   was never failed, and the boot ended in a clean poweroff.
//! - `crash:net-fail-cleanly`: with the driver made to crash at every point
//!   (`/sys/kernel/debug/domains/virtio-net/crash`), it is restarted with
//!   back-off, then the device is failed: a connection attempt does not go
//!   through, the interface reports no link, the kernel logs it, nothing
//!   panics or hangs.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::qemu::{self, BootResult};
use crate::scan::guest_output;
use crate::test::{BootEnv, Reporter};
use crate::test_crash::{self, Crashes, PROGS, splitmix64};
use crate::test_storage::boot_problem;
use crate::util::Res;

/// Guest seconds of transfers under crashes.
const SECONDS: u32 = 30;
/// Bytes each way per round.
const ROUND_BYTES: u64 = 2 << 20;
/// Fewest injected crashes the transfer boot must show (crashes land only
/// on crash points the traffic reaches; after a crash TCP may back off for
/// seconds, so fewer than one per second of the run). netcrash goes on past
/// [`SECONDS`] until it sees this many.
const MIN_CRASHES: u64 = 8;

/// What the host's server saw.
#[derive(Debug, Default)]
struct Served {
    rounds: u64,
    bytes: u64,
    /// Rounds whose bytes differed from the generator's.
    mismatches: u64,
    /// Connections that ended early or failed.
    errors: Vec<String>,
}

fn fnv(mut h: u64, data: &[u8]) -> u64 {
    for &b in data {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// `len` bytes (a multiple of 8) of content(seed) from byte `off`, as
/// netcrash.c's `fill`.
fn fill(seed: u64, off: u64, len: usize) -> Vec<u8> {
    (0..len as u64 / 8)
        .flat_map(|i| splitmix64((seed << 40) ^ (off / 8 + i)).to_le_bytes())
        .collect()
}

/// One round on the host: the header, the guest's bytes (checked), then
/// the digest and the host's bytes.
fn serve_one(s: &mut TcpStream, served: &mut Served) -> Result<(), String> {
    let mut head = [0u8; 16];
    s.read_exact(&mut head)
        .map_err(|e| format!("header: {e}"))?;
    let seed = u64::from_le_bytes(head[..8].try_into().unwrap_or_default());
    let len = u64::from_le_bytes(head[8..].try_into().unwrap_or_default());
    if len > 1 << 30 || len % 8 != 0 {
        return Err(format!("bad length {len}"));
    }
    const CHUNK: u64 = 64 * 1024;
    let mut digest = 0xcbf2_9ce4_8422_2325u64;
    let mut same = true;
    let mut buf = vec![0u8; CHUNK as usize];
    let mut off = 0;
    while off < len {
        let n = (len - off).min(CHUNK) as usize;
        s.read_exact(&mut buf[..n])
            .map_err(|e| format!("round {seed}: data at {off}: {e}"))?;
        digest = fnv(digest, &buf[..n]);
        same &= buf[..n] == fill(seed, off, n)[..];
        off += n as u64;
    }
    if !same {
        served.mismatches += 1;
    }
    s.write_all(&digest.to_le_bytes())
        .map_err(|e| format!("round {seed}: reply: {e}"))?;
    let mut off = 0;
    while off < len {
        let n = (len - off).min(CHUNK) as usize;
        s.write_all(&fill(seed ^ 0xffff, off, n))
            .map_err(|e| format!("round {seed}: reply at {off}: {e}"))?;
        off += n as u64;
    }
    served.rounds += 1;
    served.bytes += 2 * len;
    Ok(())
}

/// The transfer server on the host's loopback, until `stop` says so.
fn server(stop: mpsc::Receiver<()>) -> Res<(u16, JoinHandle<Served>)> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("bind 127.0.0.1:0: {e}"))?;
    let port = l.local_addr().map_err(|e| e.to_string())?.port();
    l.set_nonblocking(true).map_err(|e| e.to_string())?;
    let h = std::thread::spawn(move || {
        let mut served = Served::default();
        loop {
            if !matches!(stop.try_recv(), Err(mpsc::TryRecvError::Empty)) {
                return served;
            }
            match l.accept() {
                Ok((mut s, _)) => {
                    let _ = s.set_nonblocking(false);
                    let _ = s.set_read_timeout(Some(Duration::from_secs(180)));
                    let _ = s.set_write_timeout(Some(Duration::from_secs(180)));
                    if let Err(e) = serve_one(&mut s, &mut served) {
                        served.errors.push(e);
                    }
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    });
    Ok((port, h))
}

/// [`test_crash::boot`] with the network device.
fn boot(
    env: &BootEnv,
    dir: &Path,
    progs: &Path,
    name: &str,
    script: &str,
    append: &[String],
) -> Res<BootResult> {
    let net = qemu::Net {
        forwards: Vec::new(),
        intx: false,
    };
    let mut append = append.to_vec();
    append.push(qemu::NET_CMDLINE.to_string());
    test_crash::boot(env, dir, progs, name, script, &append, &[], Some(&net))
}

/// Runs both network cases (the programs are built by the caller).
pub fn run(env: &BootEnv, dir: &Path, progs: &Path, r: &mut Reporter) {
    transfer(env, dir, progs, r);
    fail_cleanly(env, dir, progs, r);
}

fn transfer(env: &BootEnv, dir: &Path, progs: &Path, r: &mut Reporter) {
    let test = "crash:net-transfer";
    let (stop_tx, stop_rx) = mpsc::channel();
    let (port, thread) = match server(stop_rx) {
        Ok(x) => x,
        Err(e) => return r.fail(test, e),
    };
    let script = format!(
        "{PROGS}/netcrash run 10.0.2.2 {port} {SECONDS} {ROUND_BYTES} {MIN_CRASHES}; echo NETCRASH-RUN=$?; \
         echo INJECTED $(cat /sys/kernel/debug/domains/virtio-net/injected); \
         cat /sys/kernel/debug/domains/virtio-net/recovery_ns; cat /proc/domains"
    );
    let append = ["drivers.crash=virtio-net:1s".to_string()];
    let res = boot(env, dir, progs, "net", &script, &append);
    let _ = stop_tx.send(());
    let served = thread.join().unwrap_or_default();
    let res = match res {
        Ok(res) => res,
        Err(e) => return r.fail(test, e),
    };
    if let Some(p) = boot_problem(&res) {
        return r.fail(test, p);
    }
    let out = guest_output(&res.lines);
    let all = res.lines.join("\n");
    let crashes = Crashes::of(&out);
    let (injected, recoveries) = (crashes.injected, crashes.recoveries);
    let summary = format!(
        "{} rounds, {} bytes checked by the host ({} mismatched); {crashes}",
        served.rounds, served.bytes, served.mismatches
    );
    eprintln!("xtask: crash:net-transfer: {summary}");
    if !out.contains("NETCRASH-RUN=0") || !out.contains("NETCRASH run OK") {
        return r.fail(
            test,
            format!(
                "the transfer failed ({summary}):\n{}",
                crate::util::tail(&out, 40)
            ),
        );
    }
    if served.mismatches > 0 || !served.errors.is_empty() || served.rounds == 0 {
        return r.fail(
            test,
            format!("the host's side: {summary}; errors {:?}", served.errors),
        );
    }
    if injected < MIN_CRASHES || recoveries == 0 {
        return r.fail(test, format!("too few crashes: {summary}"));
    }
    if all.contains("device failed") {
        return r.fail(
            test,
            format!("the device was failed during the transfer ({summary})"),
        );
    }
    r.pass(test);
}

fn fail_cleanly(env: &BootEnv, dir: &Path, progs: &Path, r: &mut Reporter) {
    let test = "crash:net-fail-cleanly";
    let (stop_tx, stop_rx) = mpsc::channel();
    let (port, thread) = match server(stop_rx) {
        Ok(x) => x,
        Err(e) => return r.fail(test, e),
    };
    let script = format!(
        "echo 1000 > /sys/kernel/debug/domains/virtio-net/crash; \
         {PROGS}/netcrash fail eth0 10.0.2.2 {port}; echo NETCRASH-FAIL=$?; cat /proc/domains"
    );
    let res = boot(env, dir, progs, "net-fail", &script, &[]);
    let _ = stop_tx.send(());
    let served = thread.join().unwrap_or_default();
    let res = match res {
        Ok(res) => res,
        Err(e) => return r.fail(test, e),
    };
    if let Some(p) = boot_problem(&res) {
        return r.fail(test, p);
    }
    let out = guest_output(&res.lines);
    let all = res.lines.join("\n");
    if !out.contains("NETCRASH-FAIL=0") {
        return r.fail(test, crate::util::tail(&out, 40));
    }
    if served.rounds > 0 {
        return r.fail(test, "a round went through a failed device");
    }
    if !all.contains("device failed, link down") {
        return r.fail(test, "no kernel log line says the device was failed");
    }
    r.pass(test);
}
