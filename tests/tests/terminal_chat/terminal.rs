//! A `vigil-controller chat` process in a real pseudo-terminal: what it writes is
//! collected (ANSI escapes removed) by a reader thread; the test types lines and Ctrl-C
//! (`\x03`, which the terminal turns into SIGINT) and waits for text to appear.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

/// Hang guard when waiting for the terminal (not a timing assertion).
pub const WAIT: Duration = Duration::from_secs(60);

/// The chat in a pseudo-terminal; killed when dropped.
pub struct Terminal {
    child: Box<dyn Child + Send + Sync>,
    writer: Box<dyn Write + Send>,
    output: Arc<Mutex<Vec<u8>>>,
    _master: Box<dyn MasterPty + Send>,
}

impl Terminal {
    /// Starts `program args…` with `env` set, in a new 200×50 terminal.
    pub fn spawn(program: &std::path::Path, args: &[String], env: &[(&str, &str)]) -> Terminal {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 50,
                cols: 200,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pseudo-terminal");
        let mut command = CommandBuilder::new(program);
        command.args(args);
        command.env_remove("NO_COLOR");
        for (key, value) in env {
            command.env(key, value);
        }
        let child = pair.slave.spawn_command(command).expect("spawn in the pty");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("pty reader");
        let writer = pair.master.take_writer().expect("pty writer");
        let output = Arc::new(Mutex::new(Vec::new()));
        let sink = output.clone();
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n) = reader.read(&mut buffer) {
                if n == 0 {
                    break;
                }
                sink.lock().unwrap().extend_from_slice(&buffer[..n]);
            }
        });
        Terminal {
            child,
            writer,
            output,
            _master: pair.master,
        }
    }

    /// Everything shown so far, without ANSI escapes and carriage returns.
    pub fn text(&self) -> String {
        strip_ansi(&String::from_utf8_lossy(&self.output.lock().unwrap())).replace('\r', "")
    }

    /// Whether the output had colour escapes.
    pub fn coloured(&self) -> bool {
        String::from_utf8_lossy(&self.output.lock().unwrap()).contains("\x1b[")
    }

    /// Waits until `needle` has appeared `count` times; the text then.
    pub async fn wait_for_n(&self, needle: &str, count: usize) -> String {
        let start = Instant::now();
        loop {
            let text = self.text();
            if text.matches(needle).count() >= count {
                return text;
            }
            assert!(
                start.elapsed() < WAIT,
                "{needle:?} did not appear {count} time(s) within {WAIT:?}; the terminal shows:\n{text}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits until `needle` appears; the text then.
    pub async fn wait_for(&self, needle: &str) -> String {
        self.wait_for_n(needle, 1).await
    }

    /// Types `line` and Enter.
    pub fn type_line(&mut self, line: &str) {
        self.writer
            .write_all(format!("{line}\r").as_bytes())
            .and_then(|()| self.writer.flush())
            .expect("type into the pty");
    }

    /// Presses Ctrl-C.
    pub fn ctrl_c(&mut self) {
        self.writer
            .write_all(b"\x03")
            .and_then(|()| self.writer.flush())
            .expect("type Ctrl-C");
    }

    /// Waits for the process to end; its exit code.
    pub async fn exit_code(&mut self) -> u32 {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("wait for the chat") {
                return status.exit_code();
            }
            assert!(
                start.elapsed() < WAIT,
                "the chat did not exit within {WAIT:?}; the terminal shows:\n{}",
                self.text()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `text` without CSI escape sequences (`ESC [ … final`).
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' && chars.peek() == Some(&'[') {
            chars.next();
            for c in chars.by_ref() {
                if ('\x40'..='\x7e').contains(&c) {
                    break;
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}
