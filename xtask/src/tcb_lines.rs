//! Linked source lines: the distinct `(file, line)` pairs of an ELF's DWARF
//! line table that describe code actually placed in an executable section.
//! Rows of functions the linker discarded (tombstoned addresses) are left
//! out, so this measures what is linked, not what was compiled.

use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Component, Path, PathBuf};

use object::{Object, ObjectSection, SectionFlags, SectionKind};

use crate::util::{Context, Res};

/// Source file -> its linked line numbers.
pub type LineSet = BTreeMap<PathBuf, BTreeSet<u64>>;

/// Reads `elf` and returns its linked lines.
pub fn linked_lines(elf: &Path) -> Res<LineSet> {
    let data = std::fs::read(elf).ctx(|| format!("cannot read {}", elf.display()))?;
    parse(&data).map_err(|e| format!("{}: {e}", elf.display()))
}

/// `a/./b/../c` -> `a/c`, lexically.
fn normalise(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// Whether a section holds code (ELF: `SHF_EXECINSTR`, which also covers
/// writable boot sections that `object` classifies as data).
fn is_executable<'a>(s: &impl ObjectSection<'a>) -> bool {
    match s.flags() {
        SectionFlags::Elf { sh_flags, .. } => sh_flags.0 & object::elf::SHF_EXECINSTR.0 != 0,
        _ => s.kind() == SectionKind::Text,
    }
}

pub fn parse(data: &[u8]) -> Result<LineSet, String> {
    let file = object::File::parse(data).map_err(|e| format!("not an object file: {e}"))?;
    let endian = if file.is_little_endian() {
        gimli::RunTimeEndian::Little
    } else {
        gimli::RunTimeEndian::Big
    };
    let text: Vec<(u64, u64)> = file
        .sections()
        .filter(|s| s.size() > 0 && is_executable(s))
        .map(|s| (s.address(), s.address() + s.size()))
        .collect();
    let in_text = |a: u64| text.iter().any(|&(lo, hi)| a >= lo && a < hi);
    let load = |id: gimli::SectionId| -> Result<Cow<'_, [u8]>, object::Error> {
        match file.section_by_name(id.name()) {
            Some(s) => s.uncompressed_data(),
            None => Ok(Cow::Borrowed(&[][..])),
        }
    };
    let sections = gimli::DwarfSections::load(load).map_err(|e| e.to_string())?;
    let dwarf = sections.borrow(|s| gimli::EndianSlice::new(s, endian));
    let mut out = LineSet::new();
    let mut units = dwarf.units();
    while let Some(header) = units.next().map_err(|e| e.to_string())? {
        let unit = dwarf.unit(header).map_err(|e| e.to_string())?;
        let unit = unit.unit_ref(&dwarf);
        let Some(program) = unit.line_program.clone() else {
            continue;
        };
        let comp_dir = unit
            .comp_dir
            .map(|d| PathBuf::from(d.to_string_lossy().into_owned()))
            .unwrap_or_default();
        let mut paths: HashMap<u64, PathBuf> = HashMap::new();
        let mut rows = program.rows();
        while let Some((header, row)) = rows.next_row().map_err(|e| e.to_string())? {
            if row.end_sequence() || !in_text(row.address()) {
                continue;
            }
            let Some(line) = row.line() else { continue };
            let path = match paths.entry(row.file_index()) {
                Entry::Occupied(e) => e.into_mut(),
                Entry::Vacant(e) => {
                    let Some(entry) = row.file(header) else {
                        continue;
                    };
                    let mut path = comp_dir.clone();
                    if let Some(dir) = entry.directory(header) {
                        let dir = unit.attr_string(dir).map_err(|e| e.to_string())?;
                        path.push(dir.to_string_lossy().as_ref());
                    }
                    let name = unit
                        .attr_string(entry.path_name())
                        .map_err(|e| e.to_string())?;
                    path.push(name.to_string_lossy().as_ref());
                    e.insert(normalise(&path))
                }
            };
            out.entry(path.clone()).or_default().insert(line.get());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// Compiles a small Rust program with line tables and checks that the
    /// lines of the code it links are found, and lines of code the linker
    /// dropped are not.
    #[test]
    fn line_table_of_a_fixture_program() {
        let dir = std::env::temp_dir().join(format!("xtask-tcb-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src = dir.join("fixture.rs");
        std::fs::write(
            &src,
            "#[inline(never)]\n\
             fn used(x: u64) -> u64 {\n\
             \x20   x ^ 3\n\
             }\n\
             #[inline(never)]\n\
             #[allow(dead_code)]\n\
             fn unused(x: u64) -> u64 {\n\
             \x20   x ^ 5\n\
             }\n\
             fn main() {\n\
             \x20   let n = std::env::args().count() as u64;\n\
             \x20   std::process::exit(used(n) as i32);\n\
             }\n",
        )
        .unwrap();
        let exe = dir.join("fixture");
        let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
        let out = Command::new(rustc)
            .current_dir(&dir)
            .args(["--edition", "2021", "-C", "debuginfo=line-tables-only"])
            .args(["-C", "opt-level=0", "-o"])
            .arg(&exe)
            .arg("fixture.rs")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lines = linked_lines(&exe).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let mine = lines
            .get(&src)
            .unwrap_or_else(|| panic!("no rows for {}: {:?}", src.display(), lines.keys()));
        for l in [3, 4, 11, 12] {
            assert!(mine.contains(&l), "line {l} missing from {mine:?}");
        }
        assert!(
            !mine.contains(&8),
            "the unused function is not linked: {mine:?}"
        );
        assert!(
            lines
                .keys()
                .any(|p| p.to_string_lossy().contains("library/std")),
            "std's inlined code is attributed to its own files"
        );
    }

    #[test]
    fn paths_are_normalised() {
        assert_eq!(normalise(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
    }
}
