//! The interactive layer: boots into busybox sh on the serial console and
//! drives it like a person would (an expect-style script): a pipeline over
//! /proc, redirections, a background job stopped with ^Z and resumed with
//! `fg`, ^C of a foreground `sleep`, and `trap` in a script.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use crate::initramfs;
use crate::qemu;
use crate::test::{BootEnv, Reporter};
use crate::util::target_dir;

const PROMPT: &str = "# ";
const STEP_TIMEOUT: Duration = Duration::from_secs(30);

/// A shell on the guest's serial console.
struct Console {
    child: Child,
    input: std::process::ChildStdin,
    rx: Receiver<Vec<u8>>,
    /// Everything received and not yet consumed by `expect`.
    pending: String,
    /// Everything received, for the log.
    transcript: String,
    /// Output markers used so far.
    marks: u32,
}

impl Console {
    fn start(kernel: &Path, initrd: &Path) -> Result<Console, String> {
        let mut child = Command::new(qemu::QEMU)
            .args(qemu::qemu_args(kernel, initrd, &qemu::cmdline(&[])))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start QEMU: {e}"))?;
        let input = child.stdin.take().ok_or("no QEMU stdin")?;
        let mut out = child.stdout.take().ok_or("no QEMU stdout")?;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = out.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        Ok(Console {
            child,
            input,
            rx,
            pending: String::new(),
            transcript: String::new(),
            marks: 0,
        })
    }

    fn send(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.input
            .write_all(bytes)
            .and_then(|_| self.input.flush())
            .map_err(|e| format!("cannot write to QEMU: {e}"))
    }

    fn line(&mut self, cmd: &str) -> Result<(), String> {
        self.send(format!("{cmd}\n").as_bytes())
    }

    /// Waits until `needle` appears; returns what came before it.
    fn expect(&mut self, needle: &str) -> Result<String, String> {
        let deadline = Instant::now() + STEP_TIMEOUT;
        loop {
            if let Some(i) = self.pending.find(needle) {
                let before = self.pending[..i].to_string();
                self.pending.drain(..i + needle.len());
                return Ok(before);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(format!(
                    "timed out waiting for {needle:?}; last output: {:?}",
                    tail(&self.pending, 300)
                ));
            }
            match self.rx.recv_timeout(left.min(Duration::from_millis(200))) {
                Ok(chunk) => {
                    let text = String::from_utf8_lossy(&chunk).replace('\r', "");
                    self.transcript.push_str(&text);
                    self.pending.push_str(&text);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(format!(
                        "QEMU exited while waiting for {needle:?}: {:?}",
                        tail(&self.pending, 300)
                    ));
                }
            }
        }
    }

    /// Runs `cmd` at the prompt and returns its output. The output is
    /// framed by markers whose echo differs from their output
    /// (`$((0))` expands to 0), so a long, wrapped echo of the command
    /// line cannot be mistaken for output.
    fn run(&mut self, cmd: &str) -> Result<String, String> {
        self.marks += 1;
        let n = self.marks;
        // `$?` is saved and restored around the first marker so `cmd` can
        // look at the previous command's status.
        self.line(&format!(
            "s=$?; echo @@$((0)){n}@@; (exit $s); {cmd}; echo @@$((0)){n}.@@"
        ))?;
        self.expect(&format!("@@0{n}@@\n"))?;
        let out = self.expect(&format!("@@0{n}.@@"))?;
        self.expect(PROMPT)?;
        Ok(out.trim_end_matches('\n').to_string())
    }

    fn stop(mut self) -> String {
        let _ = self.line("exit 0");
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        while let Ok(chunk) = self.rx.try_recv() {
            self.transcript
                .push_str(&String::from_utf8_lossy(&chunk).replace('\r', ""));
        }
        self.transcript
    }
}

fn tail(s: &str, n: usize) -> String {
    let chars: Vec<char> = s.chars().collect();
    chars[chars.len().saturating_sub(n)..].iter().collect()
}

type Step = fn(&mut Console) -> Result<(), String>;

fn proc_pipeline(c: &mut Console) -> Result<(), String> {
    // The count differs between systems (self, thread-self, mounts ->
    // self/mounts ...), so compare the pipeline with a count made without
    // pipes, and make sure /proc/self is among the entries.
    let piped = c.run("ls -l /proc | grep self | wc -l")?;
    let direct = c.run("n=0; for f in /proc/*; do case \"$f $(readlink $f)\" in *self*) n=$((n+1));; esac; done; echo $n")?;
    // A redirection is opened by the shell itself, so this is its own stat.
    let self_link = c.run("read p rest < /proc/self/stat; echo $p")?;
    let pid = c.run("echo $$")?;
    if piped.trim() != direct.trim() || piped.trim().parse::<u32>().map_or(true, |n| n == 0) {
        return Err(format!(
            "pipeline counted {piped:?}, a loop over /proc counted {direct:?}"
        ));
    }
    if self_link.trim() != pid.trim() {
        return Err(format!(
            "/proc/self/stat names pid {self_link:?} in the shell whose pid is {pid:?}"
        ));
    }
    Ok(())
}

fn redirections(c: &mut Console) -> Result<(), String> {
    let out = c.run("echo first > /tmp/r; echo second >> /tmp/r; cat < /tmp/r 2>/dev/null | tr a-z A-Z; ls /nonexistent 2>/dev/null || echo status=$?")?;
    let want = "FIRST\nSECOND\nstatus=1";
    if out.trim() == want {
        Ok(())
    } else {
        Err(format!("expected {want:?}, got {:?}", out.trim()))
    }
}

fn stop_and_fg(c: &mut Console) -> Result<(), String> {
    c.line("sleep 30")?;
    std::thread::sleep(Duration::from_millis(500));
    c.send(&[0x1a])?; // ^Z
    c.expect("Stopped")?;
    c.expect(PROMPT)?;
    let jobs = c.run("jobs")?;
    if !jobs.contains("sleep 30") {
        return Err(format!("jobs does not list the stopped sleep: {jobs:?}"));
    }
    c.line("fg")?;
    std::thread::sleep(Duration::from_millis(500));
    c.send(&[0x03])?; // ^C ends the resumed sleep
    c.expect(PROMPT)?;
    let status = c.run("echo $?")?;
    if status.trim() == "130" {
        Ok(())
    } else {
        Err(format!(
            "fg'ed sleep ended with {:?}, expected 130",
            status.trim()
        ))
    }
}

fn ctrl_c_foreground(c: &mut Console) -> Result<(), String> {
    c.line("sleep 20; echo not-reached")?;
    std::thread::sleep(Duration::from_millis(500));
    c.send(&[0x03])?;
    let before = c.expect(PROMPT)?;
    // The echo of the command line ends in "not-reached"; output would be
    // a line of its own.
    if before.lines().any(|l| l.trim() == "not-reached") {
        return Err("the command after the interrupted sleep ran".into());
    }
    let status = c.run("echo $?")?;
    if status.trim() == "130" {
        Ok(())
    } else {
        Err(format!("exit status {:?}, expected 130", status.trim()))
    }
}

fn trap_in_script(c: &mut Console) -> Result<(), String> {
    c.run("printf '%s\\n' 'trap \"echo caught USR1\" USR1' 'kill -USR1 $$' 'echo after' 'trap \"echo bye\" EXIT' > /tmp/t.sh")?;
    let out = c.run("sh /tmp/t.sh")?;
    let want = "caught USR1\nafter\nbye";
    if out.trim() == want {
        Ok(())
    } else {
        Err(format!("expected {want:?}, got {:?}", out.trim()))
    }
}

fn background_and_kill(c: &mut Console) -> Result<(), String> {
    c.line("sleep 30 &")?;
    c.expect(PROMPT)?;
    let jobs = c.run("jobs")?;
    if !(jobs.contains("Running") && jobs.contains("sleep 30")) {
        return Err(format!("jobs does not show the running sleep: {jobs:?}"));
    }
    let status = c.run("kill %1; wait %1; echo $?")?;
    if status.lines().last().map(str::trim) != Some("143") {
        return Err(format!("killed job's wait gave {status:?}, expected 143"));
    }
    let jobs = c.run("jobs")?;
    if jobs.contains("sleep 30") {
        return Err(format!("the killed job is still listed: {jobs:?}"));
    }
    Ok(())
}

fn ctrl_z_then_bg(c: &mut Console) -> Result<(), String> {
    c.line("sleep 30")?;
    std::thread::sleep(Duration::from_millis(500));
    c.send(&[0x1a])?; // ^Z
    c.expect("Stopped")?;
    c.expect(PROMPT)?;
    c.line("bg")?;
    c.expect(PROMPT)?;
    let jobs = c.run("jobs")?;
    if !(jobs.contains("Running") && jobs.contains("sleep 30")) {
        return Err(format!("after bg, jobs shows {jobs:?}"));
    }
    // The resumed job really runs: its /proc state is sleeping, not stopped.
    let state = c.run("for p in $(pidof sleep); do cut -d' ' -f3 /proc/$p/stat; done")?;
    if !state.lines().any(|l| l.trim() == "S") || state.contains('T') {
        return Err(format!("state of the resumed sleep: {state:?}"));
    }
    let status = c.run("kill %1; wait %1; echo $?")?;
    if status.lines().last().map(str::trim) != Some("143") {
        return Err(format!("killed job's wait gave {status:?}, expected 143"));
    }
    Ok(())
}

fn ctrl_backslash_quits(c: &mut Console) -> Result<(), String> {
    c.line("sleep 20")?;
    std::thread::sleep(Duration::from_millis(500));
    c.send(&[0x1c])?; // ^\
    c.expect(PROMPT)?;
    let status = c.run("echo $?")?;
    if status.trim() == "131" {
        Ok(())
    } else {
        Err(format!("exit status {:?}, expected 131 (SIGQUIT)", status.trim()))
    }
}

fn ctrl_d_ends_input(c: &mut Console) -> Result<(), String> {
    c.line("cat > /tmp/typed; echo status=$?")?;
    std::thread::sleep(Duration::from_millis(300));
    c.send(b"one\ntwo")?;
    c.send(&[0x04])?; // ^D with "two" pending: sends it without a newline
    c.send(&[0x04])?; // ^D at the start of a line: end of file
    c.expect("status=0")?;
    c.expect(PROMPT)?;
    let typed = c.run("od -c /tmp/typed | head -1")?;
    if typed.contains("o   n   e  \\n   t   w   o") {
        Ok(())
    } else {
        Err(format!("cat stored {typed:?}, expected \"one\\ntwo\""))
    }
}

const STEPS: &[(&str, Step)] = &[
    ("proc_pipeline", proc_pipeline),
    ("redirections", redirections),
    ("ctrl_z_then_fg", stop_and_fg),
    ("ctrl_c_foreground", ctrl_c_foreground),
    ("trap_in_script", trap_in_script),
    ("background_jobs_and_kill", background_and_kill),
    ("ctrl_z_then_bg", ctrl_z_then_bg),
    ("ctrl_backslash_quits", ctrl_backslash_quits),
    ("ctrl_d_ends_input", ctrl_d_ends_input),
];

pub fn run(env: Option<&BootEnv>, r: &mut Reporter) {
    let Some(env) = env else {
        for (name, _) in STEPS {
            r.skip(&format!("interactive:{name}"), "the kernel did not build");
        }
        return;
    };
    let initrd = target_dir(&env.root).join("initramfs-interactive.cpio");
    let spec = initramfs::Spec {
        user: env.user.as_ref(),
        adds: &[],
        argv: None,
    };
    let started =
        initramfs::write(&spec, &initrd).and_then(|_| Console::start(&env.kernel, &initrd));
    let mut console = match started {
        Ok(c) => c,
        Err(e) => {
            for (name, _) in STEPS {
                r.fail(&format!("interactive:{name}"), e.clone());
            }
            return;
        }
    };
    eprintln!("xtask: interactive session on the serial console");
    let ready = console.expect(PROMPT);
    for (name, step) in STEPS {
        let result = ready.clone().map(|_| ()).and_then(|_| step(&mut console));
        match result {
            Ok(()) => r.pass(&format!("interactive:{name}")),
            Err(e) => {
                r.fail(&format!("interactive:{name}"), e);
                // Get back to a clean prompt for the next step.
                let _ = console.send(&[0x03]);
                let _ = console.line("");
                let _ = console.expect(PROMPT);
            }
        }
    }
    let transcript = console.stop();
    let _ = std::fs::create_dir_all(env.log_dir());
    let _ = std::fs::write(env.log_dir().join("interactive.log"), transcript);
}
