//! Hand-written command-line parsing.

use std::path::PathBuf;
use std::time::Duration;

pub const USAGE: &str = "\
usage: cargo xtask <command> [options]

commands:
  build       build the kernel (+ .ksyms), the user programs and the initramfs
  run         build, then boot in QEMU: an interactive shell, or with
              `-- CMD ARGS...` run that one command and exit with its status
  initramfs   build only the user programs and target/initramfs.cpio
  test        run every test layer (host, miri, compile-fail, linux, user, glibc,
              busybox, interactive, ktest, storage, crash, debian, fuzz, bench)
  fuzz        boot Trellis with the syscall fuzzer (user/fuzz) as init: calls
              per second, panics and hangs with a reproducer, free memory
              before and after (docs/robustness.md)
  tcb         linked code per crate of the release kernel, TCB share
              (docs/tcb.md)
  api         list frame's public items (the list docs/frame-api.md must hold)
  miri        Miri over frame/'s host tests, then how many of frame's unsafe
              sites those tests reach (line coverage)
  bench [NAME...]
              boot Trellis and Debian's Linux with the benchmark initramfs
              and compare them (docs/perf/); --smoke: Trellis, once each;
              with names, only those rows (printed, docs/perf/ untouched)
  rootfs [PKG...]
              a Debian root tree of these packages and their dependencies
              (default: bash coreutils findutils grep sed gawk tar gzip
              python3 sqlite3 perl), from the host's apt sources, with an
              /init, in target/rootfs (or --out DIR); boot it with
              `run --root DIR`
  mkimage DIR IMG
              build an ext2 image IMG holding DIR's tree with the host's
              `mke2fs -t ext2 -d DIR` (docs/storage.md)
  help        show this text

options:
  --release            build the kernel in release mode (build, run)
  --add HOST:GUEST     copy a host file or directory into the initramfs at the
                       absolute path GUEST (run, initramfs; repeatable)
  --append ARGS        add to the kernel command line (run; repeatable)
  --root DIR           boot with DIR's tree as / (run): xtask makes it an ext2
                       image (target/root.img), attaches it as /dev/vda before
                       any --disk, and boots with root=/dev/vda rw init=/init;
                       `-- CMD` goes to /init on the kernel command line
  --out DIR            rootfs: where the tree goes (default target/rootfs)
  --disk IMG           attach the raw image IMG as a virtio-blk disk (run;
                       repeatable: /dev/vda, /dev/vdb, ... in this order)
  --net                a virtio-net NIC on QEMU user networking; the kernel
                       gets ip=10.0.2.15::10.0.2.2:255.255.255.0::eth0:off
                       (the host is 10.0.2.2 from the guest) (run)
  --forward HOST:GUEST forward TCP port HOST on the host's 127.0.0.1 to port
                       GUEST of the guest; implies --net (run; repeatable)
  --size MIB           mkimage: the image size in MiB (default: DIR's size
                       plus a half, at least 8 MiB)
  --block-size B       mkimage: 1024 or 4096 (default 4096)
  --timeout SECS       kill QEMU after SECS seconds; 0 = never (run; default
                       300 with `--`, none interactively)
  --kernel ELF         boot this kernel image instead of building one (run, test)
  --only LAYER,...     run only these test layers: host, miri, compile-fail,
                       linux, user, glibc, busybox, interactive, ktest,
                       storage, crash, net, debian, fuzz, bench (test)
  --seed S             fuzz: the PRNG seed (default 1)
  --calls N            fuzz: calls in the campaign (default 20000)
  --threads T          fuzz: worker threads per batch child (default 1)
  --uid U              fuzz: the batch child drops to uid/gid U before fuzzing
  --batch B            fuzz: calls per thread per batch child (default 1000)
  --replay K | F-K     fuzz: run only batch K (or batches F to K), printing
                       every call before issuing it (--trace)
  --call I             fuzz: with --replay K, only call I of the batch
  --smoke              one iteration of each benchmark, Trellis only (bench)
  --no-wall            skip the wall-clock pass (bench)
  --rounds N           bench: rounds of the wall pass (default 3)
  --no-icount          skip the icount pass (bench, with --rows)
  --rows NAME,...      run only these benchmarks (bench); the report is
                       printed, docs/perf/ is left alone
  --profile            bench: instructions per kernel function for each row
                       (icount, a QEMU plugin), into docs/perf/profile.md
  -- CMD ARGS...       the command to run as init (run, initramfs)

exit status of `run -- CMD`: CMD's status; 124 timeout, 125 kernel panic,
126 QEMU exited without a poweroff line; 1 build/launch error, 2 usage error";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sub {
    Build,
    Run,
    Initramfs,
    Test,
    Bench,
    Tcb,
    Miri,
    Api,
    Fuzz,
    Mkimage,
    Rootfs,
    Help,
}

/// `--add HOST:GUEST`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddSpec {
    pub host: PathBuf,
    pub guest: String,
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Options {
    pub release: bool,
    pub adds: Vec<AddSpec>,
    pub append: Vec<String>,
    /// `run --root DIR`.
    pub root: Option<PathBuf>,
    /// `rootfs --out DIR`.
    pub out: Option<PathBuf>,
    /// `--disk IMG`, in order.
    pub disks: Vec<PathBuf>,
    /// `run --net`: a virtio-net NIC on QEMU user networking (also set by
    /// `--forward`).
    pub net: bool,
    /// `run --forward HOST:GUEST`: TCP port forwards, in order.
    pub forwards: Vec<(u16, u16)>,
    /// `mkimage --size MIB`.
    pub size_mib: Option<u64>,
    /// `mkimage --block-size B`.
    pub block_size: Option<u32>,
    /// Arguments that are not options (mkimage's DIR and IMG).
    pub positional: Vec<String>,
    /// `None`: not given; `Some(None)`: `--timeout 0` (no limit).
    pub timeout: Option<Option<Duration>>,
    pub kernel: Option<PathBuf>,
    pub only: Vec<String>,
    pub smoke: bool,
    pub no_wall: bool,
    /// `bench --no-icount`: the wall pass only.
    pub no_icount: bool,
    /// `bench --rounds N`: rounds of the wall pass.
    pub rounds: Option<usize>,
    /// `bench --profile`: the per-row kernel profile instead of the figures.
    pub profile: bool,
    /// `bench --rows`: the benchmarks to run (empty: all).
    pub rows: Vec<String>,
    pub seed: Option<u64>,
    pub calls: Option<u64>,
    pub threads: Option<u32>,
    pub uid: Option<u32>,
    pub batch: Option<u64>,
    /// `--replay K` or `--replay F-K`: the batches to replay, inclusive.
    pub replay: Option<(u64, u64)>,
    pub call: Option<u64>,
    /// Everything after `--`.
    pub command: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub sub: Sub,
    pub opts: Options,
}

pub const LAYERS: &[&str] = &[
    "host",
    "miri",
    "linux",
    "user",
    "glibc",
    "busybox",
    "interactive",
    "ktest",
    "storage",
    "crash",
    "net",
    "debian",
    "compile-fail",
    "fuzz",
    "bench",
];

/// Parses the arguments after `cargo xtask`.
pub fn parse(argv: &[String]) -> Result<Invocation, String> {
    let Some(first) = argv.first() else {
        return Err("missing command".into());
    };
    let sub = match first.as_str() {
        "build" => Sub::Build,
        "run" => Sub::Run,
        "initramfs" => Sub::Initramfs,
        "test" => Sub::Test,
        "bench" => Sub::Bench,
        "tcb" => Sub::Tcb,
        "miri" => Sub::Miri,
        "api" => Sub::Api,
        "fuzz" => Sub::Fuzz,
        "mkimage" => Sub::Mkimage,
        "rootfs" => Sub::Rootfs,
        "help" | "-h" | "--help" => Sub::Help,
        other => return Err(format!("unknown command `{other}`")),
    };
    let mut opts = Options::default();
    let mut rest = argv[1..].iter();
    while let Some(arg) = rest.next() {
        if arg == "--" {
            let cmd: Vec<String> = rest.by_ref().cloned().collect();
            if cmd.is_empty() {
                return Err("`--` must be followed by a command".into());
            }
            opts.command = Some(cmd);
            break;
        }
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (arg.as_str(), None),
        };
        let mut value = |name: &str| -> Result<String, String> {
            match &inline {
                Some(v) => Ok(v.clone()),
                None => rest
                    .next()
                    .cloned()
                    .ok_or_else(|| format!("`{name}` needs a value")),
            }
        };
        match flag {
            "--release" if inline.is_none() => opts.release = true,
            "--smoke" if inline.is_none() => opts.smoke = true,
            "--no-wall" if inline.is_none() => opts.no_wall = true,
            "--no-icount" if inline.is_none() => opts.no_icount = true,
            "--profile" if inline.is_none() => opts.profile = true,
            "--add" => opts.adds.push(parse_add(&value(flag)?)?),
            "--append" => opts.append.push(value(flag)?),
            "--disk" => opts.disks.push(PathBuf::from(value(flag)?)),
            "--net" if inline.is_none() => opts.net = true,
            "--forward" => {
                opts.forwards.push(parse_forward(&value(flag)?)?);
                opts.net = true;
            }
            "--root" => opts.root = Some(PathBuf::from(value(flag)?)),
            "--out" => opts.out = Some(PathBuf::from(value(flag)?)),
            "--size" => opts.size_mib = Some(parse_num(flag, &value(flag)?)?.max(1)),
            "--block-size" => {
                let v = value(flag)?;
                opts.block_size = match v.as_str() {
                    "1024" => Some(1024),
                    "4096" => Some(4096),
                    _ => return Err(format!("`--block-size {v}`: expected 1024 or 4096")),
                }
            }
            "--timeout" => opts.timeout = Some(parse_timeout(&value(flag)?)?),
            "--kernel" => opts.kernel = Some(PathBuf::from(value(flag)?)),
            "--seed" => opts.seed = Some(parse_num(flag, &value(flag)?)?),
            "--calls" => opts.calls = Some(parse_num(flag, &value(flag)?)?),
            "--threads" => opts.threads = Some(parse_range(flag, &value(flag)?, 1, 8)?),
            "--uid" => opts.uid = Some(parse_range(flag, &value(flag)?, 0, 0xffff_fffe)?),
            "--batch" => opts.batch = Some(parse_num(flag, &value(flag)?)?.max(1)),
            "--replay" => opts.replay = Some(parse_batches(&value(flag)?)?),
            "--call" => opts.call = Some(parse_num(flag, &value(flag)?)?),
            "--rounds" => opts.rounds = Some(parse_range(flag, &value(flag)?, 1, 15)? as usize),
            "--rows" => {
                for row in value(flag)?.split(',').filter(|s| !s.is_empty()) {
                    if !row.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                        return Err(format!("`--rows`: bad benchmark name `{row}`"));
                    }
                    opts.rows.push(row.to_string());
                }
            }
            "--only" => {
                for layer in value(flag)?.split(',').filter(|s| !s.is_empty()) {
                    if !LAYERS.contains(&layer) {
                        return Err(format!("unknown test layer `{layer}`"));
                    }
                    opts.only.push(layer.to_string());
                }
            }
            "-h" | "--help" => {
                return Ok(Invocation {
                    sub: Sub::Help,
                    opts,
                });
            }
            _ if matches!(sub, Sub::Mkimage | Sub::Rootfs | Sub::Bench)
                && !arg.starts_with('-') =>
            {
                opts.positional.push(arg.clone())
            }
            _ => return Err(format!("unknown option `{arg}`")),
        }
    }
    check_allowed(sub, &opts)?;
    if sub == Sub::Mkimage && opts.positional.len() != 2 {
        return Err("mkimage needs DIR and IMG".into());
    }
    Ok(Invocation { sub, opts })
}

/// Rejects options that mean nothing for `sub`.
fn check_allowed(sub: Sub, o: &Options) -> Result<(), String> {
    let used = [
        ("--release", o.release),
        ("--add", !o.adds.is_empty()),
        ("--append", !o.append.is_empty()),
        ("--disk", !o.disks.is_empty()),
        ("--net", o.net && o.forwards.is_empty()),
        ("--forward", !o.forwards.is_empty()),
        ("--root", o.root.is_some()),
        ("--out", o.out.is_some()),
        ("--size", o.size_mib.is_some()),
        ("--block-size", o.block_size.is_some()),
        ("--timeout", o.timeout.is_some()),
        ("--kernel", o.kernel.is_some()),
        ("--only", !o.only.is_empty()),
        ("--smoke", o.smoke),
        ("--no-wall", o.no_wall),
        ("--rounds", o.rounds.is_some()),
        ("--no-icount", o.no_icount),
        ("--profile", o.profile),
        ("--rows", !o.rows.is_empty()),
        ("--seed", o.seed.is_some()),
        ("--calls", o.calls.is_some()),
        ("--threads", o.threads.is_some()),
        ("--uid", o.uid.is_some()),
        ("--batch", o.batch.is_some()),
        ("--replay", o.replay.is_some()),
        ("--call", o.call.is_some()),
        ("--", o.command.is_some()),
    ];
    let allowed: &[&str] = match sub {
        Sub::Build => &["--release"],
        Sub::Run => &[
            "--release",
            "--add",
            "--append",
            "--disk",
            "--net",
            "--forward",
            "--root",
            "--timeout",
            "--kernel",
            "--",
        ],
        Sub::Initramfs => &["--add", "--"],
        Sub::Test => &["--kernel", "--only"],
        Sub::Bench => &[
            "--kernel",
            "--smoke",
            "--no-wall",
            "--rounds",
            "--no-icount",
            "--profile",
            "--rows",
        ],
        Sub::Fuzz => &[
            "--release",
            "--kernel",
            "--seed",
            "--calls",
            "--threads",
            "--uid",
            "--batch",
            "--replay",
            "--call",
        ],
        Sub::Mkimage => &["--size", "--block-size"],
        Sub::Rootfs => &["--out"],
        Sub::Tcb | Sub::Miri | Sub::Api => &[],
        Sub::Help => &[],
    };
    for (name, present) in used {
        if present && !allowed.contains(&name) {
            return Err(format!("`{name}` is not valid for this command"));
        }
    }
    if o.call.is_some() && o.replay.is_none_or(|(f, k)| f != k) {
        return Err("`--call` needs `--replay K` (one batch)".into());
    }
    Ok(())
}

fn parse_num(flag: &str, s: &str) -> Result<u64, String> {
    let parsed = match s.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => s.parse(),
    };
    parsed.map_err(|_| format!("`{flag} {s}`: expected a number"))
}

fn parse_batches(s: &str) -> Result<(u64, u64), String> {
    let (f, k) = match s.split_once('-') {
        Some((f, k)) => (parse_num("--replay", f)?, parse_num("--replay", k)?),
        None => {
            let k = parse_num("--replay", s)?;
            (k, k)
        }
    };
    if f > k {
        return Err(format!(
            "`--replay {s}`: the first batch comes after the last"
        ));
    }
    Ok((f, k))
}

fn parse_range(flag: &str, s: &str, lo: u64, hi: u64) -> Result<u32, String> {
    let v = parse_num(flag, s)?;
    if v < lo || v > hi {
        return Err(format!("`{flag} {s}`: expected {lo}..={hi}"));
    }
    Ok(v as u32)
}

/// `--forward HOST:GUEST`: two TCP ports, 1..=65535.
pub fn parse_forward(s: &str) -> Result<(u16, u16), String> {
    let port = |p: &str| -> Result<u16, String> {
        match p.parse::<u16>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!("`--forward {s}`: `{p}` is not a port (1-65535)")),
        }
    };
    let (host, guest) = s
        .split_once(':')
        .ok_or_else(|| format!("`--forward {s}`: expected HOST:GUEST (two port numbers)"))?;
    Ok((port(host)?, port(guest)?))
}

/// Splits `HOST:GUEST` at the first `:` that is followed by `/`.
pub fn parse_add(s: &str) -> Result<AddSpec, String> {
    let bad = || format!("`--add {s}`: expected HOST:GUEST with an absolute GUEST path");
    let split = s
        .match_indices(':')
        .map(|(i, _)| i)
        .find(|&i| i > 0 && s[i + 1..].starts_with('/'))
        .ok_or_else(bad)?;
    let (host, guest) = (&s[..split], &s[split + 1..]);
    let guest = guest.trim_end_matches('/');
    if guest.is_empty() {
        return Err(format!("`--add {s}`: GUEST must not be `/`"));
    }
    if guest.split('/').any(|c| c == "..") {
        return Err(format!("`--add {s}`: GUEST must not contain `..`"));
    }
    Ok(AddSpec {
        host: PathBuf::from(host),
        guest: guest.to_string(),
    })
}

fn parse_timeout(s: &str) -> Result<Option<Duration>, String> {
    let secs: u64 = s
        .parse()
        .map_err(|_| format!("`--timeout {s}`: expected whole seconds"))?;
    Ok((secs > 0).then(|| Duration::from_secs(secs)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Invocation, String> {
        parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn build_release() {
        let inv = p(&["build", "--release"]).unwrap();
        assert_eq!(inv.sub, Sub::Build);
        assert!(inv.opts.release);
        assert!(inv.opts.command.is_none());
    }

    #[test]
    fn run_everything() {
        let inv = p(&[
            "run",
            "--add",
            "/tmp/x:/opt/x",
            "--add=a:b:/c",
            "--append",
            "loglevel=7",
            "--timeout=5",
            "--",
            "/bin/sh",
            "-c",
            "--release",
        ])
        .unwrap();
        assert_eq!(inv.sub, Sub::Run);
        let o = inv.opts;
        assert!(!o.release, "--release after -- belongs to the command");
        assert_eq!(o.adds[0].host, PathBuf::from("/tmp/x"));
        assert_eq!(o.adds[0].guest, "/opt/x");
        assert_eq!(o.adds[1].host, PathBuf::from("a:b"));
        assert_eq!(o.adds[1].guest, "/c");
        assert_eq!(o.append, vec!["loglevel=7".to_string()]);
        assert_eq!(o.timeout, Some(Some(Duration::from_secs(5))));
        let cmd = o.command.unwrap();
        assert_eq!(cmd, vec!["/bin/sh", "-c", "--release"]);
    }

    #[test]
    fn timeout_zero_means_none() {
        let inv = p(&["run", "--timeout", "0"]).unwrap();
        assert_eq!(inv.opts.timeout, Some(None));
        assert!(p(&["run", "--timeout", "soon"]).is_err());
        assert!(p(&["run", "--timeout"]).is_err());
    }

    #[test]
    fn errors() {
        assert!(p(&[]).is_err());
        assert!(p(&["frobnicate"]).is_err());
        assert!(p(&["run", "--bogus"]).is_err());
        assert!(p(&["run", "--"]).is_err());
        assert!(p(&["run", "--add", "nocolon"]).is_err());
        assert!(p(&["run", "--add", "x:relative"]).is_err());
        assert!(p(&["run", "--add", "x:/"]).is_err());
        assert!(p(&["run", "--add", "x:/a/../b"]).is_err());
        assert!(p(&["run", "--release=yes"]).is_err());
        assert!(p(&["build", "--", "ls"]).is_err());
        assert!(p(&["test", "--release"]).is_err());
        assert!(p(&["test", "--only", "host,nope"]).is_err());
    }

    #[test]
    fn test_options_and_help() {
        let inv = p(&["test", "--only", "host,busybox"]).unwrap();
        assert_eq!(inv.sub, Sub::Test);
        assert_eq!(inv.opts.only, vec!["host", "busybox"]);
        assert_eq!(p(&["help"]).unwrap().sub, Sub::Help);
        assert_eq!(p(&["run", "--help"]).unwrap().sub, Sub::Help);
    }

    #[test]
    fn bench_rows() {
        let inv = p(&["bench", "--rows", "sleep_1ms,pipe_lat", "--no-wall"]).unwrap();
        assert_eq!(inv.opts.rows, vec!["sleep_1ms", "pipe_lat"]);
        assert!(p(&["bench", "--rows", "a b"]).is_err());
        assert!(p(&["bench", "--rows", "x;reboot"]).is_err());
        assert!(p(&["test", "--rows", "pipe_lat"]).is_err());
    }

    #[test]
    fn fuzz_options() {
        let inv = p(&[
            "fuzz",
            "--seed",
            "0x10",
            "--calls=5000",
            "--threads",
            "2",
            "--uid",
            "1000",
        ])
        .unwrap();
        assert_eq!(inv.sub, Sub::Fuzz);
        assert_eq!(inv.opts.seed, Some(16));
        assert_eq!(inv.opts.calls, Some(5000));
        assert_eq!(inv.opts.threads, Some(2));
        assert_eq!(inv.opts.uid, Some(1000));
        assert!(p(&["fuzz", "--threads", "0"]).is_err());
        assert!(p(&["fuzz", "--threads", "9"]).is_err());
        assert!(p(&["fuzz", "--seed", "x"]).is_err());
        assert!(p(&["fuzz", "--call", "3"]).is_err());
        assert!(p(&["fuzz", "--replay", "3", "--call", "4"]).is_ok());
        assert_eq!(
            p(&["fuzz", "--replay", "2-5"]).unwrap().opts.replay,
            Some((2, 5))
        );
        assert_eq!(
            p(&["fuzz", "--replay", "7"]).unwrap().opts.replay,
            Some((7, 7))
        );
        assert!(p(&["fuzz", "--replay", "5-2"]).is_err());
        assert!(p(&["fuzz", "--replay", "2-5", "--call", "1"]).is_err());
        assert!(p(&["run", "--seed", "1"]).is_err());
        assert!(p(&["test", "--only", "fuzz"]).is_ok());
    }

    #[test]
    fn rootfs_and_root() {
        let inv = p(&["rootfs", "bash", "python3", "--out", "t"]).unwrap();
        assert_eq!(inv.sub, Sub::Rootfs);
        assert_eq!(inv.opts.positional, ["bash", "python3"]);
        assert_eq!(inv.opts.out, Some(PathBuf::from("t")));
        assert!(p(&["rootfs"]).unwrap().opts.positional.is_empty());
        let inv = p(&["run", "--root", "t", "--", "/bin/bash"]).unwrap();
        assert_eq!(inv.opts.root, Some(PathBuf::from("t")));
        assert!(p(&["run", "--out", "t"]).is_err());
        assert!(p(&["rootfs", "--root", "t"]).is_err());
        assert!(p(&["test", "--root", "t"]).is_err());
    }

    #[test]
    fn net_and_forwards() {
        let inv = p(&["run", "--net"]).unwrap();
        assert!(inv.opts.net && inv.opts.forwards.is_empty());
        let inv = p(&["run", "--forward", "8080:80", "--forward=2222:22"]).unwrap();
        assert!(inv.opts.net, "--forward implies --net");
        assert_eq!(inv.opts.forwards, [(8080, 80), (2222, 22)]);
        for bad in [
            "80", "0:80", "80:0", "65536:1", "a:b", ":80", "80:", "1:2:3",
        ] {
            assert!(p(&["run", "--forward", bad]).is_err(), "{bad}");
        }
        assert!(p(&["test", "--net"]).is_err());
        assert!(p(&["test", "--forward", "1:2"]).is_err());
        assert!(p(&["run", "--net=1"]).is_err());
    }

    #[test]
    fn disks_and_mkimage() {
        let inv = p(&["run", "--disk", "a.img", "--disk=b.img", "--", "/bin/sh"]).unwrap();
        assert_eq!(
            inv.opts.disks,
            [PathBuf::from("a.img"), PathBuf::from("b.img")]
        );
        assert!(p(&["test", "--disk", "a.img"]).is_err());
        assert!(p(&["run", "--disk"]).is_err());
        let inv = p(&[
            "mkimage",
            "dir",
            "out.img",
            "--size",
            "64",
            "--block-size=1024",
        ])
        .unwrap();
        assert_eq!(inv.sub, Sub::Mkimage);
        assert_eq!(inv.opts.positional, ["dir", "out.img"]);
        assert_eq!(inv.opts.size_mib, Some(64));
        assert_eq!(inv.opts.block_size, Some(1024));
        assert!(p(&["mkimage", "dir"]).is_err());
        assert!(p(&["mkimage", "dir", "a", "b"]).is_err());
        assert!(p(&["mkimage", "dir", "a", "--block-size", "2048"]).is_err());
        assert!(p(&["run", "dir"]).is_err());
        assert!(p(&["run", "--size", "3"]).is_err());
    }

    #[test]
    fn add_trailing_slash_is_trimmed() {
        let a = parse_add("dir:/opt/dir/").unwrap();
        assert_eq!(a.guest, "/opt/dir");
    }
}
