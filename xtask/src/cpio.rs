//! Writer for the cpio "newc" format (the format the Linux initramfs uses).
//!
//! Each entry is a 110-byte ASCII header (`070701` and thirteen 8-digit hex
//! fields), the NUL-terminated name padded to a multiple of four bytes
//! (counting from the start of the header), then the data, also padded to four
//! bytes. The archive ends with an entry named `TRAILER!!!`.

pub const S_IFDIR: u32 = 0o040000;
pub const S_IFREG: u32 = 0o100000;
pub const S_IFLNK: u32 = 0o120000;

const MAGIC: &[u8; 6] = b"070701";
const TRAILER: &str = "TRAILER!!!";

pub struct Writer {
    out: Vec<u8>,
    next_ino: u32,
    entries: usize,
}

impl Writer {
    pub fn new() -> Self {
        Writer {
            out: Vec::new(),
            next_ino: 1,
            entries: 0,
        }
    }

    /// A directory; `perm` holds the permission bits (e.g. `0o1777`).
    pub fn dir(&mut self, path: &str, perm: u32) {
        self.entry(path, S_IFDIR | (perm & 0o7777), 2, &[]);
    }

    pub fn file(&mut self, path: &str, perm: u32, data: &[u8]) {
        self.entry(path, S_IFREG | (perm & 0o7777), 1, data);
    }

    pub fn symlink(&mut self, path: &str, target: &str) {
        self.entry(path, S_IFLNK | 0o777, 1, target.as_bytes());
    }

    pub fn entries(&self) -> usize {
        self.entries
    }

    /// Appends the trailer and returns the archive.
    pub fn finish(mut self) -> Vec<u8> {
        self.raw(TRAILER, 0, 0, 1, &[]);
        self.out
    }

    fn entry(&mut self, path: &str, mode: u32, nlink: u32, data: &[u8]) {
        let name = path.trim_start_matches('/');
        assert!(!name.is_empty(), "cpio entry needs a name");
        let ino = self.next_ino;
        self.next_ino += 1;
        self.entries += 1;
        self.raw(name, ino, mode, nlink, data);
    }

    fn raw(&mut self, name: &str, ino: u32, mode: u32, nlink: u32, data: &[u8]) {
        let size = u32::try_from(data.len()).expect("cpio newc files are limited to 4 GiB");
        let namesize = u32::try_from(name.len() + 1).expect("name too long");
        // ino mode uid gid nlink mtime filesize devmajor devminor
        // rdevmajor rdevminor namesize check
        let fields = [ino, mode, 0, 0, nlink, 0, size, 0, 0, 0, 0, namesize, 0];
        self.out.extend_from_slice(MAGIC);
        for f in fields {
            self.out.extend_from_slice(format!("{f:08X}").as_bytes());
        }
        self.out.extend_from_slice(name.as_bytes());
        self.out.push(0);
        self.pad();
        self.out.extend_from_slice(data);
        self.pad();
    }

    fn pad(&mut self) {
        while !self.out.len().is_multiple_of(4) {
            self.out.push(0);
        }
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// One parsed archive member.
    #[derive(Debug, PartialEq, Eq)]
    pub struct Member {
        pub name: String,
        pub mode: u32,
        pub uid: u32,
        pub nlink: u32,
        pub data: Vec<u8>,
    }

    /// A tiny independent newc reader, used to check the writer.
    pub fn parse(mut buf: &[u8]) -> Vec<Member> {
        let total = buf.len();
        let mut out = Vec::new();
        loop {
            assert_eq!((total - buf.len()) % 4, 0, "header not aligned");
            assert_eq!(&buf[..6], b"070701", "bad magic");
            let field = |i: usize| {
                let s = std::str::from_utf8(&buf[6 + i * 8..14 + i * 8]).unwrap();
                u32::from_str_radix(s, 16).unwrap()
            };
            let (mode, uid, nlink, size, namesize) = (
                field(1),
                field(2),
                field(4),
                field(6) as usize,
                field(11) as usize,
            );
            let name_end = 110 + namesize;
            assert_eq!(buf[name_end - 1], 0, "name not NUL-terminated");
            let name = std::str::from_utf8(&buf[110..name_end - 1])
                .unwrap()
                .to_string();
            let data_start = name_end.next_multiple_of(4);
            assert!(buf[name_end..data_start].iter().all(|&b| b == 0));
            let data = buf[data_start..data_start + size].to_vec();
            let next = (data_start + size).next_multiple_of(4);
            buf = &buf[next..];
            if name == TRAILER {
                assert!(buf.is_empty(), "data after trailer");
                return out;
            }
            out.push(Member {
                name,
                mode,
                uid,
                nlink,
                data,
            });
        }
    }

    fn sample() -> Vec<u8> {
        let mut w = Writer::new();
        w.dir("/tmp", 0o1777);
        w.file("/etc/passwd", 0o644, b"root:x:0:0:root:/root:/bin/sh\n");
        w.file("/a", 0o755, b"");
        w.file("/bc", 0o600, b"123");
        w.symlink("/bin/ls", "/bin/busybox");
        assert_eq!(w.entries(), 5);
        w.finish()
    }

    #[test]
    fn round_trip() {
        let bytes = sample();
        assert_eq!(bytes.len() % 4, 0);
        let m = parse(&bytes);
        let names: Vec<&str> = m.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["tmp", "etc/passwd", "a", "bc", "bin/ls"]);
        assert_eq!(m[0].mode, S_IFDIR | 0o1777);
        assert_eq!(m[0].nlink, 2);
        assert_eq!(m[1].mode, S_IFREG | 0o644);
        assert_eq!(m[1].data, b"root:x:0:0:root:/root:/bin/sh\n");
        assert!(m[2].data.is_empty());
        assert_eq!(m[3].data, b"123");
        assert_eq!(m[4].mode, S_IFLNK | 0o777);
        assert_eq!(m[4].data, b"/bin/busybox");
        assert!(m.iter().all(|m| m.uid == 0));
    }

    #[test]
    fn header_layout() {
        let mut w = Writer::new();
        w.file("x", 0o644, b"hi");
        let bytes = w.finish();
        let hdr = std::str::from_utf8(&bytes[..110]).unwrap();
        assert_eq!(
            hdr,
            "070701\
             00000001000081A4000000000000000000000001\
             0000000000000002000000000000000000000000\
             000000000000000200000000"
        );
        // header (110) + "x\0" = 112, already aligned; data "hi" + 2 pad.
        assert_eq!(&bytes[110..116], b"x\0hi\0\0");
    }

    #[test]
    fn host_cpio_agrees() {
        if !crate::util::on_path("cpio") {
            eprintln!("cpio not installed; skipping");
            return;
        }
        let dir = std::env::temp_dir().join(format!("xtask-cpio-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("a.cpio");
        std::fs::write(&file, sample()).unwrap();
        let out = std::process::Command::new("cpio")
            .arg("-it")
            .stdin(std::fs::File::open(&file).unwrap())
            .output()
            .unwrap();
        std::fs::remove_dir_all(&dir).ok();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let listed = String::from_utf8(out.stdout).unwrap();
        assert_eq!(listed, "tmp\netc/passwd\na\nbc\nbin/ls\n");
    }
}
