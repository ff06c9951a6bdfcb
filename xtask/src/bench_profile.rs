//! `cargo xtask bench --profile [--rows A,B]`: where each row's
//! instructions go. Boots Linux and Trellis once each in the icount
//! configuration of the benchmark, with the QEMU plugin
//! `user/bench/prof/insncount.c` loaded and `/init -p` running the rows:
//! `lmb -p` brackets each row and its measured repetitions with marker
//! NOPs, and the plugin writes the instructions executed per translation
//! block inside those windows. Blocks are attributed to the kernel
//! function containing their first instruction (`nm` of `trellis.sym`;
//! for Linux its `/proc/kallsyms`, which `/init -p` copies to the disk
//! image), user-mode blocks to `[user]`.
//!
//! Results are merged, row by row, into `docs/perf/profile.tsv` (so a
//! partial run updates only its rows) and `docs/perf/profile.md` is
//! regenerated from it: per row, instructions per iteration and the top
//! kernel functions on both kernels.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::args::Options;
use crate::bench::{self, Guest};
use crate::ksyms::{self, Sym};
use crate::util::{Context, Res, run_quiet, target_dir};
use crate::{builder, qemu};

/// Kernel functions kept per row and kernel in profile.tsv; the Markdown
/// shows the first [`SHOWN`].
const KEPT: usize = 10;
const SHOWN: usize = 5;
/// Addresses from here up are the kernel's (x86-64 canonical upper half).
const KERNEL_BASE: u64 = 0xffff_8000_0000_0000;
/// A block further than this past the nearest symbol below it is not in
/// that symbol (e.g. Linux module text above the kernel image).
const MAX_FN_SPAN: u64 = 1 << 20;
const USER: &str = "[user]";
const UNKNOWN: &str = "[kernel, no symbol]";

/// One row's profile on one kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct RowProfile {
    pub row: String,
    pub os: String,
    pub commit: String,
    /// Iterations the figures are divided by (1 for a whole-row window).
    pub iters: u64,
    /// `measured` (the timed repetitions) or `whole` (the whole row).
    pub window: String,
    /// Instructions per iteration: all, and in the kernel.
    pub total: f64,
    pub kernel: f64,
    /// Kernel functions, most instructions first, per iteration.
    pub funcs: Vec<(String, f64)>,
}

/// `(pc, insns per execution, inner count, outer count)` per block, one
/// list per `S` section of the plugin's output.
type Section = Vec<(u64, u64, u64, u64)>;

pub fn parse_plugin_output(text: &str) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::new();
    for line in text.lines() {
        let mut w = line.split_whitespace();
        match w.next() {
            Some("S") => out.push(Vec::new()),
            Some(pc) => {
                let nums: Vec<u64> = w.filter_map(|x| x.parse().ok()).collect();
                if let (Ok(pc), [n, inner, outer], Some(sec)) =
                    (u64::from_str_radix(pc, 16), nums.as_slice(), out.last_mut())
                {
                    sec.push((pc, *n, *inner, *outer));
                }
            }
            None => {}
        }
    }
    out
}

/// `BENCH-PROF <row> <iters>` lines, in order.
pub fn parse_prof_lines(lines: &[(Duration, String)]) -> Vec<(String, u64)> {
    let mut v = Vec::new();
    for (_, raw) in lines {
        let Some(pos) = raw.find("BENCH-PROF ") else {
            continue;
        };
        let mut w = raw[pos..].split_whitespace().skip(1);
        if let (Some(name), Some(n)) = (w.next(), w.next().and_then(|n| n.parse().ok())) {
            v.push((name.to_string(), n));
        }
    }
    v
}

/// Drops a Rust legacy-mangling hash (`::h0123456789abcdef`).
pub fn short_name(name: &str) -> String {
    let n = match name.rfind("::h") {
        Some(i) if name.len() - i == 19 && name[i + 3..].bytes().all(|b| b.is_ascii_hexdigit()) => {
            &name[..i]
        }
        _ => name,
    };
    n.to_string()
}

/// The function containing `pc`; `syms` sorted by address.
pub fn lookup(syms: &[Sym], pc: u64) -> &str {
    if pc < KERNEL_BASE {
        return USER;
    }
    let i = syms.partition_point(|s| s.addr <= pc);
    match i.checked_sub(1).map(|i| &syms[i]) {
        Some(s) if pc - s.addr < MAX_FN_SPAN => &s.name,
        _ => UNKNOWN,
    }
}

/// One section of plugin output as a row profile.
pub fn summarize(
    row: &str,
    os: &str,
    commit: &str,
    iters: u64,
    sec: &Section,
    syms: &[Sym],
) -> RowProfile {
    let inner: u64 = sec.iter().map(|r| r.2).sum();
    let use_inner = iters > 0 && inner > 0;
    let (div, window) = if use_inner {
        (iters as f64, "measured")
    } else {
        (1.0, "whole")
    };
    let mut by_fn: BTreeMap<String, u64> = BTreeMap::new();
    let mut total = 0u64;
    for &(pc, _, i, o) in sec {
        let c = if use_inner { i } else { o };
        if c == 0 {
            continue;
        }
        total += c;
        *by_fn.entry(short_name(lookup(syms, pc))).or_default() += c;
    }
    let user = by_fn.remove(USER).unwrap_or(0);
    let mut funcs: Vec<(String, f64)> = by_fn
        .into_iter()
        .map(|(f, c)| (f, c as f64 / div))
        .collect();
    funcs.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    funcs.retain(|f| f.1 >= 0.5);
    funcs.truncate(KEPT);
    RowProfile {
        row: row.to_string(),
        os: os.to_string(),
        commit: commit.to_string(),
        iters: if use_inner { iters } else { 1 },
        window: window.to_string(),
        total: total as f64 / div,
        kernel: (total - user) as f64 / div,
        funcs,
    }
}

/// Text symbols of an ELF (`nm -C`) or a `System.map`, sorted.
fn symbols_elf(elf: &Path) -> Res<Vec<Sym>> {
    let out = run_quiet(
        Command::new("nm")
            .args(["-C", "--defined-only", "-n"])
            .arg(elf),
    )?;
    let mut s = ksyms::parse_nm(&out);
    s.sort_by_key(|s| s.addr);
    Ok(s)
}


/// `/kallsyms` from the guest's disk image (`debugfs -R dump`), sorted;
/// module symbols keep their `[module]` suffix.
fn read_kallsyms(img: &Path, dir: &Path) -> Res<Vec<Sym>> {
    let out = dir.join("kallsyms-linux.txt");
    let _ = std::fs::remove_file(&out);
    run_quiet(
        Command::new(crate::mkimage::e2fs_tool("debugfs")?)
            .arg("-R")
            .arg(format!("dump /kallsyms {}", out.display()))
            .arg(img),
    )?;
    let text = std::fs::read_to_string(&out).ctx(|| format!("cannot read {}", out.display()))?;
    let mut s = ksyms::parse_nm(&text.replace('\t', " "));
    if s.is_empty() {
        eprintln!("xtask: warning: no Linux symbols in {}", img.display());
    }
    s.sort_by_key(|s| s.addr);
    Ok(s)
}

/// Builds the plugin into target/bench/insncount.so.
fn build_plugin(root: &Path) -> Res<PathBuf> {
    let out = target_dir(root).join("bench/insncount.so");
    if let Some(d) = out.parent() {
        std::fs::create_dir_all(d).ctx(|| format!("cannot create {}", d.display()))?;
    }
    run_quiet(
        Command::new("cc")
            .args(["-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-o"])
            .arg(&out)
            .arg(root.join("user/bench/prof/insncount.c")),
    )?;
    Ok(out)
}

fn git_commit(root: &Path) -> String {
    Command::new("git")
        .current_dir(root)
        .args(["describe", "--always", "--dirty", "--abbrev=12"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

struct Target<'a> {
    os: &'static str,
    kernel: &'a Path,
    cmdline: String,
    syms: Vec<Sym>,
}

/// One profiled boot; the rows' profiles in the order they ran.
fn profile_boot(
    root: &Path,
    t: &Target,
    initrd: &Path,
    disk: &Path,
    plugin: &Path,
    commit: &str,
    timeout: Duration,
) -> Res<Vec<RowProfile>> {
    let dir = target_dir(root).join("bench");
    let data = dir.join(format!("profile-{}.txt", t.os));
    let _ = std::fs::remove_file(&data);
    let mut arg = OsString::from(plugin);
    arg.push(",out=");
    arg.push(&data);
    let g = Guest {
        kernel: t.kernel,
        initrd,
        cmdline: t.cmdline.clone(),
        icount: true,
        // The plugin slows the guest down, but lmb -p runs a tenth as long.
        timeout,
        log: dir.join(format!("{}-profile.log", t.os)),
        disk: Some(disk),
        extra: vec!["-plugin".into(), arg],
    };
    eprintln!("xtask: bench --profile: {}", t.os);
    let started = Instant::now();
    let (lines, ended) = bench::boot(&g)?;
    eprintln!(
        "xtask: bench --profile: {} took {:.0} s ({ended})",
        t.os,
        started.elapsed().as_secs_f64()
    );
    // Linux: the symbols /init copied from /proc/kallsyms to the disk.
    let kallsyms;
    let syms = if t.os == "linux" {
        kallsyms = read_kallsyms(&g.log.with_extension("img"), &dir)?;
        &kallsyms
    } else {
        &t.syms
    };
    let text = std::fs::read_to_string(&data).ctx(|| format!("cannot read {}", data.display()))?;
    let sections = parse_plugin_output(&text);
    let rows = parse_prof_lines(&lines);
    if sections.len() != rows.len() {
        eprintln!(
            "xtask: warning: {}: {} profile sections for {} rows (log: {})",
            t.os,
            sections.len(),
            rows.len(),
            g.log.display()
        );
    }
    Ok(rows
        .iter()
        .zip(sections.iter())
        .map(|((name, iters), sec)| summarize(name, t.os, commit, *iters, sec, syms))
        .collect())
}

// ---- profile.tsv and profile.md ------------------------------------------

/// `R row os commit iters window total kernel` and `F row os func insns`.
pub fn to_tsv(profiles: &[RowProfile]) -> String {
    let mut s = String::from("# cargo xtask bench --profile; see profile.md\n");
    for p in profiles {
        let _ = writeln!(
            s,
            "R\t{}\t{}\t{}\t{}\t{}\t{:.1}\t{:.1}",
            p.row, p.os, p.commit, p.iters, p.window, p.total, p.kernel
        );
        for (f, n) in &p.funcs {
            let _ = writeln!(
                s,
                "F\t{}\t{}\t{}\t{:.1}",
                p.row,
                p.os,
                f.replace('\t', " "),
                n
            );
        }
    }
    s
}

pub fn from_tsv(text: &str) -> Vec<RowProfile> {
    let mut v: Vec<RowProfile> = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        match f.as_slice() {
            ["R", row, os, commit, iters, window, total, kernel] => v.push(RowProfile {
                row: row.to_string(),
                os: os.to_string(),
                commit: commit.to_string(),
                iters: iters.parse().unwrap_or(0),
                window: window.to_string(),
                total: total.parse().unwrap_or(0.0),
                kernel: kernel.parse().unwrap_or(0.0),
                funcs: Vec::new(),
            }),
            ["F", row, os, func, n] => {
                if let Some(p) = v.iter_mut().rev().find(|p| p.row == *row && p.os == *os) {
                    p.funcs.push((func.to_string(), n.parse().unwrap_or(0.0)));
                }
            }
            _ => {}
        }
    }
    v
}

/// `old` with every (row, os) of `new` replaced or added; rows keep the
/// order of `order` (the benchmark list), unknown ones at the end.
pub fn merge(old: Vec<RowProfile>, new: Vec<RowProfile>, order: &[String]) -> Vec<RowProfile> {
    let mut all: Vec<RowProfile> = old
        .into_iter()
        .filter(|o| !new.iter().any(|n| n.row == o.row && n.os == o.os))
        .collect();
    all.extend(new);
    let rank = |p: &RowProfile| {
        (
            order.iter().position(|r| *r == p.row).unwrap_or(usize::MAX),
            p.row.clone(),
            p.os != "trellis",
        )
    };
    all.sort_by_key(rank);
    all
}

fn cell(name: &str) -> String {
    const MAX: usize = 60;
    let n = name.replace('|', "\\|");
    if n.chars().count() > MAX {
        let cut: String = n.chars().take(MAX - 1).collect();
        format!("`{cut}…`")
    } else {
        format!("`{n}`")
    }
}

pub fn to_markdown(profiles: &[RowProfile]) -> String {
    let mut s = String::new();
    s.push_str(
        "# Where the instructions go: per-row kernel profile\n\n\
         Generated by `cargo xtask bench --profile` (one icount boot per kernel with the QEMU \
         plugin `user/bench/prof/insncount.c`; see `xtask/src/bench_profile.rs`). For each row: \
         instructions per iteration of the measured repetitions (warm-up and calibration \
         excluded; both processes and the kernel count), the kernel's share, and the kernel \
         functions that executed the most. A translation block counts whole, attributed to the \
         function holding its first instruction, so figures are close to, not exactly, the \
         instructions retired. `whole` means the row has no measured loop of its own (the \
         figures cover the whole row, once). Trellis symbols from `trellis.sym`, Linux's from \
         its `/proc/kallsyms` (Debian's `System.map` is a stub), which `/init -p` copies to the \
         benchmark disk. A row's iteration is its \
         benchmark's operation (one system call, one round trip, one lap of a ring, one file, \
         one 64 KiB chunk for pipe_bw); rows that subtract a single-process baseline \
         (ctx_switch, ctx_ring*) count both of their loops. Raw data: `profile.tsv`; a partial \
         run (`--rows`) replaces only its rows.\n\n",
    );
    let mut rows: Vec<&str> = Vec::new();
    for p in profiles {
        if !rows.contains(&p.row.as_str()) {
            rows.push(&p.row);
        }
    }
    for row in rows {
        let get = |os: &str| profiles.iter().find(|p| p.row == row && p.os == os);
        let (t, l) = (get("trellis"), get("linux"));
        let _ = writeln!(s, "## {row}\n");
        for p in [t, l].into_iter().flatten() {
            let _ = writeln!(
                s,
                "- {}: {:.0} instructions per iteration, {:.0} in the kernel ({:.0}%); {} window, \
                 {} iterations, commit `{}`",
                p.os,
                p.total,
                p.kernel,
                if p.total > 0.0 {
                    100.0 * p.kernel / p.total
                } else {
                    0.0
                },
                p.window,
                p.iters,
                p.commit
            );
        }
        s.push('\n');
        s.push_str("| # | Trellis function | instr/iter | Linux function | instr/iter |\n");
        s.push_str("|---:|---|---:|---|---:|\n");
        for i in 0..SHOWN {
            let f = |p: Option<&RowProfile>| match p.and_then(|p| p.funcs.get(i)) {
                Some((name, n)) => (cell(name), format!("{n:.0}")),
                None => (String::new(), String::new()),
            };
            let ((tn, tv), (ln, lv)) = (f(t), f(l));
            if tn.is_empty() && ln.is_empty() {
                break;
            }
            let _ = writeln!(s, "| {} | {tn} | {tv} | {ln} | {lv} |", i + 1);
        }
        s.push('\n');
    }
    s
}

pub fn run(root: &Path, opts: &Options) -> Res<u8> {
    let build = bench::build_programs(root)?;
    let plugin = build_plugin(root)?;
    let release = Options {
        release: true,
        kernel: opts.kernel.clone(),
        ..Options::default()
    };
    let trellis = builder::kernel_for_boot(root, &release, false)?;
    let linux = bench::linux_kernel(root).ok();
    let modules = match &linux {
        Some(_) => bench::linux_modules(root)?,
        None => Vec::new(),
    };
    let disk = bench::disk_template(root)?;
    let rows: Vec<String> = opts
        .rows
        .iter()
        .chain(opts.positional.iter())
        .cloned()
        .collect();
    bench::check_rows(&build, &rows)?;
    let argv: Vec<String> = ["/init", "-p"]
        .into_iter()
        .map(String::from)
        .chain(rows.iter().cloned())
        .collect();
    let initrd = bench::write_initramfs(root, &build, &argv, "initramfs-profile.cpio", &modules)?;
    let commit = git_commit(root);
    let mut targets = vec![Target {
        os: "trellis",
        kernel: &trellis,
        cmdline: qemu::cmdline(&[]),
        syms: symbols_elf(&trellis)?,
    }];
    if let Some(k) = &linux {
        let mut cmdline = String::from("console=ttyS0 quiet rdinit=/init -- -p");
        for r in &rows {
            cmdline.push(' ');
            cmdline.push_str(r);
        }
        targets.push(Target {
            os: "linux",
            kernel: k,
            cmdline,
            syms: Vec::new(),
        });
    } else {
        eprintln!("xtask: warning: no Linux kernel: profiling Trellis only");
    }
    let mut new = Vec::new();
    for t in &targets {
        let timeout = bench::boot_timeout(bench::row_count(&build, &rows));
        new.extend(profile_boot(root, t, &initrd, &disk, &plugin, &commit, timeout)?);
    }
    let order: Vec<String> = std::fs::read_to_string(build.join("list"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    let dir = root.join("docs/perf");
    let tsv = dir.join("profile.tsv");
    let old = std::fs::read_to_string(&tsv)
        .map(|t| from_tsv(&t))
        .unwrap_or_default();
    let all = merge(old, new.clone(), &order);
    std::fs::create_dir_all(&dir).ctx(|| format!("cannot create {}", dir.display()))?;
    std::fs::write(&tsv, to_tsv(&all)).ctx(|| format!("cannot write {}", tsv.display()))?;
    let md = dir.join("profile.md");
    let only_new: Vec<RowProfile> = merge(Vec::new(), new, &order);
    print!("{}", to_markdown(&only_new));
    std::fs::write(&md, to_markdown(&all)).ctx(|| format!("cannot write {}", md.display()))?;
    eprintln!("xtask: wrote {} and {}", tsv.display(), md.display());
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn syms() -> Vec<Sym> {
        vec![
            Sym {
                addr: 0xffff_ffff_8000_1000,
                name: "a::read::h0123456789abcdef".into(),
            },
            Sym {
                addr: 0xffff_ffff_8000_2000,
                name: "b::write".into(),
            },
        ]
    }

    #[test]
    fn attribution() {
        let s = syms();
        assert_eq!(lookup(&s, 0x40_1000), USER);
        assert_eq!(lookup(&s, 0xffff_ffff_8000_0fff), UNKNOWN);
        assert_eq!(
            lookup(&s, 0xffff_ffff_8000_1000),
            "a::read::h0123456789abcdef"
        );
        assert_eq!(lookup(&s, 0xffff_ffff_8000_2fff), "b::write");
        assert_eq!(lookup(&s, 0xffff_ffff_c000_0000), UNKNOWN);
        assert_eq!(short_name("a::read::h0123456789abcdef"), "a::read");
        assert_eq!(short_name("a::hello"), "a::hello");
    }

    #[test]
    fn sections_rows_and_tsv() {
        let text = "S 0\nffffffff80001000 10 100 300\n401000 5 50 60\n\
                    S 1\nffffffff80002000 4 0 8\n";
        let secs = parse_plugin_output(text);
        assert_eq!(secs.len(), 2);
        let lines = vec![
            (Duration::ZERO, "BENCH-PROF null_syscall 10".to_string()),
            (Duration::ZERO, "x BENCH-PROF sleep_1ms 0".to_string()),
        ];
        let rows = parse_prof_lines(&lines);
        assert_eq!(rows, [("null_syscall".into(), 10), ("sleep_1ms".into(), 0)]);
        let s = syms();
        let a = summarize("null_syscall", "trellis", "c", 10, &secs[0], &s);
        assert_eq!(a.window, "measured");
        assert_eq!(a.total, 15.0);
        assert_eq!(a.kernel, 10.0);
        assert_eq!(a.funcs, [("a::read".to_string(), 10.0)]);
        let b = summarize("sleep_1ms", "trellis", "c", 0, &secs[1], &s);
        assert_eq!((b.window.as_str(), b.iters, b.total), ("whole", 1, 8.0));
        let back = from_tsv(&to_tsv(&[a.clone(), b.clone()]));
        assert_eq!(back, [a.clone(), b.clone()]);
        let mut a2 = a.clone();
        a2.total = 1.0;
        let order = ["null_syscall".to_string(), "sleep_1ms".to_string()];
        let m = merge(vec![b.clone(), a], vec![a2.clone()], &order);
        assert_eq!(m, [a2, b]);
        let md = to_markdown(&m);
        assert!(md.contains("## null_syscall"));
        assert!(md.contains("| 1 | `a::read` | 10 |"));
    }
}
