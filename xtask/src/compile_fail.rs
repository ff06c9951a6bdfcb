//! The `compile-fail` layer: programs that must *not* compile against
//! frame's public API, one verdict each. They prove the thread-safety
//! bounds of frame's unsafe Send/Sync impls (a non-`Sync` payload stays
//! non-`Sync`, guards stay on their task) and that privileged items stay
//! private, and what driver domains refuse to exchange (with the proxies
//! `domain-proxy` generates). Each case is `frame/compile-fail/NAME.rs`, whose first line is
//! `// expect: TEXT`: the build must fail and the compiler's output must
//! contain TEXT. Cases named `pass_*.rs` are controls that must build, so a
//! broken harness cannot pass every case.

use std::path::{Path, PathBuf};

use crate::builder::KERNEL_TARGET;
use crate::test::Reporter;
use crate::util::{Context, Res, cargo, run_captured, tail, target_dir};

struct Case {
    name: String,
    source: String,
    /// `None` for a control that must build.
    expect: Option<String>,
}

fn cases(root: &Path) -> Res<Vec<Case>> {
    let dir = root.join("frame/compile-fail");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .ctx(|| format!("cannot list {}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let name = path
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let source =
            std::fs::read_to_string(&path).ctx(|| format!("cannot read {}", path.display()))?;
        let expect = source
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("// expect:"))
            .map(|t| t.trim().to_string());
        if expect.is_none() && !name.starts_with("pass_") {
            return Err(format!(
                "{}: the first line must be `// expect: TEXT` (or name it pass_*)",
                path.display()
            ));
        }
        out.push(Case {
            name,
            source,
            expect,
        });
    }
    Ok(out)
}

/// A scratch crate depending on frame, built for the kernel target (the
/// sync and task types exist only there). Its own `[workspace]` keeps it
/// out of the repository's workspace; the shared target directory means
/// frame is checked once and each case costs one small crate.
fn scratch(root: &Path) -> Res<PathBuf> {
    let dir = target_dir(root).join("compile-fail");
    std::fs::create_dir_all(dir.join("src")).ctx(|| format!("cannot create {}", dir.display()))?;
    let manifest = format!(
        "[package]\nname = \"frame-compile-fail\"\nversion = \"0.0.0\"\nedition = \"2024\"\n\n\
         [lib]\npath = \"src/lib.rs\"\n\n[dependencies]\nframe = {{ path = {:?} }}\n\
         domain-proxy = {{ path = {:?} }}\n\n[workspace]\n",
        root.join("frame").display().to_string(),
        root.join("libs/domain-proxy").display().to_string()
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).ctx(|| "cannot write the manifest".into())?;
    let _ = std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock"));
    Ok(dir)
}

fn check(dir: &Path, case: &Case) -> Res<(bool, String)> {
    let lib = format!("#![no_std]\nextern crate alloc;\n{}", case.source);
    std::fs::write(dir.join("src/lib.rs"), lib).ctx(|| "cannot write the case".into())?;
    let mut cmd = cargo();
    cmd.current_dir(dir)
        .env_remove("CARGO_TARGET_DIR")
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .args([
            "check",
            "--quiet",
            "--color",
            "never",
            "--target",
            KERNEL_TARGET,
        ]);
    let (status, out) = run_captured(&mut cmd)?;
    Ok((status.success(), out))
}

pub fn run(root: &Path, r: &mut Reporter) {
    let (cases, dir) = match cases(root).and_then(|c| Ok((c, scratch(root)?))) {
        Ok(x) => x,
        Err(e) => {
            r.fail("compile-fail:setup", e);
            return;
        }
    };
    eprintln!("xtask: compile-fail cases against frame ({})", cases.len());
    for case in &cases {
        let name = format!("compile-fail:{}", case.name);
        match (check(&dir, case), &case.expect) {
            (Err(e), _) => r.fail(&name, e),
            (Ok((true, _)), None) => r.pass(&name),
            (Ok((false, out)), None) => r.fail(
                &name,
                format!("the control does not build:\n{}", tail(&out, 20)),
            ),
            (Ok((true, _)), Some(want)) => r.fail(
                &name,
                format!("it compiled; expected an error containing `{want}`"),
            ),
            (Ok((false, out)), Some(want)) if out.contains(want.as_str()) => r.pass(&name),
            (Ok((false, out)), Some(want)) => r.fail(
                &name,
                format!("it failed, but not with `{want}`:\n{}", tail(&out, 20)),
            ),
        }
    }
}
