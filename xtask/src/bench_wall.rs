//! The wall pass of `cargo xtask bench`: Linux and Trellis stay booted side
//! by side in command mode (`/init -c`, user/bench/init.c), and xtask hands
//! them the same row in turn, over several rounds. The two kernels of a
//! row then run seconds apart, under the same host load, instead of
//! minutes apart (the old wall pass ran every row on Linux, then every row
//! on Trellis: on a shared machine its ratios were mostly the load).
//!
//! - Rounds: [`ROUNDS`] by default. In round `r` row `i` runs first on
//!   Linux when `r + i` is even, else first on Trellis, so that neither
//!   kernel is always the one that runs after a long row.
//! - Figures: per row, the round whose ratio is the median of the rounds'
//!   ratios; the table shows that round's two figures, so a row's figures
//!   and ratio come from the same pair of runs. Each figure is already the
//!   median of its own repetitions (bench.h, fs.h).
//! - A row that is missing or failed on either kernel in the first round
//!   (the Trellis-only rows, for example) is not run again.
//! - For each run the host CPU time QEMU used is recorded beside the host
//!   time it took (`/proc/PID/stat`), in the JSON: their quotient says how
//!   much of a CPU the guest had.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::bench::{self, Guest, Sample, Spawned};
use crate::bench_report::{KernelRun, RowRounds, RunCost, ratio};
use crate::util::{Res, target_dir};

/// Rounds of the wall pass.
pub const ROUNDS: usize = 3;
/// How long one row may take on one kernel before the kernel is given up.
const ROW_LIMIT: Duration = Duration::from_secs(600);

/// One kernel, booted in command mode.
struct Session {
    label: &'static str,
    child: Child,
    input: Option<ChildStdin>,
    rx: mpsc::Receiver<(Duration, String)>,
    start: Instant,
    lines: Vec<(Duration, String)>,
    log: PathBuf,
    boot_ns: Option<u64>,
    to_init: Option<Duration>,
    /// Why the kernel can run no more rows.
    dead: Option<String>,
}

/// QEMU's user + system CPU time so far, from `/proc/PID/stat`.
fn cpu_time(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command name, which is in parentheses.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15 of the whole line.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    // In USER_HZ ticks, which Linux fixes at 100 for user space.
    Some(Duration::from_millis(ticks * 10))
}

impl Session {
    fn start(g: &Guest, label: &'static str) -> Res<Session> {
        let Spawned {
            mut child,
            lines,
            start,
        } = bench::spawn(g, true)?;
        let input = child.stdin.take();
        Ok(Session {
            label,
            child,
            input,
            rx: lines,
            start,
            lines: Vec::new(),
            log: g.log.clone(),
            boot_ns: None,
            to_init: None,
            dead: None,
        })
    }

    /// Collects lines until one satisfies `done` (true), the kernel stops
    /// or the limit passes (false, with `dead` set).
    fn until(&mut self, limit: Duration, done: impl Fn(&str) -> bool) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            match self.rx.recv_timeout(Duration::from_millis(100)) {
                Ok((at, line)) => {
                    if line.contains("BENCH-BOOT") {
                        self.boot_ns = line
                            .split_whitespace()
                            .skip_while(|w| !w.ends_with("BENCH-BOOT"))
                            .nth(1)
                            .and_then(|w| w.parse().ok());
                        self.to_init = Some(at);
                    }
                    let hit = done(&line);
                    let stopped = bench::last_words(&line) && !line.contains("BENCH-END");
                    let text = line.trim().to_string();
                    self.lines.push((at, line));
                    if hit {
                        return true;
                    }
                    if stopped {
                        self.dead = Some(format!("the kernel stopped: {text}"));
                        return false;
                    }
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    self.dead = Some("QEMU exited".into());
                    return false;
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            if Instant::now() > deadline {
                self.dead = Some(format!("no answer within {} s", limit.as_secs()));
                return false;
            }
        }
    }

    fn ready(line: &str) -> bool {
        line.contains("BENCH-READY")
    }

    /// Runs one row; returns its sample and cost.
    fn row(&mut self, name: &str) -> (Sample, Option<RunCost>) {
        if let Some(why) = &self.dead {
            return (Sample::Failed(format!("did not run: {why}")), None);
        }
        let from = self.lines.len();
        let cpu0 = cpu_time(self.child.id());
        let t0 = Instant::now();
        let sent = self.input.as_mut().map(|i| {
            i.write_all(format!("{name}\n").as_bytes())
                .and_then(|()| i.flush())
        });
        if !matches!(sent, Some(Ok(()))) {
            self.dead = Some("cannot write to the console".into());
        } else {
            self.until(ROW_LIMIT, Self::ready);
        }
        let host = t0.elapsed();
        let cost = match (cpu0, cpu_time(self.child.id())) {
            (Some(a), Some(b)) => Some(RunCost {
                host_s: host.as_secs_f64(),
                cpu_s: b.saturating_sub(a).as_secs_f64(),
            }),
            _ => None,
        };
        let how = self.dead.clone().unwrap_or_default();
        let t = bench::parse(&self.lines[from..], &how);
        let sample = t
            .samples
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, s)| s)
            .unwrap_or_else(|| Sample::Failed(format!("never started: {how}")));
        (sample, cost)
    }

    /// Ends command mode, lets the kernel power off, writes the log;
    /// returns the boot's figures with `samples` as the rows' results.
    fn finish(mut self, samples: Vec<(String, Sample)>) -> Res<KernelRun> {
        if self.dead.is_none() {
            if let Some(mut i) = self.input.take() {
                let _ = i.write_all(b"end\n");
            }
            if self.until(Duration::from_secs(60), |l| l.contains("BENCH-END")) {
                let _ = self.until(bench::LINGER, |_| false);
                self.dead = None;
            }
        }
        let total = self.start.elapsed();
        let _ = self.child.kill();
        let _ = self.child.wait();
        bench::write_log(&self.log, &self.lines)?;
        let problem = self
            .dead
            .map(|d| format!("{}: {d} (log: {})", self.label, self.log.display()));
        Ok(KernelRun {
            samples,
            boot_ns: self.boot_ns,
            to_init: self.to_init,
            total,
            problem,
        })
    }
}

/// The round whose Linux/Trellis ratio is the median of the rounds that
/// have one (the lower middle of an even count); `None` without any.
pub fn median_round(linux: &[Sample], trellis: &[Sample]) -> Option<usize> {
    let mut ratios: Vec<(f64, usize)> = linux
        .iter()
        .zip(trellis)
        .enumerate()
        .filter_map(|(i, (l, t))| ratio(Some(l), Some(t)).map(|r| (r, i)))
        .collect();
    if ratios.is_empty() {
        return None;
    }
    ratios.sort_by(|a, b| a.0.total_cmp(&b.0));
    Some(ratios[(ratios.len() - 1) / 2].1)
}

/// Whether round `round`, first-kernel `Linux`, runs Linux first for row
/// `index`.
pub fn linux_first(round: usize, index: usize) -> bool {
    (round + index).is_multiple_of(2)
}

/// What the rounds of a row give for the table: the median round's two
/// samples, else (no round ran on both) the first round's.
pub fn chosen(r: &RowRounds) -> (Option<Sample>, Sample) {
    let i = median_round(&r.linux, &r.trellis).unwrap_or(0);
    (r.linux.get(i).cloned(), r.trellis[i].clone())
}

/// The wall pass over `rows` (every row of the list when empty).
#[allow(clippy::too_many_arguments)]
pub fn run(
    root: &Path,
    build: &Path,
    linux: Option<(&Path, &Path)>,
    trellis: (&Path, &Path),
    disk: &Path,
    rows: &[String],
    rounds: usize,
) -> Res<(Option<KernelRun>, KernelRun, Vec<RowRounds>)> {
    let names: Vec<String> = if rows.is_empty() {
        std::fs::read_to_string(build.join("list"))
            .map_err(|e| format!("cannot read the benchmark list: {e}"))?
            .lines()
            .map(str::to_string)
            .collect()
    } else {
        rows.to_vec()
    };
    let dir = target_dir(root).join("bench");
    eprintln!(
        "xtask: bench: wall pass, {} rows, {rounds} rounds, the kernels alternating",
        names.len()
    );
    let boot_limit = bench::boot_timeout(0);
    let mk = |kernel, initrd, cmdline, label: &str| Guest {
        kernel,
        initrd,
        cmdline,
        icount: false,
        timeout: boot_limit,
        log: dir.join(format!("{label}-wall.log")),
        disk: Some(disk),
        extra: Vec::new(),
    };
    // Both boot at once (Linux takes far longer); no row runs meanwhile.
    let mut tre = Session::start(
        &mk(trellis.0, trellis.1, crate::qemu::cmdline(&[]), "trellis"),
        "trellis",
    )?;
    let mut lin = match linux {
        Some((k, initrd)) => Some(Session::start(
            &mk(
                k,
                initrd,
                "console=ttyS0 quiet rdinit=/init -- -c".into(),
                "linux",
            ),
            "linux",
        )?),
        None => None,
    };
    tre.until(boot_limit, Session::ready);
    if let Some(l) = lin.as_mut() {
        l.until(boot_limit, Session::ready);
    }
    let mut all: Vec<RowRounds> = names
        .iter()
        .map(|n| RowRounds {
            name: n.clone(),
            ..RowRounds::default()
        })
        .collect();
    for round in 0..rounds {
        for (index, r) in all.iter_mut().enumerate() {
            // Rows with no ratio after the first round are not repeated.
            if round > 0 && median_round(&r.linux, &r.trellis).is_none() {
                continue;
            }
            let mut run_linux = |r: &mut RowRounds| {
                if let Some(l) = lin.as_mut() {
                    let (s, c) = l.row(&r.name);
                    r.linux.push(s);
                    r.linux_cost.push(c);
                }
            };
            let linux_first = linux_first(round, index);
            if linux_first {
                run_linux(r);
            }
            let (s, c) = tre.row(&r.name);
            r.trellis.push(s);
            r.trellis_cost.push(c);
            if !linux_first {
                run_linux(r);
            }
        }
    }
    let mut lin_samples = Vec::new();
    let mut tre_samples = Vec::new();
    for r in &all {
        let (l, t) = chosen(r);
        if let Some(l) = l {
            lin_samples.push((r.name.clone(), l));
        }
        tre_samples.push((r.name.clone(), t));
    }
    let tre_run = tre.finish(tre_samples)?;
    let lin_run = match lin {
        Some(l) => Some(l.finish(lin_samples)?),
        None => None,
    };
    Ok((lin_run, tre_run, all))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Unit;

    fn ns(x: f64) -> Sample {
        Sample::Value(x, Unit::Ns)
    }

    #[test]
    fn the_median_round_is_chosen_by_its_ratio() {
        // Ratios 2.0, 0.5 (a loaded Trellis run), 1.0: the median is round 2.
        let linux = [ns(200.0), ns(100.0), ns(150.0)];
        let trellis = [ns(100.0), ns(200.0), ns(150.0)];
        assert_eq!(median_round(&linux, &trellis), Some(2));
        let r = RowRounds {
            name: "x".into(),
            linux: linux.to_vec(),
            trellis: trellis.to_vec(),
            ..RowRounds::default()
        };
        assert_eq!(chosen(&r), (Some(ns(150.0)), ns(150.0)));
        // Rounds without a ratio do not count; an even count takes the
        // lower middle.
        let failed = Sample::Failed("crashed".into());
        let linux = [ns(100.0), failed.clone(), ns(100.0)];
        let trellis = [ns(50.0), ns(10.0), ns(200.0)];
        assert_eq!(median_round(&linux, &trellis), Some(2));
        // No ratio at all (Trellis-only row): the first round.
        let missing = Sample::Missing("no such device".into());
        let r = RowRounds {
            name: "y".into(),
            linux: vec![missing.clone()],
            trellis: vec![ns(5.0)],
            ..RowRounds::default()
        };
        assert_eq!(median_round(&r.linux, &r.trellis), None);
        assert_eq!(chosen(&r), (Some(missing), ns(5.0)));
    }

    #[test]
    fn the_kernels_take_turns_going_first() {
        let order: Vec<bool> = (0..2)
            .flat_map(|round| (0..3).map(move |i| linux_first(round, i)))
            .collect();
        assert_eq!(order, [true, false, true, false, true, false]);
    }

    #[test]
    fn qemu_cpu_time_is_read_from_proc() {
        // This process has used some CPU time; a pid that cannot exist has none.
        assert!(cpu_time(std::process::id()).is_some());
        assert_eq!(cpu_time(u32::MAX), None);
    }
}
