//! Warnings and errors the source reports, and the user's marks.

use provetop_telemetry::{LogLine, Mark, Nanos};

use super::Ring;

#[derive(Clone, Debug, PartialEq)]
pub enum LogEntry {
    Log(LogLine),
    Mark(Mark),
}

impl LogEntry {
    pub fn t(&self) -> Nanos {
        match self {
            LogEntry::Log(l) => l.t,
            LogEntry::Mark(m) => m.t,
        }
    }
}

pub struct Logs {
    pub lines: Ring<LogLine>,
    pub marks: Ring<Mark>,
    /// Warnings and errors seen, including those that fell out of the ring.
    pub warnings: u64,
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
    pub fn log(&mut self, l: LogLine) {
        match l.level.to_ascii_lowercase().as_str() {
            "error" => self.errors += 1,
            "warn" | "warning" => self.warnings += 1,
            _ => {}
        }
        self.lines.insert_sorted(l, |l| l.t);
    }

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
