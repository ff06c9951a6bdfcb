//! Layer 3: busybox applets, each in its own boot through the same path as
//! `cargo xtask run -- CMD`, checking the output and the exit status.

use std::collections::HashMap;
use std::time::Duration;

use crate::initramfs;
use crate::qemu::{BootResult, Outcome};
use crate::scan::{guest_output, serial_tail};
use crate::test::{BootEnv, Reporter};

const TIMEOUT: Duration = Duration::from_secs(120);
const PASSWD: &str = "root:x:0:0:root:/root:/bin/sh\n";

#[derive(Debug)]
enum Expect {
    /// The whole output, exactly.
    Exact(&'static str),
    /// These whitespace-separated words appear in the output.
    Words(&'static [&'static str]),
}

struct Case {
    name: &'static str,
    /// `argv[0]` is an applet name, resolved to its absolute path.
    argv: &'static [&'static str],
    status: u8,
    expect: Expect,
}

const SCRIPT: &str = "cd /tmp && pwd && mkdir -p d/e && echo one > d/e/f && \
for i in 1 2 3; do echo n$i; done; \
if test -f d/e/f; then echo yes; fi; \
ls d; cat d/e/f; rm d/e/f; test -e d/e/f || echo gone";

const CASES: &[Case] = &[
    Case {
        name: "ls",
        argv: &["ls", "/"],
        status: 0,
        expect: Expect::Words(&["bin", "tests"]),
    },
    Case {
        name: "cat",
        argv: &["cat", "/etc/passwd"],
        status: 0,
        expect: Expect::Exact(PASSWD),
    },
    Case {
        name: "echo",
        argv: &["echo", "hello", "world"],
        status: 0,
        expect: Expect::Exact("hello world\n"),
    },
    Case {
        name: "wc",
        argv: &["wc", "-l", "/etc/passwd"],
        status: 0,
        expect: Expect::Exact("1 /etc/passwd\n"),
    },
    Case {
        name: "head",
        argv: &["head", "-n", "1", "/etc/passwd"],
        status: 0,
        expect: Expect::Exact(PASSWD),
    },
    Case {
        name: "uname",
        argv: &["uname", "-s"],
        status: 0,
        expect: Expect::Exact("Linux\n"),
    },
    Case {
        name: "mkdir",
        argv: &["sh", "-c", "mkdir -p /tmp/a/b && ls -d /tmp/a/b"],
        status: 0,
        expect: Expect::Exact("/tmp/a/b\n"),
    },
    Case {
        name: "rm",
        argv: &["sh", "-c", "echo data > /tmp/f && rm /tmp/f && ls /tmp/f"],
        status: 1,
        expect: Expect::Exact("ls: /tmp/f: No such file or directory\n"),
    },
    Case {
        name: "true",
        argv: &["true"],
        status: 0,
        expect: Expect::Exact(""),
    },
    Case {
        name: "false",
        argv: &["false"],
        status: 1,
        expect: Expect::Exact(""),
    },
    Case {
        name: "sh-exit",
        argv: &["sh", "-c", "exit 3"],
        status: 3,
        expect: Expect::Exact(""),
    },
    Case {
        name: "sh-script",
        argv: &["sh", "-c", SCRIPT],
        status: 0,
        expect: Expect::Exact("/tmp\nn1\nn2\nn3\nyes\ne\none\ngone\n"),
    },
    // The /proc consumers the issue names: ps, top, free, mount, df, pidof.
    Case {
        name: "ps",
        argv: &["sh", "-c", "sleep 30 & ps; kill $!"],
        status: 0,
        expect: Expect::Words(&["PID", "USER", "COMMAND", "root", "sleep"]),
    },
    Case {
        name: "top",
        argv: &["top", "-b", "-n", "1"],
        status: 0,
        expect: Expect::Words(&["Mem:", "CPU:", "Load", "average:", "PID", "PPID", "-b", "-n"]),
    },
    Case {
        name: "free",
        argv: &["free"],
        status: 0,
        expect: Expect::Words(&["total", "used", "free", "Mem:", "Swap:"]),
    },
    Case {
        name: "mount",
        argv: &["sh", "-c", "mkdir /mnt && mount -t tmpfs t /mnt && mount"],
        status: 0,
        expect: Expect::Words(&["proc", "on", "/proc", "type", "t", "/mnt", "tmpfs"]),
    },
    Case {
        name: "df",
        argv: &["sh", "-c", "mkdir /mnt && mount -t tmpfs -o size=1m t /mnt && df /mnt /dev/shm"],
        status: 0,
        expect: Expect::Words(&["Filesystem", "1K-blocks", "Use%", "t", "1024", "/mnt", "tmpfs", "/dev/shm"]),
    },
    Case {
        name: "pidof",
        argv: &["sh", "-c", "sleep 30 & p=$!; test \"$(pidof sleep)\" = $p && echo same; kill $p"],
        status: 0,
        expect: Expect::Exact("same\n"),
    },
    Case {
        name: "kill-wait",
        argv: &["sh", "-c", "sleep 30 & kill -TERM $!; wait $!; echo $?"],
        status: 0,
        // Only the status is deterministic: ash prints its "Terminated"
        // job report only when the child dies while `wait` is blocked on
        // it; on a loaded machine it may die earlier (reaped while `kill`
        // runs) and the report is skipped, on Linux as here.
        expect: Expect::Words(&["143"]),
    },
    Case {
        name: "pipeline",
        argv: &["sh", "-c", "seq 1 100 | grep 7 | sort -rn | head -3 | tr '\\n' ' '"],
        status: 0,
        expect: Expect::Exact("97 87 79 "),
    },
    Case {
        name: "dd-md5sum",
        argv: &["sh", "-c", "dd if=/dev/zero bs=1024 count=64 2>/dev/null | md5sum"],
        status: 0,
        expect: Expect::Words(&["fcd6bcb56c1689fcef28b57c22475bad", "-"]),
    },
    Case {
        name: "tar",
        argv: &["sh", "-c", "cd /tmp && mkdir -p a/b && echo x > a/b/f && tar cf t.tar a && rm -r a && tar xf t.tar && cat a/b/f"],
        status: 0,
        expect: Expect::Exact("x\n"),
    },
    // Interface configuration (docs/net.md): netlink for `ip`, the SIOC*
    // ioctls and /proc/net for ifconfig and route.
    Case {
        name: "ip-addr-route",
        argv: &[
            "sh",
            "-c",
            "ip addr add 10.9.8.7/24 dev lo && ip addr show dev lo && \
             ip route add 10.1.0.0/16 via 10.9.8.1 && ip route && \
             route add -net 10.3.0.0 netmask 255.255.0.0 gw 10.9.8.1 && \
             route add -host 10.4.0.1 dev lo && route -n",
        ],
        status: 0,
        expect: Expect::Words(&[
            "1:", "lo:", "<LOOPBACK,UP,LOWER_UP>", "65536", "link/loopback", "127.0.0.1/8",
            "10.9.8.7/24", "::1/128", "10.1.0.0/16", "via", "10.9.8.1", "255.255.0.0", "UG",
            "10.3.0.0", "10.4.0.1", "255.255.255.255", "UH",
        ]),
    },
    Case {
        name: "ip-link-set",
        argv: &[
            "sh",
            "-c",
            "ip link set lo down && ip link show lo && ip link set lo mtu 1500 up && ip link",
        ],
        status: 0,
        expect: Expect::Words(&["<LOOPBACK>", "<LOOPBACK,UP,LOWER_UP>", "1500"]),
    },
    Case {
        name: "ifconfig",
        argv: &["sh", "-c", "ifconfig lo mtu 9000 && ifconfig"],
        status: 0,
        expect: Expect::Words(&[
            "lo", "encap:Local", "Loopback", "addr:127.0.0.1", "Mask:255.0.0.0", "UP", "LOOPBACK",
            "RUNNING", "MTU:9000",
        ]),
    },
];

/// Compares a finished boot with what the case expects.
fn check(case: &Case, result: &BootResult) -> Result<(), String> {
    let status = match &result.outcome {
        Outcome::Poweroff(n) => *n,
        other => return Err(other.problem().unwrap_or_default()),
    };
    let output = guest_output(&result.lines);
    let mut problems = Vec::new();
    if status != case.status {
        problems.push(format!("exit status {status}, expected {}", case.status));
    }
    match &case.expect {
        Expect::Exact(want) if output != *want => {
            problems.push(format!("output {output:?}, expected {want:?}"));
        }
        Expect::Words(words) => {
            let have: Vec<&str> = output.split_whitespace().collect();
            let missing: Vec<&str> = words
                .iter()
                .copied()
                .filter(|w| !have.contains(w))
                .collect();
            if !missing.is_empty() {
                problems.push(format!("output {output:?} lacks {missing:?}"));
            }
        }
        Expect::Exact(_) => {}
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// `applet name -> /absolute/path` from `busybox --list-full`.
fn applet_paths() -> Result<HashMap<String, String>, String> {
    Ok(initramfs::applets()?
        .into_iter()
        .map(|p| {
            let name = p.rsplit('/').next().unwrap_or(&p).to_string();
            (name, format!("/{p}"))
        })
        .collect())
}

pub fn run(env: Option<&BootEnv>, r: &mut Reporter) {
    let Some(env) = env else {
        for case in CASES {
            r.skip(
                &format!("busybox:{}", case.name),
                "the kernel did not build",
            );
        }
        return;
    };
    let applets = applet_paths();
    for case in CASES {
        let name = format!("busybox:{}", case.name);
        let applets = match &applets {
            Ok(a) => a,
            Err(e) => {
                r.fail(&name, format!("cannot list busybox applets: {e}"));
                continue;
            }
        };
        let Some(path) = applets.get(case.argv[0]) else {
            r.fail(&name, format!("busybox has no `{}` applet", case.argv[0]));
            continue;
        };
        let mut argv = vec![path.clone()];
        argv.extend(case.argv[1..].iter().map(|s| s.to_string()));
        eprintln!("xtask: booting {argv:?}");
        let result = match env.boot_command(&argv, TIMEOUT, &mut |_| {}) {
            Ok(res) => res,
            Err(e) => {
                r.fail(&name, e);
                continue;
            }
        };
        let log = env.write_log(&format!("busybox-{}.log", case.name), &result);
        match check(case, &result) {
            Ok(()) => r.pass(&name),
            Err(why) => {
                let log = match log {
                    Ok(p) => p.display().to_string(),
                    Err(e) => format!("(no log: {e})"),
                };
                let lines = serial_tail(&result.lines, 15);
                r.fail(&name, format!("{why} (log: {log})\n{lines}"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boot(outcome: Outcome, serial: &str) -> BootResult {
        BootResult {
            outcome,
            lines: serial.lines().map(str::to_string).collect(),
            stderr: String::new(),
        }
    }

    fn case(name: &str) -> &'static Case {
        CASES.iter().find(|c| c.name == name).unwrap()
    }

    #[test]
    fn exact_output_and_status() {
        let ok = boot(
            Outcome::Poweroff(0),
            "Booting from ROM..[ 0.0] hi\r\nhello world\r\ntrellis: poweroff status=0\r\n",
        );
        assert_eq!(check(case("echo"), &ok), Ok(()));
        let wrong = boot(Outcome::Poweroff(2), "hello\ntrellis: poweroff status=2\n");
        let err = check(case("echo"), &wrong).unwrap_err();
        assert!(err.contains("exit status 2, expected 0"), "{err}");
        assert!(err.contains("\"hello\\n\""), "{err}");
        let exit3 = boot(Outcome::Poweroff(3), "trellis: poweroff status=3\n");
        assert_eq!(check(case("sh-exit"), &exit3), Ok(()));
    }

    #[test]
    fn word_matching_ignores_colours_and_columns() {
        let ls = boot(
            Outcome::Poweroff(0),
            "\x1b[1;34mbin\x1b[0m   etc   \x1b[1;34mtests\x1b[0m  tmp\r\ntrellis: poweroff status=0\r\n",
        );
        assert_eq!(check(case("ls"), &ls), Ok(()));
        let no_tests = boot(
            Outcome::Poweroff(0),
            "bin  etc\ntrellis: poweroff status=0\n",
        );
        assert!(check(case("ls"), &no_tests).is_err());
    }

    #[test]
    fn abnormal_ends_fail() {
        let panic = boot(Outcome::Panic("trellis: KERNEL PANIC x".into()), "");
        assert!(
            check(case("true"), &panic)
                .unwrap_err()
                .contains("kernel panic")
        );
        let t = boot(Outcome::Timeout(TIMEOUT), "");
        assert!(check(case("true"), &t).unwrap_err().contains("timed out"));
    }

    #[test]
    fn case_names_are_unique() {
        let mut names: Vec<&str> = CASES.iter().map(|c| c.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), CASES.len());
    }
}
