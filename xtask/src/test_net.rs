//! The `net` layer: Trellis on QEMU user networking through its virtio-net
//! NIC, talking to the host. One boot runs a busybox script; the host side
//! runs in a thread started when the guest says it is ready.
//!
//! - `net:httpd-from-host`: busybox `httpd` in the guest serves a page
//!   (holding a token fresh for this run) that the host fetches through a
//!   `--forward`-style port forward on 127.0.0.1.
//! - `net:nc-host-to-guest` / `net:nc-guest-to-host`: a host client talks
//!   to `nc -l -p 81` in the guest; each side's message must reach the
//!   other (the guest prints what it received).
//! - `net:wget-from-host`: the guest's `wget` fetches a page from a tiny
//!   HTTP server xtask runs on the host's 127.0.0.1 (10.0.2.2 from the
//!   guest).
//!
//! Host ports are chosen free per run (bind port 0, read it, release it)
//! since two test runs may share the machine; the guest's ports are its
//! own.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::initramfs;
use crate::qemu::{self, BootResult, Console};
use crate::scan::{guest_output, serial_tail};
use crate::test::{BootEnv, Reporter};
use crate::util::{Res, target_dir};

const BOOT_TIMEOUT: Duration = Duration::from_secs(240);
/// How long one host-side exchange may take before it counts as failed.
const IO_TIMEOUT: Duration = Duration::from_secs(60);
/// Guest ports behind the forwards.
const HTTPD_PORT: u16 = 80;
const NC_PORT: u16 = 81;

/// The guest's side. `@TOKEN@` and `@HOSTPORT@` are filled in per run.
const SCRIPT: &str = r#"
echo "NET-SCRIPT start"
mkdir -p /tmp/www
echo "page-@TOKEN@" > /tmp/www/index.html
echo "guest-says-@TOKEN@" > /tmp/guest.msg
nc -l -p 81 < /tmp/guest.msg > /tmp/nc.in &
ncpid=$!
httpd -f -p 80 -h /tmp/www &
i=0
until wget -q -O /dev/null http://127.0.0.1:80/index.html; do
  i=$((i+1))
  if [ $i -gt 30 ]; then echo "NET-FAIL httpd never answered on loopback"; exit 1; fi
  sleep 1
done
echo "NET-READY"
wait $ncpid
echo "NC-GOT:$(cat /tmp/nc.in)"
echo "WGET-GOT:$(wget -q -O - http://10.0.2.2:@HOSTPORT@/from-host)"
echo "NET-SCRIPT done"
"#;

/// A port on the host's loopback that was free a moment ago.
fn free_port() -> Res<u16> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("bind 127.0.0.1:0: {e}"))?;
    let port = l.local_addr().map_err(|e| e.to_string())?.port();
    Ok(port)
}

/// What the host side saw.
#[derive(Debug)]
struct HostSide {
    /// The response to GET / through the httpd forward, or why not.
    http: Result<String, String>,
    /// What the guest's nc sent, or why not.
    nc: Result<String, String>,
}

fn connect(port: u16) -> Result<TcpStream, String> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let s = TcpStream::connect_timeout(&addr, IO_TIMEOUT).map_err(|e| format!("connect: {e}"))?;
    s.set_read_timeout(Some(IO_TIMEOUT))
        .map_err(|e| e.to_string())?;
    s.set_write_timeout(Some(IO_TIMEOUT))
        .map_err(|e| e.to_string())?;
    Ok(s)
}

/// Sends `out`, half-closes, and reads until the peer closes. Retries while
/// the answer is empty (slirp accepts on the host before the guest does,
/// and closes again if the guest refused).
fn exchange(port: u16, out: &[u8]) -> Result<Vec<u8>, String> {
    let deadline = Instant::now() + IO_TIMEOUT;
    loop {
        let attempt = (|| -> Result<Vec<u8>, String> {
            let mut s = connect(port)?;
            s.write_all(out).map_err(|e| format!("write: {e}"))?;
            s.shutdown(Shutdown::Write)
                .map_err(|e| format!("shutdown: {e}"))?;
            let mut got = Vec::new();
            s.read_to_end(&mut got).map_err(|e| format!("read: {e}"))?;
            Ok(got)
        })();
        match attempt {
            Ok(got) if !got.is_empty() => return Ok(got),
            Ok(_) if Instant::now() < deadline => {}
            Ok(_) => return Err("the guest never answered (empty replies)".into()),
            Err(e) if Instant::now() >= deadline => return Err(e),
            Err(_) => {}
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn host_clients(http_port: u16, nc_port: u16, token: &str) -> HostSide {
    let http = exchange(
        http_port,
        b"GET /index.html HTTP/1.0\r\nHost: trellis\r\n\r\n",
    )
    .map(|b| String::from_utf8_lossy(&b).into_owned());
    let nc = exchange(nc_port, format!("host-says-{token}\n").as_bytes())
        .map(|b| String::from_utf8_lossy(&b).into_owned());
    HostSide { http, nc }
}

/// A one-page HTTP server on the host's loopback: answers every request
/// with `body` until `stop` says so. Returns its port.
fn host_server(body: String, stop: mpsc::Receiver<()>) -> Res<(u16, JoinHandle<usize>)> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("bind 127.0.0.1:0: {e}"))?;
    let port = l.local_addr().map_err(|e| e.to_string())?.port();
    l.set_nonblocking(true).map_err(|e| e.to_string())?;
    let h = std::thread::spawn(move || {
        let mut served = 0;
        loop {
            if !matches!(stop.try_recv(), Err(mpsc::TryRecvError::Empty)) {
                return served;
            }
            match l.accept() {
                Ok((mut s, _)) => {
                    let _ = s.set_nonblocking(false);
                    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
                    // Read the request head (up to the blank line).
                    let mut req = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                        match s.read(&mut buf) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => req.extend_from_slice(&buf[..n]),
                        }
                    }
                    let resp = format!(
                        "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = s.write_all(resp.as_bytes());
                    served += 1;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    });
    Ok((port, h))
}

pub fn run(env: Option<&BootEnv>, r: &mut Reporter) {
    let Some(env) = env else {
        r.skip("net", "the kernel did not build");
        return;
    };
    eprintln!("xtask: net layer");
    let token = format!(
        "{}-{}",
        std::process::id(),
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0)
    );
    let (stop_tx, stop_rx) = mpsc::channel();
    let server = host_server(format!("served-by-host-{token}"), stop_rx);
    let (ports, (server_port, server_thread)) = match (free_port(), free_port(), server) {
        (Ok(a), Ok(b), Ok(s)) if a != b => ((a, b), s),
        (Err(e), ..) | (_, Err(e), _) | (.., Err(e)) => return r.fail("net:setup", e),
        _ => return r.fail("net:setup", "the same free port twice"),
    };
    let (http_port, nc_port) = ports;
    let script = SCRIPT
        .replace("@TOKEN@", &token)
        .replace("@HOSTPORT@", &server_port.to_string());
    let result = boot(env, &script, http_port, nc_port, &token);
    let _ = stop_tx.send(());
    let served = server_thread.join().unwrap_or(0);
    let (result, host) = match result {
        Ok(x) => x,
        Err(e) => return r.fail("net:boot", e),
    };
    let _ = env.write_log("net", &result);
    let out = guest_output(&result.lines);
    let tail = || serial_tail(&result.lines, 25);
    if !out.contains("NET-READY") {
        let why = match out.lines().find(|l| l.starts_with("NET-FAIL")) {
            Some(l) => l.to_string(),
            None => format!("the guest never got ready ({:?})", result.outcome),
        };
        for t in [
            "net:httpd-from-host",
            "net:nc-host-to-guest",
            "net:nc-guest-to-host",
            "net:wget-from-host",
        ] {
            r.fail(t, format!("{why}\n{}", tail()));
        }
        return;
    }
    let host = host.unwrap_or(HostSide {
        http: Err("the host clients did not run".into()),
        nc: Err("the host clients did not run".into()),
    });
    match &host.http {
        Ok(resp)
            if resp.starts_with("HTTP/1.")
                && resp.contains(" 200 ")
                && resp.contains(&format!("page-{token}")) =>
        {
            r.pass("net:httpd-from-host")
        }
        Ok(resp) => r.fail(
            "net:httpd-from-host",
            format!("unexpected response:\n{resp}"),
        ),
        Err(e) => r.fail("net:httpd-from-host", format!("{e}\n{}", tail())),
    }
    let want_in_guest = format!("NC-GOT:host-says-{token}");
    if out.lines().any(|l| l.trim_end() == want_in_guest) {
        r.pass("net:nc-host-to-guest");
    } else {
        r.fail(
            "net:nc-host-to-guest",
            format!("the guest did not print `{want_in_guest}`\n{}", tail()),
        );
    }
    match &host.nc {
        Ok(got) if got.trim_end() == format!("guest-says-{token}") => {
            r.pass("net:nc-guest-to-host")
        }
        Ok(got) => r.fail("net:nc-guest-to-host", format!("the host read {got:?}")),
        Err(e) => r.fail("net:nc-guest-to-host", e.clone()),
    }
    let want = format!("WGET-GOT:served-by-host-{token}");
    if out.lines().any(|l| l.trim_end() == want) && served > 0 {
        r.pass("net:wget-from-host");
    } else {
        r.fail(
            "net:wget-from-host",
            format!(
                "the guest did not print `{want}` (host server answered {served} requests)\n{}",
                tail()
            ),
        );
    }
}

/// Boots the script with the NIC and both forwards; runs the host clients
/// once the guest prints NET-READY.
fn boot(
    env: &BootEnv,
    script: &str,
    http_port: u16,
    nc_port: u16,
    token: &str,
) -> Res<(BootResult, Option<HostSide>)> {
    let initrd = target_dir(&env.root).join(format!("initramfs-net-{}.cpio", std::process::id()));
    let argv = ["/bin/sh".to_string(), "-c".to_string(), script.to_string()];
    let spec = initramfs::Spec {
        user: None,
        adds: &[],
        argv: Some(&argv),
    };
    initramfs::write(&spec, &initrd)?;
    let net = qemu::Net {
        forwards: vec![(http_port, HTTPD_PORT), (nc_port, NC_PORT)],
    };
    let append = [qemu::NET_CMDLINE.to_string()];
    let b = qemu::Boot {
        kernel: &env.kernel,
        initrd: &initrd,
        append: &append,
        timeout: Some(BOOT_TIMEOUT),
        console: Console::Capture,
        watch: None,
        disks: &[],
        net: Some(&net),
    };
    let mut client: Option<JoinHandle<HostSide>> = None;
    let token = token.to_string();
    let result = qemu::boot(&b, &mut |line| {
        if client.is_none() && line.contains("NET-READY") {
            let token = token.clone();
            client = Some(std::thread::spawn(move || {
                host_clients(http_port, nc_port, &token)
            }));
        }
    });
    let _ = std::fs::remove_file(&initrd);
    let host = client.and_then(|h| h.join().ok());
    Ok((result?, host))
}
