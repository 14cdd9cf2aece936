//! A TCP proxy that adds a fixed network round trip, for `scripts/bench latency`: every chunk
//! read from one side is written to the other side half the round trip later, in order.
//!
//! ```text
//! latency_proxy --listen 127.0.0.1:19099 --target 127.0.0.1:19098 --rtt-ms 10
//! latency_proxy selftest --rtt-ms 10      # measures what it adds, against an echo server
//! ```
//!
//! Each direction of each connection is a one-way delay line: a reader task stamps every chunk
//! with the time it may leave and queues it; a writer task sends it at that time. The reader does
//! not wait for the writer, so the delay is added to each chunk's latency but does not limit the
//! throughput (a round trip of 40 ms does not turn into 40 ms per read). Connections are
//! independent tasks, so hundreds of them are served at once. Both sockets use TCP_NODELAY so the
//! proxy adds no Nagle delay of its own. A half-close is passed on after the queued data.
//!
//! Kafka clients connect to the broker addresses the broker advertises, so the broker needs a
//! listener advertised at the proxy's address (in the test environment: bound on 19098,
//! advertised as 19099) for every connection, the coordinator's included, to go through here.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Bytes read at once from a socket.
const CHUNK: usize = 64 * 1024;
/// Chunks queued per direction before the reader waits: 1,024 x 64 KiB in flight, far above
/// what a round trip of tens of milliseconds needs on loopback.
const QUEUE: usize = 1024;
/// How much earlier than its due time a chunk is scheduled, to make up for the timer's rounding.
const TIMER_SLACK: Duration = Duration::from_millis(1);

struct Options {
    listen: SocketAddr,
    target: SocketAddr,
    rtt: Duration,
}

fn usage() -> ! {
    eprintln!(
        "usage: latency_proxy --listen ADDR --target ADDR --rtt-ms MS\n       \
         latency_proxy selftest [--rtt-ms MS] [--pairs N]"
    );
    std::process::exit(2)
}

fn value<T: std::str::FromStr>(args: &[String], name: &str) -> Option<T> {
    let at = args.iter().position(|a| a == name)?;
    let raw = args.get(at + 1).unwrap_or_else(|| usage());
    Some(raw.parse().unwrap_or_else(|_| {
        eprintln!("latency_proxy: {name}: cannot read {raw:?}");
        std::process::exit(2)
    }))
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let rtt = Duration::from_secs_f64(value::<f64>(&args, "--rtt-ms").unwrap_or(0.0) / 1000.0);
    if args.first().map(String::as_str) == Some("selftest") {
        selftest(rtt, value(&args, "--pairs").unwrap_or(100)).await;
        return;
    }
    let (Some(listen), Some(target)) = (value(&args, "--listen"), value(&args, "--target")) else {
        usage()
    };
    let listener = TcpListener::bind(listen).await.unwrap_or_else(|e| {
        eprintln!("latency_proxy: cannot listen on {listen}: {e}");
        std::process::exit(1)
    });
    eprintln!(
        "latency_proxy: {listen} -> {target}, round trip +{} ms",
        rtt.as_secs_f64() * 1000.0
    );
    serve(
        listener,
        Options {
            listen,
            target,
            rtt,
        },
    )
    .await;
}

/// Accepts connections until the process ends; each one is proxied on its own tasks.
async fn serve(listener: TcpListener, options: Options) {
    loop {
        let (client, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                eprintln!("latency_proxy: accept on {}: {e}", options.listen);
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let (target, one_way) = (options.target, options.rtt / 2);
        tokio::spawn(async move {
            match TcpStream::connect(target).await {
                Ok(server) => proxy(client, server, one_way).await,
                Err(e) => eprintln!("latency_proxy: connect to {target}: {e}"),
            }
        });
    }
}

/// Forwards both directions of one connection with `one_way` added to each.
async fn proxy(client: TcpStream, server: TcpStream, one_way: Duration) {
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    let upstream = tokio::spawn(delay_line(client_read, server_write, one_way));
    let downstream = tokio::spawn(delay_line(server_read, client_write, one_way));
    let _ = tokio::join!(upstream, downstream);
}

/// One direction: a reader that stamps and queues chunks, a writer that sends each at its time.
async fn delay_line(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, one_way: Duration) {
    let (queue, mut due) = mpsc::channel::<(Instant, Vec<u8>)>(QUEUE);
    let writer = tokio::spawn(async move {
        while let Some((at, chunk)) = due.recv().await {
            if !one_way.is_zero() {
                // Tokio's timer rounds a deadline up to its next millisecond tick and then needs
                // a moment to wake the task: aim one millisecond early, so that the delay added
                // comes out near `one_way` rather than up to two milliseconds above it (the
                // selftest measures what it really is).
                tokio::time::sleep_until(at.checked_sub(TIMER_SLACK).unwrap_or(at)).await;
            }
            if to.write_all(&chunk).await.is_err() {
                return;
            }
        }
        // The reader saw end of stream: pass the half-close on after everything queued.
        let _ = to.shutdown().await;
    });
    let mut buf = vec![0u8; CHUNK];
    loop {
        match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let chunk = buf[..n].to_vec();
                if queue.send((Instant::now() + one_way, chunk)).await.is_err() {
                    break;
                }
            }
        }
    }
    drop(queue);
    let _ = writer.await;
}

/// Measures the round trip the proxy adds: `pairs` sequential 64-byte request/response pairs to
/// an echo server, directly and through a proxy with `rtt`, and prints both and the difference.
async fn selftest(rtt: Duration, pairs: usize) {
    let echo = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let echo_addr = echo.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = echo.accept().await {
            let _ = s.set_nodelay(true);
            tokio::spawn(async move {
                let mut buf = vec![0u8; CHUNK];
                while let Ok(n @ 1..) = s.read(&mut buf).await {
                    if s.write_all(&buf[..n]).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    let front = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy_addr = front.local_addr().unwrap();
    tokio::spawn(serve(
        front,
        Options {
            listen: proxy_addr,
            target: echo_addr,
            rtt,
        },
    ));
    let direct = ping(echo_addr, pairs).await;
    let proxied = ping(proxy_addr, pairs).await;
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{pairs} sequential request/response pairs: direct {:.1} ms, through the proxy \
         (+{} ms per round trip) {:.1} ms; added per round trip {:.2} ms",
        ms(direct),
        ms(rtt),
        ms(proxied),
        ms(proxied.saturating_sub(direct)) / pairs as f64
    );
    // Many connections at once: each pays the round trip, none waits for another.
    for (name, addr) in [("directly", echo_addr), ("through the proxy", proxy_addr)] {
        let start = std::time::Instant::now();
        let clients: Vec<_> = (0..300).map(|_| tokio::spawn(ping(addr, 10))).collect();
        for client in clients {
            client.await.unwrap();
        }
        println!(
            "300 connections at once, 10 sequential pairs each, {name}: {:.1} ms",
            ms(start.elapsed())
        );
    }
    // Throughput through the delay line: 64 MiB one way, echoed back, on one connection.
    let bulk = throughput(proxy_addr, 64 << 20).await;
    println!(
        "64 MiB echoed through the proxy on one connection in {:.0} ms ({:.0} MiB/s)",
        ms(bulk),
        64.0 / bulk.as_secs_f64()
    );
}

async fn ping(addr: SocketAddr, pairs: usize) -> Duration {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.set_nodelay(true).unwrap();
    let (request, mut response) = ([7u8; 64], [0u8; 64]);
    let start = std::time::Instant::now();
    for _ in 0..pairs {
        s.write_all(&request).await.unwrap();
        s.read_exact(&mut response).await.unwrap();
    }
    start.elapsed()
}

async fn throughput(addr: SocketAddr, bytes: usize) -> Duration {
    let s = TcpStream::connect(addr).await.unwrap();
    let (mut read, mut write) = s.into_split();
    let start = std::time::Instant::now();
    let sender = tokio::spawn(async move {
        let block = vec![1u8; CHUNK];
        for _ in 0..bytes / CHUNK {
            write.write_all(&block).await.unwrap();
        }
        write
    });
    let mut buf = vec![0u8; CHUNK];
    let mut received = 0;
    while received < bytes {
        received += read.read(&mut buf).await.unwrap();
    }
    let _ = sender.await;
    start.elapsed()
}
