//! The search loop: jobs kept flowing, each step's change applied live, its window measured,
//! and the change kept or set back.

use super::*;

/// What the search loop hands back.
pub(super) struct Driven {
    pub(super) start: Nanos,
    pub(super) end: Nanos,
    pub(super) finished: u64,
    pub(super) verified: u64,
    /// `job 3 partition 0: …` for each partition that failed.
    pub(super) failed: Vec<String>,
    /// Jobs cancelled by a stop.
    pub(super) unfinished: u64,
    /// A signal stopped the search.
    pub(super) stopped: bool,
    /// Why submitting ended: `budget`, `converged`, `signal`, `failed proof`.
    pub(super) ended: &'static str,
}

/// The jobs, the steps and the budget, until the budget is spent (and the jobs in flight have
/// finished), the search has nothing left to try, a proof fails or a signal comes.
pub(super) fn drive(session: &Session, search: &mut Search, budget: TuneBudget) -> Result<Driven> {
    let engine = &session.engine;
    let plan = &session.plan;
    let stop = run::stop_flag()?;
    let events = engine.bus().subscribe(1 << 20);
    let mut report = ReportBuilder::default();
    let spec = JobSpec {
        workload: plan.workload.clone(),
        partitions: plan.partitions,
        seed: plan.seed,
        priority: provetop_engine::pipeline::Priority::Normal,
        name: None,
    };
    let p = plan.partitions as u64;
    let began = Instant::now();
    let start = engine.clock().now();
    let mut progress = Progress::new(budget);
    let mut open: BTreeSet<u64> = BTreeSet::new();
    let mut concurrency = plan.concurrency;
    let (mut submitted, mut finished, mut verified) = (0u64, 0u64, 0u64);
    let mut failed = vec![];
    let mut ended: Option<&'static str> = None;
    let mut stopped = false;
    // Finished partitions the running step's window counts; None until it can be planned.
    let mut target: Option<u64> = None;
    engine.mark("tune: start");
    search.begin_start([]);
    loop {
        let budget_open = match budget {
            TuneBudget::Proofs(n) => submitted < n,
            TuneBudget::Time(_) => true,
        };
        while ended.is_none() && budget_open && (open.len() as u64) < concurrency {
            open.insert(engine.submit(spec.clone())?);
            submitted += p;
        }
        if ended.is_none() && !budget_open {
            ended = Some("budget");
        }
        if ended.is_some() && open.is_empty() {
            break;
        }
        if stop.load(Ordering::SeqCst) {
            stopped = true;
            ended = Some("signal");
            break;
        }
        if !failed.is_empty() {
            ended = Some("failed proof");
            break;
        }
        select! {
            recv(engine.outcomes()) -> o => match o.context("the engine stopped")? {
                Outcome::Partition(r) => {
                    finished += 1;
                    let rec = &r.record;
                    match rec.verified {
                        true => verified += 1,
                        false => failed.push(format!(
                            "job {} partition {}: proof FAILED: {}",
                            rec.job,
                            rec.partition,
                            rec.error.as_deref().unwrap_or("did not verify")
                        )),
                    }
                    search.partition(rec.t, rec.job);
                    report.add_proof(rec.clone());
                }
                Outcome::JobDone { job, .. } => {
                    open.remove(&job);
                    search.job_done(job, engine.clock().now());
                }
            },
            recv(events.rx) -> e => if let Ok(e) = e { run::observe(&mut report, &e) },
            default(Duration::from_millis(100)) => {}
        }
        for e in events.rx.try_iter().take(4096) {
            run::observe(&mut report, &e);
        }
        let in_flight = concurrency * p;
        let rate = search.rate_hint();
        let elapsed = began.elapsed().as_secs_f64();
        // Partitions the budget still allows, at the rate measured so far.
        let parts_left = match (budget, rate) {
            (TuneBudget::Proofs(n), _) => Some(n.saturating_sub(finished) as f64),
            (TuneBudget::Time(d), Some(r)) => Some((d.as_secs_f64() - elapsed).max(0.0) * r),
            (TuneBudget::Time(_), None) => None,
        };
        if let (TuneBudget::Time(d), None) = (budget, ended) {
            // Stop submitting when what is in flight will take what time is left.
            let drain = rate.map_or(0.0, |r| in_flight as f64 / r.max(1e-9));
            if elapsed + drain >= d.as_secs_f64() {
                ended = Some("budget");
            }
        }
        if target.is_none() {
            target = parts_left.map(|left| {
                // The start is the reference every ratio divides by: it gets a larger share.
                search::window_target(left, 4, in_flight).unwrap_or(MIN_WINDOW)
            });
        }
        let counted = search.progress().map_or(0, |(n, _)| n);
        if target.is_some_and(|t| counted >= t) {
            if let Some(back) = search.conclude(true) {
                set_back(engine, &mut concurrency, &back);
            }
            if let Some(step) = search.steps.last() {
                progress.step(step);
            }
            target = None;
            if ended.is_none() {
                let next = next_step(
                    session,
                    search,
                    &report,
                    &mut concurrency,
                    parts_left,
                    in_flight,
                    &open,
                );
                match next {
                    Ok(t) => target = Some(t),
                    Err(why) => ended = Some(why),
                }
            }
        }
        progress.draw(search, finished, elapsed, target);
    }
    let end = engine.clock().now();
    let unfinished = open.len() as u64;
    for job in &open {
        engine.cancel(*job);
    }
    if search.progress().is_some() {
        if let Some(back) = search.conclude(false) {
            set_back(engine, &mut concurrency, &back);
        }
        if let Some(step) = search.steps.last() {
            progress.step(step);
        }
    }
    progress.done();
    Ok(Driven {
        start,
        end,
        finished,
        verified,
        failed,
        unfinished,
        stopped,
        ended: ended.unwrap_or("budget"),
    })
}

/// Picks the next change, applies it and begins its window; returns the window's target, or
/// why the search ends (`budget`: not even the shortest window fits, `converged`: nothing left).
pub(super) fn next_step(
    session: &Session,
    search: &mut Search,
    report: &ReportBuilder,
    concurrency: &mut u64,
    parts_left: Option<f64>,
    in_flight: u64,
    open: &BTreeSet<u64>,
) -> std::result::Result<u64, &'static str> {
    let engine = &session.engine;
    let advice = match search.current_window {
        Some((from, to)) => {
            let v = report.verdict(from, to, &engine.config(), cores(), Some(*concurrency));
            v.advice
        }
        None => vec![],
    };
    loop {
        let change = search.next(&advice).ok_or("converged")?;
        // This step and those queued behind it share what the budget leaves.
        let left = parts_left.unwrap_or(f64::INFINITY);
        let candidates = (search.queued() + 1).min(8);
        let target = search::window_target(left, candidates, in_flight).ok_or("budget")?;
        match apply(engine, concurrency, &change) {
            Ok(()) => {
                engine.mark(&format!(
                    "tune step {}: {}",
                    search.steps.len(),
                    change.label()
                ));
                search.begin(change, open.iter().copied());
                return Ok(target);
            }
            Err(why) => search.refused(change, why),
        }
    }
}

pub(super) fn apply(
    engine: &provetop_engine::pipeline::EngineHandle,
    concurrency: &mut u64,
    c: &Change,
) -> std::result::Result<(), String> {
    if c.key == CONCURRENCY {
        *concurrency = c.to.parse::<u64>().map_err(|e| e.to_string())?;
        return Ok(());
    }
    engine
        .reconfigure(&[(c.key.clone(), c.to.clone())], "tune")
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// Sets a change back; a refusal here (the old value was in force a moment ago) is logged.
pub(super) fn set_back(
    engine: &provetop_engine::pipeline::EngineHandle,
    concurrency: &mut u64,
    c: &Change,
) {
    let back = Change {
        key: c.key.clone(),
        from: c.to.clone(),
        to: c.from.clone(),
        expected_gain: None,
    };
    if let Err(e) = apply(engine, concurrency, &back) {
        tracing::warn!("tune: setting {} back to {}: {e}", c.key, c.from);
    }
}

/// The best step's ratio to the start (1 when nothing was kept).
pub(super) fn best_ratio(steps: &[Step]) -> f64 {
    steps
        .iter()
        .rfind(|s| matches!(s.verdict, search::Verdict::Kept))
        .map_or(1.0, |s| s.ratio)
}
