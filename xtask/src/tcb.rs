//! `cargo xtask tcb`: the trusted computing base by linked code size, the
//! way the Asterinas paper measures it. The release kernel's DWARF line
//! table gives the distinct source lines that were linked; each is
//! attributed to the crate whose directory holds the file. A crate is TCB if
//! its source contains `unsafe`, or if it is a dependency of a TCB crate;
//! otherwise it is safe. The toolchain's `core`, `alloc` and
//! `compiler_builtins` are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::builder::{KERNEL_PACKAGE, KERNEL_TARGET, build_kernel};
use crate::util::{Context, Res, cargo, run_quiet};
use crate::{bench_report, tcb_lines, tcb_scan};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Class {
    /// Contains `unsafe`.
    Unsafe,
    /// A dependency of the named TCB crate.
    DependencyOf(String),
    Safe,
}

impl Class {
    fn is_tcb(&self) -> bool {
        !matches!(self, Class::Safe)
    }

    fn describe(&self) -> String {
        match self {
            Class::Unsafe => "TCB (contains unsafe)".into(),
            Class::DependencyOf(c) => format!("TCB (dependency of {c})"),
            Class::Safe => "safe".into(),
        }
    }
}

#[derive(Debug)]
pub struct CrateRow {
    pub name: String,
    pub version: String,
    pub lines: usize,
    pub class: Class,
    pub unsafe_sites: usize,
    pub safety_comments: usize,
}

/// A package of the kernel's dependency graph.
#[derive(Debug, Clone)]
pub struct Package {
    pub id: String,
    pub name: String,
    pub version: String,
    pub dir: PathBuf,
    /// Ids of normal (linked) dependencies.
    pub deps: Vec<String>,
}

/// The packages linked into `root_pkg` (following normal dependencies only)
/// from `cargo metadata` output.
pub fn linked_packages(metadata: &Value, root_pkg: &str) -> Res<Vec<Package>> {
    let mut all: BTreeMap<String, Package> = BTreeMap::new();
    for p in metadata["packages"]
        .as_array()
        .ok_or("metadata: no packages")?
    {
        let id = p["id"].as_str().unwrap_or_default().to_string();
        let manifest = PathBuf::from(p["manifest_path"].as_str().unwrap_or_default());
        all.insert(
            id.clone(),
            Package {
                id,
                name: p["name"].as_str().unwrap_or_default().to_string(),
                version: p["version"].as_str().unwrap_or_default().to_string(),
                dir: manifest.parent().map(Path::to_path_buf).unwrap_or_default(),
                deps: Vec::new(),
            },
        );
    }
    for node in metadata["resolve"]["nodes"]
        .as_array()
        .ok_or("metadata: no resolve")?
    {
        let id = node["id"].as_str().unwrap_or_default();
        let deps: Vec<String> = node["deps"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|d| {
                d["dep_kinds"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|k| k["kind"].is_null())
            })
            .filter_map(|d| d["pkg"].as_str().map(str::to_string))
            .collect();
        if let Some(p) = all.get_mut(id) {
            p.deps = deps;
        }
    }
    let start = all
        .values()
        .find(|p| p.name == root_pkg)
        .ok_or_else(|| format!("metadata: no package {root_pkg}"))?
        .id
        .clone();
    let mut seen = BTreeSet::new();
    let mut stack = vec![start];
    let mut out = Vec::new();
    while let Some(id) = stack.pop() {
        if !seen.insert(id.clone()) {
            continue;
        }
        if let Some(p) = all.get(&id) {
            stack.extend(p.deps.iter().cloned());
            out.push(p.clone());
        }
    }
    Ok(out)
}

/// Classifies packages given their unsafe-site counts: TCB if unsafe, then
/// every dependency of a TCB crate, transitively.
pub fn classify(
    pkgs: &[Package],
    unsafe_sites: &BTreeMap<String, usize>,
) -> BTreeMap<String, Class> {
    let mut class: BTreeMap<String, Class> = pkgs
        .iter()
        .map(|p| {
            let c = if unsafe_sites.get(&p.id).copied().unwrap_or(0) > 0 {
                Class::Unsafe
            } else {
                Class::Safe
            };
            (p.id.clone(), c)
        })
        .collect();
    let by_id: BTreeMap<&str, &Package> = pkgs.iter().map(|p| (p.id.as_str(), p)).collect();
    let mut stack: Vec<String> = class
        .iter()
        .filter(|(_, c)| c.is_tcb())
        .map(|(id, _)| id.clone())
        .collect();
    while let Some(id) = stack.pop() {
        let Some(p) = by_id.get(id.as_str()) else {
            continue;
        };
        for dep in &p.deps {
            if class.get(dep) == Some(&Class::Safe) {
                class.insert(dep.clone(), Class::DependencyOf(p.name.clone()));
                stack.push(dep.clone());
            }
        }
    }
    class
}

/// The package whose directory is the longest prefix of `file`.
fn owner<'a>(pkgs: &'a [Package], file: &Path) -> Option<&'a Package> {
    pkgs.iter()
        .filter(|p| file.starts_with(&p.dir))
        .max_by_key(|p| p.dir.components().count())
}

/// Toolchain sources (`/rustc/<hash>/library/...`, compiler_builtins).
fn is_toolchain(file: &Path) -> bool {
    let s = file.to_string_lossy();
    s.starts_with("/rustc/") || s.contains("/library/") || s.contains("compiler_builtins")
}

pub struct TcbReport {
    pub rows: Vec<CrateRow>,
    pub toolchain_lines: usize,
    pub other_lines: usize,
    pub elf: PathBuf,
}

impl TcbReport {
    pub fn total(&self) -> usize {
        self.rows.iter().map(|r| r.lines).sum()
    }

    pub fn tcb(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| r.class.is_tcb())
            .map(|r| r.lines)
            .sum()
    }

    pub fn share(&self) -> f64 {
        if self.total() == 0 {
            return 0.0;
        }
        100.0 * self.tcb() as f64 / self.total() as f64
    }

    fn table(&self, md: bool) -> String {
        let mut s = String::new();
        if md {
            s.push_str("| crate | linked lines | class | unsafe sites | SAFETY comments |\n");
            s.push_str("|---|---:|---|---:|---:|\n");
        } else {
            let _ = writeln!(
                s,
                "{:<28} {:>12}  {:<34} {:>12} {:>8}",
                "crate", "linked lines", "class", "unsafe sites", "SAFETY"
            );
        }
        for r in &self.rows {
            let name = format!("{} {}", r.name, r.version);
            if md {
                let _ = writeln!(
                    s,
                    "| {name} | {} | {} | {} | {} |",
                    r.lines,
                    r.class.describe(),
                    r.unsafe_sites,
                    r.safety_comments
                );
            } else {
                let _ = writeln!(
                    s,
                    "{name:<28} {:>12}  {:<34} {:>12} {:>8}",
                    r.lines,
                    r.class.describe(),
                    r.unsafe_sites,
                    r.safety_comments
                );
            }
        }
        let _ = writeln!(
            s,
            "{}total {} linked lines, TCB {} lines: TCB share {:.1}%{}",
            if md { "\n**" } else { "" },
            self.total(),
            self.tcb(),
            self.share(),
            if md { "**" } else { "" }
        );
        let _ = writeln!(
            s,
            "{}left out: {} lines of the toolchain (core, alloc, compiler_builtins){}",
            if md { "\n" } else { "" },
            self.toolchain_lines,
            if self.other_lines > 0 {
                format!(", {} lines of files outside any package", self.other_lines)
            } else {
                String::new()
            }
        );
        s
    }

    pub fn render_text(&self) -> String {
        self.table(false)
    }

    pub fn render_markdown(&self, commit: &str, when: &str) -> String {
        format!(
            "# Trusted computing base\n\n\
             Generated by `cargo xtask tcb` at {when} (commit `{commit}`).\n\n\
             Method (the \"linked code size\" of the Asterinas paper): the release kernel \
             (`cargo build -p {KERNEL_PACKAGE} --target {KERNEL_TARGET} --release`, with \
             `debug = \"line-tables-only\"`) is read back, and every distinct source \
             `(file, line)` pair of its DWARF line table whose address lies in an executable \
             section is counted once, for the crate whose directory holds the file \
             (workspace crates by directory, registry crates by their `name-version` source \
             directory). Code inlined from another crate counts for that crate. The \
             toolchain's `core`, `alloc` and `compiler_builtins` are left out.\n\n\
             A crate is **TCB** if its source contains the `unsafe` keyword (outside \
             comments and strings; `tests/`, `benches/` and `examples/` are not scanned), or \
             if it is a (normal, transitive) dependency of a TCB crate (from `cargo \
             metadata`); otherwise it is **safe**. *unsafe sites* counts `unsafe` keywords \
             (blocks, functions, impls, traits, attributes); *SAFETY comments* counts \
             `// SAFETY` comments and `# Safety` doc sections.\n\n{}",
            self.table(true)
        )
    }
}

fn metadata(root: &Path) -> Res<Value> {
    let mut cmd = cargo();
    cmd.current_dir(root).args([
        "metadata",
        "--format-version",
        "1",
        "--filter-platform",
        KERNEL_TARGET,
    ]);
    let out = cmd
        .stderr(std::process::Stdio::inherit())
        .output()
        .ctx(|| "cannot run cargo metadata".into())?;
    if !out.status.success() {
        return Err("cargo metadata failed".into());
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata: {e}"))
}

/// Builds the report for the kernel ELF `elf`.
pub fn report(root: &Path, elf: &Path) -> Res<TcbReport> {
    let lines = tcb_lines::linked_lines(elf)?;
    let pkgs = linked_packages(&metadata(root)?, KERNEL_PACKAGE)?;
    let mut per_pkg: BTreeMap<String, usize> = BTreeMap::new();
    let (mut toolchain_lines, mut other_lines) = (0, 0);
    for (file, set) in &lines {
        match owner(&pkgs, file) {
            Some(p) => *per_pkg.entry(p.id.clone()).or_default() += set.len(),
            None if is_toolchain(file) => toolchain_lines += set.len(),
            None => other_lines += set.len(),
        }
    }
    let mut sites = BTreeMap::new();
    let mut safety = BTreeMap::new();
    for p in &pkgs {
        let (s, c) = tcb_scan::scan_dir(&p.dir);
        sites.insert(p.id.clone(), s.len());
        safety.insert(p.id.clone(), c);
    }
    let class = classify(&pkgs, &sites);
    let mut rows: Vec<CrateRow> = pkgs
        .iter()
        .map(|p| CrateRow {
            name: p.name.clone(),
            version: p.version.clone(),
            lines: per_pkg.get(&p.id).copied().unwrap_or(0),
            class: class[&p.id].clone(),
            unsafe_sites: sites[&p.id],
            safety_comments: safety[&p.id],
        })
        .collect();
    rows.sort_by(|a, b| b.lines.cmp(&a.lines).then(a.name.cmp(&b.name)));
    Ok(TcbReport {
        rows,
        toolchain_lines,
        other_lines,
        elf: elf.to_path_buf(),
    })
}

/// `cargo xtask tcb`.
pub fn run(root: &Path) -> Res<u8> {
    let elf = build_kernel(root, true, false)?;
    let r = report(root, &elf)?;
    println!("linked code of {}:", r.elf.display());
    print!("{}", r.render_text());
    let commit = run_quiet(std::process::Command::new("git").current_dir(root).args([
        "describe",
        "--always",
        "--dirty",
        "--abbrev=12",
    ]))
    .map(|s| s.trim().to_string())
    .unwrap_or_else(|_| "unknown".into());
    let when = bench_report::iso_utc(std::time::SystemTime::now());
    let doc = root.join("docs/tcb.md");
    std::fs::write(&doc, r.render_markdown(&commit, &when))
        .ctx(|| format!("cannot write {}", doc.display()))?;
    eprintln!("xtask: wrote {}", doc.display());
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkg(id: &str, deps: &[&str]) -> Package {
        Package {
            id: id.into(),
            name: id.into(),
            version: "0.1.0".into(),
            dir: PathBuf::from(format!("/ws/{id}")),
            deps: deps.iter().map(|d| d.to_string()).collect(),
        }
    }

    #[test]
    fn classification_follows_unsafe_and_dependencies() {
        let pkgs = [
            pkg("kernel", &["frame", "policies", "libx"]),
            pkg("frame", &["bits"]),
            pkg("bits", &["leaf"]),
            pkg("leaf", &[]),
            pkg("policies", &["frame"]),
            pkg("libx", &[]),
        ];
        let sites = BTreeMap::from([("frame".to_string(), 3)]);
        let c = classify(&pkgs, &sites);
        assert_eq!(c["frame"], Class::Unsafe);
        assert_eq!(c["bits"], Class::DependencyOf("frame".into()));
        assert_eq!(c["leaf"], Class::DependencyOf("bits".into()));
        assert_eq!(
            c["policies"],
            Class::Safe,
            "using a TCB crate is not enough"
        );
        assert_eq!(c["kernel"], Class::Safe);
        assert_eq!(c["libx"], Class::Safe);
    }

    #[test]
    fn files_belong_to_the_innermost_package() {
        let mut pkgs = vec![pkg("ws", &[]), pkg("inner", &[])];
        pkgs[0].dir = PathBuf::from("/ws");
        pkgs[1].dir = PathBuf::from("/ws/libs/inner");
        assert_eq!(
            owner(&pkgs, Path::new("/ws/libs/inner/src/a.rs"))
                .unwrap()
                .id,
            "inner"
        );
        assert_eq!(owner(&pkgs, Path::new("/ws/src/b.rs")).unwrap().id, "ws");
        assert!(owner(&pkgs, Path::new("/elsewhere/x.rs")).is_none());
        assert!(is_toolchain(Path::new(
            "/rustc/abc/library/core/src/ptr.rs"
        )));
    }

    #[test]
    fn dev_and_build_dependencies_are_not_linked() {
        let meta: Value = serde_json::from_str(
            r#"{"packages": [
                {"id": "k", "name": "kernel", "version": "0.1.0", "manifest_path": "/ws/kernel/Cargo.toml"},
                {"id": "f", "name": "frame", "version": "0.1.0", "manifest_path": "/ws/frame/Cargo.toml"},
                {"id": "p", "name": "proptest", "version": "1.0.0", "manifest_path": "/reg/proptest-1.0.0/Cargo.toml"},
                {"id": "b", "name": "cc", "version": "1.0.0", "manifest_path": "/reg/cc-1.0.0/Cargo.toml"}],
             "resolve": {"nodes": [
                {"id": "k", "deps": [
                    {"pkg": "f", "dep_kinds": [{"kind": null}]},
                    {"pkg": "b", "dep_kinds": [{"kind": "build"}]}]},
                {"id": "f", "deps": [{"pkg": "p", "dep_kinds": [{"kind": "dev"}]}]},
                {"id": "p", "deps": []}, {"id": "b", "deps": []}]}}"#,
        )
        .unwrap();
        let mut names: Vec<String> = linked_packages(&meta, "kernel")
            .unwrap()
            .into_iter()
            .map(|p| p.name)
            .collect();
        names.sort();
        assert_eq!(names, ["frame", "kernel"]);
    }
}
