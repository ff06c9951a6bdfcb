//! Recognising the kernel's exit protocol in the serial output, and
//! separating the guest program's output from firmware and kernel noise.

const POWEROFF: &str = "trellis: poweroff status=";
const PANIC: &str = "trellis: KERNEL PANIC";
/// SeaBIOS prints this (without a newline) right before jumping to the kernel.
const FIRMWARE_DONE: &str = "Booting from ROM..";

/// What a line of serial output means to xtask.
#[derive(Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// `trellis: poweroff status=N`. `prefix` is whatever the guest printed
    /// on the same line before it (output not ending in a newline).
    Poweroff {
        status: u8,
        prefix: &'a str,
    },
    /// A line containing `trellis: KERNEL PANIC`.
    Panic,
    Other,
}

/// Classifies one line (without its newline; a trailing `\r` is ignored).
pub fn classify(line: &str) -> Line<'_> {
    let line = line.trim_end_matches(['\r', '\n']);
    if line.contains(PANIC) {
        return Line::Panic;
    }
    if let Some(at) = line.rfind(POWEROFF) {
        let digits = line[at + POWEROFF.len()..].trim_end();
        if !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit())
            && let Ok(status) = digits.parse::<u8>()
        {
            return Line::Poweroff {
                status,
                prefix: &line[..at],
            };
        }
    }
    Line::Other
}

/// Removes ANSI escape sequences (CSI `ESC [ ... final`, OSC `ESC ] ... BEL`
/// and two-character `ESC x` sequences) and carriage returns.
pub fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => match chars.next() {
                Some('[') => {
                    // Parameter and intermediate bytes, then one final byte.
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    while let Some(c) = chars.next() {
                        if c == '\x07' {
                            break;
                        }
                        if c == '\x1b' {
                            chars.next();
                            break;
                        }
                    }
                }
                _ => {}
            },
            '\r' => {}
            c => out.push(c),
        }
    }
    out
}

/// Whether a (cleaned) line is kernel log output rather than guest output.
pub fn is_kernel_line(line: &str) -> bool {
    line.starts_with('[') || line.starts_with("trellis:")
}

/// The lines after the firmware's last words, escape sequences removed.
pub fn after_firmware(lines: &[String]) -> Vec<String> {
    let cleaned: Vec<String> = lines.iter().map(|l| strip_ansi(l)).collect();
    match cleaned.iter().rposition(|l| l.contains(FIRMWARE_DONE)) {
        Some(i) => {
            let at = cleaned[i].find(FIRMWARE_DONE).unwrap_or(0) + FIRMWARE_DONE.len();
            // SeaBIOS sometimes prints one more dot before the kernel's
            // first line.
            let rest = cleaned[i][at..].trim_start_matches('.');
            let first = (!rest.is_empty()).then(|| rest.to_string());
            first
                .into_iter()
                .chain(cleaned[i + 1..].iter().cloned())
                .collect()
        }
        None => cleaned,
    }
}

/// The last `n` lines the kernel and guest printed, for failure reports.
pub fn serial_tail(lines: &[String], n: usize) -> String {
    let lines = after_firmware(lines);
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The guest's own output: the serial lines minus firmware chatter, kernel
/// log lines and escape sequences. The text before a poweroff marker on the
/// same line is kept (it is output that did not end in a newline).
pub fn guest_output(lines: &[String]) -> String {
    let mut out = String::new();
    // The kernel's first output may follow the firmware's last words directly.
    for line in &after_firmware(lines) {
        if let Line::Poweroff { prefix, .. } = classify(line) {
            out.push_str(prefix);
            continue;
        }
        if is_kernel_line(line) {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poweroff(status: u8, prefix: &str) -> Line<'_> {
        Line::Poweroff { status, prefix }
    }

    #[test]
    fn poweroff_lines() {
        assert_eq!(classify("trellis: poweroff status=0"), poweroff(0, ""));
        assert_eq!(
            classify("trellis: poweroff status=255\r"),
            poweroff(255, "")
        );
        assert_eq!(
            classify("no newlinetrellis: poweroff status=3"),
            poweroff(3, "no newline")
        );
        assert_eq!(classify("trellis: poweroff status=256"), Line::Other);
        assert_eq!(classify("trellis: poweroff status=-1"), Line::Other);
        assert_eq!(classify("trellis: poweroff status="), Line::Other);
        assert_eq!(classify("trellis: poweroff status=1x"), Line::Other);
        assert_eq!(classify("trellis: poweroff"), Line::Other);
    }

    #[test]
    fn panic_lines() {
        assert_eq!(
            classify("trellis: KERNEL PANIC at kernel/src/main.rs:3: oops"),
            Line::Panic
        );
        assert_eq!(classify("trellis: KERNEL PANIC\r"), Line::Panic);
        assert_eq!(classify("[ 1.0] trellis: panic"), Line::Other);
        assert_eq!(classify("hello"), Line::Other);
    }

    #[test]
    fn ansi_is_stripped() {
        assert_eq!(strip_ansi("\x1b[1;34mbin\x1b[0m  tests\r"), "bin  tests");
        assert_eq!(strip_ansi("\x1bc\x1b[?7lSeaBIOS"), "SeaBIOS");
        assert_eq!(strip_ansi("\x1b]0;title\x07x"), "x");
    }

    fn lines(s: &str) -> Vec<String> {
        s.lines().map(str::to_string).collect()
    }

    #[test]
    fn guest_output_drops_firmware_and_kernel_lines() {
        let serial = lines(
            "\x1bc\x1b[?7l\x1b[2J\x1b[0mSeaBIOS (version 1.16.2)\r\n\
             \n\
             iPXE (https://ipxe.org) 00:02.0\r\n\
             Booting from ROM..[    0.000] trellis booting\r\n\
             [    0.100] mounted initramfs\r\n\
             hello world\r\n\
             \r\n\
             trellis: init exited\r\n\
             trellis: poweroff status=0\r\n",
        );
        assert_eq!(guest_output(&serial), "hello world\n\n");
    }

    #[test]
    fn tail_skips_firmware() {
        let serial = lines("\x1bcSeaBIOS\niPXE\nBooting from ROM..[ 0] a\nb\nc");
        assert_eq!(serial_tail(&serial, 5), "[ 0] a\nb\nc");
        assert_eq!(serial_tail(&serial, 2), "b\nc");
        assert_eq!(serial_tail(&lines("\x1b[1mx"), 2), "x");
    }

    #[test]
    fn guest_output_keeps_text_before_poweroff() {
        let serial = lines("[ 0.0] boot\npartialtrellis: poweroff status=4");
        assert_eq!(guest_output(&serial), "partial");
    }

    #[test]
    fn guest_output_right_after_firmware() {
        let serial = lines("SeaBIOS\nBooting from ROM..hi\n\ntrellis: poweroff status=0");
        assert_eq!(guest_output(&serial), "hi\n\n");
        let serial = lines("SeaBIOS\nBooting from ROM..\nhi\ntrellis: poweroff status=0");
        assert_eq!(guest_output(&serial), "hi\n");
    }
}
