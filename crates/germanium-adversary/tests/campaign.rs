//! A short seeded campaign in every test run: generated programs and mutants of Viper's test
//! suite, judged by both back ends and concrete runs. No member may be verified by a back
//! end while a concrete run fails it. The campaign is bounded by a count of programs, not by
//! time, so every run tries the same programs.

use std::path::Path;
use std::time::Duration;

use germanium_adversary::campaign::{run, summary, Settings};
use germanium_adversary::oracles::OracleSettings;

#[test]
fn a_short_campaign_finds_no_unsound_verdict() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    let settings = Settings {
        seed: 54,
        programs: Some(60),
        budget: None,
        mutate: vec![shared.join("viper-tests/all/basic")],
        out: None,
        oracles: OracleSettings {
            timeout: Duration::from_secs(2),
            concrete_runs: 200,
            silicon: None,
        },
        minimise_tries: 40,
    };
    let report = run(&settings, &mut |_| {});
    let text = summary(&report);
    assert!(report.unsound.is_empty(), "{text}");
    // The oracles were asked something: members verified, failed, and failing runs found.
    assert!(report.mutants > 0 && report.generated > 0, "{text}");
    assert!(report.verified_by_both > 50, "{text}");
    assert!(report.failed_by_both > 20, "{text}");
    assert!(report.concrete_failures > 20, "{text}");
}
