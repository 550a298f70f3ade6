//! One frame of the full dashboard (the timeline view with its side panels) at 200×60 over
//! 10 minutes of history: two GPUs with kernel-level spans, workers, pools and samples at
//! 10 Hz. Target: at most 5 ms a frame.

use criterion::{criterion_group, criterion_main, Criterion};
use provetop_telemetry::fixture::{self, Spec};
use provetop_ui::app::{View, ZOOMS};
use provetop_ui::ratatui::backend::TestBackend;
use provetop_ui::ratatui::Terminal;
use provetop_ui::{App, AppOptions, State, UiSettings};

fn ten_minutes() -> App {
    let spec = Spec {
        seconds: 600,
        kernels: 8,
        sample_hz: 10,
        ..Spec::gpus()
    };
    let mut app = App::new(
        fixture::session(&spec),
        UiSettings::default(),
        AppOptions::default(),
    );
    app.state = State::replayed(fixture::session(&spec), &fixture::events(&spec), spec.end());
    app
}

fn render(c: &mut Criterion) {
    let mut app = ten_minutes();
    let spans: usize = app
        .state
        .timelines
        .lanes()
        .iter()
        .filter_map(|l| app.state.timelines.lane(*l).map(|l| l.len()))
        .sum();
    eprintln!(
        "history: {spans} spans over {} s",
        app.state.now / 1_000_000_000
    );
    let mut term = Terminal::new(TestBackend::new(200, 60)).unwrap();
    for (name, zoom) in [
        ("frame_200x60_30s_window", 4),
        ("frame_200x60_10min_window", ZOOMS.len() - 1),
    ] {
        app.ui.zoom = zoom;
        c.bench_function(name, |b| {
            b.iter(|| {
                term.draw(|f| app.draw(f)).unwrap();
            })
        });
    }
    app.ui.zoom = 4;
    for (name, key) in [
        ("frame_200x60_pipeline", View::Pipeline),
        ("frame_200x60_metrics", View::Metrics),
    ] {
        app.ui.focus = key.first_pane();
        c.bench_function(name, |b| {
            b.iter(|| {
                term.draw(|f| app.draw(f)).unwrap();
            })
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(std::time::Duration::from_secs(3));
    targets = render
}
criterion_main!(benches);
