//! The benchmark report: tables with Linux/Trellis ratios and their
//! geometric mean, as text, Markdown (`docs/perf/README.md`) and JSON
//! (`docs/perf/<timestamp>.json`, `docs/perf/latest.json`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::bench::{Sample, Unit, is_device_bound};
use crate::util::{Context, Res};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    Icount,
    Wall,
}

impl Pass {
    pub fn as_str(self) -> &'static str {
        match self {
            Pass::Icount => "icount",
            Pass::Wall => "wall",
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Pass::Icount => {
                "deterministic: `-icount shift=0,sleep=off`, guest time = instructions (1 ns each)"
            }
            Pass::Wall => "wall clock: plain TCG, guest time follows the host clock",
        }
    }
}

/// One kernel's boot in one pass.
#[derive(Debug, Default)]
pub struct KernelRun {
    pub samples: Vec<(String, Sample)>,
    /// CLOCK_BOOTTIME when /init started.
    pub boot_ns: Option<u64>,
    /// Host time from QEMU's start to /init's first line.
    pub to_init: Option<Duration>,
    pub total: Duration,
    /// Why the run did not reach `BENCH-END`.
    pub problem: Option<String>,
}

impl KernelRun {
    fn get(&self, name: &str) -> Option<&Sample> {
        self.samples.iter().find(|(n, _)| n == name).map(|(_, s)| s)
    }
}

/// What one run of a row cost the host: the time it took and the CPU
/// time QEMU used meanwhile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunCost {
    pub host_s: f64,
    pub cpu_s: f64,
}

/// One row of the wall pass, round by round (`bench_wall`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RowRounds {
    pub name: String,
    pub linux: Vec<Sample>,
    pub trellis: Vec<Sample>,
    pub linux_cost: Vec<Option<RunCost>>,
    pub trellis_cost: Vec<Option<RunCost>>,
}

impl RowRounds {
    /// The ratio of each round that has one.
    pub fn ratios(&self) -> Vec<f64> {
        self.linux
            .iter()
            .zip(&self.trellis)
            .filter_map(|(l, t)| ratio(Some(l), Some(t)))
            .collect()
    }

    /// The largest round ratio over the smallest, with two or more.
    pub fn spread(&self) -> Option<f64> {
        let r = self.ratios();
        let (lo, hi) = r
            .iter()
            .fold((f64::MAX, 0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        (r.len() >= 2 && lo > 0.0).then(|| hi / lo)
    }
}

/// Rows whose round ratios differ by more than this factor are named
/// under the wall table: the load changed within a pair of runs.
pub const UNSTEADY: f64 = 1.5;

pub struct PassResult {
    pub pass: Pass,
    pub linux: Option<KernelRun>,
    pub trellis: KernelRun,
    /// The wall pass's rounds (empty for a pass of one boot per kernel).
    pub rounds: Vec<RowRounds>,
}

pub struct Row<'a> {
    pub name: &'a str,
    pub linux: Option<&'a Sample>,
    pub trellis: Option<&'a Sample>,
    /// Normalised so that higher is better for Trellis.
    pub ratio: Option<f64>,
}

/// Linux/Trellis for latencies, Trellis/Linux for bandwidths.
pub fn ratio(linux: Option<&Sample>, trellis: Option<&Sample>) -> Option<f64> {
    match (linux?, trellis?) {
        (Sample::Value(l, Unit::Ns), Sample::Value(t, Unit::Ns)) => Some(l / t),
        (Sample::Value(l, Unit::MBps), Sample::Value(t, Unit::MBps)) => Some(t / l),
        _ => None,
    }
}

pub fn geomean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() || xs.iter().any(|x| x.is_nan() || *x <= 0.0) {
        return None;
    }
    Some((xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp())
}

impl PassResult {
    pub fn rows(&self) -> Vec<Row<'_>> {
        let mut names: Vec<&str> = self
            .trellis
            .samples
            .iter()
            .map(|(n, _)| n.as_str())
            .collect();
        if let Some(l) = &self.linux {
            for (n, _) in &l.samples {
                if !names.contains(&n.as_str()) {
                    names.push(n);
                }
            }
        }
        names
            .into_iter()
            .map(|name| {
                let linux = self.linux.as_ref().and_then(|l| l.get(name));
                let trellis = self.trellis.get(name);
                Row {
                    name,
                    linux,
                    trellis,
                    ratio: ratio(linux, trellis),
                }
            })
            .collect()
    }

    /// Whether row `name` counts in this pass's geometric mean: every row
    /// of the wall pass; in the icount pass, all but the device-bound ones
    /// (`bench::DEVICE_BOUND` says why).
    pub fn counts(&self, name: &str) -> bool {
        self.pass == Pass::Wall || !is_device_bound(name)
    }

    /// The geometric mean of the ratios that count, and how many there are.
    pub fn geomean(&self) -> (Option<f64>, usize) {
        let ratios: Vec<f64> = self
            .rows()
            .iter()
            .filter(|r| self.counts(r.name))
            .filter_map(|r| r.ratio)
            .collect();
        (geomean(&ratios), ratios.len())
    }

    /// Rows with a ratio that is left out of the geometric mean.
    pub fn left_out(&self) -> Vec<(String, f64)> {
        self.rows()
            .iter()
            .filter(|r| !self.counts(r.name))
            .filter_map(|r| r.ratio.map(|x| (r.name.to_string(), x)))
            .collect()
    }

    /// A row's ratio as the tables show it: in parentheses when it does
    /// not count in the mean.
    fn shown_ratio(&self, r: &Row) -> String {
        match r.ratio {
            None => "-".into(),
            Some(x) if self.counts(r.name) => format!("{x:.2}"),
            Some(x) => format!("({x:.2})"),
        }
    }
}

pub struct Report {
    pub timestamp: SystemTime,
    pub commit: String,
    pub linux_kernel: Option<String>,
    pub trellis_kernel: String,
    pub passes: Vec<PassResult>,
}

fn file_name(p: &Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

fn git_commit() -> String {
    let out = Command::new("git")
        .args(["describe", "--always", "--dirty", "--abbrev=12"])
        .output();
    match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        _ => "unknown".into(),
    }
}

/// `2026-11-22T03:15:00Z` for a time after the epoch.
pub fn iso_utc(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn show(s: Option<&Sample>) -> String {
    match s {
        Some(Sample::Value(v, _)) if *v >= 100.0 => format!("{v:.0}"),
        Some(Sample::Value(v, _)) => format!("{v:.1}"),
        Some(Sample::Missing(_)) => "missing".into(),
        Some(Sample::Failed(_)) => "FAILED".into(),
        None => "-".into(),
    }
}

fn unit_of(r: &Row) -> &'static str {
    match (r.trellis, r.linux) {
        (Some(Sample::Value(_, u)), _) | (_, Some(Sample::Value(_, u))) => u.as_str(),
        _ => "",
    }
}

fn secs(d: Option<Duration>) -> String {
    d.map_or("-".into(), |d| format!("{:.2} s", d.as_secs_f64()))
}

fn boot_line(p: &PassResult) -> String {
    let guest = |k: Option<&KernelRun>| secs(k.and_then(|k| k.boot_ns).map(Duration::from_nanos));
    let host = |k: Option<&KernelRun>| secs(k.and_then(|k| k.to_init));
    format!(
        "boot to the first instruction of /init: guest CLOCK_BOOTTIME Linux {}, Trellis {}; \
         host time from QEMU start Linux {}, Trellis {}",
        guest(p.linux.as_ref()),
        guest(Some(&p.trellis)),
        host(p.linux.as_ref()),
        host(Some(&p.trellis)),
    )
}

/// The line after the geometric mean that names the rows left out of it
/// and why (`bench::DEVICE_BOUND`); `None` when no row is.
fn left_out_line(p: &PassResult) -> Option<String> {
    let left = p.left_out();
    if left.is_empty() {
        return None;
    }
    let rows: Vec<String> = left.iter().map(|(n, x)| format!("{n} {x:.2}")).collect();
    Some(format!(
        "not in the mean, ratios in parentheses: {} device-bound rows ({}). Under `-icount \
         sleep=off` a wait for the host's disk costs Trellis the instructions it polls \
         (frame::task::IoPending) and jumps Linux's halted clock to its next timer: neither \
         measures the disk path, and both move from run to run. The wall pass counts them.",
        left.len(),
        rows.join(", ")
    ))
}

/// The median of `xs` (the lower middle of an even count).
fn median(mut xs: Vec<f64>) -> Option<f64> {
    xs.sort_by(f64::total_cmp);
    xs.get(xs.len().checked_sub(1)? / 2).copied()
}

/// The lines under a pass run in rounds: the method, the rows whose
/// rounds disagree, and how much of a host CPU QEMU had.
fn rounds_lines(p: &PassResult) -> Vec<String> {
    if p.rounds.is_empty() {
        return Vec::new();
    }
    let n = p.rounds.iter().map(|r| r.trellis.len()).max().unwrap_or(0);
    let mut out = vec![format!(
        "{n} rounds: Linux and Trellis booted side by side, each row run on one and then \
         on the other (which goes first alternates by row and round), so that both see \
         the same host load; a row shows the round with the median ratio. Rows without \
         a ratio in the first round are not repeated."
    )];
    let unsteady: Vec<String> = p
        .rounds
        .iter()
        .filter(|r| r.spread().is_some_and(|s| s > UNSTEADY))
        .map(|r| {
            let rs = r.ratios();
            let lo = rs.iter().copied().fold(f64::MAX, f64::min);
            let hi = rs.iter().copied().fold(0f64, f64::max);
            format!("{} {lo:.2}-{hi:.2}", r.name)
        })
        .collect();
    if !unsteady.is_empty() {
        out.push(format!(
            "rows whose round ratios differ by more than {UNSTEADY}x (the load changed within \
             a pair of runs; trust them less): {}",
            unsteady.join(", ")
        ));
    }
    let share = |costs: &dyn Fn(&RowRounds) -> &Vec<Option<RunCost>>| {
        median(
            p.rounds
                .iter()
                .flat_map(|r| costs(r).iter().flatten())
                .filter(|c| c.host_s > 0.0)
                .map(|c| c.cpu_s / c.host_s)
                .collect(),
        )
    };
    if let (Some(l), Some(t)) = (share(&|r| &r.linux_cost), share(&|r| &r.trellis_cost)) {
        out.push(format!(
            "QEMU's share of a host CPU while running a row (its CPU time over the host time, \
             median over runs): Linux {:.0}%, Trellis {:.0}%",
            l * 100.0,
            t * 100.0
        ));
    }
    out
}

fn notes(p: &PassResult) -> Vec<String> {
    let mut out = Vec::new();
    for r in p.rows() {
        for (os, s) in [("Linux", r.linux), ("Trellis", r.trellis)] {
            match s {
                Some(Sample::Missing(why)) => {
                    out.push(format!("{} on {os}: missing ({why})", r.name))
                }
                Some(Sample::Failed(why)) => {
                    out.push(format!("{} on {os}: FAILED ({why})", r.name))
                }
                _ => {}
            }
        }
    }
    for (os, k) in [("Linux", p.linux.as_ref()), ("Trellis", Some(&p.trellis))] {
        if let Some(problem) = k.and_then(|k| k.problem.as_ref()) {
            out.push(format!("{os} run incomplete: {problem}"));
        }
    }
    out
}

impl Report {
    pub fn new(linux: Option<&Path>, trellis: &Path) -> Report {
        Report {
            timestamp: SystemTime::now(),
            commit: git_commit(),
            linux_kernel: linux.map(file_name),
            trellis_kernel: file_name(trellis),
            passes: Vec::new(),
        }
    }

    pub fn add(&mut self, pass: Pass, linux: Option<KernelRun>, trellis: KernelRun) {
        self.passes.push(PassResult {
            pass,
            linux,
            trellis,
            rounds: Vec::new(),
        });
    }

    /// A pass run in rounds, the kernels alternating (`bench_wall`).
    pub fn add_rounds(
        &mut self,
        pass: Pass,
        linux: Option<KernelRun>,
        trellis: KernelRun,
        rounds: Vec<RowRounds>,
    ) {
        self.passes.push(PassResult {
            pass,
            linux,
            trellis,
            rounds,
        });
    }

    pub fn render_text(&self) -> String {
        let mut s = String::new();
        for p in &self.passes {
            let _ = writeln!(s, "\n== {} pass: {}", p.pass.as_str(), p.pass.describe());
            let _ = writeln!(
                s,
                "{:<16} {:<5} {:>12} {:>12} {:>8}",
                "benchmark", "unit", "Linux", "Trellis", "ratio"
            );
            for r in p.rows() {
                let _ = writeln!(
                    s,
                    "{:<16} {:<5} {:>12} {:>12} {:>8}",
                    r.name,
                    unit_of(&r),
                    show(r.linux),
                    show(r.trellis),
                    p.shown_ratio(&r)
                );
            }
            let _ = writeln!(s, "{}", self.geomean_line(p));
            if let Some(l) = left_out_line(p) {
                let _ = writeln!(s, "{l}");
            }
            let _ = writeln!(s, "{}", boot_line(p));
            for l in rounds_lines(p) {
                let _ = writeln!(s, "{l}");
            }
            for n in notes(p) {
                let _ = writeln!(s, "  note: {n}");
            }
        }
        s
    }

    fn geomean_line(&self, p: &PassResult) -> String {
        match p.geomean() {
            (Some(g), n) => {
                format!("geometric mean of {n} ratios: {g:.3} (higher is better for Trellis)")
            }
            (None, _) => "geometric mean: no benchmark ran on both kernels".into(),
        }
    }

    pub fn render_markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# Benchmarks: Trellis against Linux\n");
        let _ = writeln!(
            s,
            "Generated by `cargo xtask bench` at {} (commit `{}`). Linux: Debian `{}`; \
             Trellis: release build `{}`. Both boot the same initramfs (`user/bench`) in the \
             same QEMU: q35, TCG, 1 vCPU, 512 MiB, `-cpu qemu64,+smep,+smap`.\n",
            iso_utc(self.timestamp),
            self.commit,
            self.linux_kernel.as_deref().unwrap_or("(not available)"),
            self.trellis_kernel
        );
        let _ = writeln!(
            s,
            "Each figure is the median of 7 runs of a calibrated iteration count (at least \
             50 ms of guest time per run) after a warm-up. The ratio is normalised so that \
             **higher is better for Trellis**: Linux/Trellis for latencies, Trellis/Linux for \
             bandwidths. `missing` means the kernel lacks a system call or device the \
             benchmark needs. The `fs_*` rows use an ext2 file system on a virtio-blk \
             disk, a fresh copy of the same empty image for each boot: each is the median \
             of 3 runs of one whole operation (a 64 MiB file, 500 files), its setup not \
             timed. The device-bound ones (fs_seq_write_cold, fs_seq_read_cold, \
             fs_rand_read_4k, fs_fsync) wait for the host's disk: the icount pass shows \
             their ratios in parentheses and leaves them out of its mean (see the line \
             under its table), the wall pass counts them. Raw data: `latest.json` and one \
             JSON file per run in this directory.\n"
        );
        for p in &self.passes {
            let _ = writeln!(s, "## {} pass\n\n{}.\n", p.pass.as_str(), p.pass.describe());
            let _ = writeln!(s, "| benchmark | unit | Linux | Trellis | ratio |");
            let _ = writeln!(s, "|---|---|---:|---:|---:|");
            for r in p.rows() {
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {} |",
                    r.name,
                    unit_of(&r),
                    show(r.linux),
                    show(r.trellis),
                    p.shown_ratio(&r)
                );
            }
            let _ = writeln!(s, "\n{}\n", self.geomean_line(p));
            if let Some(l) = left_out_line(p) {
                let _ = writeln!(s, "{l}\n");
            }
            let _ = writeln!(s, "{}\n", boot_line(p));
            for l in rounds_lines(p) {
                let _ = writeln!(s, "{l}\n");
            }
            for n in notes(p) {
                let _ = writeln!(s, "- {n}");
            }
            s.push('\n');
        }
        s
    }

    pub fn render_json(&self) -> String {
        let mut s = String::from("{\n");
        let _ = writeln!(
            s,
            "  \"timestamp\": {},",
            json_str(&iso_utc(self.timestamp))
        );
        let _ = writeln!(s, "  \"commit\": {},", json_str(&self.commit));
        let _ = writeln!(
            s,
            "  \"linux_kernel\": {},",
            self.linux_kernel.as_deref().map_or("null".into(), json_str)
        );
        let _ = writeln!(
            s,
            "  \"trellis_kernel\": {},",
            json_str(&self.trellis_kernel)
        );
        s.push_str("  \"passes\": [");
        for (i, p) in self.passes.iter().enumerate() {
            s.push_str(if i == 0 { "\n" } else { ",\n" });
            let (g, n) = p.geomean();
            let _ = writeln!(s, "    {{\n      \"pass\": {},", json_str(p.pass.as_str()));
            let _ = writeln!(s, "      \"geomean\": {},", json_num(g));
            let _ = writeln!(s, "      \"ratios\": {n},");
            let left: Vec<String> = p.left_out().iter().map(|(r, _)| json_str(r)).collect();
            let _ = writeln!(s, "      \"not_in_geomean\": [{}],", left.join(", "));
            if !p.rounds.is_empty() {
                let n = p.rounds.iter().map(|r| r.trellis.len()).max().unwrap_or(0);
                let _ = writeln!(s, "      \"wall_rounds\": {n},");
            }
            for (key, k) in [("linux", p.linux.as_ref()), ("trellis", Some(&p.trellis))] {
                let _ = writeln!(s, "      \"{key}\": {},", json_run(k));
            }
            s.push_str("      \"rows\": [");
            for (j, r) in p.rows().iter().enumerate() {
                s.push_str(if j == 0 { "\n" } else { ",\n" });
                let _ = write!(
                    s,
                    "        {{\"name\": {}, \"unit\": {}, \"linux\": {}, \"trellis\": {}, \"ratio\": {}, \"in_geomean\": {}}}",
                    json_str(r.name),
                    json_str(unit_of(r)),
                    json_sample(r.linux),
                    json_sample(r.trellis),
                    json_num(r.ratio),
                    r.ratio.is_some() && p.counts(r.name)
                );
                if let Some(rr) = p.rounds.iter().find(|x| x.name == r.name) {
                    s.truncate(s.len() - 1);
                    let _ = write!(s, ", \"rounds\": {}}}", json_rounds(rr));
                }
            }
            s.push_str("\n      ]\n    }");
        }
        s.push_str("\n  ]\n}\n");
        s
    }
}

fn json_str(v: &str) -> String {
    let mut s = String::from("\"");
    for c in v.chars() {
        match c {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(s, "\\u{:04x}", c as u32);
            }
            c => s.push(c),
        }
    }
    s.push('"');
    s
}

fn json_num(v: Option<f64>) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{x:.6}"),
        _ => "null".into(),
    }
}

fn json_sample(s: Option<&Sample>) -> String {
    match s {
        Some(Sample::Value(v, _)) => format!("{{\"value\": {}}}", json_num(Some(*v))),
        Some(Sample::Missing(why)) => format!("{{\"missing\": {}}}", json_str(why)),
        Some(Sample::Failed(why)) => format!("{{\"failed\": {}}}", json_str(why)),
        None => "null".into(),
    }
}

/// A row's rounds: the samples and costs on each kernel, the ratios.
fn json_rounds(r: &RowRounds) -> String {
    let samples = |v: &[Sample]| -> String {
        let items: Vec<String> = v.iter().map(|x| json_sample(Some(x))).collect();
        format!("[{}]", items.join(", "))
    };
    let costs = |v: &[Option<RunCost>]| -> String {
        let items: Vec<String> = v
            .iter()
            .map(|c| match c {
                Some(c) => format!(
                    "{{\"host_s\": {}, \"cpu_s\": {}}}",
                    json_num(Some(c.host_s)),
                    json_num(Some(c.cpu_s))
                ),
                None => "null".into(),
            })
            .collect();
        format!("[{}]", items.join(", "))
    };
    let ratios: Vec<String> = r.ratios().iter().map(|x| json_num(Some(*x))).collect();
    format!(
        "{{\"linux\": {}, \"trellis\": {}, \"ratios\": [{}], \"linux_cost\": {}, \"trellis_cost\": {}}}",
        samples(&r.linux),
        samples(&r.trellis),
        ratios.join(", "),
        costs(&r.linux_cost),
        costs(&r.trellis_cost)
    )
}

fn json_run(k: Option<&KernelRun>) -> String {
    let Some(k) = k else {
        return "null".into();
    };
    format!(
        "{{\"boot_to_init_guest_ns\": {}, \"boot_to_init_host_s\": {}, \"total_host_s\": {}, \"problem\": {}}}",
        k.boot_ns.map_or("null".into(), |n| n.to_string()),
        json_num(k.to_init.map(|d| d.as_secs_f64())),
        json_num(Some(k.total.as_secs_f64())),
        k.problem.as_deref().map_or("null".into(), json_str)
    )
}

/// The hand-written heading of README.md that a new report keeps, with
/// everything after it.
const KEPT_HEADING: &str = "\n## Paths\n";

/// `generated` followed by the hand-written part of the old README.md
/// (from [`KEPT_HEADING`] on), so that regenerating the tables keeps the
/// prose about each path.
pub fn keep_prose(generated: &str, old: Option<&str>) -> String {
    match old.and_then(|o| o.find(KEPT_HEADING).map(|i| &o[i + 1..])) {
        Some(tail) => format!("{}\n\n{tail}", generated.trim_end()),
        None => generated.to_string(),
    }
}

/// Writes `docs/perf/<timestamp>.json`, `latest.json` and `README.md`
/// (keeping its `## Paths` section).
pub fn write_docs(root: &Path, report: &Report) -> Res<Vec<PathBuf>> {
    let dir = root.join("docs/perf");
    std::fs::create_dir_all(&dir).ctx(|| format!("cannot create {}", dir.display()))?;
    let stamp = iso_utc(report.timestamp).replace(':', "");
    let json = report.render_json();
    let old = std::fs::read_to_string(dir.join("README.md")).ok();
    let files = [
        (dir.join(format!("{stamp}.json")), json.clone()),
        (dir.join("latest.json"), json),
        (
            dir.join("README.md"),
            keep_prose(&report.render_markdown(), old.as_deref()),
        ),
    ];
    for (path, text) in &files {
        std::fs::write(path, text).ctx(|| format!("cannot write {}", path.display()))?;
    }
    Ok(files.into_iter().map(|(p, _)| p).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regenerating_keeps_the_paths_section() {
        let old = "# Benchmarks\n\n| old table |\n\n## Paths\n\n### pipes\nprose\n";
        let new = keep_prose("# Benchmarks\n\n| new table |\n\n", Some(old));
        assert_eq!(
            new,
            "# Benchmarks\n\n| new table |\n\n## Paths\n\n### pipes\nprose\n"
        );
        assert_eq!(keep_prose("t\n", Some("no section")), "t\n");
        assert_eq!(keep_prose("t\n", None), "t\n");
    }

    fn run(samples: &[(&str, Sample)]) -> KernelRun {
        KernelRun {
            samples: samples
                .iter()
                .map(|(n, s)| (n.to_string(), s.clone()))
                .collect(),
            boot_ns: Some(2_000_000_000),
            ..KernelRun::default()
        }
    }

    #[test]
    fn ratios_are_higher_is_better_for_trellis() {
        let v = |x, u| Some(Sample::Value(x, u));
        assert_eq!(
            ratio(v(200.0, Unit::Ns).as_ref(), v(100.0, Unit::Ns).as_ref()),
            Some(2.0)
        );
        assert_eq!(
            ratio(v(100.0, Unit::MBps).as_ref(), v(50.0, Unit::MBps).as_ref()),
            Some(0.5)
        );
        let missing = Some(Sample::Missing("x".into()));
        assert_eq!(ratio(v(1.0, Unit::Ns).as_ref(), missing.as_ref()), None);
        let g = geomean(&[2.0, 0.5, 4.0]).unwrap();
        assert!((g - 4f64.powf(1.0 / 3.0)).abs() < 1e-12);
        assert_eq!(geomean(&[]), None);
    }

    #[test]
    fn report_rows_geomean_and_json() {
        let linux = run(&[
            ("null", Sample::Value(400.0, Unit::Ns)),
            ("bw", Sample::Value(1000.0, Unit::MBps)),
            ("pipe", Sample::Value(5000.0, Unit::Ns)),
        ]);
        let trellis = run(&[
            ("null", Sample::Value(100.0, Unit::Ns)),
            ("bw", Sample::Value(250.0, Unit::MBps)),
            ("pipe", Sample::Missing("pipe: ENOSYS".into())),
        ]);
        let mut r = Report {
            timestamp: UNIX_EPOCH + Duration::from_secs(1_795_000_000),
            commit: "abc".into(),
            linux_kernel: Some("vmlinuz-6.1".into()),
            trellis_kernel: "trellis".into(),
            passes: Vec::new(),
        };
        r.add(Pass::Icount, Some(linux), trellis);
        let (g, n) = r.passes[0].geomean();
        assert_eq!(n, 2);
        assert!((g.unwrap() - 1.0).abs() < 1e-12, "sqrt(4 * 0.25)");
        let text = r.render_text();
        assert!(text.contains("geometric mean of 2 ratios: 1.000"), "{text}");
        assert!(
            text.contains("pipe on Trellis: missing (pipe: ENOSYS)"),
            "{text}"
        );
        let json = r.render_json();
        assert!(json.contains("\"geomean\": 1.000000"), "{json}");
        assert!(json.contains("{\"missing\": \"pipe: ENOSYS\"}"), "{json}");
        assert!(
            json.contains("\"boot_to_init_guest_ns\": 2000000000"),
            "{json}"
        );
        assert!(
            r.render_markdown()
                .contains("| null | ns | 400 | 100 | 4.00 |")
        );
    }

    #[test]
    fn device_bound_rows_are_shown_but_left_out_of_the_icount_mean() {
        let linux = run(&[
            ("null", Sample::Value(400.0, Unit::Ns)),
            ("fs_fsync", Sample::Value(5_000_000.0, Unit::Ns)),
            ("fs_seq_read_cold", Sample::Value(100.0, Unit::MBps)),
        ]);
        let trellis = run(&[
            ("null", Sample::Value(200.0, Unit::Ns)),
            ("fs_fsync", Sample::Value(1_000.0, Unit::Ns)),
            ("fs_seq_read_cold", Sample::Value(50.0, Unit::MBps)),
        ]);
        let mut r = Report {
            timestamp: UNIX_EPOCH,
            commit: "abc".into(),
            linux_kernel: None,
            trellis_kernel: "trellis".into(),
            passes: Vec::new(),
        };
        r.add(Pass::Icount, Some(linux), trellis);
        let (lw, tw) = (
            run(&[
                ("null", Sample::Value(400.0, Unit::Ns)),
                ("fs_fsync", Sample::Value(4.0, Unit::Ns)),
            ]),
            run(&[
                ("null", Sample::Value(200.0, Unit::Ns)),
                ("fs_fsync", Sample::Value(8.0, Unit::Ns)),
            ]),
        );
        r.add(Pass::Wall, Some(lw), tw);
        // icount: only `null` counts (2.0); the device-bound rows are
        // listed with their ratios.
        let (g, n) = r.passes[0].geomean();
        assert_eq!(n, 1);
        assert!((g.unwrap() - 2.0).abs() < 1e-12);
        assert_eq!(
            r.passes[0].left_out(),
            vec![
                ("fs_fsync".to_string(), 5000.0),
                ("fs_seq_read_cold".to_string(), 0.5)
            ]
        );
        // wall: every row counts, sqrt(2 * 0.5).
        let (g, n) = r.passes[1].geomean();
        assert_eq!(n, 2);
        assert!((g.unwrap() - 1.0).abs() < 1e-12);
        assert!(r.passes[1].left_out().is_empty());
        let md = r.render_markdown();
        assert!(
            md.contains("| fs_fsync | ns | 5000000 | 1000 | (5000.00) |"),
            "{md}"
        );
        assert!(md.contains("| fs_fsync | ns | 4.0 | 8.0 | 0.50 |"), "{md}");
        assert!(md.contains("| null | ns | 400 | 200 | 2.00 |"), "{md}");
        assert!(
            md.contains("not in the mean, ratios in parentheses: 2 device-bound rows (fs_fsync 5000.00, fs_seq_read_cold 0.50)"),
            "{md}"
        );
        let text = r.render_text();
        assert_eq!(text.matches("not in the mean").count(), 1, "{text}");
        let json = r.render_json();
        assert!(
            json.contains("\"not_in_geomean\": [\"fs_fsync\", \"fs_seq_read_cold\"]"),
            "{json}"
        );
        assert!(json.contains("\"not_in_geomean\": [],"), "{json}");
        assert!(
            json.contains("\"ratio\": 5000.000000, \"in_geomean\": false"),
            "{json}"
        );
        assert!(
            json.contains("\"ratio\": 2.000000, \"in_geomean\": true"),
            "{json}"
        );
    }

    #[test]
    fn utc_timestamps() {
        assert_eq!(iso_utc(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let t = UNIX_EPOCH + Duration::from_secs(951_782_400 + 3661);
        assert_eq!(iso_utc(t), "2000-02-29T01:01:01Z");
        assert_eq!(json_str("a\"b\\\n"), "\"a\\\"b\\\\\\u000a\"");
    }
}
