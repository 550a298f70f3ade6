//! The running exporter: a collector thread that folds the bus into the state and settles it
//! once a second, and an HTTP server that accepts connections and answers each on its own
//! thread (`http`); the same server serves other pages alone (`PageServer`).

use crossbeam_channel::RecvTimeoutError;
use parking_lot::Mutex;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::http::{self, MetricsPages, Pages};
use super::MetricsState;
use crate::config::EngineConfig;
use crate::{Bus, Clock};

/// The running exporter: a collector thread on the bus and an HTTP server.
pub struct Exporter {
    pages: Arc<MetricsPages>,
    http: PageServer,
    stop: Arc<AtomicBool>,
    collector: Option<JoinHandle<()>>,
}

impl Exporter {
    /// Binds `addr` and starts serving; the collector subscribes to `bus` now.
    pub fn start(
        addr: SocketAddr,
        bus: &Bus,
        clock: Clock,
        config: &EngineConfig,
    ) -> std::io::Result<Exporter> {
        let listener = TcpListener::bind(addr)?;
        let stop = Arc::new(AtomicBool::new(false));
        let (state, collector) = collect(bus, clock, config, stop.clone())?;
        let pages = Arc::new(MetricsPages {
            state,
            extra: Mutex::new(None),
        });
        let http = PageServer::serve(listener, pages.clone())?;
        Ok(Exporter {
            pages,
            http,
            stop,
            collector: Some(collector),
        })
    }

    /// Where it listens (the port chosen when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.http.local_addr()
    }

    /// Serves `pages` too: their `/metrics` text after the exporter's, their other paths as
    /// they are.
    pub fn add_pages(&self, pages: Arc<dyn Pages>) {
        *self.pages.extra.lock() = Some(pages);
    }

    /// Stops serving and joins the threads.
    pub fn stop(&mut self) {
        self.http.stop();
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.collector.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Exporter {
    fn drop(&mut self) {
        self.stop();
    }
}

/// An HTTP server of [`Pages`] alone, as concurrent and as guarded as the exporter's (it is the
/// same code): `serve`'s status page.
pub struct PageServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl PageServer {
    /// Binds `addr` and serves `pages` until stopped or dropped.
    pub fn start(addr: SocketAddr, pages: Arc<dyn Pages>) -> std::io::Result<PageServer> {
        PageServer::serve(TcpListener::bind(addr)?, pages)
    }

    fn serve(listener: TcpListener, pages: Arc<dyn Pages>) -> std::io::Result<PageServer> {
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("http-accept".into())
                .spawn(move || http::accept(listener, &stop, pages))?
        };
        Ok(PageServer {
            addr,
            stop,
            thread: Some(thread),
        })
    }

    /// Where it listens (the port chosen when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops serving and joins the accepting thread.
    pub fn stop(&mut self) {
        if self.stop.swap(true, Ordering::Relaxed) {
            return;
        }
        // Wake the blocking accept.
        let mut wake = self.addr;
        if wake.ip().is_unspecified() {
            wake.set_ip(if wake.is_ipv4() {
                std::net::Ipv4Addr::LOCALHOST.into()
            } else {
                std::net::Ipv6Addr::LOCALHOST.into()
            });
        }
        let _ = TcpStream::connect_timeout(&wake, Duration::from_secs(1));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for PageServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The collector without the HTTP side, for a server that renders the text itself (`provetop
/// serve`'s `GetMetrics`). Stops when dropped.
pub struct Collector {
    state: Arc<Mutex<MetricsState>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Collector {
    /// Subscribes to `bus` now and folds its events into the state from then on.
    pub fn start(bus: &Bus, clock: Clock, config: &EngineConfig) -> std::io::Result<Collector> {
        let stop = Arc::new(AtomicBool::new(false));
        let (state, thread) = collect(bus, clock, config, stop.clone())?;
        Ok(Collector {
            state,
            stop,
            thread: Some(thread),
        })
    }

    /// The text exposition format of what is known now.
    pub fn render(&self) -> String {
        self.state.lock().render()
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The collector thread: folds the bus into the state and settles it once a second, until
/// `stop`.
fn collect(
    bus: &Bus,
    clock: Clock,
    config: &EngineConfig,
    stop: Arc<AtomicBool>,
) -> std::io::Result<(Arc<Mutex<MetricsState>>, JoinHandle<()>)> {
    let state = Arc::new(Mutex::new(MetricsState::new(config, clock.now())));
    let sub = bus.subscribe(1 << 16);
    let st = state.clone();
    let thread = std::thread::Builder::new()
        .name("metrics-collect".into())
        .spawn(move || {
            let state = st;
            let mut last_settle = Instant::now();
            while !stop.load(Ordering::Relaxed) {
                let first = match sub.rx.recv_timeout(Duration::from_millis(200)) {
                    Ok(e) => Some(e),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => return,
                };
                let mut st = state.lock();
                if let Some(e) = first {
                    st.observe(&e);
                    // Whatever else is waiting, under the same lock.
                    for e in sub.rx.try_iter().take(4096) {
                        st.observe(&e);
                    }
                }
                if last_settle.elapsed() >= Duration::from_secs(1) {
                    last_settle = Instant::now();
                    st.settle(clock.now());
                    st.set_dropped(sub.dropped());
                }
            }
        })?;
    Ok((state, thread))
}
