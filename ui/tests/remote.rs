//! The dashboard over a watched server (`provetop attach`): the header says where the link
//! stands and whether this viewer may change anything, lost events are "not received", and
//! quitting a viewer drops no job, so it does not ask.

mod common;

use common::{cpu_app, key, render, text};
use provetop_telemetry::control::Control;
use provetop_telemetry::record::Hole;
use provetop_telemetry::{Event, JobEvent, JobState};
use provetop_ui::app::{Link, RemoteStatus};
use provetop_ui::ratatui::crossterm::event::KeyCode;

fn remote(link: Link, control: bool) -> Option<RemoteStatus> {
    Some(RemoteStatus {
        addr: "rig7:9820".into(),
        link,
        control,
    })
}

#[test]
fn the_header_says_where_the_link_stands_and_who_may_change() {
    let mut app = cpu_app();
    app.ui.remote = remote(Link::Live, false);
    let screen = text(&render(&mut app, 160, 40));
    assert!(screen.contains("⇄ rig7:9820 · read-only"), "{screen}");
    app.ui.remote = remote(Link::Live, true);
    let screen = text(&render(&mut app, 160, 40));
    assert!(screen.contains("⇄ rig7:9820 · control"), "{screen}");
    app.ui.remote = remote(Link::CatchingUp, true);
    let screen = text(&render(&mut app, 160, 40));
    assert!(screen.contains("⇣ rig7:9820 · catching up"), "{screen}");
    app.ui.remote = remote(
        Link::Lost {
            why: "connection refused".into(),
            for_s: 12,
            retry_in_s: 4,
        },
        true,
    );
    // Narrow too: the loss is said before anything else that may not fit.
    for w in [160, 80] {
        let screen = text(&render(&mut app, w, 30));
        let top = screen.lines().next().unwrap_or_default();
        assert!(
            top.contains("⚠ server lost 12 s ago · retrying in 4 s"),
            "{w} columns: {top}"
        );
    }
}

#[test]
fn events_lost_on_the_way_are_not_received_not_unrecorded() {
    let mut app = cpu_app();
    let t = app.state.now;
    app.state.hole(&Hole {
        from: t / 2,
        to: t,
        samples: 1200,
        spans: 34,
        other: 0,
    });
    let screen = text(&render(&mut app, 160, 40));
    assert!(screen.contains("⚠ 1,234 not recorded"), "{screen}");
    app.ui.remote = remote(Link::Live, false);
    let screen = text(&render(&mut app, 160, 40));
    assert!(screen.contains("⚠ 1,234 not received"), "{screen}");
}

#[test]
fn a_viewer_quits_at_once_with_the_servers_jobs_in_flight() {
    let mut app = cpu_app();
    app.ui.remote = remote(Link::Live, true);
    let t = app.state.now;
    app.state.apply(&Event::Job(JobEvent {
        t,
        job: 900,
        partition: None,
        state: JobState::Submitted,
        detail: None,
        kind: None,
        name: None,
    }));
    // Its changes go to its source as a live dashboard's would (a replay refuses them).
    let sent = key(&mut app, KeyCode::Char('n'));
    assert!(
        matches!(sent.as_slice(), [Control::Submit { .. }]),
        "{sent:?}"
    );
    assert_eq!(key(&mut app, KeyCode::Char('q')), vec![Control::Quit]);
}

/// A served job goes by its request id in the jobs table and in what the keys say of it, as
/// the server's logs and AwaitProof name it; the engine's own jobs keep `#id`.
#[test]
fn a_served_job_goes_by_its_request_id() {
    let mut app = cpu_app();
    app.ui.remote = remote(Link::Live, true);
    let t = app.state.now;
    for (job, name) in [(900, Some("porep-1000-7")), (901, None)] {
        app.state.apply(&Event::Job(JobEvent {
            t,
            job,
            partition: None,
            state: JobState::Submitted,
            detail: Some("porep-32GiB · normal".into()),
            kind: Some("porep".into()),
            name: name.map(str::to_string),
        }));
    }
    key(&mut app, KeyCode::Char('2'));
    let screen = text(&render(&mut app, 160, 40));
    assert!(screen.contains(" porep-1000-7 "), "{screen}");
    assert!(!screen.contains("#900"), "{screen}");
    assert!(screen.contains(" #901 "), "{screen}");
    app.ui.job = Some(900);
    assert_eq!(
        key(&mut app, KeyCode::Char('x')),
        vec![Control::Cancel { job: 900 }]
    );
    let screen = text(&render(&mut app, 160, 40));
    assert!(screen.contains("cancelling job porep-1000-7"), "{screen}");
}
