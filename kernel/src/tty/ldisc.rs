//! The line discipline of a terminal (termios(3), Linux's n_tty): input
//! mapping, canonical line editing, echo, the signal characters, and
//! output processing. Pure state: the terminal (terminal.rs) feeds it the
//! bytes its driver receives (the UART, a pty master's writes) and queues
//! the echo and sends the signals it produces.

use alloc::collections::VecDeque;
use alloc::vec::Vec;

use super::termios::*;

/// Most input bytes kept (Linux's N_TTY_BUF_SIZE); more are dropped.
const MAX_INPUT: usize = 4096;
const SIGINT: u32 = 2;
const SIGQUIT: u32 = 3;
const SIGTSTP: u32 = 20;

pub struct Ldisc {
    pub termios: Termios,
    /// The line being edited (canonical mode).
    line: Vec<u8>,
    /// Finished lines for readers; an empty one is an end of file.
    lines: VecDeque<Vec<u8>>,
    /// Bytes for readers in non-canonical mode.
    raw: VecDeque<u8>,
    /// The previous character was VLNEXT: take this one literally.
    literal_next: bool,
    /// Monotonic time of the last input byte (the VTIME inter-byte timer).
    pub last_input_ns: u64,
}

/// Whether `c` echoes as `^X` under ECHOCTL.
fn is_ctl(c: u8) -> bool {
    (c < 0x20 && c != b'\t' && c != b'\n') || c == 0x7f
}

/// Part of a word for VWERASE (n_tty: alphanumerics and '_').
fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Appends `bytes` to `out` with output processing (OPOST: ONLCR, OCRNL,
/// ONLRET, OLCUC).
pub fn process_output(oflag: u32, bytes: &[u8], out: &mut Vec<u8>) {
    process_output_bounded(oflag, bytes, usize::MAX, out);
}

/// Output processing of as many of `bytes` as fit in `room` bytes of
/// output (a character is never split: "\n" under ONLCR needs two);
/// appends to `out` and returns how many of `bytes` were taken.
pub fn process_output_bounded(
    oflag: u32,
    bytes: &[u8],
    room: usize,
    out: &mut impl Extend<u8>,
) -> usize {
    if oflag & OPOST == 0 {
        let n = bytes.len().min(room);
        out.extend(bytes[..n].iter().copied());
        return n;
    }
    let mut left = room;
    for (i, &b) in bytes.iter().enumerate() {
        let (seq, len): ([u8; 2], usize) = match b {
            b'\n' if oflag & ONLCR != 0 => (*b"\r\n", 2),
            b'\r' if oflag & OCRNL != 0 => ([b'\n', 0], 1),
            b'\r' if oflag & ONLRET != 0 => ([0, 0], 0),
            b if oflag & OLCUC != 0 => ([b.to_ascii_uppercase(), 0], 1),
            b => ([b, 0], 1),
        };
        if len > left {
            return i;
        }
        left -= len;
        out.extend(seq[..len].iter().copied());
    }
    bytes.len()
}

impl Ldisc {
    pub fn new(termios: Termios) -> Ldisc {
        Ldisc {
            termios,
            line: Vec::new(),
            lines: VecDeque::new(),
            raw: VecDeque::new(),
            literal_next: false,
            last_input_ns: 0,
        }
    }

    fn lflag(&self, flag: u32) -> bool {
        self.termios.c_lflag & flag != 0
    }

    pub fn canonical(&self) -> bool {
        self.lflag(ICANON)
    }

    fn buffered(&self) -> usize {
        self.line.len() + self.raw.len() + self.lines.iter().map(Vec::len).sum::<usize>()
    }

    /// Bytes a reader could get now (FIONREAD).
    pub fn available(&self) -> usize {
        self.raw.len() + self.lines.iter().map(Vec::len).sum::<usize>()
    }

    /// Whether poll(2) reports input: a line (canonical), else VMIN bytes
    /// when VTIME is 0, else one byte (n_tty's input_available_p).
    pub fn readable(&self) -> bool {
        if self.canonical() {
            return !self.lines.is_empty();
        }
        let (min, time) = (self.termios.c_cc[VMIN], self.termios.c_cc[VTIME]);
        let need = if time == 0 && min > 0 {
            usize::from(min)
        } else {
            1
        };
        self.raw.len() >= need
    }

    /// Whether another input byte can be taken without being dropped, or
    /// must wait for a reader (a pty master's write blocks then). In
    /// canonical mode without a finished line no reader can make room, so
    /// input is taken (and beyond the limit dropped), as n_tty does.
    pub fn accepts_input(&self) -> bool {
        if self.canonical() {
            self.lines.is_empty() || self.buffered() < MAX_INPUT
        } else {
            self.raw.len() < MAX_INPUT
        }
    }

    /// Non-canonical input bytes waiting.
    pub fn raw_len(&self) -> usize {
        self.raw.len()
    }

    pub fn set_termios(&mut self, t: Termios) {
        let was_canonical = self.canonical();
        self.termios = t;
        if was_canonical && !self.canonical() {
            // What was typed so far becomes readable (n_tty_set_termios).
            let line = core::mem::take(&mut self.line);
            for l in core::mem::take(&mut self.lines) {
                self.raw.extend(l);
            }
            self.raw.extend(line);
        } else if !was_canonical && self.canonical() {
            // Pending bytes start the line being edited.
            let raw: Vec<u8> = self.raw.drain(..).collect();
            self.line.extend(raw);
        }
    }

    pub fn flush_input(&mut self) {
        self.line.clear();
        self.lines.clear();
        self.raw.clear();
        self.literal_next = false;
    }

    /// One line into `buf` (the rest stays for the next read); Some(0) at
    /// end of file; None if no line is finished.
    pub fn take_line(&mut self, buf: &mut [u8]) -> Option<usize> {
        let mut line = self.lines.pop_front()?;
        let n = buf.len().min(line.len());
        buf[..n].copy_from_slice(&line[..n]);
        if n < line.len() {
            line.drain(..n);
            self.lines.push_front(line);
        }
        Some(n)
    }

    /// Non-canonical bytes into `buf`.
    pub fn take_raw(&mut self, buf: &mut [u8]) -> usize {
        let n = buf.len().min(self.raw.len());
        for (dst, src) in buf.iter_mut().zip(self.raw.drain(..n)) {
            *dst = src;
        }
        n
    }

    fn echo(&self, c: u8, out: &mut Vec<u8>) {
        if !self.lflag(ECHO) {
            return;
        }
        if self.lflag(ECHOCTL) && is_ctl(c) {
            out.extend_from_slice(&[b'^', c ^ 0x40]);
        } else {
            process_output(self.termios.c_oflag, &[c], out);
        }
    }

    /// Erases the last character of the line and, with ECHOE, its echo.
    fn erase_char(&mut self, out: &mut Vec<u8>) -> Option<u8> {
        let c = self.line.pop()?;
        if self.lflag(ECHO) && self.lflag(ECHOE) {
            let cols = if self.lflag(ECHOCTL) && is_ctl(c) {
                2
            } else {
                1
            };
            for _ in 0..cols {
                out.extend_from_slice(b"\x08 \x08");
            }
        }
        Some(c)
    }

    /// Handles one received byte: editing characters act on the line,
    /// others are queued for readers; echo goes to `out`. Returns the
    /// signal a signal character raises (ISIG).
    pub fn receive(&mut self, byte: u8, out: &mut Vec<u8>) -> Option<u32> {
        let iflag = self.termios.c_iflag;
        let cc = self.termios.c_cc;
        let mut c = if iflag & ISTRIP != 0 {
            byte & 0x7f
        } else {
            byte
        };
        if core::mem::take(&mut self.literal_next) {
            self.queue(c, out);
            return None;
        }
        if c == b'\r' {
            if iflag & IGNCR != 0 {
                return None;
            }
            if iflag & ICRNL != 0 {
                c = b'\n';
            }
        } else if c == b'\n' && iflag & INLCR != 0 {
            c = b'\r';
        }
        let is = |i: usize| c != 0 && c == cc[i];
        if self.lflag(ISIG) {
            let signo = if is(VINTR) {
                Some(SIGINT)
            } else if is(VQUIT) {
                Some(SIGQUIT)
            } else if is(VSUSP) {
                Some(SIGTSTP)
            } else {
                None
            };
            if let Some(signo) = signo {
                if !self.lflag(NOFLSH) {
                    self.flush_input();
                }
                self.echo(c, out);
                return Some(signo);
            }
        }
        // Flow control characters are consumed; output is never stopped.
        if iflag & IXON != 0 && (is(VSTART) || is(VSTOP)) {
            return None;
        }
        let extended = self.lflag(IEXTEN);
        if extended && is(VLNEXT) {
            self.literal_next = true;
            return None;
        }
        if !self.canonical() {
            self.queue(c, out);
            return None;
        }
        if is(VERASE) {
            if self.erase_char(out).is_some() && !self.lflag(ECHOE) {
                self.echo(c, out);
            }
        } else if is(VKILL) {
            self.kill_line(c, out);
        } else if extended && is(VWERASE) {
            while self.line.last().is_some_and(|b| !is_word(*b)) && self.erase_char(out).is_some() {
            }
            while self.line.last().is_some_and(|b| is_word(*b)) && self.erase_char(out).is_some() {}
        } else if extended && is(VREPRINT) {
            self.echo(c, out);
            process_output(self.termios.c_oflag, b"\n", out);
            for b in self.line.clone() {
                self.echo(b, out);
            }
        } else if is(VEOF) {
            // The line ends without a newline; an empty one reads as EOF.
            let line = core::mem::take(&mut self.line);
            self.lines.push_back(line);
        } else {
            self.queue(c, out);
        }
        None
    }

    /// VKILL: with ECHOK, ECHOKE and ECHOE the line is erased on screen,
    /// else the kill character is echoed (and a newline with ECHOK).
    fn kill_line(&mut self, c: u8, out: &mut Vec<u8>) {
        let visual =
            self.lflag(ECHO) && self.lflag(ECHOK) && self.lflag(ECHOKE) && self.lflag(ECHOE);
        if visual {
            while self.erase_char(out).is_some() {}
            return;
        }
        self.line.clear();
        self.echo(c, out);
        if self.lflag(ECHO) && self.lflag(ECHOK) {
            process_output(self.termios.c_oflag, b"\n", out);
        }
    }

    /// Queues an ordinary character: to the line (finishing it at a line
    /// end) in canonical mode, else for readers.
    fn queue(&mut self, c: u8, out: &mut Vec<u8>) {
        if self.buffered() >= MAX_INPUT {
            return;
        }
        if !self.canonical() {
            self.raw.push_back(c);
            self.echo(c, out);
            return;
        }
        let cc = self.termios.c_cc;
        let ends_line = c == b'\n' || (c != 0 && (c == cc[VEOL] || c == cc[VEOL2]));
        if !ends_line && self.line.len() >= MAX_INPUT - 1 {
            return;
        }
        self.line.push(c);
        if c == b'\n' && self.lflag(ECHONL) && !self.lflag(ECHO) {
            process_output(self.termios.c_oflag, b"\n", out);
        }
        self.echo(c, out);
        if ends_line {
            let line = core::mem::take(&mut self.line);
            self.lines.push_back(line);
        }
    }
}
