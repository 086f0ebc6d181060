//! The server's life: a runtime, the listening socket, the base URL announced (in the port
//! file and on stdout), then requests served until SIGINT or SIGTERM.
use crate::server;
use anyhow::Context;
use inferbench_store::atomic;
use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Binds `addr`, writes the base URL to `port_file` (atomically) and says it on stdout, then
/// serves `app` until a signal; in-flight streams get two seconds to finish.
pub fn serve(app: server::App, addr: SocketAddr, port_file: Option<&Path>) -> anyhow::Result<()> {
    let app = Arc::new(app);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the runtime")?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("cannot bind {addr}"))?;
        let url = format!("http://{}", listener.local_addr()?);
        if let Some(path) = port_file {
            atomic::write(path, format!("{url}\n").as_bytes())?;
        }
        // Flushed explicitly: a parent reading our piped stdout waits for this line.
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening on {url}")?;
        out.flush()?;
        drop(out);
        server::serve(listener, app, shutdown_signal(), Duration::from_secs(2)).await?;
        Ok(())
    })
}

/// Resolves on SIGINT (ctrl-c) or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}
