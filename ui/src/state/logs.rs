//! Warnings and errors the source reports, and the user's marks.

use provetop_telemetry::{LogLine, Mark, Nanos};

use super::Ring;

/// One line of the log view: a log line or a mark.
#[derive(Clone, Debug, PartialEq)]
pub enum LogEntry {
    /// A line the source logged.
    Log(LogLine),
    /// A mark the user or the source set.
    Mark(Mark),
}

impl LogEntry {
    /// Session time of the entry (nanoseconds).
    pub fn t(&self) -> Nanos {
        match self {
            LogEntry::Log(l) => l.t,
            LogEntry::Mark(m) => m.t,
        }
    }
}

/// The source's log lines and the marks, each kept in time order.
pub struct Logs {
    /// Log lines in time order, the oldest dropped past 2000.
    pub lines: Ring<LogLine>,
    /// Marks in time order, the oldest dropped past 1000.
    pub marks: Ring<Mark>,
    /// Warnings and errors seen, including those that fell out of the ring.
    pub warnings: u64,
    /// Errors seen, including those that fell out of the ring.
    pub errors: u64,
}

impl Default for Logs {
    fn default() -> Self {
        Logs {
            lines: Ring::new(2000),
            marks: Ring::new(1000),
            warnings: 0,
            errors: 0,
        }
    }
}

impl Logs {
    /// Keeps a log line in time order, counting it if it is a warning or an error.
    pub fn log(&mut self, l: LogLine) {
        match l.level.to_ascii_lowercase().as_str() {
            "error" => self.errors += 1,
            "warn" | "warning" => self.warnings += 1,
            _ => {}
        }
        self.lines.insert_sorted(l, |l| l.t);
    }

    /// Keeps a mark in time order.
    pub fn mark(&mut self, m: Mark) {
        self.marks.insert_sorted(m, |m| m.t);
    }

    /// Log lines and marks merged in time order, oldest first.
    pub fn entries(&self) -> Vec<LogEntry> {
        let mut v: Vec<LogEntry> = self
            .lines
            .iter()
            .cloned()
            .map(LogEntry::Log)
            .chain(self.marks.iter().cloned().map(LogEntry::Mark))
            .collect();
        v.sort_by_key(LogEntry::t);
        v
    }
}
