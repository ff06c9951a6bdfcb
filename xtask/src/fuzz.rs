//! `cargo xtask fuzz`: boots Trellis with the syscall fuzzer (`user/fuzz`,
//! installed as `/sbin/fuzz`) as init and reports calls per second, kernel
//! panics and hangs with a reproducer, and free memory before and after.
//!
//! The guest prints `fuzz: batch K calls N` after every batch; the host
//! counts a hang when no `fuzz:` or `fz ` line comes for [`QUIET`]. After a
//! panic or a hang in batch K, that batch is replayed in a fresh boot with
//! `--trace`, which prints every call before issuing it (the generator is
//! deterministic), so the call printed last without a result is the one
//! the kernel died in; a boot with only that call (`--only I`) then tells
//! whether it reproduces on its own. The campaign goes on from batch K + 1.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::args::Options;
use crate::builder;
use crate::initramfs::FUZZ;
use crate::qemu::{Outcome, Watch};
use crate::scan::{self, strip_ansi};
use crate::test::{BootEnv, Reporter};
use crate::util::{Context, Res, target_dir};

/// No progress line for this long is a hang (generous: TCG on a loaded
/// 2-core machine; a batch prints at least every 10 s while it moves).
pub const QUIET: Duration = Duration::from_secs(60);
/// Free memory after the campaign must be within this share of before.
const MEM_TOLERANCE: f64 = 0.01;

/// One campaign's parameters (what `fuzz` in the guest is given).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Campaign {
    pub seed: u64,
    pub calls: u64,
    pub threads: u32,
    pub uid: Option<u32>,
    /// Calls per worker thread per batch.
    pub batch: u64,
}

impl Campaign {
    pub const DEFAULT_CALLS: u64 = 20_000;
    pub const DEFAULT_BATCH: u64 = 1000;

    pub fn from_options(o: &Options) -> Self {
        Campaign {
            seed: o.seed.unwrap_or(1),
            calls: o.calls.unwrap_or(Self::DEFAULT_CALLS),
            threads: o.threads.unwrap_or(1).max(1),
            uid: o.uid,
            batch: o.batch.unwrap_or(Self::DEFAULT_BATCH).max(1),
        }
    }

    pub fn batches(&self) -> u64 {
        self.calls
            .div_ceil(self.batch * u64::from(self.threads))
            .max(1)
    }

    fn calls_per_batch(&self) -> u64 {
        self.batch * u64::from(self.threads)
    }

    /// The guest command for batches `first..first + count`.
    fn argv(&self, first: u64, count: u64) -> Vec<String> {
        let mut v: Vec<String> = vec![FUZZ.into()];
        let mut opt = |k: &str, val: String| {
            v.push(k.into());
            v.push(val);
        };
        opt("--seed", self.seed.to_string());
        opt("--batch", self.batch.to_string());
        opt("--threads", self.threads.to_string());
        if let Some(u) = self.uid {
            opt("--uid", u.to_string());
        }
        opt("--first-batch", first.to_string());
        opt("--batches", count.to_string());
        v
    }

    /// The host command that replays batches `from..=batch` (and only
    /// `call`).
    pub fn replay_command(&self, from: u64, batch: u64, call: Option<u64>) -> String {
        let mut s = format!(
            "cargo xtask fuzz --seed {} --batch {} --threads {}",
            self.seed, self.batch, self.threads
        );
        if let Some(u) = self.uid {
            s.push_str(&format!(" --uid {u}"));
        }
        if from == batch {
            s.push_str(&format!(" --replay {batch}"));
        } else {
            s.push_str(&format!(" --replay {from}-{batch}"));
        }
        if let Some(c) = call {
            s.push_str(&format!(" --call {c}"));
        }
        s
    }

    fn describe(&self) -> String {
        format!(
            "seed {}: {} calls in {} batches of {} x {} thread(s), {}",
            self.seed,
            self.batches() * self.calls_per_batch(),
            self.batches(),
            self.batch,
            self.threads,
            match self.uid {
                Some(u) => format!("uid {u}"),
                None => "root".into(),
            }
        )
    }
}

/// The `key=value kB` fields of a `fuzz: mem` line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mem {
    pub fields: Vec<(String, u64)>,
}

impl Mem {
    fn parse(rest: &str) -> Self {
        let fields = rest
            .split_whitespace()
            .filter_map(|t| t.split_once('='))
            .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
            .collect();
        Mem { fields }
    }

    pub fn get(&self, key: &str) -> Option<u64> {
        self.fields.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }

    fn show(&self) -> String {
        self.fields
            .iter()
            .map(|(k, v)| format!("{k} {v} kB"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// What one boot of the fuzzer printed.
#[derive(Debug, Default)]
pub struct Segment {
    pub first: u64,
    /// The last batch that completed.
    pub last_done: Option<u64>,
    pub batches: u64,
    pub before: Option<Mem>,
    pub after: Option<Mem>,
    /// The kernel heap caches that changed (`fuzz: slab change ...`).
    pub slab_change: Option<String>,
    /// The `fuzz: done` line's fields.
    pub done: BTreeMap<String, f64>,
    /// Deaths, stalls, odd returns and warnings the guest reported.
    pub notes: Vec<String>,
    /// Per worker thread: the traced call that has no result yet.
    pub inflight: BTreeMap<u32, (u64, u64, String)>,
    /// How long the boot took.
    pub wall: Duration,
}

impl Segment {
    fn new(first: u64) -> Self {
        Segment {
            first,
            ..Segment::default()
        }
    }

    /// Takes one serial line into account.
    pub fn feed(&mut self, raw: &str) {
        let line = strip_ansi(raw);
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("fz ") {
            self.feed_trace(rest);
            return;
        }
        let Some(rest) = line.strip_prefix("fuzz: ") else {
            return;
        };
        if let Some(b) = rest.strip_prefix("batch ") {
            let words: Vec<&str> = b.split_whitespace().collect();
            match words[..] {
                [k, "calls", _] => {
                    if let Ok(k) = k.parse::<u64>() {
                        self.last_done = Some(k);
                        self.batches += 1;
                    }
                }
                [_, "at", _] => {}
                _ => self.notes.push(rest.to_string()),
            }
        } else if let Some(m) = rest.strip_prefix("mem before") {
            self.before = Some(Mem::parse(m));
        } else if let Some(m) = rest.strip_prefix("mem after") {
            self.after = Some(Mem::parse(m));
        } else if let Some(c) = rest.strip_prefix("slab change") {
            self.slab_change = Some(c.trim_start_matches([' ', ':']).to_string());
        } else if let Some(d) = rest.strip_prefix("done ") {
            let words: Vec<&str> = d.split_whitespace().collect();
            for pair in words.chunks(2) {
                if let [k, v] = pair
                    && let Ok(v) = v.parse::<f64>()
                {
                    self.done.insert((*k).to_string(), v);
                }
            }
        } else if [
            "death ",
            "stall ",
            "odd return",
            "warning",
            "child setup",
            "fork failed",
        ]
        .iter()
        .any(|p| rest.starts_with(p))
        {
            self.notes.push(rest.to_string());
        }
    }

    /// `K.I tT [sac ]call(...)` or `K.I tT = ret`.
    fn feed_trace(&mut self, rest: &str) {
        let mut words = rest.splitn(3, ' ');
        let (Some(at), Some(t), Some(what)) = (words.next(), words.next(), words.next()) else {
            return;
        };
        let (Some((k, i)), Some(t)) = (at.split_once('.'), t.strip_prefix('t')) else {
            return;
        };
        let (Ok(k), Ok(i), Ok(t)) = (k.parse::<u64>(), i.parse::<u64>(), t.parse::<u32>()) else {
            return;
        };
        if what.starts_with("= ") {
            if self
                .inflight
                .get(&t)
                .is_some_and(|(kk, ii, _)| (*kk, *ii) == (k, i))
            {
                self.inflight.remove(&t);
            }
        } else {
            self.inflight.insert(t, (k, i, what.to_string()));
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Panic,
    Hang,
    /// The fuzzer itself failed (exit status, QEMU trouble).
    Error,
}

/// How a panic or hang was reproduced.
#[derive(Debug, Default)]
pub struct Repro {
    /// The replay of the batch ended the same way.
    pub replayed: bool,
    /// How the replay ended.
    pub replay_outcome: String,
    /// The calls in flight when the replay died: `tT K.I call(...)`.
    pub calls: Vec<String>,
    /// Whether that call alone (single worker) reproduces it.
    pub single: Option<bool>,
    /// The replay's panic message and backtrace.
    pub detail: Vec<String>,
    pub command: String,
}

#[derive(Debug)]
pub struct Incident {
    pub kind: Kind,
    pub batch: u64,
    pub what: String,
    pub detail: Vec<String>,
    pub repro: Option<Repro>,
    pub log: PathBuf,
}

impl Incident {
    pub fn lines(&self) -> Vec<String> {
        let kind = match self.kind {
            Kind::Panic => "PANIC",
            Kind::Hang => "HANG",
            Kind::Error => "ERROR",
        };
        let mut out = vec![format!("{kind} in batch {}: {}", self.batch, self.what)];
        if let Some(r) = &self.repro {
            if r.replayed {
                for c in &r.calls {
                    out.push(format!("  reproducer: {c}"));
                }
                match r.single {
                    Some(true) => out.push("  the call alone (fresh child, no earlier calls) reproduces it".into()),
                    Some(false) => out.push("  the call alone does not reproduce it: it needs the batch's earlier calls".into()),
                    None => {}
                }
            } else {
                out.push(format!(
                    "  the traced replay did not reproduce it ({})",
                    r.replay_outcome
                ));
                for c in &r.calls {
                    out.push(format!("  last traced call: {c}"));
                }
            }
            out.push(format!("  replay: {}", r.command));
        }
        let detail = self
            .repro
            .as_ref()
            .filter(|r| r.replayed && !r.detail.is_empty())
            .map_or(&self.detail, |r| &r.detail);
        for d in detail.iter().take(40) {
            out.push(format!("  | {d}"));
        }
        out.push(format!("  log: {}", self.log.display()));
        out
    }
}

#[derive(Debug)]
pub struct Report {
    pub campaign: Campaign,
    pub segments: Vec<Segment>,
    pub incidents: Vec<Incident>,
    pub wall: Duration,
}

impl Report {
    pub fn calls(&self) -> u64 {
        self.segments.iter().map(|s| s.batches).sum::<u64>() * self.campaign.calls_per_batch()
    }

    /// Calls per second by the guest's own clock, over the boots that
    /// reported it (a boot that panicked did not).
    fn guest_rate(&self) -> f64 {
        let (calls, secs) = self
            .segments
            .iter()
            .filter_map(|s| Some((s.done.get("calls")?, s.done.get("secs")?)))
            .fold((0.0, 0.0), |(c, t), (dc, dt)| (c + dc, t + dt));
        if secs > 0.0 { calls / secs } else { 0.0 }
    }

    fn sum(&self, key: &str) -> u64 {
        self.segments
            .iter()
            .filter_map(|s| s.done.get(key))
            .sum::<f64>() as u64
    }

    fn count(&self, kind: Kind) -> usize {
        self.incidents.iter().filter(|i| i.kind == kind).count()
    }

    /// The memory check of each boot that ran to its end.
    pub fn memory(&self) -> Vec<(String, bool)> {
        let mut out = Vec::new();
        for s in &self.segments {
            let (Some(b), Some(a)) = (&s.before, &s.after) else {
                continue;
            };
            let (Some(fb), Some(fa)) = (b.get("MemFree"), a.get("MemFree")) else {
                out.push((
                    format!("batches from {}: no MemFree figure", s.first),
                    false,
                ));
                continue;
            };
            let delta = fa as f64 - fb as f64;
            let share = if fb > 0 { delta / fb as f64 } else { 0.0 };
            let ok = share.abs() <= MEM_TOLERANCE;
            out.push((
                format!(
                    "batches {}..{}: MemFree {fb} kB before, {fa} kB after ({:+} kB, {:+.2}%) {}; before: {}; after: {}",
                    s.first,
                    s.last_done.map_or("-".into(), |l| l.to_string()),
                    fa as i64 - fb as i64,
                    share * 100.0,
                    if ok { "OK" } else { "LEAK" },
                    b.show(),
                    a.show()
                ),
                ok,
            ));
        }
        out
    }

    /// Why the campaign failed; empty when it passed.
    pub fn problems(&self) -> Vec<String> {
        let mut p = Vec::new();
        for i in &self.incidents {
            p.push(i.lines()[0].clone());
        }
        let mem = self.memory();
        if mem.is_empty() {
            p.push("no boot reported memory before and after".into());
        }
        for (m, ok) in mem {
            if !ok {
                p.push(format!("memory: {m}"));
            }
        }
        let odd = self.sum("odd");
        if odd > 0 {
            p.push(format!("{odd} calls returned a kernel-internal error code"));
        }
        p
    }

    pub fn summary(&self) -> Vec<String> {
        let calls = self.calls();
        let boots: Duration = self.segments.iter().map(|s| s.wall).sum();
        let mut out = vec![format!(
            "fuzz {}: {} calls, {} batches, {:.0} calls/s ({} s of fuzzing boots, boot time included; \
             the guest's own clock says {:.0} calls/s), {} panics, {} hangs, {} s in all",
            self.campaign.describe(),
            calls,
            self.segments.iter().map(|s| s.batches).sum::<u64>(),
            calls as f64 / boots.as_secs_f64().max(1e-3),
            boots.as_secs(),
            self.guest_rate(),
            self.count(Kind::Panic),
            self.count(Kind::Hang),
            self.wall.as_secs(),
        )];
        out.push(format!(
            "  in the boots that ran to their end: child deaths {} (a fuzzed call killed the batch's child), stalls {} (a call ignored signals), stops continued {}, sacrificial calls {}, ok {}, errors {}, ENOSYS {}, odd errnos {}",
            self.sum("deaths"),
            self.sum("stalls"),
            self.sum("continued"),
            self.sum("sacrificial"),
            self.sum("ok"),
            self.sum("err"),
            self.sum("enosys"),
            self.sum("odd"),
        ));
        for (m, _) in self.memory() {
            out.push(format!("  memory: {m}"));
        }
        for s in &self.segments {
            if let Some(c) = &s.slab_change {
                out.push(format!("  kernel heap, batches from {}: {c}", s.first));
            }
        }
        out
    }
}

/// A line that shows the fuzzer is alive.
fn is_progress(line: &str) -> bool {
    let l = strip_ansi(line);
    l.starts_with("fuzz:") || l.starts_with("fz ")
}

/// The kernel's last words: from the panic line on.
fn panic_text(lines: &[String]) -> Vec<String> {
    let clean = scan::after_firmware(lines);
    match clean.iter().position(|l| l.contains("KERNEL PANIC")) {
        Some(i) => clean[i..].iter().take(60).cloned().collect(),
        None => Vec::new(),
    }
}

fn tail(lines: &[String], n: usize) -> Vec<String> {
    scan::serial_tail(lines, n)
        .lines()
        .map(str::to_string)
        .collect()
}

/// One boot of `argv`; its log goes to `log`.
fn boot(
    env: &BootEnv,
    argv: &[String],
    calls: u64,
    log: &Path,
    seg: &mut Segment,
    on_batch: &mut dyn FnMut(&Segment),
) -> Res<crate::qemu::BootResult> {
    let initrd = target_dir(&env.root)
        .join("fuzz")
        .join(format!("initramfs-{}.cpio", std::process::id()));
    if let Some(dir) = initrd.parent() {
        std::fs::create_dir_all(dir).ctx(|| format!("cannot create {}", dir.display()))?;
    }
    // A backstop only: the progress watchdog finds hangs.
    let timeout = Duration::from_secs(600 + calls / 20);
    let watch = Watch {
        is_progress: &is_progress,
        quiet: QUIET,
    };
    // The log is written as the lines come, so a long boot can be watched
    // (`tail -f`) and a host crash loses nothing.
    let mut out = std::io::BufWriter::new(
        std::fs::File::create(log).ctx(|| format!("cannot create {}", log.display()))?,
    );
    let start = Instant::now();
    let mut last_flush = Instant::now();
    let result = env.boot_watched(argv, &initrd, Some(timeout), watch, &mut |line| {
        let _ = writeln!(out, "{line}");
        if last_flush.elapsed() > Duration::from_secs(2) {
            let _ = out.flush();
            last_flush = Instant::now();
        }
        let before = seg.batches;
        seg.feed(line);
        if seg.batches != before {
            on_batch(seg);
        }
    });
    seg.wall = start.elapsed();
    let _ = std::fs::remove_file(&initrd);
    let result = result?;
    if !result.stderr.is_empty() {
        let _ = writeln!(out, "--- QEMU stderr ---\n{}", result.stderr);
    }
    out.flush()
        .ctx(|| format!("cannot write {}", log.display()))?;
    Ok(result)
}

fn log_dir(env: &BootEnv) -> Res<PathBuf> {
    let dir = target_dir(&env.root).join("fuzz-logs");
    std::fs::create_dir_all(&dir).ctx(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}

fn kind_of(outcome: &Outcome) -> Kind {
    match outcome {
        Outcome::Panic(_) => Kind::Panic,
        Outcome::NoProgress(_) | Outcome::Timeout(_) => Kind::Hang,
        _ => Kind::Error,
    }
}

/// Replays batches `from..=batch` with every call traced, then the call
/// in flight when the kernel died alone, in a fresh child.
pub fn reproduce(
    env: &BootEnv,
    c: &Campaign,
    from: u64,
    batch: u64,
    call: Option<u64>,
) -> Res<Repro> {
    let dir = log_dir(env)?;
    let mut argv = c.argv(from, batch - from + 1);
    if let Some(i) = call {
        argv.extend(["--only".into(), i.to_string()]);
    }
    argv.push("--trace".into());
    let log = dir.join(format!(
        "seed{}-batch{}{batch}{}-trace.log",
        c.seed,
        if from == batch {
            String::new()
        } else {
            format!("{from}-")
        },
        call.map_or(String::new(), |i| format!("-call{i}"))
    ));
    let mut seg = Segment::new(from);
    let calls = (batch - from + 1) * c.calls_per_batch();
    let result = boot(env, &argv, calls, &log, &mut seg, &mut |_| {})?;
    let replayed = matches!(kind_of(&result.outcome), Kind::Panic | Kind::Hang);
    let detail = if matches!(result.outcome, Outcome::Panic(_)) {
        panic_text(&result.lines)
    } else {
        tail(&result.lines, 25)
    };
    let mut repro = Repro {
        replayed,
        replay_outcome: result
            .outcome
            .problem()
            .unwrap_or_else(|| "it ran to its end".into()),
        calls: seg
            .inflight
            .iter()
            .map(|(t, (k, i, what))| format!("t{t} batch {k} call {i}: {what}"))
            .collect(),
        single: None,
        detail,
        command: c.replay_command(from, batch, call),
    };
    if replayed
        && call.is_none()
        && c.threads == 1
        && let Some((k, i, _)) = seg.inflight.get(&0).cloned()
    {
        let alone = reproduce(env, c, k, k, Some(i))?;
        repro.single = Some(alone.replayed);
        if alone.replayed {
            repro.command = alone.command;
        }
    }
    Ok(repro)
}

/// Runs the whole campaign, rebooting after a panic or hang to go on with
/// the next batch. `progress` prints a line every few batches.
pub fn run_campaign(env: &BootEnv, c: &Campaign, progress: bool) -> Res<Report> {
    let dir = log_dir(env)?;
    let total = c.batches();
    let start = Instant::now();
    let mut report = Report {
        campaign: c.clone(),
        segments: Vec::new(),
        incidents: Vec::new(),
        wall: Duration::ZERO,
    };
    let mut next = 0;
    let every = (total / 20).max(1);
    while next < total {
        let argv = c.argv(next, total - next);
        let log = dir.join(format!("seed{}-from{next}.log", c.seed));
        let mut seg = Segment::new(next);
        let result = boot(
            env,
            &argv,
            (total - next) * c.calls_per_batch(),
            &log,
            &mut seg,
            &mut |s| {
                if progress && s.batches % every == 0 {
                    eprintln!(
                        "xtask: fuzz seed {}: batch {}/{total}",
                        c.seed,
                        s.last_done.map_or(0, |b| b + 1)
                    );
                }
            },
        )?;
        let finished = matches!(result.outcome, Outcome::Poweroff(0)) && !seg.done.is_empty();
        if finished {
            report.segments.push(seg);
            break;
        }
        let failing = seg.last_done.map_or(next, |b| b + 1);
        let kind = kind_of(&result.outcome);
        let what = match &result.outcome {
            Outcome::Panic(line) => strip_ansi(line).trim().to_string(),
            Outcome::Poweroff(n) => format!("the fuzzer exited with status {n}"),
            other => other.problem().unwrap_or_default(),
        };
        let detail = if kind == Kind::Panic {
            panic_text(&result.lines)
        } else {
            tail(&result.lines, 25)
        };
        if progress {
            eprintln!(
                "xtask: fuzz seed {}: {what} in batch {failing}; replaying it with --trace",
                c.seed
            );
        }
        let repro = if kind == Kind::Error {
            None
        } else {
            // The batch alone first; if the state left by the boot's
            // earlier batches (pids, the parent's stack) matters, the
            // boot's batches up to it.
            let alone = reproduce(env, c, failing, failing, None)?;
            if !alone.replayed && seg.first < failing {
                let all = reproduce(env, c, seg.first, failing, None)?;
                Some(if all.replayed { all } else { alone })
            } else {
                Some(alone)
            }
        };
        let incident = Incident {
            kind,
            batch: failing,
            what,
            detail,
            repro,
            log,
        };
        if progress {
            for l in incident.lines() {
                println!("{l}");
            }
        }
        report.incidents.push(incident);
        report.segments.push(seg);
        if kind == Kind::Error {
            break;
        }
        next = failing + 1;
    }
    report.wall = start.elapsed();
    Ok(report)
}

fn env_for(root: &Path, opts: &Options) -> Res<BootEnv> {
    let kernel = builder::kernel_for_boot(root, opts, false)?;
    let user = builder::build_user(root, false)?;
    if user.as_ref().is_none_or(|u| !u.fuzz.is_file()) {
        return Err("the fuzzer (user/fuzz) was not built".into());
    }
    Ok(BootEnv {
        root: root.to_path_buf(),
        kernel,
        user,
        no_user: "",
    })
}

/// `cargo xtask fuzz`.
pub fn run(root: &Path, opts: &Options) -> Res<u8> {
    let env = env_for(root, opts)?;
    let c = Campaign::from_options(opts);
    if let Some((from, batch)) = opts.replay {
        eprintln!(
            "xtask: fuzz: replaying batches {from}..={batch} of {}",
            c.describe()
        );
        let r = reproduce(&env, &c, from, batch, opts.call)?;
        println!(
            "replay of batches {from}..={batch}: {}",
            if r.replayed {
                "the kernel died"
            } else {
                "the kernel survived"
            }
        );
        println!("  ended: {}", r.replay_outcome);
        for call in &r.calls {
            println!("  in flight: {call}");
        }
        if let Some(single) = r.single {
            println!(
                "  the call alone {}",
                if single {
                    "reproduces it"
                } else {
                    "does not reproduce it"
                }
            );
        }
        for d in r.detail.iter().take(40) {
            println!("  | {d}");
        }
        return Ok(if r.replayed { 1 } else { 0 });
    }
    eprintln!("xtask: fuzz {}", c.describe());
    let report = run_campaign(&env, &c, true)?;
    for l in report.summary() {
        println!("{l}");
    }
    let problems = report.problems();
    if problems.is_empty() {
        println!("verdict: PASS");
        Ok(0)
    } else {
        println!("verdict: FAIL");
        for p in problems {
            println!("  {p}");
        }
        Ok(1)
    }
}

/// The campaign `make test` runs: a fixed seed, 20,000 calls.
pub fn layer(env: Option<&BootEnv>, r: &mut Reporter) {
    let c = Campaign {
        seed: 1,
        calls: Campaign::DEFAULT_CALLS,
        threads: 1,
        uid: None,
        batch: Campaign::DEFAULT_BATCH,
    };
    let name = format!("fuzz:seed{}", c.seed);
    let Some(env) = env else {
        r.skip(&name, "the kernel did not build");
        return;
    };
    if env.user.as_ref().is_none_or(|u| !u.fuzz.is_file()) {
        r.fail(&name, "the fuzzer (user/fuzz) was not built");
        return;
    }
    eprintln!("xtask: fuzz {}", c.describe());
    match run_campaign(env, &c, false) {
        Err(e) => r.fail(&name, e),
        Ok(report) => {
            for l in report.summary() {
                eprintln!("xtask: {l}");
            }
            let problems = report.problems();
            if problems.is_empty() {
                r.pass(&name);
            } else {
                let mut why = problems.join("; ");
                for i in &report.incidents {
                    for l in i.lines() {
                        why.push('\n');
                        why.push_str(&l);
                    }
                }
                for l in report.summary() {
                    why.push('\n');
                    why.push_str(&l);
                }
                r.fail(&name, why);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(lines: &[&str]) -> Segment {
        let mut s = Segment::new(0);
        for l in lines {
            s.feed(l);
        }
        s
    }

    #[test]
    fn progress_lines_are_parsed() {
        let s = seg(&[
            "fuzz: seed 1 batches 0..2 batch 1000 threads 1 uid -1",
            "fuzz: mem before MemFree=477592 kB Slab=0 kB",
            "fuzz: batch 0 calls 1000",
            "fuzz: death batch 1 t0 call 105 (signal 5): kill(0x1f, 0x5)",
            "\x1b[0mfuzz: batch 1 calls 2000",
            "fuzz: batch 2 at 455",
            "fuzz: batch 2: a child's setup did not finish in 5 s; resetting the scratch tree",
            "fuzz: mem after MemFree=477296 kB Slab=4 kB",
            "fuzz: slab change (live objects, slabs): kmalloc-256 +7 +2",
            "fuzz: done calls 3000 batches 3 secs 1.7 calls/s 1779 deaths 1 odd 0",
        ]);
        assert_eq!(s.last_done, Some(1));
        assert_eq!(s.batches, 2);
        assert_eq!(
            s.before.as_ref().and_then(|m| m.get("MemFree")),
            Some(477592)
        );
        assert_eq!(s.after.as_ref().and_then(|m| m.get("Slab")), Some(4));
        assert_eq!(
            s.slab_change.as_deref(),
            Some("(live objects, slabs): kmalloc-256 +7 +2")
        );
        assert_eq!(s.done.get("calls/s"), Some(&1779.0));
        assert_eq!(s.notes.len(), 2);
        assert!(s.notes[0].starts_with("death batch 1"));
        assert!(s.notes[1].contains("setup did not finish"));
    }

    #[test]
    fn trace_keeps_the_call_in_flight() {
        let s = seg(&[
            "fz 3.0 t0 read(0x3<null>, 0x200001000<rw>, 0x10)",
            "fz 3.0 t0 = 16",
            "fz 3.1 t0 sac munmap(0x400000, 0x1000)",
            "fz 3.1 t0 = 0x9",
            "fz 3.2 t0 write(0x1, 0x7fffffffeff8<eous-8>, 0x1020)",
            "fz 3.0 t1 getpid()",
        ]);
        assert_eq!(
            s.inflight.get(&0),
            Some(&(
                3,
                2,
                "write(0x1, 0x7fffffffeff8<eous-8>, 0x1020)".to_string()
            ))
        );
        assert_eq!(s.inflight.get(&1).map(|x| x.1), Some(0));
    }

    #[test]
    fn memory_verdict_is_one_percent() {
        let c = Campaign {
            seed: 1,
            calls: 2000,
            threads: 1,
            uid: None,
            batch: 1000,
        };
        let mk = |before: u64, after: u64| {
            let mut s = Segment::new(0);
            s.feed(&format!("fuzz: mem before MemFree={before} kB"));
            s.feed("fuzz: batch 0 calls 1000");
            s.feed("fuzz: batch 1 calls 2000");
            s.feed(&format!("fuzz: mem after MemFree={after} kB"));
            s.feed("fuzz: done calls 2000 secs 2 odd 0");
            Report {
                campaign: c.clone(),
                segments: vec![s],
                incidents: Vec::new(),
                wall: Duration::from_secs(3),
            }
        };
        assert!(mk(100_000, 99_100).problems().is_empty());
        assert!(mk(100_000, 100_900).problems().is_empty());
        let leak = mk(100_000, 98_000).problems();
        assert_eq!(leak.len(), 1, "{leak:?}");
        assert!(leak[0].contains("LEAK"), "{leak:?}");
        assert_eq!(mk(1, 1).calls(), 2000);
    }

    #[test]
    fn campaign_arguments() {
        let c = Campaign {
            seed: 7,
            calls: 2500,
            threads: 2,
            uid: Some(1000),
            batch: 500,
        };
        assert_eq!(c.batches(), 3);
        assert_eq!(
            c.argv(1, 2).join(" "),
            "/sbin/fuzz --seed 7 --batch 500 --threads 2 --uid 1000 --first-batch 1 --batches 2"
        );
        assert_eq!(
            c.replay_command(4, 4, Some(17)),
            "cargo xtask fuzz --seed 7 --batch 500 --threads 2 --uid 1000 --replay 4 --call 17"
        );
        assert!(c.replay_command(0, 4, None).ends_with("--replay 0-4"));
    }

    #[test]
    fn progress_predicate() {
        assert!(is_progress("fuzz: batch 3 calls 4000"));
        assert!(is_progress("fz 1.2 t0 getpid()"));
        assert!(!is_progress("[warn] unimplemented syscall"));
        assert!(!is_progress("trellis: poweroff status=0"));
    }
}
