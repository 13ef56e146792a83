//! The server's stdio framing. Written here rather than taken from `lsp-server`'s own stdio
//! transport, which ends the session at the first malformed frame and allocates whatever
//! `Content-Length` a header claims: a frame that cannot be read gets a JSON-RPC error and the
//! session goes on, and a body is read only up to [`MAX_BODY`].

use std::io::{self, BufRead, Read, Write};
use std::sync::{Arc, Mutex};
use std::thread;

use lsp_server::{Connection, Message};

/// The largest message body read (a rule file of 16 MiB, JSON-escaped, fits).
pub const MAX_BODY: usize = 64 << 20;

/// A connection over stdin/stdout, and the threads that carry it.
pub fn stdio() -> (Connection, Threads) {
    let (server, client) = Connection::memory();
    let out = Arc::new(Mutex::new(io::stdout()));
    let writer_out = Arc::clone(&out);
    let receiver = client.receiver;
    let writer = thread::spawn(move || -> io::Result<()> {
        for message in receiver {
            let mut out = writer_out.lock().unwrap_or_else(|e| e.into_inner());
            message.write(&mut *out)?;
        }
        Ok(())
    });
    let sender = client.sender;
    let reader = thread::spawn(move || -> io::Result<()> {
        let stdin = io::stdin();
        let mut input = stdin.lock();
        loop {
            match read_frame(&mut input)? {
                Frame::End => return Ok(()),
                Frame::Message(message) => {
                    if sender.send(message).is_err() {
                        return Ok(());
                    }
                }
                Frame::Bad(why) => {
                    let mut out = out.lock().unwrap_or_else(|e| e.into_inner());
                    write_error(&mut *out, &why)?;
                }
            }
        }
    });
    (server, Threads { reader, writer })
}

/// The transport's threads.
pub struct Threads {
    reader: thread::JoinHandle<io::Result<()>>,
    writer: thread::JoinHandle<io::Result<()>>,
}

impl Threads {
    /// Waits for the writer to flush what the server sent (the reader ends with stdin).
    pub fn join(self) -> io::Result<()> {
        drop(self.reader);
        self.writer
            .join()
            .map_err(|_| io::Error::other("the writer thread panicked"))?
    }
}

/// What one frame of input held.
#[derive(Debug)]
pub enum Frame {
    /// A message.
    Message(Message),
    /// A frame that is not one: why (answered with a JSON-RPC parse error).
    Bad(String),
    /// The end of input.
    End,
}

/// Reads one frame: headers up to a blank line, then `Content-Length` bytes of JSON.
pub fn read_frame(input: &mut impl BufRead) -> io::Result<Frame> {
    let mut length: Option<Result<usize, String>> = None;
    let mut line = Vec::new();
    loop {
        line.clear();
        // A header line is short: a longer one is not a header.
        let read = input.by_ref().take(4096).read_until(b'\n', &mut line)?;
        if read == 0 {
            return Ok(Frame::End);
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if length.is_none() {
                continue; // blank lines between frames
            }
            break;
        }
        if let Some((name, value)) = text.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = Some(
                value
                    .trim()
                    .parse::<usize>()
                    .map_err(|_| format!("Content-Length `{}` is not a number", value.trim())),
            );
        } else if !text.contains(':') {
            return Ok(Frame::Bad(format!(
                "`{}` is not a header line",
                text.chars().take(80).collect::<String>()
            )));
        }
    }
    let length = match length.expect("set before the blank line") {
        Ok(n) => n,
        Err(why) => return Ok(Frame::Bad(why)),
    };
    if length > MAX_BODY {
        // The body is not read: what follows is searched for the next frame's header.
        return Ok(Frame::Bad(format!(
            "Content-Length {length} is over the {MAX_BODY} bytes a message may have"
        )));
    }
    let mut body = vec![0; length];
    input.read_exact(&mut body)?;
    let Ok(text) = std::str::from_utf8(&body) else {
        return Ok(Frame::Bad("the message body is not UTF-8".into()));
    };
    Ok(match serde_json::from_str::<Message>(text) {
        Ok(message) => Frame::Message(message),
        Err(e) => Frame::Bad(format!("the message body is not a JSON-RPC message: {e}")),
    })
}

/// A JSON-RPC "parse error" response (id `null`), framed.
fn write_error(out: &mut impl Write, why: &str) -> io::Result<()> {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32700, "message": why},
    })
    .to_string();
    write!(out, "Content-Length: {}\r\n\r\n{body}", body.len())?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &str) -> Vec<String> {
        let mut reader = io::BufReader::new(input.as_bytes());
        let mut out = Vec::new();
        loop {
            match read_frame(&mut reader) {
                Ok(Frame::End) | Err(_) => return out,
                Ok(Frame::Message(_)) => out.push("message".into()),
                Ok(Frame::Bad(why)) => out.push(why),
            }
        }
    }

    #[test]
    fn bad_frames_are_said_and_reading_goes_on() {
        let good = r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#;
        let frame = |body: &str| format!("Content-Length: {}\r\n\r\n{body}", body.len());
        let input = [
            frame("{not json"),
            frame(good),
            "Content-Length: 99999999999999\r\n\r\n".to_string(),
            "Content-Length: x\r\n\r\n".to_string(),
            frame(good),
        ]
        .concat();
        let seen = frames(&input);
        assert!(seen[0].contains("not a JSON-RPC message"), "{seen:?}");
        assert_eq!(seen[1], "message");
        assert!(seen[2].contains("over the"), "{seen:?}");
        assert!(seen[3].contains("not a number"), "{seen:?}");
        assert_eq!(seen.last().map(String::as_str), Some("message"), "{seen:?}");
    }
}
