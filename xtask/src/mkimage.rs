//! `cargo xtask mkimage DIR IMG`: an ext2 image holding a directory tree,
//! made by the host's `mke2fs -t ext2 -d DIR` (e2fsprogs), and the host's
//! e2fsprogs tools the storage tests use on images.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{self, Context, Res};

/// The smallest image `mkimage` makes without `--size`, in MiB.
const MIN_MIB: u64 = 8;

/// Where an e2fsprogs program is: on `PATH`, or in the sbin directories a
/// non-root `PATH` often lacks.
pub fn e2fs_tool(name: &str) -> Res<PathBuf> {
    if util::on_path(name) {
        return Ok(PathBuf::from(name));
    }
    for dir in ["/usr/sbin", "/sbin"] {
        let p = Path::new(dir).join(name);
        if p.is_file() {
            return Ok(p);
        }
    }
    Err(format!(
        "`{name}` not found; run scripts/setup.sh (it installs e2fsprogs)"
    ))
}

/// Bytes the tree under `dir` needs: file contents rounded up to 4 KiB, and
/// a block for each directory, symlink and special file.
fn tree_bytes(dir: &Path) -> Res<u64> {
    let mut total = 0u64;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        total += 4096;
        for entry in std::fs::read_dir(&d).ctx(|| format!("cannot read {}", d.display()))? {
            let entry = entry.ctx(|| format!("cannot read {}", d.display()))?;
            let meta = std::fs::symlink_metadata(entry.path())
                .ctx(|| format!("cannot stat {}", entry.path().display()))?;
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                total += meta.len().div_ceil(4096) * 4096 + 4096;
            }
        }
    }
    Ok(total)
}

/// The default size: the tree plus a half (room for metadata and for tests
/// to write), at least [`MIN_MIB`].
pub fn default_size_mib(dir: &Path) -> Res<u64> {
    let bytes = tree_bytes(dir)?;
    Ok((bytes + bytes / 2).div_ceil(1 << 20).max(MIN_MIB))
}

/// Makes `img` (replacing it) as an ext2 file system of `size_mib` MiB with
/// `block_size`-byte blocks holding a copy of `dir`.
pub fn make(dir: &Path, img: &Path, size_mib: Option<u64>, block_size: u32) -> Res<()> {
    if !dir.is_dir() {
        return Err(format!("{} is not a directory", dir.display()));
    }
    let size = match size_mib {
        Some(s) => s,
        None => default_size_mib(dir)?,
    };
    if img.exists() {
        std::fs::remove_file(img).ctx(|| format!("cannot replace {}", img.display()))?;
    }
    let f = std::fs::File::create(img).ctx(|| format!("cannot create {}", img.display()))?;
    f.set_len(size << 20)
        .ctx(|| format!("cannot size {}", img.display()))?;
    drop(f);
    let mut cmd = Command::new(e2fs_tool("mke2fs")?);
    cmd.args(["-q", "-F", "-t", "ext2", "-b"])
        .arg(block_size.to_string())
        .arg("-d")
        .arg(dir)
        .arg(img);
    if let Err(e) = util::run_quiet(&mut cmd) {
        let _ = std::fs::remove_file(img);
        return Err(e);
    }
    Ok(())
}

/// `e2fsck -fn IMG`: `Ok(output)` when it reports the file system clean
/// (exit status 0), `Err(output)` otherwise.
pub fn fsck_clean(img: &Path) -> Res<String> {
    let mut cmd = Command::new(e2fs_tool("e2fsck")?);
    cmd.arg("-fn").arg(img);
    let (status, out) = util::run_captured(&mut cmd)?;
    if status.code() == Some(0) {
        Ok(out)
    } else {
        Err(format!(
            "`e2fsck -fn` exited with {status}:\n{}",
            util::tail(&out, 30)
        ))
    }
}

/// `cargo xtask mkimage DIR IMG [--size MIB] [--block-size B]`.
pub fn run(opts: &crate::args::Options) -> Res<u8> {
    let [dir, img] = opts.positional.as_slice() else {
        return Err("mkimage needs DIR and IMG".into());
    };
    let (dir, img) = (Path::new(dir), Path::new(img));
    make(dir, img, opts.size_mib, opts.block_size.unwrap_or(4096))?;
    let len = std::fs::metadata(img)
        .ctx(|| format!("cannot stat {}", img.display()))?
        .len();
    eprintln!(
        "xtask: wrote {} (ext2, {} MiB, {}-byte blocks, from {})",
        img.display(),
        len >> 20,
        opts.block_size.unwrap_or(4096),
        dir.display()
    );
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds an image from a small tree and checks it with the host's
    /// e2fsck and debugfs (skipped when e2fsprogs is missing).
    #[test]
    fn image_holds_the_tree() {
        let (Ok(_), Ok(debugfs)) = (e2fs_tool("mke2fs"), e2fs_tool("debugfs")) else {
            eprintln!("mkimage test skipped: e2fsprogs not installed");
            return;
        };
        let tmp = std::env::temp_dir().join(format!("xtask-mkimage-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        let src = tmp.join("src");
        std::fs::create_dir_all(src.join("sub")).unwrap();
        std::fs::write(src.join("sub/hello.txt"), b"hello ext2\n").unwrap();
        for bs in [1024, 4096] {
            let img = tmp.join(format!("t{bs}.img"));
            make(&src, &img, None, bs).unwrap();
            assert_eq!(std::fs::metadata(&img).unwrap().len(), MIN_MIB << 20);
            fsck_clean(&img).unwrap();
            let out = util::run_quiet(
                Command::new(&debugfs)
                    .args(["-R", "cat /sub/hello.txt"])
                    .arg(&img),
            )
            .unwrap();
            assert!(out.contains("hello ext2"), "{out}");
            let stats =
                util::run_quiet(Command::new(&debugfs).args(["-R", "stats"]).arg(&img)).unwrap();
            assert!(
                stats.contains(&format!("Block size:               {bs}")),
                "{stats}"
            );
        }
        assert!(make(&tmp.join("missing"), &tmp.join("x.img"), None, 4096).is_err());
        let _ = std::fs::remove_dir_all(&tmp);
    }
}
