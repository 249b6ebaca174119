//! `--stats`: where each member's time went (Germanium, Z3), its queries, Z3 resource units
//! and SMT-LIB bytes sent: a table after each file's report, or a `stats` field in the JSON
//! outputs (docs/cli.md).

use std::io::{self, Write};

use germanium_driver::MemberStats;
use serde::Serialize;

/// One verified member's statistics, as collected from the member events.
#[derive(Clone, Debug)]
pub struct MemberRow {
    pub member: String,
    pub kind: &'static str,
    pub stats: MemberStats,
}

/// The JSON shape of one member's statistics.
#[derive(Serialize)]
pub struct JsonStats<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    member: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<&'a str>,
    time_ms: f64,
    solver_ms: f64,
    germanium_ms: f64,
    solver_share: f64,
    queries: u64,
    resource_units: u64,
    smt_bytes: u64,
}

/// The `stats` field of a file's JSON line: every member, then the sum.
#[derive(Serialize)]
pub struct JsonFileStats<'a> {
    members: Vec<JsonStats<'a>>,
    total: JsonStats<'a>,
}

fn millis(d: std::time::Duration) -> f64 {
    (d.as_secs_f64() * 10_000.0).round() / 10.0
}

impl<'a> JsonStats<'a> {
    pub fn of(member: Option<(&'a str, &'a str)>, s: &MemberStats) -> JsonStats<'a> {
        JsonStats {
            member: member.map(|m| m.0),
            kind: member.map(|m| m.1),
            time_ms: millis(s.time),
            solver_ms: millis(s.solver_time),
            germanium_ms: millis(s.time.saturating_sub(s.solver_time)),
            solver_share: (s.solver_share() * 1000.0).round() / 1000.0,
            queries: s.queries,
            resource_units: s.resources,
            smt_bytes: s.bytes_sent,
        }
    }
}

/// The members' statistics and their sum.
pub fn file_stats(rows: &[MemberRow]) -> JsonFileStats<'_> {
    JsonFileStats {
        members: rows
            .iter()
            .map(|r| JsonStats::of(Some((&r.member, r.kind)), &r.stats))
            .collect(),
        total: JsonStats::of(None, &total(rows)),
    }
}

fn total(rows: &[MemberRow]) -> MemberStats {
    let mut sum = MemberStats::default();
    for row in rows {
        sum += row.stats;
    }
    sum
}

/// The human table: members by time, slowest first, then the sum. Member times add up
/// over worker threads, so with several workers the sum exceeds the file's wall time.
pub fn write_table(out: &mut dyn Write, rows: &[MemberRow]) -> io::Result<()> {
    let mut sorted: Vec<&MemberRow> = rows.iter().collect();
    sorted.sort_by(|a, b| {
        b.stats
            .time
            .cmp(&a.stats.time)
            .then(a.member.cmp(&b.member))
    });
    let width = sorted
        .iter()
        .map(|r| r.member.len())
        .max()
        .unwrap_or(0)
        .clamp(6, 48);
    writeln!(
        out,
        "  {:<width$} {:>10} {:>10} {:>6} {:>8} {:>14} {:>11}",
        "member", "time ms", "in Z3 ms", "Z3 %", "queries", "resource units", "SMT bytes"
    )?;
    let line = |out: &mut dyn Write, name: &str, s: &MemberStats| {
        writeln!(
            out,
            "  {:<width$} {:>10.1} {:>10.1} {:>6.1} {:>8} {:>14} {:>11}",
            name,
            millis(s.time),
            millis(s.solver_time),
            s.solver_share() * 100.0,
            s.queries,
            s.resources,
            s.bytes_sent
        )
    };
    for row in &sorted {
        line(out, &row.member, &row.stats)?;
    }
    line(out, "(all members)", &total(rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn row(name: &str, ms: u64, z3: u64) -> MemberRow {
        MemberRow {
            member: name.into(),
            kind: "method",
            stats: MemberStats {
                time: Duration::from_millis(ms),
                solver_time: Duration::from_millis(z3),
                queries: 3,
                resources: 1000,
                bytes_sent: 200,
            },
        }
    }

    #[test]
    fn the_table_lists_the_slowest_member_first_and_the_sum_last() {
        let mut out = Vec::new();
        write_table(&mut out, &[row("fast", 10, 5), row("slow", 30, 27)]).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[1].trim_start().starts_with("slow"), "{text}");
        assert!(lines[2].trim_start().starts_with("fast"), "{text}");
        assert!(
            lines[3].contains("(all members)") && lines[3].contains("40.0"),
            "{text}"
        );
        assert!(
            lines[3].contains("80.0") && lines[3].contains("2000"),
            "{text}"
        );
    }

    #[test]
    fn the_json_sum_adds_the_members_up() {
        let rows = [row("a", 10, 5), row("b", 30, 27)];
        let value = serde_json::to_value(file_stats(&rows)).unwrap();
        assert_eq!(value["total"]["time_ms"], 40.0);
        assert_eq!(value["total"]["solver_ms"], 32.0);
        assert_eq!(value["total"]["germanium_ms"], 8.0);
        assert_eq!(value["total"]["queries"], 6);
        assert_eq!(value["members"][1]["member"], "b");
        assert_eq!(value["members"][1]["solver_share"], 0.9);
    }
}
